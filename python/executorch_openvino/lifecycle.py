"""``OpenVINOBackend``: a PyTorch module built, run, checkpointed and deployed on OpenVINO in a few lines.

    backend = OpenVINOBackend(OpenVINOBackendConfig(performance_hint="THROUGHPUT"))
    backend.build(model, (x,))         # export, lower, write the .pte; ACTIVE
    y = backend.infer(x)               # outputs in the module's own structure
    state = backend.to_dict()          # a checkpoint: plain data
    other = OpenVINOBackend.from_dict(None, state).deploy()   # in another process too

States and the actions each allows (every other action raises
:class:`BackendStateError` naming the state and these)::

    INIT --build--> ACTIVE <--activate-- INACTIVE
                      |  \\--deactivate-->    |
                      |                      |
    from_dict --> CHECKPOINT_LOADED --activate--> ACTIVE
           ACTIVE, INACTIVE, CHECKPOINT_LOADED --deploy--> DEPLOYED (final)

``infer`` works in ACTIVE and DEPLOYED; ``to_dict`` in every state after a build.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import hashlib
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import copy

import torch
from torch.utils import _pytree as pytree

from .contract.backend_config import OpenVINOBackendConfig
from .contract.compile_specs import check_option
from .support.quiet import quiet_dependencies
from .contract.input_spec import arrange_inputs, check_recorded_inputs, dumps_structure, loads_structure, record_inputs

CHECKPOINT_TYPE = "executorch_openvino.OpenVINOBackend"
CHECKPOINT_FORMAT = 1

# set_cache_dir and last_compile_report are process-wide: one load at a time reads them.
_load_lock = threading.Lock()


class BackendState(enum.Enum):
    """Where an :class:`OpenVINOBackend` is (``backend.state``), and so what it allows:

    - ``INIT``: made, not built; allows ``build``.
    - ``ACTIVE``: built or activated, its program loaded; ``infer``, ``deactivate``, ``deploy``, ``to_dict``.
    - ``INACTIVE``: its program unloaded (memory given back); ``activate``, ``deploy``, ``to_dict``.
    - ``CHECKPOINT_LOADED``: made by ``from_dict``, not loaded yet; ``activate``, ``deploy``, ``to_dict``.
    - ``DEPLOYED``: loaded for a device by ``deploy``; ``infer``, ``to_dict``.

    Any other action raises :class:`BackendStateError` naming the allowed ones.
    """

    INIT = "INIT"
    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"
    CHECKPOINT_LOADED = "CHECKPOINT_LOADED"
    DEPLOYED = "DEPLOYED"


_ALLOWED = {
    BackendState.INIT: ("build",),
    BackendState.ACTIVE: ("infer", "deactivate", "deploy", "to_dict"),
    BackendState.INACTIVE: ("activate", "deploy", "to_dict"),
    BackendState.CHECKPOINT_LOADED: ("activate", "deploy", "to_dict"),
    BackendState.DEPLOYED: ("infer", "to_dict"),
}


class BackendStateError(RuntimeError):
    """An action the backend's current state does not allow; the message names both and the allowed actions."""


def default_program_dir() -> Path:
    """Where :meth:`OpenVINOBackend.build` writes programs without ``cache_dir``:
    ``$XDG_CACHE_HOME/executorch_openvino/programs`` (``~/.cache/...`` when unset),
    ``%LOCALAPPDATA%\\executorch_openvino\\programs`` on Windows."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "executorch_openvino" / "programs"


class OpenVINOBackend:
    """A module lowered to OpenVINO through this ExecuTorch delegate, with an explicit lifecycle.

    ``config``: an :class:`OpenVINOBackendConfig` (``None``: the defaults).
    The module docstring has the state diagram. Methods raise
    :class:`BackendStateError` when the state does not allow them.
    """

    def __init__(self, config: OpenVINOBackendConfig | None = None):
        if config is None:
            config = OpenVINOBackendConfig()
        if not isinstance(config, OpenVINOBackendConfig):
            raise TypeError(f"config is a {type(config).__name__}; give an OpenVINOBackendConfig "
                            "(OpenVINOBackendConfig.from_dict turns a dict into one)")
        self.config = config
        self._state = BackendState.INIT
        self._lock = threading.RLock()
        self._record: dict = {}  # what to_dict writes, besides the config (empty until built)
        self._outputs: Any = None  # the output TreeSpec
        self._input_structure: Any = None  # the input TreeSpec, parsed once
        self._method: Any = None  # the loaded OpenVINOMethod (it keeps its program alive)
        self._compile_report: dict | None = None

    @property
    def state(self) -> BackendState:
        return self._state

    @property
    def program_path(self) -> Path | None:
        """The ``.pte`` this backend runs (``None`` before build)."""
        return Path(self._record["program_path"]) if self._record else None

    @property
    def compile_report(self) -> dict | None:
        """``executorch_openvino.last_compile_report()`` of this backend's latest load: device,
        precisions, ``performance_hint``, ``num_streams``, ... as the compiled model reports them."""
        return dict(self._compile_report) if self._compile_report else None

    def __repr__(self) -> str:
        return f"OpenVINOBackend({self._state.name}, {self.config.describe()})"

    def _require(self, action: str) -> None:
        allowed = _ALLOWED[self._state]
        if action not in allowed:
            raise BackendStateError(
                f"cannot {action}() while the backend is {self._state.name}; allowed now: "
                f"{', '.join(a + '()' for a in allowed) or 'nothing'}" + _advice(self._state, action))

    # -- build ---------------------------------------------------------------------------------

    def build(self, module: torch.nn.Module, example_inputs, dynamic_shapes=None, cache_dir=None, *,
              example_kwargs: dict | None = None) -> OpenVINOBackend:
        """Exports ``module``, lowers it with this config and loads it: INIT -> ACTIVE.

        ``example_inputs``: a tuple of positional arguments (a lone tensor
        stands for a 1-tuple); ``example_kwargs``: keyword arguments;
        ``dynamic_shapes`` as ``torch.export.export`` takes it. ``torch.export``
        runs ``forward`` once on fake tensors: the module's attributes and
        buffers are as before build (Python side effects outside the module,
        such as printing, happen once). The program keeps its own copy of the
        buffers it changes, starting from their values at build; every load
        (``activate``, ``from_dict``, ``deploy``) starts from those values again.
        Arguments ``forward`` changes in place are changed in place by
        ``infer`` too. Writes
        ``<Module>-<config key>-<program digest>.pte`` and, for ``deploy`` to
        another device, the exported program beside it as ``.pt2``, under
        ``cache_dir`` (default :func:`default_program_dir`).

        Raises ``TypeError`` for a module that is not a ``torch.nn.Module``,
        ``ValueError`` for input or output types a checkpoint cannot hold (a
        dataclass registered without a serialised type name), what
        ``torch.export`` and lowering raise, and ``RuntimeError`` with the
        delegate's message when the program does not load.
        """
        from . import api

        with self._lock, quiet_dependencies():
            self._require("build")
            if not isinstance(module, torch.nn.Module):
                raise TypeError(f"build() takes a torch.nn.Module, got {type(module).__name__}")
            if isinstance(example_inputs, torch.Tensor):
                example_inputs = (example_inputs,)
            if not isinstance(example_inputs, (tuple, list)):
                raise TypeError(f"example_inputs is a {type(example_inputs).__name__}; give a tuple of the "
                                "positional arguments of module.forward")
            folder = Path(cache_dir) if cache_dir is not None else default_program_dir()
            folder.mkdir(parents=True, exist_ok=True)
            partitioner = self._partitioner(self.config.device)
            exported = api.export(module, tuple(example_inputs), example_kwargs, dynamic_shapes)
            inputs = record_inputs(exported, module.forward)  # fails early for types a checkpoint cannot hold
            outputs = exported.call_spec.out_spec
            dumps_structure(outputs, "output")
            saved_export = _save_exported(exported, folder)
            try:
                program = api.lower_exported(exported, partitioner, plan_outputs=dynamic_shapes is None)
            except BaseException:
                if saved_export is not None:
                    saved_export.unlink(missing_ok=True)
                raise
            digest = hashlib.sha256(program.buffer).hexdigest()
            stem = f"{type(module).__name__}-{self.config.key()}-{digest[:16]}"
            program_path = _write_atomically(folder / f"{stem}.pte", program.buffer)
            if saved_export is not None:
                os.replace(saved_export, folder / f"{stem}.pt2")
                saved_export = folder / f"{stem}.pt2"
            record = {
                "module_type": _type_name(type(module)),
                "program_path": str(program_path.resolve()),
                "program_sha256": digest,
                "program_outputs": _program_outputs(program),
                "device": self.config.device,
                "exported_program_path": str(saved_export.resolve()) if saved_export else None,
                "exported_program_sha256": _file_sha256(saved_export) if saved_export else None,
                "inputs": inputs,
            }
            self._load(record, data=program.buffer)
            self._outputs = outputs
            self._input_structure = exported.call_spec.in_spec
            self._state = BackendState.ACTIVE
            return self

    def _partitioner(self, device: str):
        from .lowering.partitioner import OpenVINOPartitioner

        c = self.config
        return OpenVINOPartitioner(device=device, inference_precision=c.inference_precision,
                                   numerics=c.numerics, performance_hint=c.performance_hint)

    def _load(self, record: dict | None = None, config: OpenVINOBackendConfig | None = None,
              data: bytes | None = None) -> None:
        """Loads ``record``'s program with ``config`` (default: the backend's own); on success only,
        they become the backend's, with the new method and its compile report.

        The file is read once, checked against the recorded SHA-256 and loaded
        from those bytes, so a ``.pte`` replaced since the build cannot run
        with this backend's input specification."""
        import executorch_openvino as exov

        from .api import load_method

        record, config = record or self._record, config or self.config
        path = Path(record["program_path"])
        try:
            data = path.read_bytes() if data is None else data  # build passes the bytes it wrote
        except FileNotFoundError:
            raise FileNotFoundError(f"the program {str(path)!r} does not exist; build again, or copy the .pte "
                                    "back to that path") from None
        if hashlib.sha256(data).hexdigest() != record["program_sha256"]:
            raise ValueError(f"the program {str(path)!r} is not the one this backend was built with (its SHA-256 "
                             "differs): its input specification would not fit; build again")
        with _load_lock:
            previous = exov.cache_dir()
            if config.model_cache_dir is not None:
                exov.set_cache_dir(config.model_cache_dir)
            try:
                method = load_method(data)
                report = exov.last_compile_report()
            finally:
                exov.set_cache_dir(previous)
        self._method, self._compile_report, self._record, self.config = method, report, record, config

    # -- activate / deactivate ------------------------------------------------------------------

    def activate(self) -> OpenVINOBackend:
        """Loads the program (OpenVINO compiles it, or imports it from ``model_cache_dir``):
        INACTIVE or CHECKPOINT_LOADED -> ACTIVE. Raises ``RuntimeError`` when it does not load."""
        with self._lock:
            self._require("activate")
            self._load()
            self._state = BackendState.ACTIVE
            return self

    def deactivate(self) -> OpenVINOBackend:
        """Frees the loaded program, its OpenVINO compiled models and infer requests: ACTIVE -> INACTIVE.

        The ``.pte`` stays on disk for :meth:`activate`. Measured with MiniLM
        (batch 1, OpenVINO 2026.4.1, a fresh process): resident memory 577 MiB
        active, 430 MiB after ``deactivate()``, and the same 576/430 MiB on a
        second cycle; the first activation's other 202 MiB (over 228 MiB before
        it) stay with the process (OpenVINO's CPU plugin, first-run caches).
        ``nox -s bench`` prints the current figures.
        """
        with self._lock:
            self._require("deactivate")
            self._method = None
            gc.collect()  # the method and its program may sit in reference cycles
            self._state = BackendState.INACTIVE
            return self

    # -- infer ---------------------------------------------------------------------------------

    def infer(self, *args, **kwargs):
        """Runs the program on ``args``/``kwargs``, given as to the module's ``forward``.

        Returns the outputs in the module's output structure (tensors, nested
        tuples, lists, dicts, and dataclasses registered with
        ``torch.export.register_dataclass``). Inputs are checked first against
        what was built (:func:`executorch_openvino.contract.input_spec.arrange_inputs`:
        ``TypeError``/``ValueError`` naming the argument). Works in ACTIVE and
        DEPLOYED; one call at a time per backend (ExecuTorch's planned memory is shared).
        """
        with self._lock:
            self._require("infer")
            given: list = []
            flat = arrange_inputs(self._record["inputs"], args, kwargs, self._input_structure, originals=given)
            outputs = self._method.execute(flat)
            returned = self._record["program_outputs"]
            if len(outputs) != len(returned) or sum(v is None for v in returned) != self._outputs.num_leaves:
                raise RuntimeError(f"the program returned {len(outputs)} values, its checkpoint expects "
                                   f"{len(returned)}; build again")
            results = []
            with torch.no_grad():
                for value, mutated_input in zip(outputs, returned):
                    if mutated_input is None:
                        results.append(value)
                    else:  # forward changed this argument in place: so does infer
                        given[mutated_input].copy_(value)
        return pytree.tree_unflatten(results, self._outputs)

    # -- checkpoint ----------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """A checkpoint, JSON-ready (a copy: changing it does not change the backend).

        Keys: ``type``, ``format``, ``config``, ``device``, ``module_type``
        (``package.module.Class``), ``program_path`` and ``program_sha256``,
        ``exported_program_path`` and ``exported_program_sha256`` (``None``
        when torch.export could not save the program), ``inputs`` (the input
        specification, :func:`executorch_openvino.contract.input_spec.record_inputs`),
        ``program_outputs`` (per value the program returns: ``None`` for the
        module's next output, or the index of the input it changes in place)
        and ``outputs`` (the output structure, ``treespec_dumps``).
        """
        with self._lock:
            self._require("to_dict")
            return copy.deepcopy({"type": CHECKPOINT_TYPE, "format": CHECKPOINT_FORMAT,
                                  "config": self.config.to_dict(), **self._record,
                                  "outputs": dumps_structure(self._outputs, "output")})

    @classmethod
    def from_dict(cls, module: torch.nn.Module | None, state: dict) -> OpenVINOBackend:
        """A backend restored from :meth:`to_dict`'s checkpoint, in CHECKPOINT_LOADED (nothing loaded yet).

        ``module``: the original module, or ``None``; when given, its class must
        be the one the checkpoint was built from. Raises ``TypeError`` for a
        checkpoint that is not a dict, ``ValueError`` for one of another type or
        format, one missing its program path or another required entry, a
        module of another class, or an output type this process has not
        registered, or a ``.pte`` whose SHA-256 is not the recorded one (replaced
        since), and ``FileNotFoundError`` when the ``.pte`` is gone.
        """
        if not isinstance(state, dict):
            raise TypeError(f"from_dict takes the dict that to_dict() returned, got {type(state).__name__}")
        if state.get("type") != CHECKPOINT_TYPE:
            raise ValueError(f"the checkpoint is of type {state.get('type')!r}, not {CHECKPOINT_TYPE!r}: "
                             "give a dict made by OpenVINOBackend.to_dict()")
        version = state.get("format")
        if type(version) is not int or not 1 <= version <= CHECKPOINT_FORMAT:
            raise ValueError(f"the checkpoint has format {version!r}; this executorch-openvino reads format "
                             f"{CHECKPOINT_FORMAT}: upgrade it, or build again")
        for key, kind in _CHECKPOINT_ENTRIES.items():
            if key not in state or not isinstance(state[key], kind) or state[key] in ("", {}):
                what = "no" if key not in state else f"a {type(state[key]).__name__} as"
                raise ValueError(f"the checkpoint has {what} {key!r} (it takes a {kind.__name__}); it is incomplete "
                                 "or was edited: write it again with to_dict()")
        state = copy.deepcopy(state)
        inputs = state["inputs"]
        check_recorded_inputs(inputs)
        returned = state["program_outputs"]
        leaves = len(inputs["leaves"])
        if not all(v is None or (type(v) is int and 0 <= v < leaves) for v in returned):
            raise ValueError(f"the checkpoint's 'program_outputs' {returned!r} name inputs that do not exist; write "
                             "it again with to_dict()")
        config = OpenVINOBackendConfig.from_dict(state["config"])
        if state["device"] != config.device:
            raise ValueError(f"the checkpoint's device {state['device']!r} differs from its config's "
                             f"{config.device!r}; it was edited: write it again with to_dict()")
        program = Path(state["program_path"])
        if not program.is_file():
            raise FileNotFoundError(f"the checkpoint's program {str(program)!r} does not exist; build again, or "
                                    "copy the .pte back to that path")
        if _file_sha256(program) != state["program_sha256"]:
            raise ValueError(f"the program {str(program)!r} is not the one the checkpoint was written with (its "
                             "SHA-256 differs): its input specification would not fit; build again")
        if module is not None:
            if not isinstance(module, torch.nn.Module):
                raise TypeError(f"module is a {type(module).__name__}; give the original torch.nn.Module or None")
            if _type_name(type(module)) != state["module_type"]:
                raise ValueError(f"the checkpoint was built from a {state['module_type']}, the module given is a "
                                 f"{_type_name(type(module))}")
        backend = cls(config)
        backend._outputs = loads_structure(state["outputs"], "output")
        if sum(v is None for v in returned) != backend._outputs.num_leaves:
            raise ValueError(f"the checkpoint's 'program_outputs' list {sum(v is None for v in returned)} outputs, "
                             f"its output structure {backend._outputs.num_leaves}; write it again with to_dict()")
        backend._input_structure = loads_structure(inputs["structure"], "input")
        backend._record = {k: state.get(k) for k in _RECORD_KEYS}
        backend._state = BackendState.CHECKPOINT_LOADED
        return backend

    # -- deploy --------------------------------------------------------------------------------

    def deploy(self, device: str | None = None) -> OpenVINOBackend:
        """Makes the backend DEPLOYED on ``device`` (default: the device it was built for); it can then
        only ``infer`` and ``to_dict``.

        For another device than the program's, the saved exported program
        (``.pt2``) is lowered again with this config on that device and written
        beside it. Raises ``ValueError`` for a bad device name or when no
        exported program was saved, and ``RuntimeError`` when the program does
        not load on the device.
        """
        from . import api

        with self._lock, quiet_dependencies():
            self._require("deploy")
            device = self._record["device"] if device is None else device
            if not isinstance(device, str):
                raise TypeError(f"device is a {type(device).__name__}; give an OpenVINO device name such as 'CPU'")
            check_option("device", device, "deploy()")
            if device != self._record["device"]:
                source = self._record.get("exported_program_path")
                if not source or not Path(source).is_file():
                    raise ValueError(f"cannot deploy on {device}: the program was built for {self._record['device']}"
                                     f" and its exported program ({source!r}) is not there to lower again; build "
                                     f"with OpenVINOBackendConfig(device={device!r})")
                if _file_sha256(Path(source)) != self._record.get("exported_program_sha256"):
                    raise ValueError(f"cannot deploy on {device}: the exported program {source!r} is not the one "
                                     f"this backend was built with (its SHA-256 differs); build again")
                program = api.lower_exported(torch.export.load(source), self._partitioner(device),
                                             plan_outputs=not _has_dynamic_inputs(self._record["inputs"]))
                path = Path(source).with_suffix(f".{_safe(device)}.pte")
                record = {**self._record, "device": device,
                          "program_path": str(_write_atomically(path, program.buffer).resolve()),
                          "program_sha256": hashlib.sha256(program.buffer).hexdigest(),
                          "program_outputs": _program_outputs(program)}
                self._load(record, dataclasses.replace(self.config, device=device))
            elif self._method is None:
                self._load()
            self._state = BackendState.DEPLOYED
            return self


def _advice(state: BackendState, action: str) -> str:
    if state is BackendState.INIT:
        return ": build() a module first, or restore one with OpenVINOBackend.from_dict()"
    if action == "build":
        return ": a backend builds one module; make a new OpenVINOBackend for another"
    if action == "infer":
        return ": activate() or deploy() first"
    if state is BackendState.DEPLOYED:
        return ": a deployed backend stays loaded until it is garbage collected"
    return ""


# What from_dict requires, and of which type.
_CHECKPOINT_ENTRIES = {"config": dict, "device": str, "module_type": str, "program_path": str,
                       "program_sha256": str, "program_outputs": list, "inputs": dict, "outputs": str}
_RECORD_KEYS = ("module_type", "program_path", "program_sha256", "program_outputs", "device",
                "exported_program_path", "exported_program_sha256", "inputs")


def _type_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _program_outputs(program) -> list:
    """Per value the ``.pte`` returns: ``None`` for the module's next output, or the index of the input the
    module changes in place (ExecuTorch 1.5.1 returns those first; buffer changes stay inside the program)."""
    signature = program.exported_program().graph_signature
    user_inputs = list(signature.user_inputs)
    returned = []
    for spec in signature.output_specs:
        kind = spec.kind.name
        if kind == "BUFFER_MUTATION":
            continue
        returned.append(user_inputs.index(spec.target) if kind == "USER_INPUT_MUTATION" else None)
    return returned


def _has_dynamic_inputs(inputs: dict) -> bool:
    return any(isinstance(d, dict) for leaf in inputs["leaves"] if leaf["kind"] == "tensor" for d in leaf["shape"])


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_atomically(path: Path, data: bytes) -> Path:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return path


def _save_exported(exported, folder: Path) -> Path | None:
    """Saves ``exported`` (``torch.export.save``) to a temporary ``.pt2`` in ``folder``, or returns ``None``
    when torch.export cannot save it (a custom type): ``deploy`` to another device then needs a new build."""
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".pt2")
    os.close(handle)
    try:
        torch.export.save(exported, temporary)
        return Path(temporary)
    except Exception:
        os.unlink(temporary)
        return None
