"""Which of a lowered program's inputs and outputs ExecuTorch plans in the method's memory (``lower_exported``).

Inputs are left unplanned, so ExecuTorch computes on the caller's tensors instead of copying each into its
planned memory, except where the program changes an input in place (ExecuTorch 1.5.1 computed wrongly on such an
unplanned input). Outputs are planned unless the shapes are dynamic. Results are checked against eager on
several calls, with the caller's tensors changed and replaced between them.
"""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino import api
from exov_testing.programs import Fn, assert_matches_eager, eager

pytestmark = [pytest.mark.own_runtime]


def _planned(program) -> tuple[list[bool], list[bool]]:
    """Whether each input and each output of the program's first method has a place in its planned memory."""
    plan = program.executorch_program.execution_plan[0]
    return ([plan.values[i].val.allocation_info is not None for i in plan.inputs],
            [plan.values[i].val.allocation_info is not None for i in plan.outputs])


def test_static_inputs_are_computed_on_in_place_and_outputs_planned():
    model = Fn(lambda x, y: (torch.relu(x) * y, x - y, y))
    x, y = torch.randn(8, 16), torch.randn(8, 16)
    program = exov.lower(model, (x, y))
    assert _planned(program) == ([False, False], [True, True, True])
    method = exov.load_method(program.buffer)
    for _ in range(3):
        assert_matches_eager(method.execute([x, y]), eager(model, (x, y)))
        x.mul_(-1.5).add_(0.25)  # the same memory, new values: read again on the next call
        y = torch.randn(8, 16)  # another tensor


def test_an_input_changed_in_place_keeps_the_inputs_planned():
    class AddsOne(torch.nn.Module):
        def forward(self, x, y):
            x.add_(1)
            return x * 2, y + 1

    program = exov.lower(AddsOne(), (torch.zeros(4), torch.zeros(4)))
    assert _planned(program)[0] == [True, True]
    method = exov.load_method(program.buffer)
    x, y = torch.arange(4.0), torch.arange(4.0) - 2
    for _ in range(2):
        outputs = method.execute([x, y])
        # The program's copy of x changed, not the caller's (ExecuTorch's planned input).
        assert torch.equal(outputs[0], torch.arange(4.0) + 1) and torch.equal(outputs[1], (torch.arange(4.0) + 1) * 2)
        assert torch.equal(outputs[2], y + 1) and torch.equal(x, torch.arange(4.0))


class _TwiceAndItself(torch.nn.Module):
    def forward(self, x):
        return x * 2, x


def test_dynamic_shapes_leave_outputs_unplanned_too():
    model = _TwiceAndItself()
    n = torch.export.Dim("n", max=32)
    program = exov.lower(model, (torch.randn(5, 3),), dynamic_shapes=({0: n},))
    assert _planned(program) == ([False], [False, False])
    method = exov.load_method(program.buffer)
    for rows in (5, 32, 1):
        x = torch.randn(rows, 3)
        assert_matches_eager(method.execute([x]), eager(model, (x,)))


def test_the_old_keyword_still_works_with_a_deprecation_warning():
    model = Fn(lambda x: x + 1)
    x = torch.randn(4)
    with pytest.warns(DeprecationWarning, match="plan_outputs"):
        program = api.lower_exported(api.export(model, (x,)), exov.OpenVINOPartitioner(), plan_inputs=False)
    assert _planned(program) == ([False], [False])
    assert_matches_eager(exov.load_method(program.buffer).execute([x]), eager(model, (x,)))


def test_inputs_that_start_at_any_address_are_read_right():
    # The caller's memory reaches OpenVINO as it is: a slice one element in is 4 bytes past an aligned address.
    model = Fn(lambda x, y: (torch.nn.functional.linear(x, y.reshape(8, 8)), x * 2))
    x, y = torch.randn(16, 8), torch.randn(64)
    method = exov.load_method(exov.lower(model, (x, y)).buffer)
    shifted_x, shifted_y = torch.randn(16 * 8 + 1)[1:].view(16, 8), torch.randn(65)[1:]
    assert shifted_x.data_ptr() % 16 and shifted_x.is_contiguous()
    for a, b in [(shifted_x, shifted_y), (x, y), (shifted_x, y), (shifted_x, shifted_y)]:
        assert_matches_eager(method.execute([a, b]), eager(model, (a, b)))


def test_the_old_and_new_keyword_together_are_refused():
    exported = api.export(Fn(lambda x: x + 1), (torch.randn(4),))
    with pytest.raises(TypeError, match="give plan_outputs only"):
        api.lower_exported(exported, exov.OpenVINOPartitioner(), plan_outputs=True, plan_inputs=False)
