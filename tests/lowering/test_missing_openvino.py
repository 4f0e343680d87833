"""Lowering without OpenVINO's Python package: one clear error with the pip command; running a .pte without it
still works (it needs only OpenVINO's C library)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import lower

pytestmark = [pytest.mark.own_runtime]

# Makes `import openvino` fail as it does where the package is not installed (the C library stays reachable
# through OPENVINO_LIB_PATH, as with an install tree).
HIDE_OPENVINO = """
    import sys
    class HideOpenVINO:
        def find_spec(self, name, path=None, target=None):
            if name == "openvino" or name.startswith("openvino."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, HideOpenVINO())
    import torch
    import executorch_openvino as exov
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
    x = torch.randn(2, 8)
"""


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENVINO_LIB_PATH=exov.load_openvino()["path"])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(HIDE_OPENVINO) + textwrap.dedent(code)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def _assert_one_clear_error(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 1, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: lowering needs OpenVINO's Python package"), last
    assert "pip install 'openvino" in last and "Running a lowered .pte needs only OpenVINO's C library" in last
    assert "During handling" not in proc.stderr, proc.stderr[-3000:]


def test_exov_lower_says_what_to_install_before_exporting(tmp_path):
    proc = _run("exov.lower(model, (x,))", tmp_path)
    _assert_one_clear_error(proc)
    assert proc.stderr.count('  File "') <= 4, proc.stderr  # raised at the call, not deep inside ExecuTorch


def test_executorchs_lowering_api_ends_with_the_same_error(tmp_path):
    proc = _run("""
        from executorch.exir import to_edge_transform_and_lower
        exported = torch.export.export(model, (x,))
        to_edge_transform_and_lower(exported, partitioner=[exov.OpenVINOPartitioner()])
    """, tmp_path)
    _assert_one_clear_error(proc)


def test_a_lowered_program_runs_without_the_python_package(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU()).eval()
    x = torch.randn(2, 8)
    (tmp_path / "model.pte").write_bytes(lower(model, (x,))[0])
    torch.save(x, tmp_path / "x.pt")
    expected = model(x)
    proc = _run("""
        out = exov.load_method("model.pte").execute([torch.load("x.pt")])[0]
        torch.save(out, "out.pt")
        assert "openvino" not in sys.modules
    """, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    torch.testing.assert_close(torch.load(tmp_path / "out.pt"), expected, rtol=0, atol=1e-6)
