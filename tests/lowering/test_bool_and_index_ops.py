"""Bool min/max stay on ExecuTorch's kernels; indices of min/max/argmax equal eager's, ties included."""

from __future__ import annotations

import pytest
import torch

from exov_testing.cases import B1, BOOL_OPS
from exov_testing.programs import assert_matches_eager, check_fully_delegated, eager, Fn, lower, run

@pytest.mark.parametrize("op", list(BOOL_OPS))
@pytest.mark.sampled(every=2)
def test_all_bool_inputs_lower_and_match_eager(op):
    """Before: the whole program failed to lower ("aten.maximum.default ... wasn't fully converted")."""
    fn, inputs = BOOL_OPS[op]
    # A float computation beside it is still delegated.
    model = Fn(lambda *args: (fn(*args), args[0].float() * 2.5))
    pte, summary = lower(model, inputs)
    assert summary.delegated >= 1
    assert_matches_eager(run(pte, inputs), eager(model, inputs))


def test_bool_and_float_mix_stays_delegated():
    check_fully_delegated(Fn(torch.maximum), (B1, torch.randn(2, 3)))


# Rows of 16: OpenVINO's max(dim)/min(dim) picked the last of two tied maxima in
# rows this long (it matched eager on rows of 4), so those stay on ExecuTorch.
TIES = torch.cat([
    torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [0.0, 0.0, 5.0, 5.0], [-1.0, -1.0, -2.0, -2.0]]).repeat(1, 4),
    torch.randint(0, 3, (60, 16), generator=torch.Generator().manual_seed(0)).float(),
])


@pytest.mark.parametrize("op", ["max(dim)", "min(dim)", "argmax", "argmin", "max(dim, keepdim)"])
def test_indices_on_ties_are_the_first_as_in_eager(op):
    fn = {
        "max(dim)": lambda x: tuple(x.max(1)),
        "min(dim)": lambda x: tuple(x.min(1)),
        "argmax": lambda x: x.argmax(1),
        "argmin": lambda x: x.argmin(1),
        "max(dim, keepdim)": lambda x: tuple(x.max(0, keepdim=True)),
    }[op]
    pte, _ = lower(Fn(fn), (TIES,))
    assert_matches_eager(run(pte, (TIES,)), eager(Fn(fn), (TIES,)))


def test_integer_index_ops_past_float32_precision_match_eager():
    """Integer values are compared through float32 in OpenVINO: such index ops stay on ExecuTorch."""
    big = torch.tensor([[2**24, 2**24 + 1, 3]], dtype=torch.int32)
    model = Fn(lambda i: (i.argmax(1), tuple(i.max(1)), torch.topk(i, 2)[1]))
    pte, _ = lower(model, (big,))
    assert_matches_eager(run(pte, (big,)), eager(model, (big,)))
