"""The delegate's backend options from C++ (tests/native/backend_options.cpp).

ExecuTorch's set_option/get_option with the delegate's one option,
``cache_dir``: read back, an unknown key and a wrong type refused with a
message and nothing applied, and the option as a runtime spec of one load
(the first init writes OpenVINO's cache, the second imports it; a number is
refused at init). Under the sanitizers session the program is built with them.
"""

from __future__ import annotations

import os
import subprocess

import pytest
import torch

from exov_testing import REPOSITORY
from exov_testing.environment import require_all
from exov_testing.programs import Fn, lower

from exov_testing.compile_harness import build_harness, compiler, write_first_blob

ROOT = REPOSITORY

pytestmark = [pytest.mark.native]

CHECKS = 11


def test_backend_options_from_cpp(tmp_path, pip_openvino_c_library):
    if compiler() is None:
        if require_all():
            pytest.fail("a C++ compiler (g++) is needed for the backend-option test")
        pytest.skip("no C++ compiler")
    program = build_harness("backend_options", tmp_path / "native", sanitize=os.environ.get("EXOV_SANITIZE", ""))
    pte, summary = lower(Fn(lambda x: torch.tanh(x) * 3), (torch.randn(4, 8),))
    assert summary.partitions == 1
    blob = write_first_blob(pte, tmp_path / "partition.blob")

    env = {k: v for k, v in os.environ.items() if k not in ("INTEL_OPENVINO_DIR", "CONDA_PREFIX")}
    env["OPENVINO_LIB_PATH"] = str(pip_openvino_c_library)
    proc = subprocess.run([str(program), str(blob), str(tmp_path / "cache")], env=env, capture_output=True,
                          text=True, timeout=300)
    lines = [line for line in proc.stdout.splitlines() if ": " in line]
    failed = [line for line in lines if not line.endswith(": ok")]
    assert proc.returncode == 0 and not failed, f"exit {proc.returncode}: {failed}\n{proc.stderr[-3000:]}"
    assert len(lines) == CHECKS, proc.stdout
