"""zero_dim_integer_dtypes: a 0-d integer tensor and a Python int keep eager's result dtype through ExecuTorch's to_edge."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn

pytestmark = [pytest.mark.native]


# 8-9 s each under the sanitizers (CI runs this module there): int32 in CI, the other dtypes by hand.
@pytest.mark.parametrize("dtype", [torch.int32, pytest.param(torch.int16, marks=pytest.mark.slow),
                                   pytest.param(torch.uint8, marks=pytest.mark.slow)])
def test_zero_dim_integer_times_python_int_keeps_its_dtype(dtype):
    """exov.lower works around ExecuTorch's to_edge, which returns int64 here (with or without a delegate)."""
    model = Fn(lambda s: (s * 2, s + 3, s - 1, 5 - s))
    inputs = (torch.tensor(7, dtype=dtype),)
    method = exov.load_method(exov.lower(model, inputs).buffer)
    outputs = list(method.execute(list(inputs)))
    assert [tuple(o.shape) for o in outputs] == [(), (), (), ()]
    assert_matches_eager(outputs, eager(model, inputs))
