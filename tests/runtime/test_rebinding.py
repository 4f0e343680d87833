"""The delegate binds a buffer to OpenVINO's infer request only when its address or shape changed.

The programs are lowered without memory planning for their inputs and outputs,
so ExecuTorch hands the caller's tensors to the delegate (a planned input is
copied into one arena address): the calls then reuse and change addresses on
purpose. A buffer changed in place between calls, inputs swapped and aliased,
one storage viewed with other shapes, an int argument. Each result must be
eager PyTorch's for the values passed in that call. (benchmarks/overhead.cpp
also alternates the output buffers and checks every result.)
"""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, OneInput

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]


def _method(model, inputs, dynamic_shapes=None):
    # exov.lower leaves inputs and outputs unplanned when given dynamic shapes;
    # an empty spec per input keeps them static (Fn takes *args: one tuple).
    program = exov.lower(model, inputs, dynamic_shapes=dynamic_shapes or (tuple({} for _ in inputs),))
    return exov.load_method(program.buffer)


def test_an_input_changed_in_place_between_calls_is_read_again():
    model = Fn(lambda x: torch.tanh(x) * 2)
    x = torch.randn(3, 5)
    method = _method(model, (x,))
    for step in range(4):
        x.mul_(-1.5).add_(step)  # same address, new values
        assert_matches_eager(list(method.execute([x])), eager(model, (x,)))


def test_two_inputs_swapped_and_alternating_buffers():
    model = Fn(lambda a, b: a * 2 - b)
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    method = _method(model, (a, b))
    for inputs in [(a, b), (b, a), (a, a), (b, b), (a, b)]:
        assert_matches_eager(list(method.execute(list(inputs))), eager(model, inputs))


def test_one_storage_viewed_with_other_shapes_of_a_dynamic_input():
    model = OneInput(lambda x: x.sum(dim=1, keepdim=True) + x)
    rows = torch.export.Dim("rows", min=1, max=16)
    method = _method(model, (torch.randn(6, 3),), ({0: rows},))
    storage = torch.randn(16, 3)
    for n in [6, 16, 2, 6, 1, 16]:
        view = storage[:n]  # every view starts at the same address
        assert_matches_eager(list(method.execute([view])), eager(model, (view,)))


def test_an_int_argument_changes_between_calls():
    # x.shape[0] of a dynamic input reaches the partition as an int (SymInt) argument,
    # which the delegate keeps at one address: only its value changes.
    model = OneInput(lambda x: x * 3 + x.shape[0])
    rows = torch.export.Dim("rows", min=1, max=8)
    method = _method(model, (torch.randn(5, 2),), ({0: rows},))
    x = torch.randn(8, 2)
    for n in [5, 2, 8, 5]:
        assert_matches_eager(list(method.execute([x[:n]])), eager(model, (x[:n],)))
