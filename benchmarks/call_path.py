"""Where a tiny program's time per call goes from Python: the bench's tiny_add through each layer of the call.

Rows, each the median over interleaved rounds of microseconds per call in this process:

- ``openvino_python_api``: OpenVINO's own Python API on the delegate's IR (an infer request with its input
  tensors set once), the floor a Python user of OpenVINO gets;
- ``pybindings_uncloned``: executorch's pybindings method with ``clone_outputs=False`` (no output copy), the
  least an ExecuTorch caller can do;
- ``executorch_runtime``: ``executorch.runtime``'s ``Method.execute`` (outputs cloned by torch);
- ``exov_load_method``: this package's ``exov.load_method`` (the method run without executorch's pybindings:
  inputs read in place, a loaded copy per thread, the GIL let go while it runs, outputs copied);
- ``xnnpack_executorch_runtime``: XNNPACK's program of the same module through ``executorch.runtime``.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path


def _per_call_us(call, seconds: float) -> float:
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        call()
        calls += 1
    return elapsed / calls * 1e6


def measure(workdir: Path, inputs, rounds: int, round_seconds: float) -> dict:
    """``{row: median microseconds per call}`` for tiny_add's programs in ``workdir`` (see the module docstring),
    each row timed for ``round_seconds`` in each of ``rounds`` rounds; rows whose program is missing are left
    out."""
    import numpy as np
    import openvino as ov

    import executorch_openvino as exov
    from executorch.runtime import Runtime
    from executorch_openvino.contract import processed_blob
    from exov_testing.compile_harness import write_first_blob

    inputs = [x.contiguous() for x in inputs]
    runtime = Runtime.get()
    delegate_pte = workdir / "tiny_add.delegate.pte"
    method = runtime.load_program(delegate_pte).load_method("forward")
    loaded = exov.load_method(delegate_pte)

    blob = write_first_blob(delegate_pte.read_bytes(), workdir / "tiny_add.call_path.blob")
    ir = processed_blob.unpack(blob.read_bytes())
    core = ov.Core()
    model = core.read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy()))
    request = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
    for i, x in enumerate(inputs):
        request.set_input_tensor(i, ov.Tensor(x.numpy(), shared_memory=True))

    paths = {
        "openvino_python_api": request.infer,
        "pybindings_uncloned": lambda: method._method(inputs, False),
        "executorch_runtime": lambda: method.execute(inputs),
        "exov_load_method": lambda: loaded.execute(inputs),
    }
    xnnpack_pte = workdir / "tiny_add.xnnpack.pte"
    if xnnpack_pte.is_file():
        xnnpack = runtime.load_program(xnnpack_pte).load_method("forward")
        paths["xnnpack_executorch_runtime"] = lambda: xnnpack.execute(inputs)
    for call in paths.values():
        for _ in range(200):  # warm
            call()
    times: dict[str, list[float]] = {key: [] for key in paths}
    for _ in range(rounds):
        for key, call in paths.items():
            times[key].append(_per_call_us(call, round_seconds))
    result = {key: statistics.median(values) for key, values in times.items()}
    for key, us in result.items():
        print(f"   {key:<28} {us:7.2f} us per call", flush=True)
    return result
