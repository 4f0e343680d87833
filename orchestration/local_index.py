"""`nox -s index`: the x86_64 wheels for the interpreters on this machine and a PEP 503 index of them, to
install `executorch-openvino` by name without a release (docs/development.md, "A local package index").

Unlike `release` it needs no sdist, no aarch64 toolchain and no torch for any build (compiling needs
executorch's files only: the build environments install it without dependencies). The session interpreter's
wheel is the one `repair` made; each other interpreter's is built from the source tree in a venv of its own
and repaired the same way. Then pip, asked for each of pins.INSTALL_PYTHONS that a wheel serves, must pick
that wheel from the index, and a fresh venv of the session's interpreter installs the package by name and
runs a program it lowered, compared with eager PyTorch (tests/release/portable_program.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import nox

from orchestration import ROOT, environments, package_index, pins, release, release_steps, wheel_build
from orchestration.layout import LOCAL_INDEX, LOCAL_INDEX_WORK


def chosen_pythons(requested: Sequence[str], found: Mapping[str, str]) -> list[str]:
    """The interpreters to build wheels for, in pins.WHEEL_PYTHONS' order: pins.PYTHON (the install check runs
    on it) and either `requested` (the session's arguments) or every other interpreter of pins.WHEEL_PYTHONS
    that `found` (interpreters.expose's answer: a path, or why there is none) names a file for.

    Raises ValueError for a requested interpreter the release has no wheel of its own for (3.13 and later
    install the cp312-abi3 wheel, built with 3.12).
    """
    unknown = [python for python in requested if python not in pins.WHEEL_PYTHONS]
    if unknown:
        raise ValueError(f"no wheel of their own for {unknown}: choose from {list(pins.WHEEL_PYTHONS)} "
                         f"(CPython {pins.ABI3_PYTHONS[0]} builds the wheel for {pins.ABI3_PYTHONS[0]} and later)")
    wanted = set(requested) if requested else {p for p in pins.WHEEL_PYTHONS if Path(found.get(p, "")).is_file()}
    return [python for python in pins.WHEEL_PYTHONS if python in wanted | {pins.PYTHON}]


def served(wheels: Sequence[str]) -> dict[str, str]:
    """{interpreter of pins.INSTALL_PYTHONS: the wheel of `wheels` (file names) that pip should pick for it},
    for the interpreters one of them serves."""
    return {python: found[0] for python in pins.INSTALL_PYTHONS
            if (found := [w for w in wheels if f"-{pins.release_tag(python)}-" in w])}


def write_index(wheels: Sequence[Path], folder: Path, project: Mapping[str, str]) -> Path:
    """`folder` emptied, then holding copies of `wheels` and their PEP 503 index, `folder`/simple/ (returned)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for wheel in wheels:
        shutil.copy2(wheel, folder / wheel.name)
    return package_index.write_simple_index(folder, project["name"], project["requires-python"])


def build_wheel(session: nox.Session, python: str, found: Mapping[str, str]) -> Path:
    """CPython `python`'s repaired x86_64 wheel: the `repair` session's for the session's own interpreter,
    else built from the tree in a fresh venv with the build tools and executorch (without dependencies)."""
    if python == pins.PYTHON:
        return wheel_build.repaired_wheel(session)
    interpreter = release_steps.venv(session, python, LOCAL_INDEX_WORK / "build-venvs" / python, dict(found))
    pip = [interpreter, "-m", "pip", "install", "-q"]
    session.run(*pip, *environments.BUILD_TOOLS, pins.openvino_requirement(), external=True)
    session.run(*pip, "--no-deps", pins.executorch_requirement(), external=True)
    return wheel_build.repaired_wheel_of(session, ROOT, LOCAL_INDEX_WORK / "raw" / python,
                                         LOCAL_INDEX_WORK / "repaired" / python, python=interpreter)[0]


def install_check(session: nox.Session, index: Path, wheel: Path) -> dict:
    """A fresh venv of the session's interpreter: torch (as the release installs it), then executorch-openvino
    by name from `index` (it must come from `wheel`), then a program lowered and run there, which must equal
    eager PyTorch (portable_program.py's check exits 1 otherwise)."""
    python = pins.PYTHON
    folder = LOCAL_INDEX_WORK / "venv"
    interpreter = release_steps.venv(session, python, folder, {})
    torch = release.install_torch(session, python, interpreter)
    release_steps.install_by_name(session, interpreter, index, wheel, folder / "pip-report.json")
    program = LOCAL_INDEX_WORK / "program"
    with session.chdir(session.create_tmp()):
        session.run(interpreter, str(release.PORTABLE_PROGRAM), "lower", str(program), external=True)
        out = environments.output(session, interpreter, str(release.PORTABLE_PROGRAM), "check", str(program),
                                  external=True)
    check = json.loads(out.strip().splitlines()[-1])
    result = {"python": check["python"], "installed": wheel.name, "outputs": check["outputs"],
              "problems": check["problems"], "venv_bytes": release_steps.folder_bytes(folder), **torch}
    shutil.rmtree(folder)
    return result


def session_steps(session: nox.Session, found: Mapping[str, str]) -> None:
    """Builds the wheels of chosen_pythons, writes build/index/ and its index, checks pip's picks and an
    install by name; logs and writes build/index-work/report.json."""
    try:
        pythons = chosen_pythons(session.posargs, found)
    except ValueError as error:
        session.error(str(error))
    session.install(*environments.REPAIR_REQUIREMENTS)
    wheels = [build_wheel(session, python, found) for python in pythons]
    index = write_index(wheels, LOCAL_INDEX, release.project_metadata())
    picks = {}
    for python, wanted in served([w.name for w in wheels]).items():
        picks[python] = release_steps.index_pick(session, python, pins.MANYLINUX_X86_64, index,
                                                 LOCAL_INDEX_WORK / "picks" / python)
        if picks[python] != [wanted]:
            session.error(f"pip for CPython {python} picked {picks[python]} from {index}, not {wanted}")
    (own,) = [LOCAL_INDEX / w.name for w in wheels if f"-{pins.release_tag(pins.PYTHON)}-" in w.name]
    report = {"index": index.as_uri(), "wheels": {w.name: w.stat().st_size for w in wheels}, "picks": picks,
              "install": install_check(session, index, own)}
    (LOCAL_INDEX_WORK / "report.json").write_text(json.dumps(report, indent=1))
    session.log(json.dumps(report, indent=1))
    session.log(f"pip install --extra-index-url {index.as_uri()} executorch-openvino")
