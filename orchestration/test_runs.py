"""Running tests/ against an installed wheel, and which tests each run selects.

Tests are chosen by pytest markers (registered in pyproject.toml's
[tool.pytest.ini_options]; tests/tooling/test_markers.py checks that every
test module carries what it should), never by lists of files here.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import nox

from orchestration import ROOT, environments, layout, pins, wheel_build

# The newest OpenVINO release in CI: all but the slow tests, which `nox -s slow_tests` runs by hand, and the
# native ones, which CI runs once, in the sanitizers session (on the instrumented build, against eager as here).
NEWEST_RELEASE_CI = "not slow and not native"
SLOW = "slow"
# The older OpenVINO release in CI: where its converter and runtime differ (operators, dtypes, models,
# library loading, INT8, state). By hand, EXOV_OLDER_RELEASE_FULL=1 runs all but the own_runtime tests.
OLDER_RELEASE_CI = "older_openvino and not own_runtime and not slow"  # own_runtime on a test: newest release only
OLDER_RELEASE_FULL = "not own_runtime"
# Test processes of the tests, slow_tests and sanitizers sessions: the tests use about one core each (export,
# conversion) and this project's CI machines have 2 (docs/design.md, "CI and the orchestration").
WORKERS = min(2, os.cpu_count() or 1)
# The tests that drive the native code's own paths, under ASan and UBSan; the runner's tests run with the release
# build in the tests session, and sanitized by hand (`nox -s sanitizers -- -m runner`), to keep CI within budget.
SANITIZED = "native and not slow"
EMULATED = "aarch64"  # what runs under qemu-user in aarch64_emulated


def selection(openvino: str, full_older_release: bool = False) -> str:
    """The marker expression (`pytest -m`) of a `tests` run with OpenVINO `openvino`."""
    if openvino == pins.OPENVINO_NEWEST:
        return NEWEST_RELEASE_CI
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


def pytest_args(markers: str, rootdir: Path = layout.TESTS, workers: int = 1) -> list[str]:
    """pytest's arguments for tests/ outside the source tree (importlib mode, no cache and strict markers come
    from pyproject.toml's addopts, as for a plain `pytest`); with `workers` > 1, pytest-xdist's processes, each
    taking whole modules (module fixtures and order kept)."""
    args = ["--rootdir", str(rootdir), "-ra", "--durations=40"]  # enough to see where CI's minutes go
    if workers > 1:
        args += ["-n", str(workers), "--dist", "loadfile"]
    return [*args, "-m", markers] if markers else args


def run_suite(session: nox.Session, wheel: Path, openvino: str, markers: str = "", *args: str,
              env: dict | None = None, workers: int = 1) -> None:
    """pytest on tests/ (the `markers` selection) against the installed wheel, from a folder where python/ is not
    importable, in `workers` processes."""
    if unknown := unknown_markers(session.posargs):
        # pytest refuses them itself, but under pytest-xdist as an INTERNALERROR naming a "crashed" test
        session.error(f"unknown marker(s) in -m after `--`: {', '.join(unknown)}; the registered ones are "
                      f"{', '.join(sorted(registered_markers()))} (pyproject.toml)")
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
        try:
            session.run("python", "-m", "pytest", str(layout.TESTS), *pytest_args(markers, workers=workers), *args,
                        *session.posargs, env=env)
        except nox.command.CommandFailed as failed:
            if failed.return_code == NOTHING_SELECTED and markers:
                session.log(nothing_selected_hint(markers))
            raise


NOTHING_SELECTED = 5  # pytest's exit code when no test was collected or all were deselected
# pytest's own markers, which an -m expression may name besides pyproject.toml's
PYTEST_MARKERS = {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}


def registered_markers() -> set[str]:
    """The marker names pyproject.toml registers ("name(args): text" lines) and pytest's own."""
    ini = nox.project.load_toml(ROOT / "pyproject.toml")["tool"]["pytest"]["ini_options"]
    return {line.split(":", 1)[0].split("(", 1)[0].strip() for line in ini["markers"]} | PYTEST_MARKERS


def unknown_markers(arguments: list[str] | tuple[str, ...]) -> list[str]:
    """The names in the `-m` expressions of pytest `arguments` that are not registered markers, in order."""
    expressions = [arguments[i + 1] for i, a in enumerate(arguments[:-1]) if a == "-m"]
    expressions += [a[2:] for a in arguments if a.startswith("-m") and len(a) > 2]
    names = [n for e in expressions for n in re.findall(r"[A-Za-z_]\w*", e) if n not in ("and", "or", "not")]
    known = registered_markers()
    return list(dict.fromkeys(n for n in names if n not in known))


def nothing_selected_hint(markers: str) -> str:
    """What to do when the arguments after `--` select nothing within the session's marker selection."""
    return (f"no test selected: this session runs only `-m \"{markers}\"` and the arguments after `--` choose "
            "within it; a test marked native or slow runs with `-m native` or `-m slow` after `--` (the last `-m` "
            "wins), e.g. `nox -s \"tests(...)\" -- -m native -k test_bad_inputs`")


def tests_session(session: nox.Session, openvino: str, markers: str | None = None) -> None:
    """The repaired wheel in a fresh venv with OpenVINO `openvino` and the test requirements; tests/ selected by
    `markers` (by default the CI selection of that release, `selection`)."""
    wheel = wheel_build.repaired_wheel(session)
    environments.install_runtime(session, wheel, openvino, *environments.TEST_REQUIREMENTS,
                                 pins.nncf_requirement(openvino))
    if markers is None:
        markers = selection(openvino, os.environ.get("EXOV_OLDER_RELEASE_FULL") == "1")
    run_suite(session, wheel, openvino, markers, workers=WORKERS)
