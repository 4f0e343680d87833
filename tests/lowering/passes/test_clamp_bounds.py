"""passes/clamp_bounds.py: half-precision clamps with number bounds that the dtype cannot hold give eager's
values to the bit (eager rounds the bound to nearest; OpenVINO's one-sided bfloat16 clamp gave the value one
step toward zero), for each clamp spelling, both numerics settings and both half dtypes."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import Fn, eager, lower, run

CLAMPS = {
    "clamp_min": lambda x: torch.clamp(x, min=0.1),
    "clamp_max": lambda x: torch.clamp(x, max=2.7),
    "clamp_both": lambda x: torch.clamp(x, -0.3, 0.3),
    # float16 refuses a bound beyond its range (eager: "cannot be converted ... without overflow")
    "clamp_min_method": lambda x: x.clamp_min(-1.6e38 if x.dtype == torch.bfloat16 else -60001.0) * 1,
    "clamp_max_method": lambda x: x.clamp_max(0.1) * 1,
    "hardtanh": lambda x: torch.nn.functional.hardtanh(x, -0.3, 2.7),
}


@pytest.mark.parametrize("numerics", ["exact", "fast"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", sorted(CLAMPS))
@pytest.mark.sampled(every=3)
def test_half_clamp_bounds_are_eagers_to_the_bit(name, dtype, numerics):
    big = 3e38 if dtype == torch.bfloat16 else 6e4
    x = torch.tensor([-big, -1e4, -100.0, -0.3, -0.0, 0.0, 0.0996, 0.1, 0.1001, 2.69, 2.71, 100.0, big], dtype=dtype)
    module = Fn(CLAMPS[name])
    pte, summary = lower(module, (x,), partitioner=exov.OpenVINOPartitioner(numerics=numerics))
    assert summary.delegated == summary.total, summary
    actual, expected = run(pte, (x,))[0], eager(module, (x,))[0]
    assert actual.dtype == expected.dtype
    assert torch.equal(actual, expected), (actual.tolist(), expected.tolist())
    assert torch.equal(torch.signbit(actual), torch.signbit(expected))
