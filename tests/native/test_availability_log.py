"""A C++ application where OpenVINO's C library is not found (tests/native/availability_probe.cpp): the first
failed availability check writes the places tried, in order and with why each failed, to ExecuTorch's log; the
same failure again writes nothing (applications poll it). Python processes get it in the exception instead
(tests/runtime/test_library_loading.py)."""

from __future__ import annotations

import os
import subprocess

import pytest

from exov_testing.compile_harness import build_harness, compiler
from exov_testing.environment import SEARCH_VARIABLES, require_all

pytestmark = [pytest.mark.native]


def test_a_cpp_application_is_told_where_openvino_was_looked_for(tmp_path):
    if compiler() is None:
        if require_all():
            pytest.fail("a C++ compiler (g++) is needed for the availability log test")
        pytest.skip("no C++ compiler")
    program = build_harness("availability_probe", tmp_path / "native", sanitize=os.environ.get("EXOV_SANITIZE", ""))
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    env.update(INTEL_OPENVINO_DIR=str(tmp_path / "no-tree"), LD_LIBRARY_PATH="")
    proc = subprocess.run([str(program)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.split() == "available: 0 0 last error kept: 1".split(), (proc.stdout, proc.stderr[-3000:])
    log = proc.stderr
    assert log.count("could not load the OpenVINO C library. Places tried, in order:") == 1, log
    # What was tried (the system loader, with its reason), then the places that held no library.
    tried, empty = log.index("- system loader: libopenvino_c.so"), log.index("holding no OpenVINO C library:")
    assert tried < empty < log.index("- INTEL_OPENVINO_DIR install tree: no libopenvino_c.so in"), log
