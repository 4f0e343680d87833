"""arange_dtypes: a float arange delegated to OpenVINO has PyTorch's length and values."""

from __future__ import annotations

import pytest
import torch

from exov_testing.programs import assert_matches_eager, eager, Fn, lower, run


# A float arange written with integer ends: OpenVINO's frontend took start's type
# and returned [0, 0, 1, 1, 2, 2] for arange(0, 3, 0.5) until passes/arange_dtypes.py.
FLOAT_ARANGES = {
    "tenths up to 0.6": lambda x: torch.arange(0, 0.6, 0.1) + x,
    "halves from integer ends": lambda x: torch.arange(0, 3, 0.5) + x,
    "tenths from integer ends": lambda x: torch.arange(0, 1, 0.1)[:6] + x,
    "quarters from 1 to 2.5": lambda x: torch.arange(1, 2.5, 0.25) + x,
    "bfloat16 halves": lambda x: torch.arange(0, 3, 0.5, dtype=torch.bfloat16).float() + x,
}


@pytest.mark.parametrize("case", list(FLOAT_ARANGES))
def test_a_float_arange_with_integer_ends_keeps_its_fractions(case):
    module, inputs = Fn(FLOAT_ARANGES[case]), (torch.zeros(6),)
    pte, summary = lower(module, inputs)
    assert summary.delegated == summary.total, summary  # OpenVINO computes the arange
    for x in (inputs[0], torch.linspace(-3.0, 3.0, 6)):
        (got,), (expected,) = run(pte, (x,)), eager(module, (x,))
        assert got.dtype == expected.dtype and torch.equal(got, expected), (got, expected)


def test_a_float_arange_has_pytorchs_length():
    # arange(0, 0.3, 0.1) has 3 values in PyTorch (float64 arithmetic); OpenVINO's float32 length was 4.
    module = Fn(lambda x: torch.arange(0, 0.3, 0.1) + x)
    pte, summary = lower(module, (torch.zeros(3),))
    assert summary.delegated == summary.total, summary
    assert_matches_eager(run(pte, (torch.ones(3),)), eager(module, (torch.ones(3),)))
