"""libFuzzer targets (tests/fuzz/), built with Debian's clang, AddressSanitizer and UBSan (`nox -s fuzz`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nox

from orchestration import native_checks
from orchestration.debian import debian_tools


def clang(session: nox.Session, packages: list[str], name: str) -> str:
    """The clang++ called `name`, from Debian's `packages`."""
    (found,) = debian_tools(session, packages, lambda: (shutil.which(name),))
    return found


def build(session: nox.Session, clang: str, out: Path, targets: list[str], executorch: Path | None = None,
          openvino: Path | None = None) -> Path:
    """Builds the fuzz `targets` of tests/CMakeLists.txt with `clang` into `out` (CMake's folder: out/cmake).

    delegate_init_fuzz and strip_deepbind (gcc's) need the installed `executorch` and `openvino` packages;
    without them only the parsers are configured.
    """
    defines = {"CMAKE_CXX_COMPILER": clang, "CMAKE_C_COMPILER": "gcc", "EXECUTORCH_PACKAGE_DIR": executorch or "",
               "OPENVINO_INCLUDE_DIR": openvino / "include" if openvino else ""}
    return native_checks.build(session, "fuzz", out / "cmake", targets, defines, out=out)


def init_environment(clang: str, openvino: Path, shim: Path) -> dict:
    """What the init fuzzer runs with: the `openvino` package's C library, and clang's ASan runtime
    preloaded after the strip_deepbind `shim`, which lets oneTBB's RTLD_DEEPBIND pass."""
    asan = subprocess.check_output([clang, "-print-file-name=libclang_rt.asan-x86_64.so"], text=True).strip()
    library = sorted((openvino / "libs").glob("libopenvino_c.so.*"))[-1]
    return {"OPENVINO_LIB_PATH": str(library), "LD_PRELOAD": f"{shim}:{asan}",
            # OpenVINO keeps its plugins and caches until exit by design.
            "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0"}


def run_fuzzer(session: nox.Session, binary: Path, seconds: int, corpora: list[Path], env=None) -> None:
    """Runs a libFuzzer binary; a finding fails the session and is written next to it as crash-*."""
    output = session.run(str(binary), f"-max_total_time={seconds}", "-print_final_stats=1",
                         f"-artifact_prefix={binary.parent}/crash-", *map(str, corpora),
                         external=True, silent=True, stderr=subprocess.STDOUT, env=env)
    stats = dict((part.strip() for part in line[len("stat::"):].split(":", 1))
                 for line in output.splitlines() if line.startswith("stat::"))
    session.log(f"{binary.name}: fuzzed {seconds} s: {stats.get('number_of_executed_units')} executions, "
                f"{stats.get('average_exec_per_sec')}/s, {stats.get('new_units_added')} new units, 0 crashes")
