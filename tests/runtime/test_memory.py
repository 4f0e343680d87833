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


def test_a_cpu_program_loads_no_other_device_s_plugin(tmp_path):
    # Listing OpenVINO's devices to check the program's one loaded the GPU and NPU plugins as well: 18 MiB of
    # resident memory on a machine without either (OpenVINO 2026.4.1).
    torch.manual_seed(0)
    pte, _ = lower(Model(), (torch.randn(4, 32),))
    (tmp_path / "model.pte").write_bytes(pte)
    code = f"""
        import json, torch
        import executorch_openvino as exov
        exov.load_method({str(tmp_path / 'model.pte')!r}).execute([torch.randn(4, 32)])
        plugins = sorted({{line.split("/")[-1].split(".so")[0] for line in open("/proc/self/maps")
                          if "libopenvino_" in line and "_plugin" in line}})
        print(json.dumps({{"plugins": plugins}}))
    """
    plugins = run_python_json(code, {}, tmp_path)["plugins"]
    assert "libopenvino_intel_cpu_plugin" in plugins
    # OpenVINO itself loads its batching plugin (auto_batch) for a CPU compile: not a device.
    assert not [p for p in plugins if "gpu" in p or "npu" in p], plugins
