"""The upper bound ExecuTorch 1.5.1 plans a dynamic size at: `Dim(max=16)`'s own, inclusive, and the upper end of a
size computed from it (docs/user-guide/shapes-and-copies.md, "Dynamic dimensions")."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing import REPOSITORY

pytestmark = [pytest.mark.own_runtime]


class Differences(torch.nn.Module):
    def forward(self, x):
        return x[1:] - x[:-1]  # n - 1 rows


def _planned_sizes(program, indices) -> list[list[int]]:
    plan = program.executorch_program.execution_plan[0]
    return [list(plan.values[i].val.sizes) for i in indices]


def test_max_is_inclusive_and_a_computed_size_has_its_own_bound():
    n = torch.export.Dim("n", min=3, max=16)  # min=3: torch.export refuses n - 1 == 1 as a size
    program = exov.lower(Differences(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: n}})
    plan = program.executorch_program.execution_plan[0]
    assert _planned_sizes(program, plan.inputs) == [[16, 3]]
    assert _planned_sizes(program, plan.outputs) == [[15, 3]]
    method = exov.load_method(program.buffer)
    x = torch.randn(16, 3)
    torch.testing.assert_close(method.execute([x])[0], x[1:] - x[:-1])
    with pytest.raises(ValueError):  # past the bound: refused before the call
        method.execute([torch.randn(17, 3)])
    # The user guide states these bounds: the figures measured here.
    guide = " ".join((REPOSITORY / "docs" / "user-guide" / "shapes-and-copies.md").read_text().split())
    (input_rows, _), (output_rows, _) = _planned_sizes(program, plan.inputs)[0], _planned_sizes(program, plan.outputs)[0]
    for stated in ('Dim("n", max=16)', f"input is planned at {input_rows}", f"is planned at {output_rows}, the upper end"):
        assert stated in guide, stated
