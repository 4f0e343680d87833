"""Partition inputs: OpenVINO's converter drops inputs it does not read, and the runtime binds by position."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, lower
from executorch_openvino.lowering.conversion import ConversionError, convert_partition

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]


def _compile(ir):
    import openvino as ov

    core = ov.Core()
    model = core.read_model(ir.xml.decode(), ov.Tensor(np.frombuffer(ir.weights, dtype=np.uint8).copy()))
    return core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})


def test_an_unused_input_is_put_back_in_its_place():
    """OpenVINO returns a one-input model for ``(x, y) -> y * 2``; the partition has two inputs."""
    x, y = torch.randn(2, 3), torch.randn(3)
    compiled = _compile(convert_partition(torch.export.export(Fn(lambda a, b: b * 2), (x, y))))
    assert [port.get_any_name() for port in compiled.inputs] == ["args_0", "args_1"]
    assert [tuple(port.get_shape()) for port in compiled.inputs] == [(2, 3), (3,)]
    result = compiled([x.numpy(), y.numpy()])[compiled.output(0)]
    assert torch.equal(torch.from_numpy(result), y * 2)


def test_an_input_read_only_for_its_shape_fails_clearly():
    """``y.expand_as(x)`` reads x; OpenVINO drops it: binding by position would shift y into x's place."""
    program = torch.export.export(Fn(lambda a, b: b.expand_as(a) * 2), (torch.randn(2, 3), torch.randn(3)))
    with pytest.raises(ConversionError, match=r"dropped partition input 0 \('args_0'\) although the partition reads it"):
        convert_partition(program)


class FromBuffersOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(4, 3))
        self.weight = torch.nn.Parameter(torch.randn(3))

    def forward(self, x):
        # The first output reads no input; float64 keeps x's computation on ExecuTorch.
        return (self.table * self.weight).sum(0) + 1, x.double() * 2


def test_a_partition_without_inputs_lowers_and_runs():
    model = FromBuffersOnly().eval()
    inputs = (torch.randn(3),)
    pte, summary = lower(model, inputs)
    assert summary.partitions == 1 and summary.delegated >= 2
    method = exov.load_method(pte)
    for _ in range(2):
        assert_matches_eager(list(method.execute(list(inputs))), eager(model, inputs))


def test_two_inputs_of_the_same_type_and_shape_keep_their_places():
    """a - b with a unused-then-used pattern: a swap would change the sign."""
    model = Fn(lambda a, b, c: (b - c, a.double()))
    inputs = (torch.randn(3), torch.randn(3), torch.randn(3))
    pte, _ = lower(model, inputs)
    assert_matches_eager(list(exov.load_method(pte).execute(list(inputs))), eager(model, inputs))
