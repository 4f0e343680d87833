"""ExecuTorch's own flow (``to_edge_transform_and_lower(..., partitioner=[OpenvinoPartitioner()])``) and
``exov.lower`` give the same program: the same delegation and bit-equal outputs, with eager's dtypes and
shapes, on every program of the operator, bool, semantics and remainder tests (issue: one result whichever
way a program is lowered)."""

from __future__ import annotations


import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, run

from exov_testing.cases import BOOL_OPS
from exov_testing.cases import ALL_DIMS, OPERATORS
from exov_testing.cases import REMAINDERS, SEMANTICS

pytestmark = [pytest.mark.own_runtime]


def _remainder_inputs(dtype):
    info = torch.iinfo(dtype)
    return (torch.tensor([-7, -1, 7, 0, info.min + 5, info.max], dtype=dtype),)


ZERO_DIM = torch.tensor(-7, dtype=torch.int32)
# ExecuTorch's to_edge alone gives int64 for each of these (measured with executorch 1.5.1).
ZERO_DIM_INTEGERS = {
    "mul": lambda a: a * 3, "add with alpha": lambda a: torch.add(a, 3, alpha=2), "rsub": lambda a: 3 - a,
    "floor_divide": lambda a: a // 3, "div floor": lambda a: torch.div(a, 3, rounding_mode="floor"),
    "div trunc": lambda a: torch.div(a, 3, rounding_mode="trunc"), "remainder": lambda a: a % 3,
}

PROGRAMS = {
    # Each operator at its first example shape: the second shape exercises binding, not the lowering path.
    **{f"operator {name}": (factory, shapes[0]) for name, (factory, shapes) in OPERATORS.items()},
    **{f"all dims {name}": (lambda fn=fn: Fn(fn), (torch.randn(3, 4),)) for name, fn in ALL_DIMS.items()},
    **{f"bool {name}": (lambda fn=fn: Fn(fn), inputs) for name, (fn, inputs) in BOOL_OPS.items()},
    **{f"semantics {name}": (lambda fn=fn: Fn(fn), inputs) for name, (fn, inputs) in SEMANTICS.items()},
    **{f"remainder {name}": (lambda fn=fn: Fn(fn), _remainder_inputs(dtype)) for name, (fn, dtype) in REMAINDERS.items()},
    **{f"0-d int32 {name}": (lambda fn=fn: Fn(fn), (ZERO_DIM,)) for name, fn in ZERO_DIM_INTEGERS.items()},
}


@pytest.mark.parametrize("name", list(PROGRAMS))
@pytest.mark.sampled(every=3)
def test_both_lowering_paths_give_one_result(name):
    factory, inputs = PROGRAMS[name]
    torch.manual_seed(0)
    module = factory().eval()
    expected = eager(module, inputs)
    standard = to_edge_transform_and_lower(torch.export.export(module, inputs),
                                           partitioner=[exov.OpenvinoPartitioner()])
    lowered = exov.lower(module, inputs)
    assert exov.delegation_summary(standard) == exov.delegation_summary(lowered)
    from_standard = run(standard.to_executorch().buffer, inputs)
    from_lower = run(lowered.buffer, inputs)
    assert_matches_eager(from_lower, expected)
    for i, (a, b) in enumerate(zip(from_standard, from_lower, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"output {i}: {a.dtype}{tuple(a.shape)} != {b.dtype}{tuple(b.shape)}"
        assert torch.equal(a, b) or (a.dtype.is_floating_point and torch.equal(a.isnan(), b.isnan())
                                     and torch.equal(a.nan_to_num(), b.nan_to_num())), f"output {i} differs"
