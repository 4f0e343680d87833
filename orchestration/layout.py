"""Where the sessions read and write: the repository's folders and what build/ and dist/ hold."""

from __future__ import annotations

from orchestration import ROOT

TESTS = ROOT / "tests"
BENCHMARKS = ROOT / "benchmarks"  # the benchmark scripts
PROGRAM_FUZZ = ROOT / "tools" / "program_fuzz"  # the differential program fuzzer
BUILD = ROOT / "build"
RAW_DIR = BUILD / "wheels" / "raw"  # `nox -s build`
REPAIRED_DIR = BUILD / "wheels" / "repaired"  # `nox -s repair`: the wheel every test session installs
OTHER_OPENVINO_DIR = BUILD / "openvino-runtimes"  # the other tested release, unpacked for cross-release runs
INTERPRETERS_DIR = BUILD / "interpreters"  # links to pyenv's CPythons (orchestration/interpreters.py)
DIST = ROOT / "dist"  # the release's artifacts
RELEASE_BUILD = BUILD / "release"
WHEELHOUSE = RELEASE_BUILD / "wheelhouse"  # torch's CUDA builds for the other interpreters, downloaded once
LOCAL_INDEX = BUILD / "index"  # `nox -s index`: wheels built here and their PEP 503 index, simple/
LOCAL_INDEX_WORK = BUILD / "index-work"  # its builds, venvs and report, kept out of what the index serves
# Files whose change makes a built wheel stale.
# README.md too: it is the wheel's long description (pyproject.toml's readme).
SOURCES = ("pyproject.toml", "README.md", "CMakeLists.txt", "cmake/*", "native/**/*", "python/**/*", "wheels/*.py")
