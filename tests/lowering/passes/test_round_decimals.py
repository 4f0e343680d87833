"""passes/round_decimals.py: ``torch.round(x, decimals=d)`` (ExecuTorch has no kernel for it) lowers and runs as eager
computes it, for positive, zero and negative ``d``, special values and half precision, with both numerics settings."""

from __future__ import annotations

import math

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.lowering.operator_support import openvino_supported_ops
from exov_testing.programs import Fn, eager, lower, run


def _inputs():
    x = torch.randn(64) * 1000
    x[:8] = torch.tensor([2.5, 0.125, 0.005, -0.0, math.nan, math.inf, -math.inf, 1250.0])
    # Halves at decimals=-2 whose float32 quotient by 100 must be eager's to the bit (650 / 100 = 6.5 -> 600):
    # a quotient 1 ulp above rounds the other way.
    x[8:14] = torch.tensor([650.0, 1050.0, 1250.0, 1450.0, 6550.0, -850.0])
    return x, (torch.randn(16) * 100).half()


def _module():
    return Fn(lambda x, h: (torch.round(x, decimals=2), torch.round(x, decimals=0), torch.round(x, decimals=-2),
                            torch.round(x, decimals=50), torch.round(h, decimals=1)))


@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_round_with_decimals_matches_eager(numerics):
    inputs = _inputs()
    pte, summary = lower(_module(), inputs, partitioner=exov.OpenVINOPartitioner(numerics=numerics))
    left = {n.operator for n in summary.not_delegated}
    # decimals=-2's quotient is rounded next: divided in float64, which numerics="exact" leaves to ExecuTorch.
    # OpenVINO 2025.4.1's frontend has no rule for round: ExecuTorch's kernel rounds there.
    expected = ({"aten.div.Tensor", "aten.scalar_tensor.default", "dim_order_ops._to_dim_order_copy.default"}
                if numerics == "exact" else set())
    if "torch.ops.aten.round.default" not in openvino_supported_ops():
        expected.add("aten.round.default")
    assert left == expected, summary
    actual, expected = run(pte, inputs), eager(_module(), inputs)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype, i
        # Rounded values: exact but for the division by 10**d, 1 ulp off in OpenVINO (decimals > 0).
        torch.testing.assert_close(a, e, rtol=1.2e-7 if i == 0 else 0, atol=0, equal_nan=True,
                                   msg=lambda m, i=i: f"output {i}: {m}")
        assert torch.equal(torch.signbit(a), torch.signbit(e)), i


def test_round_with_decimals_is_not_core_aten_and_lowered_anyway():
    # Before: to_edge refused the program (SpecViolationError, not in core ATen) whatever the partitioner.
    x = torch.randn(5)
    program = exov.lower(Fn(lambda t: torch.round(t, decimals=3) * 2), (x,))
    summary = exov.delegation_summary(program)
    assert summary.delegated >= summary.total - 1 and summary.partitions >= 1, summary  # round: see above
    torch.testing.assert_close(run(program.buffer, (x,))[0], torch.round(x, decimals=3) * 2, rtol=1.2e-7, atol=0)
