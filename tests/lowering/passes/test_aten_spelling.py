"""aten_spelling: reductions without a dim list reach OpenVINO's converter spelled out."""

from __future__ import annotations

import pytest
import torch

from exov_testing.cases import ALL_DIMS
from exov_testing.programs import check_fully_delegated, Fn

pytestmark = [pytest.mark.older_openvino, pytest.mark.aarch64]


@pytest.mark.parametrize("op", ALL_DIMS)
@pytest.mark.sampled(every=2)
def test_reduction_over_all_dims(op):
    """OpenVINO 2025.4.1's converter failed on reductions without a dim list (``x.amax()``,
    ``torch.mean(x, dim=None)``: "Got less inputs 1 than expected 2"), and the whole lowering with it."""
    check_fully_delegated(Fn(ALL_DIMS[op]), (torch.randn(3, 4),))
