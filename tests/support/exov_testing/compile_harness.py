"""Builds the native test programs against the installed wheel, with CMake (tests/CMakeLists.txt, EXOV_CHECKS=harness).

Used by tests/native/test_native_threads.py, tests/native/test_backend_options.py,
tests/runtime/test_concurrency.py, tests/runtime/test_library_loading.py and
benchmarks/bench.py. CMake says how each target is compiled; here only
the folders of the installed packages are found and passed to it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from exov_testing import REPOSITORY as ROOT


def compiler() -> str | None:
    """g++ or c++ from PATH, or None."""
    return shutil.which("g++") or shutil.which("c++")


def _tool(name: str) -> str:
    """`name` beside this interpreter (the venv's cmake and ninja packages), else from PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else (shutil.which(name) or name)


def build_harness(target: str, out: Path, sanitize: str = "") -> Path:
    """Builds the CMake `target` into the folder `out` and returns its file; raises
    ``subprocess.CalledProcessError`` with CMake's output.

    `sanitize` is the wheel's ``-fsanitize=`` list (e.g. ``address,undefined``), "" for none.
    """
    import executorch
    import openvino

    import executorch_openvino

    out.mkdir(parents=True, exist_ok=True)
    ov_root = Path(openvino.__file__).parent
    ov_c = sorted((ov_root / "libs").glob("libopenvino_c.so.*"))
    settings = {
        "EXOV_CHECKS": "harness",
        "EXOV_PACKAGE_DIR": Path(executorch_openvino.__file__).parent,
        "EXECUTORCH_PACKAGE_DIR": Path(list(executorch.__path__)[0]),  # a namespace package: no __file__
        "OPENVINO_INCLUDE_DIR": ov_root / "include",
        "OPENVINO_C_LIBRARY": ov_c[-1] if ov_c else "",
        "EXOV_SANITIZE": sanitize,
        "CMAKE_CXX_COMPILER": compiler() or "g++",
        "CMAKE_RUNTIME_OUTPUT_DIRECTORY": out,
        "CMAKE_LIBRARY_OUTPUT_DIRECTORY": out,
    }
    ninja = _tool("ninja")
    generator = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if shutil.which(ninja) else []
    build = out / f"cmake-{target}"
    # The build tools need none of the sanitizer runtimes a test session preloads.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    cmake = _tool("cmake")
    for command in ([cmake, "-S", str(ROOT / "tests"), "-B", str(build), *generator,
                     *[f"-D{name}={value}" for name, value in settings.items()]],
                    [cmake, "--build", str(build), "--target", target]):
        subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    built = [p for p in (out / target, out / f"lib{target}.so") if p.is_file()]
    assert built, f"CMake built no {target} in {out}"
    return built[0]


def write_first_blob(pte: bytes, path: Path) -> Path:
    """Writes the first processed blob in the `.pte` bytes `pte` to `path` (the programs read one from a file)."""
    import struct

    from executorch_openvino.contract import processed_blob

    at = pte.find(processed_blob.MAGIC)
    assert at >= 0, "the program holds no processed blob of this delegate"
    _, _, _, _, _, weights_offset, weights_size, _, _ = struct.unpack_from("<8sIIQQQQII", pte, at)
    path.write_bytes(pte[at : at + weights_offset + weights_size])
    return path
