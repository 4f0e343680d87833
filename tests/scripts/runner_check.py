"""Runs a C++ runner build on MiniLM and compares it with executorch.runtime (for ``nox -s runner``).

    python runner_check.py RUNNER LIBOPENVINO_C

Lowers MiniLM (4 sentences x 32 tokens) with the installed wheel, runs the
runner on it with 30 timed calls, requires every output to equal
executorch.runtime's bit for bit (dtype and shape included), and prints the
median time per call of both.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

CALLS = 30


def main() -> int:
    runner, library = sys.argv[1], sys.argv[2]
    import executorch_openvino as exov
    from executorch_openvino.examples.minilm import load_model_and_inputs

    model, inputs = load_model_and_inputs(seq_len=32)
    Path("minilm.pte").write_bytes(exov.lower(model, inputs).buffer)
    arguments = []
    for i, tensor in enumerate(inputs):
        np.save(f"input_{i}.npy", tensor.numpy())
        arguments += ["--input", f"input_{i}.npy"]
    env = {**os.environ, "OPENVINO_LIB_PATH": library}
    result = subprocess.run([runner, "minilm.pte", *arguments, "--output-dir", "out", "--iterations", str(CALLS)],
                            capture_output=True, text=True, env=env, timeout=600)
    print(result.stdout)
    if result.returncode != 0:
        print(result.stderr[-4000:], file=sys.stderr)
        return 1
    runner_ms = float(re.search(r"timed runs: median ([0-9.]+) ms", result.stdout).group(1))

    method = exov.load_method("minilm.pte")
    expected = [t.numpy() for t in method.execute(list(inputs))]
    for i, want in enumerate(expected):
        got = np.load(f"out/output_{i}.npy")
        if (got.dtype, got.shape) != (want.dtype, want.shape) or got.tobytes() != want.tobytes():
            print(f"output {i} differs from executorch.runtime's", file=sys.stderr)
            return 1
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        method.execute(list(inputs))
        times.append((time.perf_counter() - start) * 1e3)
    print(f"MiniLM outputs equal executorch.runtime's bit for bit; median per call: runner {runner_ms:.2f} ms, "
          f"executorch.runtime from Python {statistics.median(times):.2f} ms ({CALLS} calls each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
