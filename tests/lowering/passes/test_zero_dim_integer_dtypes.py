"""zero_dim_integer_dtypes: a 0-d integer tensor and a Python int keep eager's result dtype through ExecuTorch's to_edge."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn

pytestmark = [pytest.mark.native]


@pytest.mark.parametrize("dtype", [torch.int32, torch.int16, torch.uint8])
def test_zero_dim_integer_times_python_int_keeps_its_dtype(dtype):
    """exov.lower works around ExecuTorch's to_edge, which returns int64 here (with or without a delegate)."""
    model = Fn(lambda s: (s * 2, s + 3, s - 1, 5 - s))
    inputs = (torch.tensor(7, dtype=dtype),)
    method = exov.load_method(exov.lower(model, inputs).buffer)
    outputs = list(method.execute(list(inputs)))
    assert [tuple(o.shape) for o in outputs] == [(), (), (), ()]
    assert_matches_eager(outputs, eager(model, inputs))
