"""per_channel_dequantize: a linear layer whose int8 weight is read through dequantize_per_channel (what PT2E
quantizers write) is converted by OpenVINO and gives the dequantized layer's results."""

from __future__ import annotations

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed ops)

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager

DEQUANTIZE = torch.ops.quantized_decomposed.dequantize_per_channel.default


class Int8Linear(torch.nn.Module):
    """y = x @ dequantize_per_channel(q, scales, zero_points).T + bias, with channel-wise zero points."""

    def __init__(self, zero_points: bool):
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("q", torch.randint(-128, 128, (16, 32), dtype=torch.int8))
        self.register_buffer("scales", torch.rand(16) * 0.02 + 0.001)
        self.register_buffer("zeros", torch.randint(-5, 6, (16,)) if zero_points else torch.zeros(16, dtype=torch.int64))
        self.bias = torch.nn.Parameter(torch.randn(16))

    def forward(self, x):
        weight = DEQUANTIZE(self.q, self.scales, self.zeros, 0, -128, 127, torch.int8)
        return torch.nn.functional.linear(x, weight, self.bias)


@pytest.mark.parametrize("zero_points", [True, False])
@pytest.mark.parametrize("batch", [1, 5])
def test_a_per_channel_int8_weight_is_delegated_and_matches_eager(zero_points, batch):
    model = Int8Linear(zero_points).eval()
    inputs = (torch.randn(batch, 32),)
    program = exov.lower(model, inputs)
    summary = exov.delegation_summary(program)
    assert summary.delegated == summary.total and summary.partitions == 1, summary.report()
    method = exov.load_method(program.buffer)
    expected = eager(model, inputs)
    # Measured (OpenVINO 2026.4.1, AMD EPYC with AVX-512): with channel zero points the layer matches the
    # dequantized float layer to 1e-5; with symmetric weights (zero points 0) OpenVINO's CPU plugin runs it on
    # 8-bit kernels, activations included, up to 2.5% of the largest output away: the INT8 tolerance of
    # tests/lowering/test_quantization.py. A wrong axis or a dropped zero point is off by far more.
    tolerance = dict(rtol=1e-5, atol=1e-5) if zero_points else dict(rtol=0, atol=0.05 * expected[0].abs().max().item())
    for _ in range(2):
        assert_matches_eager(list(method.execute(list(inputs))), expected, **tolerance)


def test_the_rewrite_replaces_each_dequantize_with_plain_arithmetic():
    from executorch.exir import to_edge

    from executorch_openvino.lowering.passes.per_channel_dequantize import write_out_per_channel_dequantize

    program = to_edge(torch.export.export(Int8Linear(True).eval(), (torch.randn(2, 32),))).exported_program()
    assert write_out_per_channel_dequantize(program) == 1
    names = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
    assert not any("dequantize_per_channel" in name for name in names), names
    assert any("aten.mul.Tensor" in name for name in names) and any("aten.sub.Tensor" in name for name in names)
    assert write_out_per_channel_dequantize(program) == 0
