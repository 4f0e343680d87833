"""An OpenVINO install tree as a deployment uses it (`nox -s install_tree`; tests/deployment/)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

from orchestration import ROOT, environments, pins, test_runs, wheel_build


def setupvars_environment(setupvars: Path) -> dict:
    """The variables `source setupvars.sh` sets or changes, read from bash."""
    def env_after(command: str) -> dict:
        out = subprocess.run(["bash", "-c", f"{command} >/dev/null && env -0"], check=True,
                             capture_output=True, env=os.environ.copy()).stdout
        return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)

    before, after = env_after("true"), env_after(f"source {setupvars}")
    return {k: v for k, v in after.items() if before.get(k) != v and not k.startswith(("BASH", "SHLVL", "_"))}


def runtime_venv(session: nox.Session, folder: Path, torch: list[str], requirements: list[str], wheel: Path) -> str:
    """A new venv in `folder` (made again each time) with `torch` (pip's arguments) first, then `requirements`, then
    `wheel` without its dependencies (so no openvino package); returns its python."""
    shutil.rmtree(folder, ignore_errors=True)
    session.run("python", "-m", "venv", str(folder))
    python = str(folder / "bin" / "python")
    session.run(python, "-m", "pip", "install", "-q", *torch, external=True)
    session.run(python, "-m", "pip", "install", "-q", *requirements, external=True)
    session.run(python, "-m", "pip", "install", "-q", "--no-deps", str(wheel), external=True)
    return python


def replay(session: nox.Session, python: str, env: dict) -> None:
    """doctor, then tests/deployment/replay_programs.py, with `python` and `env` (setupvars.sh's variables
    and EXOV_RECORD_DIR), outside the source tree."""
    with session.chdir(session.create_tmp()):
        session.run(python, "-m", "executorch_openvino", "doctor", env=env, external=True)
        session.run(python, "-m", "pytest", str(ROOT / "tests" / "deployment" / "replay_programs.py"),
                    "-p", "no:cacheprovider", "--rootdir", str(ROOT / "tests" / "deployment"), "-q",
                    env=env, external=True)


TREE_DIR = ROOT / "build" / "install-tree"


def session_steps(session: nox.Session) -> None:
    """Builds against an OpenVINO install tree and runs the suite as a deployment splits it.

    1. Lays the pip openvino package's files out as a release archive (build/install-tree/openvino/,
       with setupvars.sh: tests/deployment/install_tree.py).
    2. Builds the wheel against that tree, with no openvino package in the build environment, and repairs it.
    3. Lowering environment (the session's venv, with the openvino package): the full test suite on that
       wheel, recording every program it runs.
    4. Runtime environment (a second venv: the wheel, torch and executorch, no openvino package;
       setupvars.sh sourced): the recorded .pte files run with the recorded inputs and must give the same
       results; doctor passes.
    """
    openvino = pins.OPENVINO_NEWEST
    session.install(*environments.BUILD_TOOLS, pins.executorch_requirement(), pins.openvino_requirement(openvino))
    tree = TREE_DIR / "openvino"
    session.run("python", str(ROOT / "tests" / "deployment" / "install_tree.py"), str(tree))
    tree_env = setupvars_environment(tree / "setupvars.sh")
    session.log(f"setupvars.sh sets: {sorted(tree_env)}")

    session.run("python", "-m", "pip", "uninstall", "-y", "openvino")  # the tree must be the only OpenVINO
    raw, _ = wheel_build.pip_wheel(session, ROOT, TREE_DIR / "wheels" / "raw",
                                   build_dir="build/install-tree/{wheel_tag}", env=tree_env)
    wheel = wheel_build.repair(session, raw, TREE_DIR / "wheels" / "repaired")

    recorded = TREE_DIR / "recorded"
    shutil.rmtree(recorded, ignore_errors=True)
    environments.install_runtime(session, wheel, openvino, *environments.TEST_REQUIREMENTS)
    test_runs.run_suite(session, wheel, openvino, "", "-p", "record_programs", env={
        "EXOV_RECORD_DIR": str(recorded), "EXOV_BUILT_WITH_OPENVINO_SOURCE": "install tree",
        "PYTHONPATH": str(ROOT / "tests" / "deployment")})

    python = runtime_venv(session, TREE_DIR / "runtime-venv", environments.torch_install_args(),
                          [pins.executorch_requirement(), "packaging", "pytest", "numpy"], wheel)
    replay(session, python, {**tree_env, "EXOV_RECORD_DIR": str(recorded)})
