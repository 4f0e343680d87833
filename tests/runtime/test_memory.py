"""Loading, running and freeing a delegated method over and over does not grow the process."""

from __future__ import annotations

import pytest
import torch

from exov_testing.environment import run_python_json
from exov_testing.programs import lower

pytestmark = [pytest.mark.own_runtime]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(32, 16)

    def forward(self, x):
        return torch.relu(self.linear(x))


@pytest.mark.slow
def test_1000_load_run_free_cycles_grow_resident_memory_by_less_than_1_mib(tmp_path):
    # Each cycle compiles the model in OpenVINO, runs it once and frees it: a compiled model,
    # infer request or tensor left behind per cycle would add up well past the bound.
    torch.manual_seed(0)
    pte, _ = lower(Model(), (torch.randn(4, 32),))
    (tmp_path / "model.pte").write_bytes(pte)
    code = f"""
        import gc, json, os, torch
        import executorch_openvino as exov
        pte, x = open({str(tmp_path / 'model.pte')!r}, "rb").read(), torch.randn(4, 32)
        def resident():
            return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        def cycle():
            method = exov.load_method(pte)
            method.execute([x])
            del method
        for _ in range(100):  # allocator pools and caches settle first
            cycle()
        gc.collect()
        before = resident()
        for _ in range(1000):
            cycle()
        gc.collect()
        print(json.dumps({{"growth": resident() - before}}))
    """
    growth = run_python_json(code, {}, tmp_path)["growth"]
    assert growth < 2**20, f"resident memory grew by {growth / 2**20:.2f} MiB over 1000 cycles"
