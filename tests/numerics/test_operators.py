"""Each operator is lowered alone, must be delegated entirely, and must match eager in float32."""

from __future__ import annotations

import pytest
import torch

from exov_testing.cases import OPERATORS
from exov_testing.programs import check_fully_delegated, Fn

pytestmark = [pytest.mark.older_openvino, pytest.mark.aarch64]

@pytest.mark.parametrize(
    "name,shape_index",
    [(name, i) for name, (_, shapes) in OPERATORS.items() for i in range(len(shapes))],
)
@pytest.mark.sampled(every=2)
def test_operator_matches_eager(name, shape_index):
    factory, shapes = OPERATORS[name]
    torch.manual_seed(shape_index)
    check_fully_delegated(factory(), shapes[shape_index])




def test_permute_with_negative_dims():
    """OpenVINO 2025.4.1's converter failed on ``x.permute(-1, 0, -2)``."""
    check_fully_delegated(Fn(lambda x: x.permute(-1, 0, -2)), (torch.randn(2, 3, 4),))
