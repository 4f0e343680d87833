"""libFuzzer targets (tests/fuzz/), built with Debian's clang, AddressSanitizer and UBSan (`nox -s fuzz`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nox

from orchestration import ROOT, environments, native_checks, pins, site_packages
from orchestration.debian import debian_tools

PACKAGES = ["clang-14", "libclang-rt-14-dev"]  # Debian's
CLANG = "clang++-14"  # PACKAGES' compiler
SECONDS = 40  # CI's budget per target; `nox -s fuzz -- 1800` for a long run
TARGETS = ("processed_blob_fuzz", "npy_file_fuzz", "delegate_init_fuzz")


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
    printed = environments.output(session, str(binary), f"-max_total_time={seconds}", "-print_final_stats=1",
                                  f"-artifact_prefix={binary.parent}/crash-", *map(str, corpora),
                                  external=True, stderr=subprocess.STDOUT, env=env)
    stats: dict[str, str] = {}
    for line in printed.splitlines():
        if line.startswith("stat::"):
            key, value = line[len("stat::"):].split(":", 1)
            stats[key.strip()] = value.strip()
    session.log(f"{binary.name}: fuzzed {seconds} s: {stats.get('number_of_executed_units')} executions, "
                f"{stats.get('average_exec_per_sec')}/s, {stats.get('new_units_added')} new units, 0 crashes")


def session_steps(session: nox.Session) -> None:
    """`-- SECONDS [TARGET...]`: each target (default: all of TARGETS) for SECONDS (default 40), with ASan and UBSan.

    - processed_blob_fuzz: native/delegate/processed_blob.cpp's parser, seeds tests/fuzz/corpus;
    - npy_file_fuzz: the C++ runner's .npy reader and writer, seeds tests/fuzz/npy_corpus;
    - delegate_init_fuzz: compile specs and blob through BackendInterface::init with OpenVINO (the pip
      package) loaded, and one execute; seeds tests/fuzz/init_corpus.

    The seeds run first (a crash input saved there is a regression test), then what earlier runs found
    (build/fuzz/*corpus). A finding fails the session and is written to build/fuzz/crash-*.
    """
    seconds = int(session.posargs[0]) if session.posargs else SECONDS
    targets = session.posargs[1:] or list(TARGETS)
    compiler = clang(session, PACKAGES, CLANG)
    session.install(*pins.CMAKE_TOOLS)
    out = ROOT / "build" / "fuzz"
    seeds = ROOT / "tests" / "fuzz"
    for corpus in ("corpus", "init_corpus", "npy_corpus"):
        (out / corpus).mkdir(parents=True, exist_ok=True)
    parsers: list[str] = [t for t in ("processed_blob_fuzz", "npy_file_fuzz") if t in targets]
    if parsers:
        build(session, compiler, out, parsers)
    if "processed_blob_fuzz" in targets:
        run_fuzzer(session, out / "processed_blob_fuzz", seconds, [out / "corpus", seeds / "corpus"])
    if "npy_file_fuzz" in targets:
        run_fuzzer(session, out / "npy_file_fuzz", seconds, [out / "npy_corpus", seeds / "npy_corpus"])
    if "delegate_init_fuzz" not in targets:
        return
    # The init path needs executorch's runtime and headers, and OpenVINO's.
    environments.install_torch(session)
    session.install(pins.executorch_requirement(), pins.openvino_requirement())
    executorch = site_packages.package_dir(session, "executorch")
    openvino = site_packages.package_dir(session, "openvino")
    build(session, compiler, out, ["delegate_init_fuzz", "strip_deepbind"], executorch, openvino)
    env = init_environment(compiler, openvino, out / "strip_deepbind.so")
    run_fuzzer(session, out / "delegate_init_fuzz", seconds, [out / "init_corpus", seeds / "init_corpus"], env=env)
