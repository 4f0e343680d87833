"""One fresh process that loads a model, runs it, and reports load time and memory (for ``bench.py``).

Usage::

    python load_probe.py pte PROGRAM.pte INPUTS.pt [--cache-dir DIR]   # any ExecuTorch program
    python load_probe.py openvino MODEL.xml INPUTS.pt [--cache-dir DIR] # OpenVINO's API, f32 hint
    python load_probe.py first-load_method PROGRAM.pte INPUTS.pt          # first result, by each door
    python load_probe.py first-executorch.runtime PROGRAM.pte INPUTS.pt
    python load_probe.py first-openvino MODEL.xml INPUTS.pt

Prints one JSON line: ``load_s`` (seconds: ``load_program`` + ``load_method``,
or OpenVINO's ``compile_model`` of the IR's path; the OpenVINO library itself
and its CPU plugin are loaded before the clock starts, in every process),
``first_call_s``, ``rss_before_load_mib`` (resident memory after the imports
and the CPU plugin, MiB) and ``peak_rss_mib`` (the process's
peak resident memory after loading and 3 calls, MiB: ``VmHWM`` of
``/proc/self/status``, which starts afresh at exec; ``getrusage``'s
``ru_maxrss`` would carry the parent's peak over exec) and
``rss_after_calls_mib`` (resident memory then). The ``first-*`` kinds print only ``first_result_s``: the
seconds from after ``import torch`` to the first output, imports, OpenVINO's plugin and the load included, as
a new process of a user gets it (issue 50's goal: at most 1.5 s for a small program).
"""

from __future__ import annotations

import argparse
import json
import time


def _status_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1]) / 1024  # kB


def _load_pte(path: str, cache_dir: str | None):
    from executorch.runtime import Runtime

    try:
        import executorch_openvino as exov
    except ImportError:  # the bundled delegate's environment may lack this wheel
        exov = None
    if exov is not None:
        exov.load_openvino()
        exov.set_cache_dir(cache_dir)
    runtime = Runtime.get()

    def load():
        program = runtime.load_program(path)
        return program, program.load_method("forward")

    return load, lambda loaded, inputs: loaded[1].execute(inputs)


def _load_openvino_ir(path: str, cache_dir: str | None):
    import openvino as ov

    core = ov.Core()
    properties = {"INFERENCE_PRECISION_HINT": "f32"} | ({"CACHE_DIR": cache_dir} if cache_dir else {})

    def load():
        # From the path, as OpenVINO's documentation uses its cache: OpenVINO then keys
        # the cache by the path instead of hashing the model.
        compiled = core.compile_model(path, "CPU", properties)
        return compiled.create_infer_request()

    def call(request, inputs):
        for i, t in enumerate(inputs):
            request.set_input_tensor(i, ov.Tensor(t.numpy(), shared_memory=True))
        request.infer()

    return load, call


def _load_openvino_cpu_plugin() -> None:
    # OpenVINO's CPU plugin library is loaded by a process's first compile and stays: about 50 MiB of code
    # pages that would dwarf a small model's figures. Every process loads it before the baseline is read
    # (the delegate's libopenvino_c uses the same libopenvino and plugin as the Python package).
    import numpy as np
    import openvino as ov

    x = ov.opset13.parameter([1], np.float32)
    ov.Core().compile_model(ov.Model([ov.opset13.relu(x)], [x]), "CPU")


def _first_result(door: str, model: str, inputs_file: str) -> float:
    """Seconds from here (torch imported) to the first output through `door`."""
    start = time.perf_counter()
    import torch

    inputs = list(torch.load(inputs_file))
    if door == "load_method":
        import executorch_openvino as exov

        exov.load_method(model).execute(inputs)
    elif door == "executorch.runtime":
        from executorch.runtime import Runtime

        import executorch_openvino  # noqa: F401  # registers the delegate

        Runtime.get().load_program(model).load_method("forward").execute(inputs)
    else:
        import openvino as ov

        request = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request()
        request.infer([t.numpy() for t in inputs])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["pte", "openvino", "first-load_method", "first-executorch.runtime",
                                         "first-openvino"])
    parser.add_argument("model")
    parser.add_argument("inputs", help="a torch.save'd list of input tensors")
    parser.add_argument("--cache-dir", default=None, help="OpenVINO model cache directory")
    args = parser.parse_args()

    import torch

    if args.kind.startswith("first-"):
        print(json.dumps({"first_result_s": _first_result(args.kind[len("first-"):], args.model, args.inputs)}))
        return
    inputs = list(torch.load(args.inputs))
    _load_openvino_cpu_plugin()
    load, call = _load_pte(args.model, args.cache_dir) if args.kind == "pte" else _load_openvino_ir(args.model, args.cache_dir)
    rss_before = _status_mib("VmRSS")
    start = time.perf_counter()
    loaded = load()
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    call(loaded, inputs)
    first_call_s = time.perf_counter() - start
    for _ in range(2):
        call(loaded, inputs)
    peak = _status_mib("VmHWM")
    print(json.dumps({"load_s": load_s, "first_call_s": first_call_s, "rss_before_load_mib": rss_before,
                      "peak_rss_mib": peak, "rss_after_calls_mib": _status_mib("VmRSS")}))


if __name__ == "__main__":
    main()
