"""Buffers a program updates, kept as OpenVINO state (lowering/model_state.py), and which ones stay
ExecuTorch's; index_put patterns; declared input ranges (input_ranges). Every case runs several calls on a
loaded method and compares each call's outputs with eager PyTorch running the same calls on a fresh module."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import FLOAT32_TOLERANCE

pytestmark = [pytest.mark.older_openvino]


def run_calls(module_type, inputs_per_call, **lower_options):
    """Each call's outputs from the lowered program and from eager on a fresh module, and the program."""
    program = exov.lower(module_type().eval(), inputs_per_call[0], **lower_options)
    method, eager = exov.load_method(program.buffer), module_type().eval()
    for inputs in inputs_per_call:
        got = method.execute(list(inputs))
        with torch.no_grad():
            expected = eager(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for a, b in zip(got, expected):
            torch.testing.assert_close(a, b, **FLOAT32_TOLERANCE)
    return program


def kept_by_executorch(program) -> set:
    return set(program.exported_program().graph_signature.buffers_to_mutate.values())


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.arange(4.0))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 2


class ReturnsItsNewValue(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.ones(4))

    def forward(self, x):
        self.b.add_(x)
        return self.b


class WrittenNeverRead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.zeros(4))

    def forward(self, x):
        self.a.copy_(x * 2)
        return x + 1


class Int64Positions(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("c", torch.tensor([1, 5, 6, 7]))

    def forward(self, v, position):
        self.c[position] = v
        return self.c.clone()


class SliceThenIndices(torch.nn.Module):
    def forward(self, y, i, j, v):
        y = y.clone()
        y[:, i, j] = v
        return y


def test_state_kept_in_openvino_across_calls():
    program = run_calls(Counter, [(torch.ones(4),), (torch.full((4,), 2.0),), (torch.ones(4),)])
    assert "total" not in kept_by_executorch(program)  # OpenVINO state
    first, second = (exov.load_method(program.buffer) for _ in range(2))
    first.execute([torch.ones(4)])
    torch.testing.assert_close(second.execute([torch.ones(4)])[0], (torch.arange(4.0) + 1) * 2)  # its own state


def test_buffers_that_stay_with_executorch_are_still_right():
    # New value returned, never read, or int64 values read: ExecuTorch keeps them (or nothing to keep).
    assert "b" in kept_by_executorch(run_calls(ReturnsItsNewValue, [(torch.ones(4),), (torch.ones(4),)]))
    run_calls(WrittenNeverRead, [(torch.arange(4.0),), (torch.ones(4),)])
    program = run_calls(Int64Positions, [(torch.tensor([9]), torch.tensor([2])), (torch.tensor([3]), torch.tensor([0]))])
    assert "c" in kept_by_executorch(program)


def test_index_put_patterns_openvino_cannot_convert_stay_on_executorch():
    inputs = (torch.zeros(2, 3, 4), torch.tensor([0, 2]), torch.tensor([1, 3]), torch.tensor(5.0))
    run_calls(SliceThenIndices, [inputs, (torch.ones(2, 3, 4), *inputs[1:])])


def test_a_failed_index_check_after_a_state_write_refuses_later_calls():
    class Cache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(1, 2, 8, 2))

        def forward(self, v, position):
            self.cache.index_copy_(2, position, v)
            return self.cache * 1

    program = exov.lower(Cache(), (torch.ones(1, 2, 1, 2), torch.tensor([3])))
    method = exov.load_method(program.buffer)
    method.execute([torch.ones(1, 2, 1, 2), torch.tensor([7])])
    with pytest.raises(RuntimeError, match="index outside"):
        method.execute([torch.ones(1, 2, 1, 2), torch.tensor([8])])
    with pytest.raises(RuntimeError, match="load the method again"):
        method.execute([torch.ones(1, 2, 1, 2), torch.tensor([1])])
    fresh = exov.load_method(program.buffer)  # a new load starts from the program's values
    assert fresh.execute([torch.ones(1, 2, 1, 2), torch.tensor([1])])[0].sum().item() == 4.0


def test_declared_ranges_hold_only_where_openvino_reads_the_input():
    from executorch.exir import to_edge_transform_and_lower

    class Derived(torch.nn.Module):
        def forward(self, position, index):
            q = position[index]  # a lookup along a dynamic size: stays on ExecuTorch
            return (q + 1) == q, q + 1

    dynamic = {"position": {0: torch.export.Dim("n", min=1, max=16)}, "index": None}
    exported = torch.export.export(Derived(), (torch.tensor([2, 1, 2]), torch.tensor([0])), dynamic_shapes=dynamic)
    partitioner = exov.OpenvinoPartitioner(input_ranges={"position": (0, 10)})
    with pytest.warns(UserWarning, match="input_ranges: the range of 'position' is not used"):
        program = to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()
    method = exov.load_method(program.buffer)
    # Derived on ExecuTorch's side, so no range was assumed: exact, where float32 would say True.
    assert method.execute([torch.tensor([2**24, 1, 2]), torch.tensor([0])])[0].tolist() == [False]
    with pytest.raises(ValueError, match="within -16777215..16777215"):
        exov.OpenvinoPartitioner(input_ranges={"position": (0, 2**24)})
    with pytest.raises(ValueError, match="give \\(low, high\\), two ints"):
        exov.OpenvinoPartitioner(input_ranges={"position": (0,)})
