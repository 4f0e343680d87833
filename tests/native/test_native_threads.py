"""The delegate called from C++ threads with no Python in between (tests/native/delegate_threads.cpp).

Sixteen threads init at the same moment, so OpenVINO's first load happens under
contention: it is loaded once and every init succeeds. Then four threads run
their own handles 1000 times each on different inputs, every output equal bit
for bit to the one-thread result, and that result matches eager PyTorch.
Under the sanitizers session (EXOV_SANITIZE set) the program is built with them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from exov_testing import REPOSITORY
from exov_testing.environment import require_all
from exov_testing.programs import lower, ThreadsModel

from exov_testing.compile_harness import build_harness, compiler, write_first_blob

ROOT = REPOSITORY

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]


def _harness_input(seed: int) -> torch.Tensor:
    k = torch.arange(4 * 32, dtype=torch.float32)
    return torch.sin(0.37 * k + 1.9 * seed).reshape(4, 32)


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    if compiler() is None:
        if require_all():
            pytest.fail("a C++ compiler (g++) is needed for the native thread test")
        pytest.skip("no C++ compiler")
    return build_harness("delegate_threads", tmp_path_factory.mktemp("native"),
                         sanitize=os.environ.get("EXOV_SANITIZE", ""))


def _blob_file(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    model = ThreadsModel().eval()
    pte, summary = lower(model, (_harness_input(0),))
    assert summary.delegated == summary.total and summary.partitions == 1
    return write_first_blob(pte, tmp_path / "partition.blob"), model


def _run(harness: Path, blob: Path, threads: int, runs: int, library: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("INTEL_OPENVINO_DIR", "CONDA_PREFIX")}
    env["OPENVINO_LIB_PATH"] = str(library)
    proc = subprocess.run([str(harness), str(blob), str(threads), str(runs)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_sixteen_threads_load_openvino_once_and_init_together(harness, tmp_path, pip_openvino_c_library):
    blob, model = _blob_file(tmp_path)
    result = _run(harness, blob, threads=16, runs=10, library=pip_openvino_c_library)
    assert result["inits_ok"] == 16
    assert result["loads"] == 1
    assert result["openvino"] == str(pip_openvino_c_library)
    assert result["failures"] == 0 and result["mismatches"] == 0
    with torch.no_grad():
        expected = model(_harness_input(0))
    torch.testing.assert_close(torch.tensor(result["output0"]).reshape(4, 16), expected, rtol=1e-5, atol=1e-5)


def test_four_threads_1000_runs_each_bit_identical_to_one_thread(harness, tmp_path, pip_openvino_c_library):
    blob, _ = _blob_file(tmp_path)
    result = _run(harness, blob, threads=4, runs=1000, library=pip_openvino_c_library)
    assert result["references_distinct"], "the threads' inputs must give different outputs"
    assert (result["runs"], result["failures"], result["mismatches"]) == (4000, 0, 0)
