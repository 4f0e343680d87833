"""executorch-openvino: an OpenVINO delegate for ExecuTorch.

Importing this package registers the delegate with ExecuTorch's runtime in this
process (backend id :data:`BACKEND_ID`), so ``executorch.runtime`` can run
``.pte`` files lowered with :class:`OpenVINOPartitioner`. OpenVINO itself is
loaded when the first delegated method is loaded (or by :func:`load_openvino`).
"""

from __future__ import annotations

import os
import sys
import types


def _run_by_python_m() -> bool:
    """True while `python -m executorch_openvino[.doctor]` imports this package to run it.

    Only then does a failed import become a report instead of an ImportError:
    the doctor must diagnose an environment where this import fails. runpy
    imports the package from ``_get_module_details(mod_name)``.
    """
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_get_module_details" and frame.f_globals.get("__name__") == "runpy":
            return frame.f_locals.get("mod_name") in ("executorch_openvino", "executorch_openvino.__main__",
                                                      "executorch_openvino.support.doctor")
        frame = frame.f_back
    return False


import_problem: ImportError | None = None
try:
    from .support.version_check import check_executorch_version

    check_executorch_version()
    from .runtime import _native  # type: ignore[attr-defined]  # the extension module; loads and registers the delegate
except ImportError as exc:
    if not _run_by_python_m():
        raise
    import_problem = exc
else:
    from .runtime.library_discovery import pip_openvino_library_dir

    BACKEND_ID: str = _native.BACKEND_ID

    _pip_dir = pip_openvino_library_dir()
    if _pip_dir is not None:
        _native.set_pip_library_dir(str(_pip_dir))


def is_registered() -> bool:
    """True when the delegate registered with ExecuTorch's runtime at import."""
    return _native.registration_error_code() == 0


def set_library_path(path) -> None:
    """Uses this OpenVINO C library file (``libopenvino_c.so.<abi>``, ``openvino_c.dll``).

    Takes precedence over ``OPENVINO_LIB_PATH`` and the pip package; has an
    effect only before OpenVINO is first loaded in this process. A relative
    ``path`` is taken relative to the current folder now (``OPENVINO_LIB_PATH``
    must be absolute: it outlives the folder it was set in).
    """
    path = os.fspath(path)
    # Joined, not normalised: "link/../x" must go through the link, as the loader will.
    _native.set_library_path(os.path.join(os.getcwd(), path) if path else "")  # "" clears it


def set_cache_dir(path) -> None:
    """Turns the model cache on for every later program load (``None``, ``""`` or ``b""``: off).

    Each delegated partition loaded afterwards keeps its IR in ``path/ir``
    (named by the partition's SHA-256) and what OpenVINO compiled from it in a
    subfolder per device, precision, performance hint, OpenVINO release and
    kind of CPU (``CPU_f32-openvino-2026.4.1-cpu1a2b3c4d``); later loads, in
    any process, import it (docs/user-guide/model-cache.md: layout, size,
    ``python -m executorch_openvino cache FOLDER [--clear]``).
    ``last_compile_report()["loaded_from_cache"]`` tells whether a load
    imported its model; load times with and without it: docs/loading.md. The
    folder is created if missing. A folder that later turns out unusable does
    not fail a load: the model is compiled without the cache, with a warning in
    the log and ``last_compile_report()["cache_problem"]``.
    Sets the delegate's ``cache_dir`` backend option through ExecuTorch's
    ``set_option``, as a C++ application would.

    Raises ``ValueError`` for a path of 256 bytes or more (the limit of
    ExecuTorch's backend option values) or one that is not valid UTF-8, and
    ``OSError`` when the folder cannot be created or is a file; the setting is
    then unchanged.
    """
    if path is None or os.fspath(path) in ("", b""):
        _native.set_cache_dir("")
        return
    folder = os.path.abspath(os.fsdecode(os.fspath(path)))
    try:
        encoded = folder.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the cache folder path {folder!r} is not valid UTF-8; choose another folder") from None
    if len(encoded) >= 256:
        raise ValueError(f"the cache folder path {folder!r} has {len(encoded)} bytes; ExecuTorch's "
                         "backend options hold at most 255: choose a shorter path")
    os.makedirs(folder, exist_ok=True)  # FileExistsError for a file
    _native.set_cache_dir(folder)


def cache_dir() -> str:
    """The model cache folder later loads use (``set_cache_dir``), ``""`` when the cache is off."""
    return _native.cache_dir()


def load_openvino() -> dict:
    """Loads OpenVINO now; returns ``{"path", "source", "version", "not_used"}``.

    ``not_used`` lists, as "source: path", the other OpenVINO C libraries found
    later in the search order (``native/delegate/library_search.h``).

    Raises ``RuntimeError`` naming every place tried and what to set.
    """
    return dict(_native.load_library())


def library_info() -> dict:
    """What this process has: backend id, registration, OpenVINO path, version and devices.

    Loads OpenVINO if needed; on failure ``error`` holds the reason and the
    other OpenVINO fields are ``None``.
    """
    info = {"backend_id": BACKEND_ID, "registered": is_registered(),
            "path": None, "source": None, "version": None, "not_used": None, "devices": None, "error": None}
    try:
        info.update(load_openvino())
        info["devices"] = list(_native.available_devices())
    except RuntimeError as exc:
        info["error"] = str(exc)
    return info


def build_info() -> dict:
    """How this wheel was built, as recorded by CMake (``native/python/build_info.json.in``).

    Keys: ``openvino_source`` (``"pip"``, ``"install tree"`` or ``"include dir"``),
    ``openvino_location`` (the OpenVINO CMake folder or include folder used),
    ``openvino_version`` (of the headers compiled against), ``executorch_version``,
    ``compiler``, ``build_type``, ``system``.
    """
    import json
    from importlib.resources import files

    return json.loads(files(__name__).joinpath("build_info.json").read_text(encoding="utf-8"))


def last_compile_report() -> dict:
    """What the latest delegate init compiled: ``device``, the precisions, the model cache, the performance
    hint, ``shared``.

    ``requested_precision`` is the ``INFERENCE_PRECISION_HINT`` the delegate
    passed (``"f32"`` on CPU by default, ``""`` for none); ``effective_precision``
    is what the compiled model reports (e.g. ``"f32"`` where a CPU has no bf16
    units, whatever was asked); ``loaded_from_cache`` (bool) is OpenVINO's
    ``LOADED_FROM_CACHE``: the compiled model was imported from the
    :func:`set_cache_dir` folder instead of compiled; ``cache_problem`` says
    why a set folder was not used ("" otherwise). ``requested_performance_hint``,
    ``performance_hint``, ``num_streams`` and ``optimal_infer_requests``: the hint
    asked for and the compiled model's own values (text). ``shared`` (bool): the
    init reused a compiled model this process already held for the same
    partition and options (another load of the program, or a copy
    :class:`~executorch_openvino.runtime.loaded_method.OpenVINOMethod` made for concurrent calls);
    the other fields are then those of the init that compiled it. ``weights``:
    where OpenVINO reads the weights from: ``"file mapping"`` (the ``.pte``'s
    own file, mapped by the delegate, no copy), ``"copy"`` (a program loaded
    from memory, or a blob not on a 64-byte boundary of its file) or
    ``"model cache"`` (the cache folder's files). The latest init of any thread
    in the process.
    """
    return dict(_native.last_compile_report())


def last_error() -> str:
    """The delegate's last error message ('' if none): ExecuTorch's exceptions carry only a code."""
    return _native.last_error()


def __getattr__(name):
    # The lowering side imports torch and executorch.exir: load it on first use, without the known noise of
    # executorch.exir's first import (torchao's).
    if name not in _LAZY_NAMES:
        raise AttributeError(f"module 'executorch_openvino' has no attribute {name!r}")
    from .support.quiet import quiet_dependencies

    with quiet_dependencies():
        return _lazy_attribute(name)


def _lazy_attribute(name):
    if name in ("OpenVINOPartitioner", "OpenvinoPartitioner"):  # the second: upstream's spelling, the same class
        from .lowering.partitioner import OpenVINOPartitioner

        return OpenVINOPartitioner
    if name == "ExecutorchOpenvinoBackend":
        from .lowering.preprocess import ExecutorchOpenvinoBackend

        return ExecutorchOpenvinoBackend
    if name == "ConversionError":  # raised by the preprocess when OpenVINO cannot convert a partition
        from .lowering.conversion import ConversionError

        return ConversionError
    if name in ("OpenVINOBackend", "BackendState", "BackendStateError"):
        from . import lifecycle

        return getattr(lifecycle, name)
    if name == "OpenVINOBackendConfig":
        from .contract.backend_config import OpenVINOBackendConfig

        return OpenVINOBackendConfig
    if name == "quantize":  # quantization.py imports nncf only when called
        from .quantization import quantize

        return quantize
    if name == "runtime_precisions":
        from .support.compiled_layers import runtime_precisions

        return runtime_precisions
    if name == "hide_known_noise":  # other libraries' known messages, hidden for the rest of a script
        from .support.quiet import hide_known_noise

        return hide_known_noise
    if name in _LLM_NAMES:  # language models: transformers is imported when called
        from . import llm

        return getattr(llm, name)
    if name in ("load_method", "OpenVINOMethod"):  # running a .pte imports neither the lowering nor executorch.exir
        from .runtime import loaded_method

        return getattr(loaded_method, name)
    if name in _API_NAMES:
        from . import api

        return getattr(api, name)
    if name == "__version__":  # the installed distribution's version (PEP 396's attribute)
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("executorch-openvino")
        except PackageNotFoundError:
            return "0+unknown"  # a source tree that was never installed
    raise AttributeError(f"module 'executorch_openvino' has no attribute {name!r}")


_API_NAMES = ("lower", "load_method", "OpenVINOMethod", "delegation_summary", "DelegationSummary", "NotDelegated")
_LLM_NAMES = ("export_llm", "generate", "GenerationResult", "LlmProgram")
_LAZY_NAMES = ("__version__", "OpenVINOPartitioner", "OpenvinoPartitioner", "ExecutorchOpenvinoBackend",
               "ConversionError", "OpenVINOBackend", "BackendState", "BackendStateError", "OpenVINOBackendConfig",
               "quantize", "runtime_precisions", "hide_known_noise", *_API_NAMES, *_LLM_NAMES)


def __dir__() -> list:
    # PEP 562: the public names, with those __getattr__ loads on first use (tab completion, help()),
    # not the modules this file imports.
    return sorted(set(__all__) | set(_LAZY_NAMES) | {name for name in globals() if name.startswith("__")})


__all__ = ["BACKEND_ID", "build_info", "OpenVINOPartitioner", "OpenvinoPartitioner", "ExecutorchOpenvinoBackend",
           "is_registered", "set_library_path", "load_openvino", "library_info", "last_error", "last_compile_report",
           "lower", "load_method", "OpenVINOMethod", "delegation_summary", "DelegationSummary", "NotDelegated",
           "OpenVINOBackend", "OpenVINOBackendConfig", "BackendState", "BackendStateError", "set_cache_dir",
           "cache_dir", "quantize", "runtime_precisions", "hide_known_noise", "export_llm", "generate",
           "GenerationResult", "LlmProgram"]
