"""passes/adaptive_max_pools.py: adaptive max pools (ExecuTorch has no kernel for them) lower and run as eager computes
them: even windows with their indices, uneven windows without, 1-d and 2-d, NaN and infinities, both numerics settings."""

from __future__ import annotations

import math

import pytest
import torch
from torch._export.verifier import SpecViolationError

import executorch_openvino as exov
from exov_testing.programs import Fn, OneInput, eager, lower, run

F = torch.nn.functional


def _assert_bitwise(actual, expected):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, (i, a.shape, e.shape)
        torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True, msg=lambda m, i=i: f"output {i}: {m}")


def _pools(x, plane, line):
    return (*F.adaptive_max_pool2d(x, (5, 5), return_indices=True),  # 20 x 20: even windows, with indices
            *F.adaptive_max_pool2d(x, 1, return_indices=True),  # a global max pool
            F.adaptive_max_pool2d(plane, (3, 4)),  # 8 x 7 into 3 x 4: uneven windows
            *F.adaptive_max_pool1d(line, 4, return_indices=True),  # 12 into 4
            F.adaptive_max_pool1d(line, 5))  # uneven


def _inputs():
    x = torch.randn(2, 3, 20, 20)
    x[0, 0, 1, 2] = math.nan  # one NaN in a window
    x[0, 1, 4:8, 0:4] = -math.inf  # a window of only -inf
    x[1, 2, 10, 10] = math.inf
    plane = torch.randn(3, 8, 7)
    plane[1, 4, 4] = math.nan
    line = torch.randn(2, 4, 12)
    line[1, 2, 7] = math.nan
    return x, plane, line


@pytest.mark.older_openvino
@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_adaptive_max_pools_match_eager(numerics):
    inputs = _inputs()
    pte, summary = lower(Fn(_pools), inputs, partitioner=exov.OpenVINOPartitioner(numerics=numerics))
    assert summary.delegated == summary.total, summary
    if numerics == "exact":
        _assert_bitwise(run(pte, inputs), eager(Fn(_pools), inputs))
    else:  # OpenVINO's own max: NaN dropped (docs/user-guide/numerics.md); finite inputs match
        finite = tuple(torch.nan_to_num(t, nan=0.0, posinf=9.0, neginf=-9.0) for t in inputs)
        _assert_bitwise(run(pte, finite), eager(Fn(_pools), finite))


def test_uneven_windows_with_indices_and_dynamic_sizes_still_fail_to_lower():
    # As without this package: to_edge refuses the operator, which ExecuTorch cannot run.
    with pytest.raises(SpecViolationError, match="(?s)adaptive_max_pool2d.*this package delegates an adaptive max pool"):
        exov.lower(Fn(lambda t: F.adaptive_max_pool2d(t, 3, return_indices=True)), (torch.randn(1, 2, 8, 8),))
    dynamic = {"x": {2: torch.export.Dim("h", min=4, max=32)}}
    with pytest.raises(SpecViolationError, match="(?s)adaptive_max_pool2d.*this package delegates an adaptive max pool"):
        exov.lower(OneInput(lambda t: F.adaptive_max_pool2d(t, 2)), (torch.randn(1, 2, 8, 8),), dynamic_shapes=dynamic)


def test_bfloat16_indices_run_on_executorch_kernels():
    # OpenVINO 2026.4.1 compiles no bfloat16 max pool returning indices (the program failed at load, 0x23).
    x = torch.randn(1, 2, 4, 4).bfloat16()
    module = Fn(lambda t: tuple(F.adaptive_max_pool2d(t, (2, 2), return_indices=True)))
    pte, summary = lower(module, (x,))
    assert [n.operator for n in summary.not_delegated] == ["aten.max_pool2d_with_indices.default"], summary
    _assert_bitwise(run(pte, (x,)), eager(module, (x,)))
