"""Programs delegated to backends other than this package's: which ones, and a clear refusal before ExecuTorch
fails with a bare error code, or a way around a crash.

A ``.pte`` names the backend id of every delegate that lowered it. ExecuTorch's runtime fails a method whose
backend no library registered with ``Error 0x20``-style codes, and executorch 1.5.1's own OpenVINO delegate
(backend id ``OpenvinoBackend``, registered by the executorch wheel) crashed the process with OpenVINO 2026.4.1
when its program was loaded from a file path. :func:`check_method_backends` reads the method's backends from the
program's metadata (``_native.program_backends``, ExecuTorch's ``MethodMeta``) before anything is loaded.
"""

from __future__ import annotations

import ctypes
import os
import re

from . import _native  # type: ignore[attr-defined]  # the extension module

# executorch's own OpenVINO delegate (executorch.backends.openvino; libexecutorch_backend_openvino.so in the
# executorch wheel): another backend, with processed blobs of its own (OpenVINO compiled-model exports).
EXECUTORCH_OWN_OPENVINO_BACKEND = "OpenvinoBackend"
# The OpenVINO releases that delegate was built for: its own load error in executorch 1.5.1 asks for
# "openvino>=2025.1.0,<2026.0.0". Measured with a Linear+ReLU program lowered by it: OpenVINO 2025.4.1 ran it;
# OpenVINO 2026.4.1 crashed the process (SIGSEGV) in the first execute when the program was loaded from a file
# path, and ran it when loaded from memory: that delegate frees its processed blob after init while OpenVINO 2026
# still reads the weights from it, and a program loaded from memory keeps the blob's bytes alive (docs/design.md).
EXECUTORCH_OWN_OPENVINO_RANGE = ((2025, 1), (2026, 0))


def check_method_backends(program: bytes | str, method: str, signatures: dict | None = None) -> bool:
    """Raises ``RuntimeError`` when `method` of `program` (the ``.pte``'s bytes or path) uses a backend no
    library in this process registered (the message names it and how to lower the model for this package).
    Returns True when the program must be loaded from memory, not from its path: it uses executorch's own
    ``OpenvinoBackend`` with an OpenVINO outside :data:`EXECUTORCH_OWN_OPENVINO_RANGE`, which crashed on a
    program loaded from a file. Raises ``RuntimeError`` for bytes that are not a program ExecuTorch can read
    (not a ``.pte``, truncated, damaged); a method the program lacks is left to ExecuTorch's own error.
    ``signatures``: ``_native.program_signatures(program)`` when the caller read them already.

    A method of executorch's own OpenVINO delegate gets ``executorch.runtime`` imported first: that import
    sets ``OPENVINO_LIB_PATH`` to the pip ``openvino`` package's library, which that delegate loads."""
    if signatures is not None:
        backends = signatures[method]["backends"] if method in signatures else None
    else:
        try:
            backends = _native.program_backends(program).get(method)
        except ValueError as error:
            raise unreadable_program(program, error) from None
    if not backends:
        return False
    message = _native.unregistered_backends_message(method, backends)
    if message:
        raise RuntimeError(message)
    if not any(b == EXECUTORCH_OWN_OPENVINO_BACKEND for b, _ in backends):
        return False
    from ..support.quiet import quiet_dependencies

    with quiet_dependencies():  # executorch.runtime's first import imports torchao
        import executorch.runtime  # noqa: F401
    return isinstance(program, str) and bool(own_openvino_backend_problem())


def unreadable_program(program, error: ValueError) -> RuntimeError:
    """The error for `program` (a path, or bytes) that the native reader refused with `error`; bytes that read
    as a path (a breaker's finding: ``load_method(b"/tmp/model.pte")``) are named as such."""
    where = f"'{program}'" if isinstance(program, (str, os.PathLike)) else "the program given"
    if isinstance(error, UnicodeDecodeError):  # a method's or value's name in the flatbuffer (a breaker's finding)
        error = ValueError(f"a program whose names are not all UTF-8 text (byte 0x{error.object[error.start]:02x} "
                           f"in {bytes(error.object[:48])!r})")
    message = f"{where} is {error}: not a .pte, or one truncated or damaged (copy it again, or lower again)"
    if isinstance(program, bytes) and len(program) <= 4096:
        text = os.fsdecode(program)
        if text.endswith(".pte") or (text.isprintable() and os.path.isfile(text)):
            message += (f". These bytes read as the path {text!r}: bytes are taken as the program's content; "
                        "pass a path as str or pathlib.Path")
    return RuntimeError(message)


def explain_failed_load(program: bytes | str, method: str) -> str:
    """What to add to ExecuTorch's error when `method` of `program` failed to load and uses executorch's own
    OpenVINO delegate ("" otherwise): its processed blobs are OpenVINO compiled-model exports, which only the
    OpenVINO release that wrote them reads (measured: 2025.4.1 and 2026.4.1 refused each other's with "failed
    to import model"), so the usual cause is another release than the one that lowered it."""
    try:
        backends = _native.program_backends(program).get(method) or []
    except ValueError:
        return ""
    if not any(backend == EXECUTORCH_OWN_OPENVINO_BACKEND for backend, _ in backends):
        return ""
    path = os.environ.get("OPENVINO_LIB_PATH", "")
    found = openvino_version_of(path) if path else None
    opened = f"OpenVINO {'.'.join(map(str, found))} ({path})" if found else "the OpenVINO it finds"
    return (f"executorch-openvino: method '{method}' was delegated to executorch's own OpenVINO delegate (backend "
            f"id '{EXECUTORCH_OWN_OPENVINO_BACKEND}'), whose partitions only the OpenVINO release that lowered them "
            f"can read, and it opened {opened}. Run it with OPENVINO_LIB_PATH set to the OpenVINO C library of "
            "that release, or lower the model again with executorch_openvino.OpenVINOPartitioner (whose programs "
            "run on every OpenVINO release this package supports).")


def own_openvino_backend_problem() -> str:
    """Why executorch's own OpenVINO delegate would crash on a program loaded from a file here ("" when it
    would not, or when it cannot be told): the OpenVINO it opens (``OPENVINO_LIB_PATH``, which importing
    ``executorch.runtime`` sets to the pip package's library) is outside the releases it was built for."""
    path = os.environ.get("OPENVINO_LIB_PATH", "")
    if not path:
        return ""
    found = openvino_version_of(path)
    if found is None:
        return ""
    low, high = EXECUTORCH_OWN_OPENVINO_RANGE
    if low <= found[:2] < high:
        return ""
    return (f"executorch 1.5.1 built it for OpenVINO {low[0]}.{low[1]} up to (not including) {high[0]}.{high[1]}, "
            f"and it opens OpenVINO {'.'.join(map(str, found))} here ({path}, OPENVINO_LIB_PATH), with which it "
            "crashes the process on a program loaded from a file path (not on one loaded from memory)")


def openvino_version_of(library: str) -> tuple[int, ...] | None:
    """``(2026, 4, 1)``: the release of the OpenVINO C library file `library` (its ``ov_get_openvino_version``),
    or ``None`` when it cannot be opened or says no version. Opens the library (what running it would do)."""
    class _Version(ctypes.Structure):
        _fields_ = [("build_number", ctypes.c_char_p), ("description", ctypes.c_char_p)]

    try:
        lib = ctypes.CDLL(library)
        version = _Version()
        if lib.ov_get_openvino_version(ctypes.byref(version)) != 0 or not version.build_number:
            return None
        text = version.build_number.decode("ascii", "replace")  # "2026.4.1-22982-e213a147257-releases/2026/4"
        lib.ov_version_free(ctypes.byref(version))
    except (OSError, AttributeError):
        return None
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(g) for g in match.groups() if g is not None) if match else None
