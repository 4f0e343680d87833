"""AddressSanitizer and UBSan runs (`nox -s sanitizers`, and the init fuzzer of `nox -s fuzz`).

gcc's runtimes are preloaded into an interpreter that is not instrumented; the
delegate and the pybindings are (CMake's EXOV_SANITIZE).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nox

from orchestration import ROOT, environments, native_checks, pins, site_packages, test_runs, wheel_build

SANITIZERS = "address,undefined"


def build_checks(session: nox.Session, out: Path, sanitizers: str, package: Path,
                 executorch: Path) -> tuple[Path, Path]:
    """(strip_deepbind.so, findings_control) of tests/CMakeLists.txt, built into `out` with gcc:
    the control linked against the instrumented delegate library of the installed `package`."""
    gcc = shutil.which("gcc") or session.error("gcc is needed to build with the sanitizers")
    native_checks.build(session, "sanitizers", out / "checks", ["strip_deepbind", "findings_control"], {
        "CMAKE_C_COMPILER": gcc, "CMAKE_CXX_COMPILER": "g++", "EXOV_SANITIZE": sanitizers,
        "EXOV_PACKAGE_DIR": package, "EXECUTORCH_PACKAGE_DIR": executorch}, out=out)
    return out / "strip_deepbind.so", out / "findings_control"


def environment(session: nox.Session, shim: Path, reports: Path, sanitizers: str) -> dict:
    """The variables a process of the test suite runs with: gcc's `sanitizers` runtimes preloaded
    after the strip_deepbind `shim`, every report a file in `reports`."""
    gcc = shutil.which("gcc") or session.error("gcc is needed to build with the sanitizers")
    runtimes = [subprocess.check_output([gcc, f"-print-file-name={name}"], text=True).strip()
                for name in ("libasan.so", "libubsan.so")]
    # halt_on_error: the first finding ends the process, and its report is a file.
    # PYTHONMALLOC=malloc is not set: it doubled the run (17 -> 33 min), and
    # Python's allocator only keeps objects of up to 512 bytes, while every
    # buffer the delegate reads (a .pte, a blob, a tensor) is larger or torch's.
    # detect_leaks=0: the interpreter, torch and OpenVINO keep memory until exit
    # by design; the delegate's own growth is test_memory's 1000-cycle check.
    return {
        "LD_PRELOAD": ":".join([str(shim), *runtimes]),
        "ASAN_OPTIONS": f"halt_on_error=1:detect_leaks=0:verify_asan_link_order=0:log_path={reports}/asan",
        "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:log_path={reports}/ubsan",
        # tests/native/test_native_threads.py builds its C++ program with the same sanitizers.
        "EXOV_SANITIZE": sanitizers,
    }


def control_run(session: nox.Session, control: Path, reports: Path, env: dict) -> None:
    """Shows that a finding reaches a report and stops the process: `control` (findings_control, see
    build_checks) must report a heap overflow inside the delegate library and a signed overflow;
    fails the session otherwise."""
    for finding, expected in (("heap-overflow-in-delegate", "heap-buffer-overflow"),
                              ("signed-overflow", "signed integer overflow")):
        # UBSan, inside ASan's runtime, may write to stderr instead of its log_path;
        # either way the finding stops the process.
        printed = environments.output(session, str(control), finding, env=env, external=True,
                                      stderr=subprocess.STDOUT, success_codes=list(range(-64, 256)))
        written = printed + " ".join(p.read_text(errors="replace") for p in reports.glob("*"))
        if expected not in written:
            session.error(f"the sanitizer control '{finding}' left no report naming {expected!r} in {reports}")
        for p in reports.glob("*"):
            p.unlink()
    session.log("controls: both findings were reported")


def reports(session: nox.Session, folder: Path) -> list[Path]:
    """The reports in `folder`, each logged (its first 6000 characters)."""
    found = sorted(folder.glob("*"))
    for report in found:
        session.log(f"{report.name}:\n{report.read_text(errors='replace')[:6000]}")
    return found


def session_steps(session: nox.Session) -> None:
    """Builds the wheel with ASan and UBSan (build/sanitizers/, never released; CMake's EXOV_SANITIZE), shows
    with a control that a heap overflow inside the delegate library and a signed overflow are each reported
    and stop the process, then runs the tests marked `native` (test_runs.SANITIZED; posargs may pick others, e.g.
    `-- -m runner`) under them. Fails on a
    failed test or on any report in build/sanitizers/reports/.
    """
    out = ROOT / "build" / "sanitizers"
    folder = out / "reports"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    wheel = wheel_build.build(session, out / "wheel", build_dir="build/sanitizers/cmake",
                              cmake_defines={"EXOV_SANITIZE": SANITIZERS})
    openvino = pins.OPENVINO_NEWEST
    environments.install_runtime(session, wheel, openvino, *environments.TEST_REQUIREMENTS)
    package = site_packages.package_dir(session, "executorch_openvino")
    executorch = site_packages.package_dir(session, "executorch")
    shim, control = build_checks(session, out, SANITIZERS, package, executorch)
    env = environment(session, shim, folder, SANITIZERS)
    control_run(session, control, folder, env)
    try:
        test_runs.run_suite(session, wheel, openvino, test_runs.SANITIZED, env=env, workers=test_runs.WORKERS)
    finally:
        found = reports(session, folder)
    if found:
        session.error(f"{len(found)} sanitizer report(s) in {folder}")
    session.log("0 sanitizer reports")
