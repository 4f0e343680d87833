"""A program lowered on one interpreter and run on another (nox -s release).

    python portable_program.py lower DIR   writes DIR/program.pte, the inputs and eager PyTorch's outputs
    python portable_program.py check DIR   runs DIR/program.pte through executorch.runtime on this
                                           interpreter; prints one JSON line, exit status 1 on a mismatch

The program file does not depend on the Python that wrote it. The check
compares with the eager outputs written at lowering and with eager PyTorch on
this interpreter: float32 within 1e-5 relative (a bfloat16 or float16
computation misses it by orders of magnitude), integers exactly, dtype and
shape included. The model: a convolution, layer norm, linear layers, softmax
and an int32 from a comparison, all delegated (checked at lowering: no operator left to
ExecuTorch's kernels).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

FLOAT_RTOL = 1e-5


class SmallClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.LayerNorm(8 * 8 * 8)
        self.hidden = torch.nn.Linear(8 * 8 * 8, 64)
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        h = torch.relu(self.conv(x)).flatten(1)
        probabilities = torch.softmax(self.head(torch.nn.functional.gelu(self.hidden(self.norm(h)))), dim=-1)
        return probabilities, (h[:, :16] > 0).to(torch.int32) * 3


def _model_and_inputs():
    torch.manual_seed(0)
    model = SmallClassifier().eval()
    return model, (torch.randn(4, 3, 8, 8),)


def lower(out: Path) -> dict:
    import executorch_openvino as exov

    model, inputs = _model_and_inputs()
    program = exov.lower(model, inputs)
    left = [op.name for plan in program.executorch_program.execution_plan for op in plan.operators]
    if left:
        raise SystemExit(f"operators left to ExecuTorch's kernels: {left}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "program.pte").write_bytes(program.buffer)
    for i, tensor in enumerate(inputs):
        np.save(out / f"input{i}.npy", tensor.numpy())
    with torch.no_grad():
        for i, tensor in enumerate(model(*inputs)):
            np.save(out / f"eager{i}.npy", tensor.numpy())
    return {"python": sys.version.split()[0], "pte_bytes": (out / "program.pte").stat().st_size}


def _compare(name: str, got: np.ndarray, expected: np.ndarray) -> str | None:
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return f"{name}: {got.dtype}{list(got.shape)} against {expected.dtype}{list(expected.shape)}"
    if np.issubdtype(expected.dtype, np.integer):
        return None if np.array_equal(got, expected) else f"{name}: integers differ"
    error = float(np.max(np.abs(got - expected) / np.maximum(np.abs(expected), 1e-6)))
    return None if error <= FLOAT_RTOL else f"{name}: relative error {error:.3g} > {FLOAT_RTOL}"


def check(folder: Path) -> dict:
    import executorch_openvino as exov
    from executorch.runtime import Runtime

    from executorch_openvino.runtime import _native

    runtime = Runtime.get()
    registered = exov.BACKEND_ID in runtime.backend_registry.registered_backend_names
    # executorch's Method does not keep the Program, which owns the bytes: hold it.
    program = runtime.load_program((folder / "program.pte").read_bytes())
    method = program.load_method("forward")
    compiled = _native.live_compiled_models()
    inputs = [torch.from_numpy(np.load(folder / "input0.npy"))]
    outputs = [o.numpy() for o in method.execute(inputs)]
    model, _ = _model_and_inputs()
    with torch.no_grad():
        eager_here = [t.numpy() for t in model(*inputs)]
    problems = [] if len(outputs) == len(eager_here) else [f"{len(outputs)} outputs, eager gives {len(eager_here)}"]
    for i, got in enumerate(outputs):
        for which, expected in (("lowering interpreter's eager", np.load(folder / f"eager{i}.npy")),
                                ("this interpreter's eager", eager_here[i])):
            problem = _compare(f"output {i} against the {which}", got, expected)
            if problem:
                problems.append(problem)
    return {"python": sys.version.split()[0], "package": str(Path(exov.__file__).parent),
            "registered": registered, "compiled_models": compiled,
            "outputs": [f"{o.dtype}{list(o.shape)}" for o in outputs], "problems": problems}


if __name__ == "__main__":
    mode, folder = sys.argv[1], Path(sys.argv[2])
    result = lower(folder) if mode == "lower" else check(folder)
    print(json.dumps(result))
    if mode == "check" and (result["problems"] or not result["registered"] or result["compiled_models"] < 1):
        sys.exit(1)
