"""An OpenVINO install tree as a deployment uses it (`nox -s install_tree`; tests/deployment/)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

from orchestration import ROOT


def setupvars_environment(setupvars: Path) -> dict:
    """The variables `source setupvars.sh` sets or changes, read from bash."""
    def env_after(command: str) -> dict:
        out = subprocess.run(["bash", "-c", f"{command} >/dev/null && env -0"], check=True,
                             capture_output=True, env=os.environ.copy()).stdout
        return dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)

    before, after = env_after("true"), env_after(f"source {setupvars}")
    return {k: v for k, v in after.items() if before.get(k) != v and not k.startswith(("BASH", "SHLVL", "_"))}


def runtime_venv(session: nox.Session, folder: Path, torch: str, requirements: list[str], wheel: Path) -> str:
    """A new venv in `folder` (made again each time) with `torch` first, then `requirements`, then
    `wheel` without its dependencies (so no openvino package); returns its python."""
    shutil.rmtree(folder, ignore_errors=True)
    session.run("python", "-m", "venv", str(folder))
    python = str(folder / "bin" / "python")
    session.run(python, "-m", "pip", "install", "-q", torch, external=True)
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
