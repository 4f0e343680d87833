"""Lowers MiniLM on x86_64 for tests/aarch64/test_x86_64_program.py to run under emulation.

    python tests/aarch64/lower_on_x86_64.py OUT_FOLDER

Writes minilm.pte, its inputs (input_<i>.npy) and eager PyTorch's output (eager_0.npy), computed here.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import numpy as np
import torch

import executorch_openvino as exov
from executorch_openvino.examples.minilm import load_model_and_inputs


def main(out: Path) -> None:
    assert platform.machine() == "x86_64", platform.machine()
    out.mkdir(parents=True, exist_ok=True)
    model, inputs = load_model_and_inputs(seq_len=16)
    (out / "minilm.pte").write_bytes(exov.lower(model, inputs).buffer)
    for i, value in enumerate(inputs):
        np.save(out / f"input_{i}.npy", value.numpy())
    with torch.no_grad():
        np.save(out / "eager_0.npy", model(*inputs).numpy())
    print(f"lowered MiniLM on {platform.machine()} into {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
