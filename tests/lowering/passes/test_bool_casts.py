"""bool_casts: integer-to-bool casts delegated to OpenVINO are right for every value, -2**31 included."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, lower, run


@pytest.mark.parametrize("numerics", ["exact", "fast"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int8, torch.uint8])
@pytest.mark.sampled(every=2)
def test_integer_to_bool_casts_are_right_for_every_value(numerics, dtype):
    # OpenVINO's Convert gives False for -2**31; the partition compares with 0 instead.
    # (int64 inputs beyond int32 are refused by the runtime, test_bad_inputs.py.)
    info = torch.iinfo(torch.int32 if dtype == torch.int64 else dtype)
    values = torch.tensor(sorted({0, 1, -1 if info.min < 0 else 2, info.min, info.min + 1, info.max, 7}), dtype=dtype)
    module = Fn(lambda i, x: (i.bool(), x * i.bool()))
    inputs = (values, torch.randn(values.numel()))
    pte, summary = lower(module, inputs, partitioner=exov.OpenvinoPartitioner(numerics=numerics))
    assert summary.delegated == summary.total, summary
    assert_matches_eager(run(pte, inputs), eager(module, inputs))
