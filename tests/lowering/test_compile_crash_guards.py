"""lowering/compile_crash_guards.py: programs whose IR crashed OpenVINO 2026.4.1's CPU plugin at compile (SIGSEGV)
load and compute as eager. Each runs in a fresh interpreter, so that a crash fails the test, not the run."""

from __future__ import annotations

import pytest

from exov_testing.environment import run_python_json

# OpenVINO 2026.4.1's crash: newest release only in CI, both releases in the full older-release run by hand.

# Two biased matmuls whose result is added to a product broadcast from a column, and a new user's max-mode
# embedding bag beside an MLP; both numerics modes.
PROGRAMS = {
    "gated column": """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Linear(32, 16))
            def forward(self, x, z, w):
                return z * w[:, :1] + self.mlp(x)
        inputs = (torch.randn(6, 8), torch.randn(6, 16), torch.randn(6, 8))
    """,
    "max bag and mlp": """
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bag = torch.nn.EmbeddingBag(100, 16, mode="max")
                self.mlp = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
            def forward(self, indices, offsets, features):
                return self.bag(indices, offsets) + self.mlp(features)
        inputs = (torch.randint(0, 100, (20,)), torch.tensor([0, 3, 7, 12, 15, 20]), torch.randn(6, 8))
    """,
}


@pytest.mark.parametrize("numerics", ["exact", "fast"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.sampled(every=2)
def test_a_program_that_crashed_openvinos_compile_loads_and_matches_eager(tmp_path, name, numerics):
    result = run_python_json("""
        import json
        import torch
        import executorch_openvino as exov
        torch.manual_seed(0)
    """ + PROGRAMS[name] + f"""
        model = Model().eval()
        program = exov.lower(model, inputs, numerics={numerics!r})
        method = exov.load_method(program.buffer)
        with torch.no_grad():
            expected = model(*inputs)
        actual = method.execute(list(inputs))[0]
        print(json.dumps({{"delegated": exov.delegation_summary(program).partitions >= 1,
                          "error": (actual - expected).abs().max().item()}}))
    """, {}, tmp_path)
    assert result["delegated"]
    assert result["error"] <= 1e-4, result  # float32's (bfloat16 would be off by about 1e-2)
