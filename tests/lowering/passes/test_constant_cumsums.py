"""constant_cumsums: integer cumsums of constants are folded at lowering, once each; the others run on every call."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_exactly_eager, assert_matches_eager, eager, Fn, lower

pytestmark = [pytest.mark.aarch64]


@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_cumsum_of_constants_is_right_on_every_call(numerics):
    """Position ids built as ones_like(x).cumsum(): run several times in one loaded method."""
    model = Fn(lambda ids, x: ((torch.ones_like(ids).cumsum(1) - 1) * ids, x.cumsum(0) * 2))
    inputs = (torch.ones(2, 7, dtype=torch.int64), torch.randn(5))
    pte, _ = lower(model, inputs, partitioner=exov.OpenvinoPartitioner(numerics=numerics))
    method = exov.load_method(pte)
    for _ in range(3):
        assert_matches_eager(list(method.execute(list(inputs))), eager(model, inputs))


class PositionIds(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("segments", torch.tensor([[1, 1, 0, 1, 1]], dtype=torch.int32))

    def forward(self, ids, x):
        positions = torch.ones_like(ids).cumsum(1) - 1   # constant: static shape
        segment_ends = self.segments.cumsum(1)           # constant: a buffer
        running = (x > 0).cumsum(0)                       # depends on x: computed every call
        return positions * ids, segment_ends + ids, running, x * 2


def test_integer_cumsums_of_constants_are_folded_each_on_its_own():
    from executorch_openvino.lowering.passes.constant_cumsums import fold_constant_integer_cumsums

    model = PositionIds().eval()
    inputs = (torch.arange(5).view(1, 5), torch.randn(300))
    folded = fold_constant_integer_cumsums(torch.export.export(model, inputs))
    assert folded == ["cumsum", "cumsum_1"]
    method = exov.load_method(exov.lower(model, inputs).buffer)
    for _ in range(3):
        x = torch.randn(300)
        assert_exactly_eager(list(method.execute([inputs[0], x])), eager(model, (inputs[0], x)))


@torch.library.custom_op("exov_test::fails_when_run", mutates_args=())
def _fails_when_run(x: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("this op cannot run at lowering time")


@_fails_when_run.register_fake
def _(x):
    return torch.empty_like(x)


class UnfoldableCumsum(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("counts", torch.tensor([3, 1, 2], dtype=torch.int32))

    def forward(self, x):
        return _fails_when_run(self.counts).cumsum(0) + x, self.counts.cumsum(0) + x


def test_a_cumsum_of_constants_that_cannot_be_evaluated_is_named_and_left_in_place():
    from executorch_openvino.lowering.passes.constant_cumsums import fold_constant_integer_cumsums

    program = torch.export.export(UnfoldableCumsum().eval(), (torch.ones(3, dtype=torch.int64),))
    with pytest.warns(UserWarning, match=r"integer cumsum 'cumsum' reads only constants but could not be "
                                         r"folded \(RuntimeError: this op cannot run at lowering time\)"):
        folded = fold_constant_integer_cumsums(program)
    assert folded == ["cumsum_1"]  # the other one is still folded
    assert [n.name for n in program.graph.nodes if n.target == torch.ops.aten.cumsum.default] == ["cumsum"]


class CumsumThenChange(torch.nn.Module):
    """A cumsum of a buffer that forward then changes in place: not a constant (found by a breaker helper)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("n", torch.zeros(3, dtype=torch.int64))

    def forward(self, x):
        result = self.n.cumsum(0) + x
        self.n.add_(1)
        return result


def test_a_cumsum_of_a_buffer_changed_later_is_computed_on_every_call():
    inputs = (torch.tensor([0, 0, 0]),)
    method = exov.load_method(exov.lower(CumsumThenChange(), inputs).buffer)
    reference = CumsumThenChange()
    for _ in range(3):
        assert_exactly_eager(list(method.execute(list(inputs))), eager(reference, inputs))
