"""The machine and session the tests run in: what nox provides, the OpenVINO search settings, fresh
interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest


def require_all() -> bool:
    """Under nox every optional input (wheel path, other OpenVINO) must be present."""
    return os.environ.get("EXOV_REQUIRE_ALL") == "1"


def nox_provided(variable: str, what: str) -> str:
    """An environment variable the nox tests session sets: fails under nox, skips elsewhere when absent."""
    value = os.environ.get(variable)
    if not value:
        if require_all():
            pytest.fail(f"{variable} is not set: the nox tests session provides {what}")
        pytest.skip(f"{variable} not set (run through `nox -s tests`)")
    return value


# Settings of the OpenVINO library search that the machine running the tests may have.
SEARCH_VARIABLES = ("OPENVINO_LIB_PATH", "INTEL_OPENVINO_DIR", "CONDA_PREFIX")
# Where a Linux OpenVINO install tree keeps its libraries on this machine (native/delegate/library_search.cpp).
INSTALL_TREE_LIB = "runtime/lib/" + ("aarch64" if os.uname().machine == "aarch64" else "intel64")


def run_python_json(code: str, env_updates: dict, tmp_path, capture_stderr: bool = False) -> dict:
    """Runs `code` in a fresh interpreter; it prints one JSON line that is returned (with what the interpreter
    wrote to stderr as "stderr" when `capture_stderr`)."""
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    env.update(env_updates)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the interpreter died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**result, "stderr": proc.stderr} if capture_stderr else result
