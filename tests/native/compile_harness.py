"""Compiles a C++ program against the installed wheel's delegate library and executorch's runtime.

Used by tests/test_native_threads.py, tests/test_backend_options.py and
tests/benchmarks/bench.py: the same
flags the executorch wheel's CMake targets carry (C++17,
``C10_USING_CUSTOM_GENERATED_MACROS``, the c10 include folder), linked to
``libexecutorch_openvino_backend.so`` and ``libexecutorch.so`` with their
folders as RUNPATH.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def compiler() -> str | None:
    """g++ or c++ from PATH, or None."""
    return shutil.which("g++") or shutil.which("c++")


def compile_against_wheel(source: Path, out: Path, *extra: str, optimize: str = "-O1", sanitize: str = "") -> Path:
    """Builds `source` into the executable `out`; raises ``subprocess.CalledProcessError`` with the compiler's output.

    `extra` goes last on the command line (more include folders and libraries);
    `sanitize` is a ``-fsanitize=`` list (e.g. ``address,undefined``).
    """
    import executorch

    import executorch_openvino

    package = Path(executorch_openvino.__file__).parent
    et_root = Path(list(executorch.__path__)[0])  # a namespace package: no __file__
    subprocess.run([
        compiler() or "g++", "-std=c++17", optimize, "-g", "-pthread",
        *([f"-fsanitize={sanitize}", "-fno-sanitize-recover=all"] if sanitize else []),
        "-DC10_USING_CUSTOM_GENERATED_MACROS", "-DET_EVENT_TRACER_ENABLED",
        "-I", str(ROOT / "native"), "-I", str(ROOT / "tests" / "native"), "-I", str(et_root / "include"),
        "-I", str(et_root / "include" / "executorch" / "runtime" / "core" / "portable_type" / "c10"),
        str(source), "-o", str(out),
        f"-L{package}", "-l:libexecutorch_openvino_backend.so", f"-L{et_root / 'lib'}", "-lexecutorch",
        f"-Wl,-rpath,{package}:{et_root / 'lib'}", *extra,
    ], check=True, capture_output=True, text=True)
    return out


def write_first_blob(pte: bytes, path: Path) -> Path:
    """Writes the first processed blob in the `.pte` bytes `pte` to `path` (the programs read one from a file)."""
    import struct

    from executorch_openvino import processed_blob

    at = pte.find(processed_blob.MAGIC)
    assert at >= 0, "the program holds no processed blob of this delegate"
    _, _, _, _, _, weights_offset, weights_size, _, _ = struct.unpack_from("<8sIIQQQQII", pte, at)
    path.write_bytes(pte[at : at + weights_offset + weights_size])
    return path
