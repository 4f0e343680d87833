"""High-level API: lower a module to a ``.pte`` for OpenVINO, load and run it.

    import executorch_openvino as exov
    program = exov.lower(model, (x,))            # ExecutorchProgramManager
    program.buffer                                # the .pte bytes
    method = exov.load_method(program.buffer)     # OpenvinoMethod around executorch.runtime's Method
    outputs = method.execute([x])                 # from any number of threads
"""

from __future__ import annotations

import os
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch

from . import _native
from .runtime.method_inputs import as_method_inputs, contiguous, explain_refused_inputs
from .lowering.partitioner import OpenvinoPartitioner
from .lowering.passes import run_before_emission


def lower(module: torch.nn.Module, example_inputs: tuple, *, device: str = "CPU",
          inference_precision: str = "", dynamic_shapes=None, numerics: str = "exact",
          performance_hint: str = ""):
    """``torch.export`` + ExecuTorch edge lowering with :class:`OpenvinoPartitioner`.

    Returns an ``executorch.exir.ExecutorchProgramManager`` (``.buffer`` is the
    ``.pte``). ``example_inputs``: a tuple (or list) of the module's positional inputs. Raises ``ValueError``
    for bad compile specs before exporting, ``TypeError`` for example inputs that are not a tuple or list.
    Example inputs in another memory layout (channels_last) are exported as
    contiguous: the program takes contiguous inputs, and
    :meth:`OpenvinoMethod.execute` passes any layout as contiguous. Raises
    ``TypeError`` for a program with complex tensors.

    With ``dynamic_shapes``, the program's inputs and outputs are not memory
    planned: ExecuTorch would otherwise allocate and zero them at their upper
    bounds when the method loads (measured: a (n <= 1e6, 256) float32
    input/output pair cost 1980 MiB resident at load, 27 MiB unplanned). An
    output that is an input is then returned through a copy
    (:mod:`executorch_openvino.lowering.passes.returned_inputs`: ExecuTorch 1.5.1 returned zeros).
    """
    partitioner = OpenvinoPartitioner(device=device, inference_precision=inference_precision, numerics=numerics,
                                      performance_hint=performance_hint)
    exported = export(module, example_inputs, dynamic_shapes=dynamic_shapes)
    _warn_about_unbounded_sizes(exported)
    return lower_exported(exported, partitioner, plan_inputs=dynamic_shapes is None)


def _warn_about_unbounded_sizes(exported) -> None:
    """ExecuTorch 1.5.1 plans a dynamic size without an upper bound at the example's size (measured: a
    (2, 5) example with ``Dim("b")`` refused a batch of 3 at run time)."""
    import warnings

    from .input_spec import finite_bound

    unbounded = {symbol for symbol, bounds in exported.range_constraints.items() if finite_bound(bounds.upper) is None}
    if not unbounded:
        return
    user_inputs = set(exported.graph_signature.user_inputs)
    placeholders = [n for n in exported.graph.nodes if n.op == "placeholder" and n.name in user_inputs]
    where = [f"input {index} dimension {dim}"
             for index, node in enumerate(placeholders)
             for dim, size in enumerate(getattr(node.meta.get("val"), "shape", ()))
             if isinstance(size, torch.SymInt) and size.node.expr in unbounded]
    warnings.warn(f"dynamic sizes without an upper bound ({', '.join(where) or ', '.join(map(str, unbounded))}): "
                  "ExecuTorch plans them at the example's size, and larger ones fail at run time. Give one, "
                  "e.g. Dim('b', max=64)", stacklevel=3)


def export(module: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None,
           dynamic_shapes=None):
    """``torch.export.export`` of ``module`` as :func:`lower` does it: example tensors made
    contiguous first; complex tensors, and example inputs that are not a tuple or list, refused (``TypeError``)."""
    if not isinstance(example_inputs, (tuple, list)):
        # tuple(tensor) would split a tensor along its first dimension into several inputs.
        raise TypeError(f"example_inputs is a {type(example_inputs).__name__}: give a tuple of the module's "
                        f"positional inputs, e.g. (x,) for one tensor")
    # OpenVINO picks its own layouts; a channels_last example would give the
    # program channels_last inputs, which the delegate does not take and
    # ExecuTorch 1.5.1's kernels fail on (x * 2: "different dim orders").
    example_inputs = torch.utils._pytree.tree_map(contiguous, tuple(example_inputs))
    example_kwargs = torch.utils._pytree.tree_map(contiguous, dict(example_kwargs or {}))
    exported = torch.export.export(module, example_inputs, example_kwargs, dynamic_shapes=dynamic_shapes)
    _refuse_complex_tensors(exported)
    return exported


def lower_exported(exported, partitioner: OpenvinoPartitioner, *, plan_inputs: bool = True):
    """The ``ExecutorchProgramManager`` of an :func:`export` result, lowered with ``partitioner``.

    ``plan_inputs=False`` leaves the program's inputs and outputs out of
    memory planning (what :func:`lower` does for dynamic shapes). Modifies
    ``exported`` in place (dtype and constant-folding passes).
    """
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    # (OpenvinoPartitioner.transform_for_pre_decomposition runs this package's passes on `exported` first.)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    # (Mutated buffers start from the module's values: OpenvinoPartitioner marks them.)
    signature = edge.exported_program().graph_signature
    # An input the program changes in place must be planned: left to the
    # caller, ExecuTorch 1.5.1 computed on it wrongly (x.add_(1); x * 2 gave
    # [2, 2, 2, 2] for [0, 1, 2, 3], even without a delegate).
    changes_inputs = any(spec.kind.name == "USER_INPUT_MUTATION" for spec in signature.output_specs)
    planning = MemoryPlanningPass(alloc_graph_input=plan_inputs or changes_inputs, alloc_graph_output=plan_inputs)
    if not plan_inputs:
        run_before_emission(edge.exported_program())
    return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=planning))


def _refuse_complex_tensors(exported) -> None:
    """OpenVINO has no complex element type, and ExecuTorch 1.5.1's to_edge refuses
    complex ops with a misleading "mismatched dtypes" SpecViolationError."""
    for node in exported.graph.nodes:
        value = node.meta.get("val")
        if isinstance(value, torch.Tensor) and value.is_complex():
            raise TypeError(
                f"'{node.name}' is a {value.dtype} tensor: neither OpenVINO nor ExecuTorch's edge dialect takes "
                "complex dtypes. Carry real and imaginary parts as a trailing dimension of 2 "
                "(torch.view_as_real) and write the complex arithmetic on them.")


@dataclass(frozen=True)
class DelegationSummary:
    """Operator counts of a lowered edge program: ``delegated / total`` is the fraction on OpenVINO."""

    delegated: int
    total: int
    partitions: int

    @property
    def fraction(self) -> float:
        return self.delegated / self.total if self.total else 0.0


def delegation_summary(program, method: str = "forward") -> DelegationSummary:
    """Counts the operator nodes inside OpenVINO partitions against all operator nodes of a lowered program.

    ``program``: what :func:`lower` returns (an ``ExecutorchProgramManager``), the ``EdgeProgramManager``
    of ``to_edge_transform_and_lower``, or the ``ExportedProgram`` of either (``.exported_program()``).
    ``method``: which method of a program manager (default ``forward``). Operators inside another
    backend's delegate (XNNPACK's, say) count in ``total``, not in ``delegated``; ExecuTorch's
    memory-planning nodes (``alloc``) are not operators and are not counted; a program that was never
    lowered gives ``delegated == 0``. Raises ``TypeError`` for anything else, ``ValueError`` for a method
    the manager lacks (naming those it has).
    """
    from .lowering.preprocess import BACKEND_ID

    if hasattr(program, "exported_program") and callable(program.exported_program):
        methods = sorted(getattr(program, "methods", None) or [method])
        if method not in methods:
            raise ValueError(f"the program has no method {method!r}; its methods: {', '.join(methods)} "
                             "(delegation_summary(program, method=...))")
        program = program.exported_program(method)
    if not isinstance(program, torch.export.ExportedProgram):
        raise TypeError(f"delegation_summary takes a lowered program (what exov.lower or "
                        f"to_edge_transform_and_lower returns), not a {type(program).__name__}")
    delegated = outside = partitions = 0
    module = program.graph_module
    for node in module.graph.nodes:
        if node.op != "call_function" or getattr(node.target, "__module__", "") == "executorch.exir.memory":
            continue
        name = getattr(node.target, "__name__", str(node.target))
        if name == "executorch_call_delegate":
            lowered = getattr(module, node.args[0].target)
            inside = sum(1 for n in lowered.original_module.graph.nodes
                         if n.op == "call_function" and getattr(n.target, "__name__", "") != "getitem")
            if lowered.backend_id == BACKEND_ID:
                partitions += 1
                delegated += inside
            else:
                outside += inside
        elif name != "getitem":
            outside += 1
    return DelegationSummary(delegated, delegated + outside, partitions)


class _DelegateErrors:
    """Adds the delegate's own message to ExecuTorch's RuntimeError (which carries only a code).

    The message is this thread's (``thread_last_error``): another thread's
    failure meanwhile neither replaces nor clears it.
    """

    def __enter__(self):
        _native.clear_thread_last_error()

    def __exit__(self, kind, error, traceback):
        if isinstance(error, RuntimeError):
            detail = _native.thread_last_error()
            if detail:
                raise RuntimeError(f"{error}\nexecutorch-openvino: {detail}") from error
        return False


# At most this many loaded copies of one method, whatever OpenVINO suggests: each
# holds the method's planned memory (ExecuTorch's arena, inputs and outputs).
MAX_CONCURRENT_CALLS = 16


class OpenvinoMethod:
    """A loaded ExecuTorch method whose errors name what the delegate found wrong, callable from several threads.

    ``execute(inputs)`` takes the method's inputs (a list of tensors of the
    exported dtypes and shapes, in any memory layout) and returns its outputs as
    a list. It raises ``ValueError`` naming the input, what the method takes and
    what to pass when ExecuTorch refuses the inputs (count, dtype, rank, sizes),
    and ``RuntimeError`` with ExecuTorch's error code and the delegate's message
    on any other failure.

    Threads: an ExecuTorch method is not reentrant (its planned memory holds
    the inputs, intermediates and outputs of the running call), so each call
    takes a loaded copy of the method that no other call is using, and waits
    when all :attr:`max_concurrent_calls` are busy. A copy is another program
    load from the same ``.pte`` (its own planned memory, the same OpenVINO
    compiled models: ``_native.live_compiled_models()``), made the first time
    a call finds every copy busy: sequential calls use one copy. During each
    OpenVINO inference the thread lets the Python interpreter go, so copies run
    at once; outside it calls hold the interpreter, as ``executorch.runtime``
    does. Other attributes are those of ``executorch.runtime.Method`` (of the
    first copy).
    """

    def __init__(self, method, program, *, reload=None, max_concurrent_calls: int = 1):
        self._method = method  # the first copy: metadata and other attributes
        self._program = program  # the method must not outlive its program
        self._reload = reload  # () -> (method, program), another copy; None: never
        self._max = max_concurrent_calls if reload is not None else 1
        self._idle = [(method, program)]
        self._loaded = 1
        self._loading = 0
        self._changed = threading.Condition(threading.Lock())

    @property
    def max_concurrent_calls(self) -> int:
        """How many calls may run at once (1: one at a time). See :func:`load_method`."""
        return self._max

    @property
    def loaded_copies(self) -> int:
        """How many copies of the method are loaded now: 1, more once calls overlapped."""
        return self._loaded

    def execute(self, inputs):
        inputs = as_method_inputs(inputs)
        copy = self._take()
        try:
            return self._run(copy[0], inputs)
        finally:
            with self._changed:
                self._idle.append(copy)
                self._changed.notify()

    def _run(self, method, inputs):
        with _DelegateErrors():
            try:
                _native.begin_call()
                try:
                    return method.execute(inputs)
                finally:
                    _native.end_call()
            except RuntimeError as error:
                # ExecuTorch logs why it refused the inputs and raises only a code.
                problem = explain_refused_inputs(self._method.metadata, inputs) if "set_inputs" in str(error) else None
                if problem is None:
                    raise
                raise ValueError(f"{problem}\n(ExecuTorch: {error})") from error

    def _take(self):
        """An idle copy (the most recently used), a new one when all are busy and there may be more, else waits."""
        with self._changed:
            while not self._idle:
                if self._loaded + self._loading < self._max:
                    self._loading += 1
                    break
                self._changed.wait()
            else:
                return self._idle.pop()
        try:
            copy = self._reload()
        except BaseException as error:
            with self._changed:
                self._loading -= 1
                self._max = self._loaded + self._loading  # no more attempts: calls wait for a copy instead
                self._changed.notify_all()
            if not isinstance(error, Exception):
                raise
            warnings.warn(f"executorch-openvino: could not load another copy of the method for a concurrent "
                          f"call ({error}); calls wait for one of the {self._max} loaded instead",
                          RuntimeWarning, stacklevel=3)
            return self._take()
        with self._changed:
            self._loading -= 1
            self._loaded += 1
        return copy

    def __getattr__(self, name):
        return getattr(self._method, name)


def _concurrency(inits: list, requested) -> tuple[int, str]:
    """How many calls may run at once, from what the method's inits reported, and why no more.

    Several calls need several loaded copies, which is right only when the
    program keeps nothing between calls (each copy would keep its own state)
    and pays only where the GIL is let go, in OpenVINO inferences. The
    default is the smallest OPTIMAL_NUMBER_OF_INFER_REQUESTS of the method's
    compiled models (LATENCY on CPU: 1; THROUGHPUT: its streams, 2 on 2
    cores), at most :data:`MAX_CONCURRENT_CALLS`.
    """
    if not inits:
        return 1, "the method has no OpenVINO partition, and only OpenVINO inferences let the GIL go"
    if any(init["program_state"] != "none" for init in inits):
        return 1, ("the program keeps state between calls (a buffer it changes), or was lowered by an "
                   "executorch-openvino that did not record whether it does: each loaded copy would keep its own")
    if requested is not None:
        return requested, ""
    optimal = [int(i["optimal_infer_requests"]) if i["optimal_infer_requests"].isdigit() else 1 for i in inits]
    return max(1, min(min(optimal), MAX_CONCURRENT_CALLS)), ""


def _program_source(program):
    """``(what executorch.runtime loads, a function giving it again unchanged or None)`` for ``program``."""
    if isinstance(program, (str, Path)):
        path = Path(program)
        try:
            identity = _file_identity(path)
        except OSError:
            return path, None  # the load itself reports it

        def again():
            # A replaced or rewritten file would give copies another program: refused
            # (checked before and after each load, see load_method).
            if _file_identity(path) != identity:
                raise RuntimeError(f"{str(path)!r} changed since the method was loaded")
            return path

        return path, again
    if isinstance(program, bytearray):
        program = bytes(program)  # what executorch.runtime makes of it, once for every copy
    elif hasattr(program, "read") and not isinstance(program, bytes):
        program = program.read()
    if isinstance(program, bytes):
        return program, lambda: program
    return program, None  # executorch.runtime refuses it


def _file_identity(path: Path) -> tuple:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _load(runtime, data, method_name: str):
    """``(method, program, inits)``: the inits are the delegate's, of this load only."""
    loaded = runtime.load_program(data)
    if method_name not in loaded.method_names:
        raise RuntimeError(f"the program has no method {method_name!r}; it has {sorted(loaded.method_names)}")
    _native.start_init_capture()
    try:
        method = loaded.load_method(method_name)
    finally:
        inits = _native.finish_init_capture()
    return method, loaded, inits


def load_method(program, method_name: str = "forward", *, max_concurrent_calls: int | None = None) -> OpenvinoMethod:
    """Loads a ``.pte`` (bytes or a path) with ``executorch.runtime`` and returns one method.

    ``max_concurrent_calls``: how many calls of the returned
    :class:`OpenvinoMethod` may run at once from several threads, each on its
    own loaded copy (made when calls first overlap). ``None`` (default): what
    OpenVINO's compiled models suggest (their ``OPTIMAL_NUMBER_OF_INFER_REQUESTS``:
    1 with ``performance_hint="LATENCY"``, the CPU default; the number of streams
    with ``THROUGHPUT``, 2 on 2 cores), at most :data:`MAX_CONCURRENT_CALLS`.
    It is 1, calls one at a time, for a program that keeps state between calls
    (a buffer it changes), was lowered by an earlier executorch-openvino, or has
    no OpenVINO partition. A copy of a program loaded from a path is loaded from
    the path again, and refused if the file changed (the calls then wait
    for a loaded copy instead, with a ``RuntimeWarning``).

    Raises ``RuntimeError`` with the delegate's own message (which OpenVINO was
    tried where, which blob field was bad, ...) when loading fails,
    ``RuntimeError`` naming the methods there are when ``method_name`` is not one,
    and ``ValueError`` for a ``max_concurrent_calls`` below 1, or above 1 where
    it must be 1 (the message says why).
    """
    from executorch.runtime import Runtime

    if max_concurrent_calls is not None and (not isinstance(max_concurrent_calls, int)
                                             or isinstance(max_concurrent_calls, bool) or max_concurrent_calls < 1):
        raise ValueError(f"max_concurrent_calls is {max_concurrent_calls!r}; give an int of 1 or more, or None "
                         "for what OpenVINO suggests")
    runtime = Runtime.get()
    data, again = _program_source(program)
    with _DelegateErrors():
        method, loaded, inits = _load(runtime, data, method_name)
    limit, reason = _concurrency(inits, max_concurrent_calls)
    if max_concurrent_calls is not None and max_concurrent_calls > limit:
        raise ValueError(f"max_concurrent_calls={max_concurrent_calls} cannot be honoured: {reason}")
    reload = None
    if again is not None and limit > 1:
        try:
            again()
        except (OSError, RuntimeError):  # the file changed while it loaded: no copies of either version
            return OpenvinoMethod(method, loaded)

        def reload():
            with _DelegateErrors():
                copy, copy_program, _ = _load(runtime, again(), method_name)
            again()
            return copy, copy_program
    return OpenvinoMethod(method, loaded, reload=reload, max_concurrent_calls=limit)
