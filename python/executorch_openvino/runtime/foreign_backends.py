"""Programs delegated to backends other than this package's: which ones, and a clear refusal before ExecuTorch
fails with a bare error code, or crashes.

A ``.pte`` names the backend id of every delegate that lowered it. ExecuTorch's runtime fails a method whose
backend no library registered with ``Error 0x20``-style codes, and executorch 1.5.1's own OpenVINO delegate
(backend id ``OpenvinoBackend``, registered by the executorch wheel) crashed the process with OpenVINO 2026.4.1.
:func:`check_method_backends` reads the method's backends from the program's metadata (``_native.program_backends``,
ExecuTorch's ``MethodMeta``) and raises before anything is loaded.
"""

from __future__ import annotations

import ctypes
import os
import re

from .. import _native

# executorch's own OpenVINO delegate (executorch.backends.openvino; libexecutorch_backend_openvino.so in the
# executorch wheel): another backend, with processed blobs of its own (OpenVINO compiled-model exports).
EXECUTORCH_OWN_OPENVINO_BACKEND = "OpenvinoBackend"
# The OpenVINO releases that delegate works with: its own load error in executorch 1.5.1 asks for
# "openvino>=2025.1.0,<2026.0.0". Measured with a Linear+ReLU program lowered by it: OpenVINO 2025.4.1 ran it;
# OpenVINO 2026.4.1 crashed the process (SIGSEGV) in the first execute of a program lowered with 2026.4.1, and
# refused one lowered with 2025.4.1 ("failed to import model").
EXECUTORCH_OWN_OPENVINO_RANGE = ((2025, 1), (2026, 0))


def check_method_backends(program: bytes | str, method: str) -> None:
    """Raises ``RuntimeError`` when `method` of `program` (the ``.pte``'s bytes or path) uses a backend that
    cannot run here: one no library in this process registered (the message names it and how to lower the
    model for this package), or executorch's own ``OpenvinoBackend`` with an OpenVINO outside
    :data:`EXECUTORCH_OWN_OPENVINO_RANGE`. Nothing happens for a program ExecuTorch cannot read, or a method
    it lacks: loading it gives ExecuTorch's own error."""
    try:
        backends = _native.program_backends(program).get(method)
    except ValueError:
        return
    if not backends:
        return
    message = _native.unregistered_backends_message(method, backends)
    if message:
        raise RuntimeError(message)
    if any(backend == EXECUTORCH_OWN_OPENVINO_BACKEND for backend, _ in backends):
        problem = own_openvino_backend_problem()
        if problem:
            raise RuntimeError(f"method '{method}' was delegated to executorch's own OpenVINO delegate (backend id "
                               f"'{EXECUTORCH_OWN_OPENVINO_BACKEND}', executorch.backends.openvino), not to "
                               f"executorch-openvino ('{_native.BACKEND_ID}'): {problem}. Lower the model again "
                               "with executorch-openvino's partitioner (executorch_openvino.OpenVINOPartitioner, "
                               "or exov.lower) to run it on this OpenVINO.")


def own_openvino_backend_problem() -> str:
    """Why executorch's own OpenVINO delegate cannot run here ("" when it can, or when it cannot be told): the
    OpenVINO it would open (``OPENVINO_LIB_PATH``, which importing ``executorch.runtime`` sets to the pip
    package's library) is outside the releases it works with."""
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
            f"and it would open OpenVINO {'.'.join(map(str, found))} ({path}, OPENVINO_LIB_PATH), with which it "
            "crashes the process")


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
