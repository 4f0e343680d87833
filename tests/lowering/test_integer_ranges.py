"""Integer arithmetic OpenVINO computes through float32 or int32 is delegated only where the program
proves its values small (integer_ranges.py), and integer-to-bool casts are right for every value."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.lowering.integer_ranges import FLOAT32_EXACT, integer_ranges
from exov_testing.programs import assert_matches_eager, eager, Fn, lower, run


class Positions(torch.nn.Module):
    """What transformers' masks do: positions from arange, shifted by a constant, compared."""

    def __init__(self, start: int, offset: int, threshold: int):
        super().__init__()
        self.start, self.offset, self.threshold = start, offset, threshold

    def forward(self, x):
        positions = torch.arange(self.start, self.start + x.shape[-1]) + self.offset
        keep = (positions >= self.threshold).unsqueeze(0)
        return x * keep, positions.unsqueeze(0).expand(x.shape[0], -1) * 2


def _both_paths(module, inputs, **partitioner):
    pte, summary = lower(module, inputs, partitioner=exov.OpenvinoPartitioner(**partitioner))
    via_lower = exov.lower(module, inputs, **partitioner).buffer
    return pte, summary, via_lower


@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_small_positions_are_delegated_and_exact(numerics):
    module, inputs = Positions(0, 3, 60), (torch.randn(2, 128),)
    pte, summary, via_lower = _both_paths(module, inputs, numerics=numerics)
    assert summary.delegated == summary.total and summary.partitions == 1, summary
    expected = eager(module, inputs)
    for program in (pte, via_lower):
        for _ in range(2):
            assert_matches_eager(run(program, inputs), expected)


@pytest.mark.parametrize("start, offset, threshold", [
    (FLOAT32_EXACT - 4, 0, FLOAT32_EXACT + 1),   # past float32's integers: 2**24 + 1 would compare equal to 2**24
    (0, 2**40, 2**40 + 5),                       # past int32: OpenVINO's int64 wraps
    (0, 3, FLOAT32_EXACT + 0.5),                 # a float threshold
])
def test_large_positions_stay_on_executorch_kernels_and_stay_exact(start, offset, threshold):
    module, inputs = Positions(start, offset, threshold), (torch.randn(2, 8),)
    pte, summary = lower(module, inputs)
    assert summary.delegated < summary.total, summary
    expected = eager(module, inputs)
    assert_matches_eager(run(pte, inputs), expected)
    assert_matches_eager(run(exov.lower(module, inputs).buffer, inputs), expected)


def test_the_example_values_of_integer_inputs_prove_nothing():
    # Every position is < 2**24 in the example; a later call is not.
    module = Fn(lambda i: ((i + 1) >= FLOAT32_EXACT + 1, i * 3))
    example = (torch.arange(4, dtype=torch.int64),)
    pte, summary = lower(module, example)
    assert summary.delegated < summary.total, summary
    later = (torch.tensor([FLOAT32_EXACT, FLOAT32_EXACT - 1, 2**31 - 2, -5], dtype=torch.int64),)
    assert_matches_eager(run(pte, later), eager(module, later))


class CountsCalls(torch.nn.Module):
    """A buffer the program changes: its starting value proves nothing about later calls."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.tensor(FLOAT32_EXACT - 2, dtype=torch.int64))

    def forward(self, x):
        self.calls.add_(1)
        return x * (self.calls >= FLOAT32_EXACT + 1), self.calls + 0


def test_a_changed_buffer_is_not_read_as_a_constant():
    module, inputs = CountsCalls(), (torch.ones(3),)
    method = exov.load_method(exov.lower(module, inputs).buffer)
    reference = CountsCalls()
    for _ in range(4):
        assert_matches_eager(list(method.execute(list(inputs))), eager(reference, inputs))




def _ranges(module, inputs):
    from executorch.exir import to_edge

    program = to_edge(torch.export.export(module, inputs)).exported_program()
    found = integer_ranges(program)
    return {n.name: found.get(n.name) for n in program.graph.nodes if n.op == "call_function"}, program


def test_ranges_of_arange_arithmetic_and_casts():
    module = Fn(lambda x: (torch.arange(10, 0, -3) - 2 * torch.arange(5, 9),))
    found, _ = _ranges(Fn(lambda x: (torch.arange(10, 0, -3),)), (torch.ones(1),))
    assert list(found.values()) == [(1, 10)]  # 10, 7, 4, 1
    found, _ = _ranges(Fn(lambda x: (torch.arange(3) * -4, torch.arange(3).abs() - 7, (torch.arange(3) < 2).long()),),
                       (torch.ones(1),))
    assert (-8, 0) in found.values() and (-7, -5) in found.values() and (0, 1) in found.values()
    found, _ = _ranges(module, (torch.ones(1),))
    assert found[list(found)[-1]] is not None


def test_ranges_end_where_the_dtype_would_wrap_or_a_float_enters():
    found, _ = _ranges(Fn(lambda x: ((torch.arange(4, dtype=torch.int32) + 2**31 - 2),)), (torch.ones(1),))
    assert list(found.values())[-1] is None
    found, _ = _ranges(Fn(lambda x: ((torch.arange(4) * 1.5).long(),)), (torch.ones(1),))
    assert list(found.values())[-1] is None
    found, _ = _ranges(Fn(lambda i: (i + 1,)), (torch.arange(4),))
    assert list(found.values())[-1] is None  # an input: unknown


def test_dynamic_sizes_are_bounded_by_what_the_program_accepts():
    # torch.export's shape environment assumes sizes 0 and 1 never occur (bounds [2, 3] here);
    # the program accepts [0, 3], and 3 - n reaches 3 * 2**23 > 2**24 at n = 0.
    class SizeTimesLarge(torch.nn.Module):
        def forward(self, x):
            y = torch.full((1,), 3 - x.shape[0]) * 2**23
            return (y + 1) == y, y

    module = SizeTimesLarge()
    exported = torch.export.export(module, (torch.randn(3),),
                                   dynamic_shapes=({0: torch.export.Dim("n", min=0, max=3)},))
    from executorch.exir import to_edge_transform_and_lower

    pte = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner()]).to_executorch().buffer
    method = exov.load_method(pte)
    for size in (3, 2, 1, 0):
        inputs = (torch.randn(size),)
        assert_matches_eager(list(method.execute(list(inputs))), eager(module, inputs))
    with pytest.raises(ValueError, match="upper bounds"):  # past the upper bound: refused, not computed
        method.execute([torch.randn(4)])


@pytest.mark.parametrize("make", [
    lambda x: torch.full_like(x, -1, dtype=torch.uint8),   # 255 in PyTorch
    lambda x: torch.scalar_tensor(-1, dtype=torch.uint8).expand(x.shape),
    lambda x: torch.arange(-5, 5, dtype=torch.uint8)[: x.shape[0]],   # 251..255, 0..4
], ids=["full_like", "scalar_tensor", "arange"])
def test_literals_are_read_in_their_dtype(make):
    module = Fn(lambda x: (lambda y: ((y + 1) == y, y))(torch.where(x > 0, make(x).long(), 3) * 70000))
    inputs = (torch.tensor([1.0, -1.0, 2.0, -2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),)
    assert_matches_eager(run(exov.lower(module, inputs).buffer, inputs), eager(module, inputs))


class BoolOfLargeBuffer(torch.nn.Module):
    def __init__(self, values):
        super().__init__()
        self.register_buffer("b", torch.tensor(values, dtype=torch.int64))

    def forward(self, x):
        return (x * self.b.bool(),)


@pytest.mark.parametrize("values", [[2**32, 0, 1], [2**32]])
def test_bool_of_an_int64_buffer_past_int32_lowers_and_is_exact(values):
    module = BoolOfLargeBuffer(values)
    inputs = (torch.ones(len(values)),)
    pte, _ = lower(module, inputs)
    for program in (pte, exov.lower(module, inputs).buffer):
        assert_matches_eager(run(program, inputs), eager(module, inputs))
