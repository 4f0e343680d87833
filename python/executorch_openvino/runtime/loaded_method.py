"""A loaded ``.pte`` method (:func:`load_method`, :class:`OpenVINOMethod`): its errors explained, callable from
several threads at once.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from pathlib import Path

import torch

from . import _native  # type: ignore[attr-defined]  # the extension module (native/python/python_module.cpp)
from .foreign_backends import check_method_backends, explain_failed_load, unreadable_program
from .method_metadata import MethodMetadata
from .method_inputs import SCALAR_TYPES, as_method_inputs, explain_fixed_number, explain_refused_inputs
from .native_log import executorch_log, write_held_lines


# At most this many loaded copies of one method, whatever OpenVINO suggests: each
# holds the method's planned memory (ExecuTorch's arena, inputs and outputs).
MAX_CONCURRENT_CALLS = 16


# The delegate's message for an input it refused before inference (native/delegate/partition_executor.cpp),
# after ExecuTorch's error code 0x12 (InvalidArgument) or 0x13 (InvalidType).
_DELEGATE_INPUT_REFUSAL = re.compile(r"failed with error 0x1[23]\n(?:executorch-openvino: )?execute: (input \d+ .*)",
                                     re.DOTALL)


class OpenVINOMethod:
    """A loaded ExecuTorch method whose errors name what the delegate found wrong, callable from several threads.

    ``execute(inputs)`` takes the method's inputs (a list of tensors of the
    exported dtypes and shapes, in any memory layout) and returns its outputs as
    a list. It raises ``TypeError`` naming the input for a value that is not a
    tensor or a Python number (a numpy array: pass ``torch.from_numpy(array)``),
    ``ValueError`` naming the input, what the method takes and
    what to pass when ExecuTorch refuses the inputs (count, dtype, rank, sizes),
    and ``RuntimeError`` with ExecuTorch's error code and the delegate's message
    on any other failure. ExecuTorch's own log lines about a refusal that the
    ``ValueError`` restates are not printed (:mod:`.native_log`).

    Threads: an ExecuTorch method is not reentrant (its planned memory holds
    the inputs, intermediates and outputs of the running call), so each call
    takes a loaded copy of the method that no other call is using, and waits
    when all :attr:`max_concurrent_calls` are busy. A copy is another program
    load from the same ``.pte`` (its own planned memory, the same OpenVINO
    compiled models: ``_native.live_compiled_models()``), made the first time
    a call finds every copy busy: sequential calls use one copy. While the
    method runs (ExecuTorch's ``set_inputs`` and ``execute``, OpenVINO's
    inferences among them) the thread lets the Python interpreter go, so copies
    run at once. The method runs without executorch's pybindings
    (``native/python/python_method.h``: their Python glue took most of a small
    program's call) and without importing ``executorch.runtime``;
    ``metadata`` is a :class:`~.method_metadata.MethodMetadata`, read from the
    program's metadata, whose methods are those of ExecuTorch's ``MethodMeta``
    (``.execute`` and ``.metadata`` are what ``executorch.runtime.Method`` has too).
    """

    def __init__(self, method, program, *, reload=None, max_concurrent_calls: int = 1):
        self.source: str | None = None  # the .pte's path when loaded from one (load_method sets it)
        self._method = method  # the first copy: metadata and other attributes
        self._program = program  # the ProgramMetadata of the first copy
        self._reload = reload  # () -> another LoadedCopy; None: never
        self._max = max_concurrent_calls if reload is not None else 1
        self._idle = [method]
        self._loaded = 1
        self._loading = 0
        self._waiting = 0  # calls waiting for an idle copy: only then does a returned copy notify
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    @property
    def max_concurrent_calls(self) -> int:
        """How many calls may run at once (1: one at a time). See :func:`load_method`."""
        return self._max

    @property
    def loaded_copies(self) -> int:
        """How many copies of the method are loaded now: 1, more once calls overlapped."""
        return self._loaded

    def execute(self, inputs):
        lock, idle = self._lock, self._idle
        with lock:  # the common case, an idle copy, inline: each call's Python costs more than its inference
            copy = idle.pop() if idle else None
        if copy is None:
            copy = self._take()
        try:
            return copy.execute(inputs)
        except RuntimeError as error:
            self._raise_explained(error, inputs)
        finally:
            with lock:
                idle.append(copy)
                if self._waiting:
                    self._changed.notify()

    def _raise_explained(self, failure: RuntimeError, inputs) -> None:
        """Raises what a call's ``failure`` means: a ``ValueError`` naming the input when ExecuTorch refused
        the inputs (it logs why and raises only a code), else ``failure``, which carries the delegate's
        message; ExecuTorch's lines held during the call are written unless the error restates them."""
        held = _native.take_held_log_lines()
        explained = None
        if "set_inputs" in str(failure):
            with executorch_log():  # reading the metadata may log too
                meta = self._method.metadata
                problem = explain_fixed_number(meta.name(), held) or explain_refused_inputs(meta, inputs)
            if problem is not None:
                explained = ValueError(f"{problem}\n(ExecuTorch: {failure})")
        elif (refusal := _DELEGATE_INPUT_REFUSAL.search(str(failure))) is not None:
            # The delegate refused an input before inference (its shape, dtype, layout, or sizes that must
            # agree): a ValueError, as ExecuTorch's own refusals above, not a failure of the call.
            explained = ValueError(f"{refusal.group(1)}\n(ExecuTorch: {str(failure).splitlines()[0]})")
        write_held_lines(held, explained or failure, explained=explained is not None)
        if explained is None:
            raise failure
        raise explained from failure

    def _take(self):
        """An idle copy (the most recently used), a new one when all are busy and there may be more, else waits.
        (execute takes an idle copy itself when there is one.)"""
        with self._changed:
            while not self._idle:
                if self._loaded + self._loading < self._max:
                    self._loading += 1
                    break
                self._waiting += 1
                try:
                    self._changed.wait()
                finally:
                    self._waiting -= 1
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
        if name.startswith("__") or "_method" not in self.__dict__:  # copy.copy asks before __init__ ran
            raise AttributeError(name)
        return getattr(self._method, name)


class ProgramMetadata:
    """What a ``.pte`` records of its methods (``_native.program_signatures``): ``method_names``,
    ``metadata(name)`` (a :class:`~.method_metadata.MethodMetadata`) and ``load_method(name)``, which loads
    one of them on its own (``execute(inputs)``), as ``executorch.runtime``'s ``Program`` does."""

    def __init__(self, data, signatures: dict):
        self.data = data  # the .pte's bytes or Path
        self.signatures = signatures  # {method: {"inputs", "outputs", "backends"}}

    @property
    def method_names(self) -> set:
        return set(self.signatures)

    def metadata(self, name: str) -> MethodMetadata:
        return MethodMetadata(name, self.signatures[name])

    def load_method(self, name: str) -> LoadedCopy:
        if name not in self.signatures:
            raise RuntimeError(f"the program has no method {name!r}; it has {sorted(self.signatures)}")
        native = _native.Method(str(self.data) if isinstance(self.data, Path) else self.data, name, _torch_api(),
                                write_held_lines)
        return LoadedCopy(native, self, name)


def read_program(data) -> ProgramMetadata:
    """The methods ``data`` (a ``.pte``'s bytes or Path) records; ``RuntimeError`` when it is not a program."""
    try:
        return ProgramMetadata(data, _native.program_signatures(data))
    except ValueError as error:
        raise unreadable_program(data, error) from None


class LoadedCopy:
    """One loaded copy of a method: ``native``, the ``_native.Method`` that runs it (python_method.h), and
    ``metadata``, its :class:`~.method_metadata.MethodMetadata` (read from ``program``, a
    :class:`ProgramMetadata`)."""

    __slots__ = ("native", "program", "name")

    def __init__(self, native, program, name: str):
        self.native, self.program, self.name = native, program, name

    @property
    def metadata(self):
        return self.program.metadata(self.name)

    def execute(self, inputs) -> list:
        """The method's outputs for ``inputs`` (see :meth:`OpenVINOMethod.execute`), each tensor a copy that
        owns its memory; ``RuntimeError`` with ExecuTorch's code otherwise."""
        outputs = self.native.execute(inputs)  # a list of contiguous CPU tensors and numbers, the common case
        if outputs is None:
            plain = as_method_inputs(inputs)  # raises TypeError for what no conversion helps
            outputs = self.native.execute(plain)
            if outputs is None:  # a wrapper subclass stays one through as_subclass (torch's TwoTensor)
                index, value = next((i, x) for i, x in enumerate(plain) if type(x) is not torch.Tensor)
                raise TypeError(f"input {index} is a {type(value).__module__}.{type(value).__name__}, a tensor "
                                "subclass whose memory is not a plain tensor's: pass a torch.Tensor")
        return outputs


_TORCH_API = None


def _torch_api() -> tuple:
    """What ``_native.Method`` needs of torch (python_method.h): ``torch.Tensor``, ``torch.empty_like``,
    ``torch.empty_strided``, ``{dtype: ExecuTorch ScalarType code}``, ``torch.strided``."""
    global _TORCH_API
    if _TORCH_API is None:
        import torch

        _TORCH_API = (torch.Tensor, torch.empty_like, torch.empty_strided,
                      {dtype: code for code, dtype in SCALAR_TYPES.items()}, torch.strided)
    return _TORCH_API


def _concurrency(inits: list, requested) -> tuple[int, str]:
    """How many calls may run at once, from what the method's inits reported, and why no more.

    Several calls need several loaded copies, which is right only when the
    program keeps nothing between calls (each copy would keep its own state),
    and is worth each copy's memory where OpenVINO computes. The default is
    the smallest OPTIMAL_NUMBER_OF_INFER_REQUESTS of the method's
    compiled models (LATENCY on CPU: 1; THROUGHPUT: its streams, 2 on 2
    cores), at most :data:`MAX_CONCURRENT_CALLS`.
    """
    if not inits:
        return 1, "the method has no OpenVINO partition, whose OPTIMAL_NUMBER_OF_INFER_REQUESTS would say how many"
    if any(init["program_state"] != "none" for init in inits):
        return 1, ("the program keeps state between calls (a buffer it changes), or was lowered by an "
                   "executorch-openvino that did not record whether it does: each loaded copy would keep its own")
    if requested is not None:
        return requested, ""
    optimal = [int(i["optimal_infer_requests"]) if i["optimal_infer_requests"].isdigit() else 1 for i in inits]
    return max(1, min(min(optimal), MAX_CONCURRENT_CALLS)), ""


def _program_source(program):
    """``(the .pte's bytes or Path, a function giving it again unchanged or None)`` for ``program``."""
    if isinstance(program, (str, os.PathLike)):
        path = Path(program)
        try:
            os.fsencode(path).decode("utf-8")  # ExecuTorch's loaders take UTF-8 paths
        except UnicodeDecodeError:
            raise ValueError(f"the program's path {str(path)!r} is not valid UTF-8, which ExecuTorch's file loader "
                             "takes: rename the file, or pass its bytes (open(path, 'rb').read())") from None
        if not path.is_file():
            # executorch.runtime says only "Failed to create MmapDataLoader from file ..., error: 0x:22".
            raise FileNotFoundError(f"the program {str(path)!r} does not exist or is not a file")
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
        program = bytes(program)  # once for every copy
    elif hasattr(program, "read") and not isinstance(program, bytes):
        program = program.read()
        if isinstance(program, str):
            raise TypeError("the program's file object is open in text mode; open the .pte with 'rb'")
    if isinstance(program, bytes):
        return program, lambda: program
    raise TypeError(f"the program is a {type(program).__name__}; pass a .pte's path (str or os.PathLike), its "
                    "bytes, or a binary file object")


def _file_identity(path: Path) -> tuple:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _load(data, method_name: str, loaded: ProgramMetadata):
    """``(method, program, inits)``: the inits are the delegate's, of this load only; ``loaded``: what
    :func:`read_program` read of ``data``."""
    if method_name not in loaded.method_names:
        raise RuntimeError(f"the program has no method {method_name!r}; it has {sorted(loaded.method_names)}")
    _native.start_init_capture()
    try:
        native = _native.Method(str(data) if isinstance(data, Path) else data, method_name, _torch_api(),
                                write_held_lines)
    except RuntimeError as error:
        write_held_lines(_native.take_held_log_lines(), error)
        raise
    finally:
        inits = _native.finish_init_capture()
    return LoadedCopy(native, loaded, method_name), loaded, inits


def load_method(program, method_name: str = "forward", *, max_concurrent_calls: int | None = None) -> OpenVINOMethod:
    """Loads a ``.pte`` (bytes or a path) and returns one method, ready to run.

    The program runs in ExecuTorch's runtime with every backend and kernel
    library ``executorch.runtime`` registers (executorch's pybindings extension
    is loaded, not its Python side, whose import takes seconds: see
    :mod:`.method_metadata`).

    ``max_concurrent_calls``: how many calls of the returned
    :class:`OpenVINOMethod` may run at once from several threads, each on its
    own loaded copy (made when calls first overlap). ``None`` (default): what
    OpenVINO's compiled models suggest (their ``OPTIMAL_NUMBER_OF_INFER_REQUESTS``:
    1 with ``performance_hint="LATENCY"``, the CPU default; the number of streams
    with ``THROUGHPUT``, 2 on 2 cores), at most :data:`MAX_CONCURRENT_CALLS`.
    It is 1, calls one at a time, for a program that keeps state between calls
    (a buffer it changes), was lowered by an earlier executorch-openvino, or has
    no OpenVINO partition. A copy of a program loaded from a path is loaded from
    the path again, and refused if the file changed (the calls then wait
    for a loaded copy instead, with a ``RuntimeWarning``).

    Warns (``UserWarning``) when OpenVINO computes a partition in another
    precision than the ``inference_precision`` it was lowered with, from the
    delegate's records of this load's inits (the delegate logs no line of
    its own while a load records them: ``init_capture_on``, delegate_api.h).

    A program of executorch's own OpenVINO delegate (backend id ``OpenvinoBackend``) is loaded from memory
    where that delegate crashed on a file-loaded one (OpenVINO 2026: :mod:`.foreign_backends`).

    Raises ``FileNotFoundError`` when a path names no file, ``RuntimeError`` before loading when the method
    was delegated to a backend no library in this process registered (:mod:`.foreign_backends`), ``RuntimeError`` with
    the delegate's own message (which OpenVINO was tried where, which blob field
    was bad, ...) when loading fails,
    ``RuntimeError`` naming the methods there are when ``method_name`` is not one,
    and ``ValueError`` for a ``max_concurrent_calls`` below 1, or above 1 where
    it must be 1 (the message says why).
    """
    _load_executorch_registrations()
    if max_concurrent_calls is not None and (not isinstance(max_concurrent_calls, int)
                                             or isinstance(max_concurrent_calls, bool) or max_concurrent_calls < 1):
        raise ValueError(f"max_concurrent_calls is {max_concurrent_calls!r}; give an int of 1 or more, or None "
                         "for what OpenVINO suggests")
    data, again = _program_source(program)
    loaded = read_program(data)
    if check_method_backends(str(data) if isinstance(data, Path) else data, method_name, loaded.signatures):
        data, again = _program_source(data.read_bytes())  # its delegate crashed on a file-loaded program
        loaded = read_program(data)
    try:
        method, loaded, inits = _load(data, method_name, loaded)
    except RuntimeError as error:
        explained = explain_failed_load(data if isinstance(data, bytes) else str(data), method_name)
        if explained:
            raise RuntimeError(f"{error}\n{explained}") from error
        raise
    _warn_about_precisions(inits)
    limit, reason = _concurrency(inits, max_concurrent_calls)
    if max_concurrent_calls is not None and max_concurrent_calls > limit:
        raise ValueError(f"max_concurrent_calls={max_concurrent_calls} cannot be honoured: {reason}")
    reload = None
    if again is not None and limit > 1:
        try:
            again()
        except (OSError, RuntimeError):  # the file changed while it loaded: no copies of either version
            return _from(program, OpenVINOMethod(method, loaded))

        def reload():
            copy, _, _ = _load(again(), method_name, loaded)
            again()
            return copy
    return _from(program, OpenVINOMethod(method, loaded, reload=reload, max_concurrent_calls=limit))


def _load_executorch_registrations() -> None:
    """Loads executorch's pybindings extension (``executorch.extension.pybindings._C``), as importing
    ``executorch.runtime`` does, for what it registers with ExecuTorch's runtime in this process: the
    optimized and portable kernels (operators left outside the delegates), XNNPACK and executorch's own
    OpenVINO delegate (8 ms, against 4.3 s for ``executorch.runtime``'s import of ``executorch.exir``)."""
    import executorch.extension.pybindings._C  # noqa: F401


def _warn_about_precisions(inits: list) -> None:
    """The difference the delegate recorded for this load's inits, as a Python warning, once per load (other doors,
    executorch.runtime and the runner, get the delegate's log line instead)."""
    differ = {(i["device"], i["requested_precision"], i["effective_precision"]) for i in inits
              if i["requested_precision"] and i["effective_precision"]
              and i["requested_precision"] != i["effective_precision"]}
    for device, requested, effective in sorted(differ):
        warnings.warn(f"inference_precision {requested!r} was asked for, but OpenVINO's {device} plugin computes "
                      f"in {effective!r} on this machine (exov.last_compile_report() shows it); lower with "
                      f"inference_precision={effective!r} to silence this", UserWarning, stacklevel=3)


def _from(program, method: OpenVINOMethod) -> OpenVINOMethod:
    """`method` with its ``source``: the path `program` names, if it is one."""
    import os

    if isinstance(program, (str, os.PathLike)):
        method.source = os.fspath(program)
    return method
