"""Running tests/ against an installed wheel, and which tests each run selects.

Tests are chosen by pytest markers (registered in pyproject.toml's
[tool.pytest.ini_options]; tests/tooling/test_markers.py checks that every
test module carries what it should), never by lists of files here.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

from orchestration import environments, layout, pins, wheel_build

# The older OpenVINO release in CI: where its converter and runtime differ (operators, dtypes, models,
# library loading, INT8, state). By hand, EXOV_OLDER_RELEASE_FULL=1 runs all but the own_runtime tests.
OLDER_RELEASE_CI = "older_openvino"
OLDER_RELEASE_FULL = "not own_runtime"
SANITIZED = "native"  # the tests that drive the native code's own paths, under ASan and UBSan
EMULATED = "aarch64"  # what runs under qemu-user in aarch64_emulated


def selection(openvino: str, full_older_release: bool = False) -> str:
    """The marker expression (`pytest -m`) of a `tests` run with OpenVINO `openvino`; "" selects all."""
    if openvino == pins.OPENVINO_NEWEST:
        return ""
    return OLDER_RELEASE_FULL if full_older_release else OLDER_RELEASE_CI


def other_openvino_runtime(session: nox.Session, openvino: str) -> Path:
    """The other tested OpenVINO release, unpacked (not installed) for cross-release runs."""
    other = next(v for v in pins.OPENVINO_RELEASES if v != openvino)
    target = layout.OTHER_OPENVINO_DIR / other
    if not list((target / "openvino" / "libs").glob("libopenvino_c.so*")):
        shutil.rmtree(target, ignore_errors=True)
        session.run("python", "-m", "pip", "install", "--no-deps", "--target", str(target),
                    pins.openvino_requirement(other))
    return target


def pytest_args(markers: str, rootdir: Path = layout.TESTS) -> list[str]:
    """pytest's arguments for tests/ outside the source tree: importlib mode, no cache, strict markers."""
    args = ["--import-mode=importlib", "-p", "no:cacheprovider", "--rootdir", str(rootdir), "--strict-markers",
            "-ra", "--durations=15"]
    return [*args, "-m", markers] if markers else args


def run_suite(session: nox.Session, wheel: Path, openvino: str, markers: str = "", *args: str,
              env: dict | None = None) -> None:
    """pytest on tests/ (the `markers` selection) against the installed wheel, from a folder where python/ is not
    importable."""
    other = other_openvino_runtime(session, openvino)
    workdir = Path(session.create_tmp())
    env = {
        "EXOV_WHEEL": str(wheel),
        "EXOV_OPENVINO_VERSION": openvino,
        "EXOV_OTHER_OPENVINO_DIR": str(other),
        "EXOV_REQUIRE_ALL": "1",
        **environments.OFFLINE,
        **(env or {}),
    }
    with session.chdir(workdir):
        session.run("python", "-m", "pytest", str(layout.TESTS), *pytest_args(markers), *args, *session.posargs,
                    env=env)


def tests_session(session: nox.Session, openvino: str) -> None:
    """The repaired wheel in a fresh venv with OpenVINO `openvino` and the test requirements; tests/."""
    wheel = wheel_build.repaired_wheel(session)
    environments.install_runtime(session, wheel, openvino, *environments.TEST_REQUIREMENTS,
                                 pins.nncf_requirement(openvino))
    run_suite(session, wheel, openvino, selection(openvino, os.environ.get("EXOV_OLDER_RELEASE_FULL") == "1"))

