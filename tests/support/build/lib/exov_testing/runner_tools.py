"""Running a .pte with the wheel's C++ runner and comparing with executorch.runtime, bit for bit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np

import executorch_openvino as exov
from exov_testing.environment import SEARCH_VARIABLES

RUNNER = Path(exov.__file__).with_name("executorch_openvino_run")


def run_runner(*args, env_updates=None, runner=RUNNER, cwd=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    env.update(env_updates or {})
    return subprocess.run([str(runner), *map(str, args)], capture_output=True, text=True, timeout=600, env=env,
                          cwd=cwd)


def save_inputs(inputs, folder: Path) -> list:
    """Writes each input as folder/input_<i>.npy; returns the runner's --input arguments."""
    args = []
    for i, value in enumerate(inputs):
        path = folder / f"input_{i}.npy"
        np.save(path, value.numpy())
        args += ["--input", path]
    return args


def assert_runner_matches_python(pte: Path, inputs, tmp_path: Path, *extra) -> subprocess.CompletedProcess:
    """Runs `pte` with the runner and with executorch.runtime; every output equal bit for bit, dtype and shape."""
    out = tmp_path / "out"
    # The OpenVINO this Python process runs (OPENVINO_LIB_PATH or another pip package may point elsewhere).
    library = exov.load_openvino()["path"]
    result = run_runner(pte, *save_inputs(inputs, tmp_path), "--output-dir", out, "--openvino-lib", library, *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    expected = [t.numpy() for t in exov.load_method(pte).execute(list(inputs))]
    for i, want in enumerate(expected):
        got = np.load(out / f"output_{i}.npy")
        assert (got.dtype, got.shape) == (want.dtype, want.shape), f"output {i}"
        assert got.tobytes() == want.tobytes(), f"output {i} differs from executorch.runtime's"
    assert not (out / f"output_{len(expected)}.npy").exists()
    return result
