"""The engines `nox -s bench` compares, each behind the same small interface.

An engine is prepared once per model (lowering, writing and loading the
``.pte`` or compiling the model; both timed), checked against eager PyTorch
on the model's inputs, warmed up, and then asked for timed calls in rounds
interleaved with the other engines (``bench.py``).
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import torch

WARMUP_CALLS = 3
# An engine whose first call takes longer is timed on that call alone (ExecuTorch's
# portable kernels: about 0.3 s for the MLP, far more for MiniLM).
SLOW_CALL_S = 2.0  # exov_testing.bench_report.SLOW_CALL_S repeats it


class Engine:
    """Base: subclasses set ``load_s``/``lower_s`` in ``prepare`` and implement ``call``.

    ``prepare`` returns the max abs difference of the first output against
    eager PyTorch on the same inputs (float; 0.0 when equal).
    """

    key = ""
    label = ""

    def __init__(self):
        self.lower_s: float | None = None
        self.load_s: float | None = None
        self.first_call_s: float | None = None
        self.ir_operations: dict | None = None  # OpenVINO engines: {"total", "partitions", "types"}

    def prepare(self, case, workdir: Path, expected: torch.Tensor) -> float:
        self._prepare(case, workdir)
        start = time.perf_counter()
        output = self.call()
        self.first_call_s = time.perf_counter() - start
        error = max_abs_difference(output, expected)
        for _ in range(WARMUP_CALLS if self.first_call_s < SLOW_CALL_S else 0):
            self.call()
        return error

    def _prepare(self, case, workdir: Path) -> None:
        raise NotImplementedError

    def call(self) -> torch.Tensor:
        """One inference on the case's inputs; returns the first output."""
        raise NotImplementedError

    def time_calls(self, calls: int) -> list[float]:
        """Seconds per call for `calls` consecutive calls."""
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            self.call()
            times.append(time.perf_counter() - start)
        return times

    def close(self) -> None:
        """Frees what `prepare` loaded (the next case gets a fresh engine state)."""


def max_abs_difference(actual, expected: torch.Tensor) -> float:
    actual = torch.as_tensor(actual)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise AssertionError(f"output {tuple(actual.shape)} {actual.dtype}, eager gives "
                             f"{tuple(expected.shape)} {expected.dtype}")
    return float((actual.double() - expected.double()).abs().max()) if actual.numel() else 0.0


class Eager(Engine):
    key, label = "eager", "eager PyTorch"

    def _prepare(self, case, workdir):
        self.module, self.inputs = case.module, case.inputs

    def call(self):
        with torch.inference_mode():
            return self.module(*self.inputs)


def ir_operation_counts(model) -> collections.Counter:
    """OpenVINO operation types of `model`, Parameters, Results and Constants left out. `model` is an
    ``openvino.Model`` or an ``ExecutorchProgramManager``, whose partitions of this delegate are summed."""
    import numpy as np
    import openvino as ov

    if isinstance(model, ov.Model):
        return collections.Counter(op.get_type_name() for op in model.get_ops()
                                   if op.get_type_name() not in ("Parameter", "Result", "Constant"))
    from executorch_openvino.contract import processed_blob
    from executorch_openvino.lowering.preprocess import BACKEND_ID

    counts, core = collections.Counter(), ov.Core()  # one Core for every partition
    for _, lowered in model.exported_program().graph_module.named_children():
        if getattr(lowered, "backend_id", None) == BACKEND_ID:
            ir = processed_blob.unpack(lowered.processed_bytes)
            counts += ir_operation_counts(core.read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy())))
    return counts


class ExecutorchProgram(Engine):
    """A ``.pte`` run through ``executorch.runtime``: the harness of every ExecuTorch engine but this delegate's
    (:class:`ThisDelegateProgram`)."""

    counts_ir = False  # this delegate's engines report the OpenVINO operations of their partitions

    def _lower(self, case):
        raise NotImplementedError

    def _prepare(self, case, workdir):
        start = time.perf_counter()
        program = self._lower(case)
        self.lower_s = time.perf_counter() - start
        if self.counts_ir:
            counts = ir_operation_counts(program)
            self.ir_operations = {"total": sum(counts.values()), "partitions": sum(
                1 for _, m in program.exported_program().graph_module.named_children() if hasattr(m, "backend_id")),
                "types": dict(counts.most_common())}
        self.pte = workdir / f"{case.name}.{self.key}.pte"
        self.pte.write_bytes(program.buffer)
        self.inputs = list(case.inputs)
        start = time.perf_counter()
        self._load()
        self.load_s = time.perf_counter() - start

    def _load(self):
        from executorch.runtime import Runtime

        self.program = Runtime.get().load_program(self.pte)
        self.method = self.program.load_method("forward")

    def call(self):
        return self.method.execute(self.inputs)[0]

    def close(self):
        self.method = self.program = None


class ThisDelegateProgram(ExecutorchProgram):
    """A ``.pte`` of this delegate, run as README.md runs one: ``exov.load_method``.

    Unlike ``executorch.runtime``'s ``execute``, it runs the method without executorch's pybindings and copies
    outputs without torch's OpenMP threads, whose spinning after a copy slowed OpenVINO's next inference
    (native/python/python_method.h).
    """

    counts_ir = True

    def _load(self):
        import executorch_openvino as exov

        self.program = None
        self.method = exov.load_method(self.pte)


class Delegate(ThisDelegateProgram):
    key, label = "delegate", "this delegate"

    def _lower(self, case):
        import executorch_openvino as exov

        return exov.lower(case.module, case.inputs, dynamic_shapes=case.dynamic_shapes)


class DelegateFast(ThisDelegateProgram):
    key, label = "delegate_fast", "this delegate, numerics=fast"

    def _lower(self, case):
        import executorch_openvino as exov

        return exov.lower(case.module, case.inputs, dynamic_shapes=case.dynamic_shapes, numerics="fast")


class DelegateDecomposed(ThisDelegateProgram):
    """The default mode with nothing kept out of ExecuTorch's decomposition (``kept_operations.KEPT``
    emptied while lowering): what the kept operations gain, in the same run."""

    key, label = "delegate_decomposed", "this delegate, nothing kept whole"

    def _lower(self, case):
        import executorch_openvino as exov
        from executorch_openvino.lowering import kept_operations

        saved = dict(kept_operations.KEPT)
        kept_operations.KEPT.clear()
        try:
            return exov.lower(case.module, case.inputs, dynamic_shapes=case.dynamic_shapes)
        finally:
            kept_operations.KEPT.update(saved)


class DelegateThroughExecutorchRuntime(ExecutorchProgram):
    """This delegate's default program run as ExecuTorch's docs run a ``.pte``: ``executorch.runtime``, whose
    output copy by torch wakes its OpenMP threads, which then spin beside OpenVINO's next inference unless
    ``OMP_WAIT_POLICY=PASSIVE`` (docs/user-guide/troubleshooting.md)."""

    key, label = "delegate_executorch_runtime", "this delegate via executorch.runtime"

    def _lower(self, case):
        import executorch_openvino as exov

        return exov.lower(case.module, case.inputs, dynamic_shapes=case.dynamic_shapes)


class DelegateThroughRunner(ExecutorchProgram):
    """This delegate's default program run by ``executorch-openvino-run``, the C++ runner on ExecuTorch's
    ``Module`` (the door of a C++ application): one process per round, started and loaded outside the timed
    runs, which it times itself (``--times``: each run's milliseconds, the first run left out). No Python is
    in its times: against OpenVINO's Python API, a model as small as tiny_add measures the Python layer."""

    key, label = "delegate_runner", "this delegate via the C++ runner (Module)"
    counts_ir = True

    def _lower(self, case):
        import executorch_openvino as exov

        return exov.lower(case.module, case.inputs, dynamic_shapes=case.dynamic_shapes)

    def _load(self):
        import numpy as np

        self.arguments = [str(self.pte)]
        for i, tensor in enumerate(self.inputs):
            path = self.pte.with_name(f"{self.pte.stem}.input{i}.npy")
            np.save(path, tensor.numpy())
            self.arguments += ["--input", str(path)]
        self.outputs = self.pte.with_name(f"{self.pte.stem}.outputs")

    def _run(self, *arguments: str) -> str:
        command = [str(Path(sys.executable).with_name("executorch-openvino-run")), *self.arguments, *arguments]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"executorch-openvino-run failed ({result.returncode}): {result.stderr[-1500:]}")
        return result.stdout

    def prepare(self, case, workdir, expected):
        self.first_runs: list[tuple[float, float]] = []
        error = super().prepare(case, workdir, expected)
        # Each call is a runner process: its load and first run are the runner's own figures, not the process's
        # seconds (started, torch-free but loading OpenVINO): timed as one call, lstm's row read 3.4 s, a slow
        # engine's single cold call, where the runner's first run took milliseconds.
        self.load_s, self.first_call_s = self.first_runs[0]
        return error

    def call(self):
        import numpy as np

        stdout = self._run("--iterations", "0", "--output-dir", str(self.outputs))
        found = re.search(r": load ([\d.]+) ms, first run ([\d.]+) ms", stdout)
        if found is None:
            raise RuntimeError(f"executorch-openvino-run printed no load and first-run times: {stdout[-500:]}")
        self.first_runs.append((float(found[1]) / 1e3, float(found[2]) / 1e3))
        return torch.from_numpy(np.load(self.outputs / "output_0.npy"))

    def time_calls(self, calls: int) -> list[float]:
        stdout = self._run("--iterations", str(calls), "--times")
        line = next(line for line in stdout.splitlines() if line.startswith("run times ms:"))
        return [float(ms) / 1e3 for ms in line.split(":", 1)[1].split()]


class Xnnpack(ExecutorchProgram):
    key, label = "xnnpack", "XNNPACK delegate"

    def _lower(self, case):
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower

        return to_edge_transform_and_lower(case.export(), partitioner=[XnnpackPartitioner()]).to_executorch()


class Portable(ExecutorchProgram):
    key, label = "portable", "ExecuTorch kernels, no delegate"

    def _lower(self, case):
        from executorch.exir import to_edge

        return to_edge(case.export()).to_executorch()


def openvino_model(case):
    """The whole model as one partition, converted as ``exov.lower(..., numerics="fast")`` converts one.

    The same steps as ``executorch_openvino.api.lower`` up to the partitioner
    (contiguous example inputs, its export passes, ExecuTorch's decomposition
    with the operations the partitioner keeps whole), then the delegate's own
    conversion of the whole graph. Returns an ``openvino.Model``.
    """
    import numpy as np
    import openvino as ov
    from executorch.exir import EdgeCompileConfig, to_edge

    from executorch_openvino.lowering import kept_operations
    from executorch_openvino.lowering.passes.kept_result_copies import copy_kept_results
    from executorch_openvino.runtime.method_inputs import contiguous
    from executorch_openvino.lowering.passes.constant_cumsums import fold_constant_integer_cumsums
    from executorch_openvino.lowering.conversion import convert_partition
    from executorch_openvino.lowering.passes.zero_dim_integer_dtypes import keep_zero_dim_integer_dtypes

    exported = case.export(tuple(contiguous(t) for t in case.inputs))
    keep_zero_dim_integer_dtypes(exported)
    fold_constant_integer_cumsums(exported)
    # Every kept operation stays whole here (the bench's models are float32, where the partitioner keeps them).
    copy_kept_results(exported, lambda node: node.target in kept_operations.KEPT)
    config = EdgeCompileConfig(preserve_ops=list(kept_operations.KEPT), _check_ir_validity=False)
    ir = convert_partition(to_edge(exported, compile_config=config).exported_program(), propagate_nans=False)
    return ov.Core().read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy()))


class OpenVINOConvert(Engine):
    """What a user who calls ``openvino.convert_model`` on the same ``torch.export`` program gets: the limit.

    OpenVINO's own conversion of ``torch.export.export(module, inputs)``, with
    none of ExecuTorch's decomposition, compiled with the property the delegate
    passes on CPU (``INFERENCE_PRECISION_HINT=f32``) and run through OpenVINO's
    Python API without copies. Unlike ``executorch.runtime``, which copies
    planned inputs into its arena and clones outputs, nothing is copied. Each
    call wraps the inputs in ``ov.Tensor`` without copying, sets them, infers
    and returns a view of OpenVINO's output buffer: the fastest of the idioms
    measured for OpenVINO's Python API (2026.4.1, x + y on 16 floats: 47 us per
    call, against 159 us for ``infer(inputs, share_inputs=True, share_outputs=True)``).
    """

    key, label = "openvino", "OpenVINO convert_model + API"
    properties = {"INFERENCE_PRECISION_HINT": "f32"}  # what the delegate passes on CPU by default

    def _model(self, case):
        import openvino as ov

        return ov.convert_model(case.export())

    def _prepare(self, case, workdir):
        import openvino as ov

        start = time.perf_counter()
        model = self._model(case)
        self.lower_s = time.perf_counter() - start
        counts = ir_operation_counts(model)
        self.ir_operations = {"total": sum(counts.values()), "partitions": 1, "types": dict(counts.most_common())}
        start = time.perf_counter()
        core = ov.Core()
        self.compiled = core.compile_model(model, "CPU", self.properties)
        self.request = self.compiled.create_infer_request()
        self.load_s = time.perf_counter() - start
        self.inputs = [t.numpy() for t in case.inputs]
        self.tensor = ov.Tensor

    def call(self):
        request = self.request
        for i, array in enumerate(self.inputs):
            request.set_input_tensor(i, self.tensor(array, shared_memory=True))
        request.infer()
        return torch.from_numpy(request.get_output_tensor(0).data)

    def close(self):
        self.request = self.compiled = None


class OpenVINOSameIr(OpenVINOConvert):
    """The whole program converted as the delegate converts a partition (``openvino_model``), compiled and
    run as :class:`OpenVINOConvert` runs its model: against it, the conversion's loss; against the
    delegate, the runtime's overhead."""

    key, label = "openvino_same_ir", "OpenVINO API (same IR)"

    def _model(self, case):
        return openvino_model(case)


def environment_for(python: str) -> dict:
    """The environment for a child process running `python`.

    Without ``OPENVINO_LIB_PATH``: importing executorch's pybindings sets it
    to this environment's OpenVINO library when it is unset, and a child in
    another environment (the bundled delegate's, with OpenVINO 2025.4.1) would
    inherit it and load this one's 2026.4.1 instead (seen: its init failed).
    """
    return {k: v for k, v in os.environ.items() if k != "OPENVINO_LIB_PATH"}


class BundledOpenVINO(Engine):
    """executorch's own ``OpenvinoBackend``, driven in its own environment through ``bundled_worker.py``.

    Its Python side needs ``nncf`` and it works with OpenVINO 2025.4.1 (docs/design.md),
    so it cannot share the main environment. Calls are timed in the worker.
    """

    key, label = "bundled", "executorch's OpenvinoBackend (OV 2025.4.1)"

    def __init__(self, python: str):
        super().__init__()
        worker = Path(__file__).with_name("bundled_worker.py")
        self.process = subprocess.Popen([python, str(worker)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=environment_for(python))

    def _ask(self, **command) -> dict:
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the bundled-delegate worker ended (exit status {self.process.wait()}); "
                               "its error is above")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"bundled-delegate worker: {reply['error']}")
        return reply

    def prepare(self, case, workdir, expected):
        reply = self._ask(command="prepare", case=case.name, workdir=str(workdir))
        self.lower_s, self.load_s, self.first_call_s = reply["lower_s"], reply["load_s"], reply["first_call_s"]
        return reply["max_abs"]

    def time_calls(self, calls):
        return self._ask(command="time", calls=calls)["times"]

    def close(self):
        self._ask(command="close")

    def shutdown(self):
        if self.process.poll() is None:
            self._ask(command="quit")
            self.process.wait(timeout=60)


LOCAL_ENGINES = [OpenVINOConvert, OpenVINOSameIr, Delegate, DelegateFast, DelegateDecomposed,
                 DelegateThroughExecutorchRuntime, DelegateThroughRunner, Xnnpack, Portable, Eager]
