"""What `nox -s release` and the wheel sessions do besides building: downloads, venvs, the report."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import nox


def cpython_tag(python: str) -> str:
    return "cp" + python.replace(".", "")  # "3.12" -> "cp312"


def executorch_wheels(session: nox.Session, folder: Path, requirement: str, pythons: list[str],
                      platform: str = "manylinux_2_28_x86_64") -> dict[str, Path]:
    """executorch's `platform` wheel of `requirement` for each of `pythons` (downloaded once, no dependencies)."""
    version = requirement.split("==")[1]
    found = {}
    for python in pythons:
        tag = cpython_tag(python)
        pattern = f"executorch-{version}-{tag}-{tag}-{platform}.whl"
        if not list(folder.glob(pattern)):
            session.run("python", "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", python, "--platform", platform, "-d", str(folder),
                        requirement)
        found[python] = next(folder.glob(pattern))
    return found


def venv(session: nox.Session, python: str, folder: Path, found: dict[str, str]) -> str:
    """A fresh venv of CPython `python` in `folder`; returns its interpreter.

    found: interpreters.expose's answer, for the error when there is no such CPython.
    """
    shutil.rmtree(folder, ignore_errors=True)
    interpreter = shutil.which(f"python{python}") or session.error(f"no python{python}: {found.get(python)}")
    session.run(interpreter, "-m", "venv", str(folder), external=True)
    return str(folder / "bin" / "python")


def install_torch(session: nox.Session, interpreter: str, python: str, requirement: str, wheelhouse: Path, *,
                  local_build: bool, index_args: list[str]) -> dict:
    """`requirement` (torch==X) into `interpreter`'s venv (CPython `python`); returns what it cost.

    local_build: the machine's own CPU build (pip's configuration finds it). index_args: pip's arguments
    naming a torch index (environments.torch_index_args), used as they are. Otherwise the package
    index's build (CUDA, several GB) through `wheelhouse`, downloaded there once.
    """
    pip = [interpreter, "-m", "pip"]
    if local_build or index_args:
        session.run(*pip, "install", "-q", requirement, *index_args, external=True)
        return {"torch": f"from {index_args[-1]}" if index_args else "this machine's CPU build"}
    tag = cpython_tag(python)
    cost: dict[str, str | float] = {"torch": "package index (CUDA build), cached in build/release/wheelhouse"}
    if not list(wheelhouse.glob(f"torch-{requirement.split('==')[1]}-{tag}-{tag}-*.whl")):
        started = time.perf_counter()
        session.run(*pip, "download", "-q", "-d", str(wheelhouse), requirement, external=True)
        cost["download_s"] = round(time.perf_counter() - started, 1)
    session.run(*pip, "install", "-q", "--no-index", "--find-links", str(wheelhouse), requirement, external=True)
    return cost


def install_by_name(session: nox.Session, interpreter: str, index: Path, wanted: Path, report: Path) -> None:
    """`pip install executorch-openvino` by name into `interpreter`'s venv with `index` (a PEP 503 folder) as an
    extra index; fails unless pip installed the package from `wanted`, the wheel file the index links to.
    `report` receives pip's installation report, which says where each package came from."""
    session.run(interpreter, "-m", "pip", "install", "-q", "--extra-index-url", index.as_uri(), "--report",
                str(report), "executorch-openvino", external=True)
    urls = [item["download_info"]["url"] for item in json.loads(report.read_text())["install"]
            if item["metadata"]["name"] == "executorch-openvino"]
    if urls != [wanted.as_uri()]:
        session.error(f"{interpreter} installed executorch-openvino from {urls}, not from {wanted}")


def index_pick(session: nox.Session, python: str, platform: str, index: Path, folder: Path) -> list[str]:
    """The executorch-openvino wheels that pip, asked for CPython `python` on `platform`, downloads from `index`
    (a PEP 503 folder) into the emptied `folder`."""
    shutil.rmtree(folder, ignore_errors=True)
    session.run("python", "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--platform", platform,
                "--python-version", python, "--index-url", index.as_uri(), "-d", str(folder), "executorch-openvino")
    return sorted(p.name for p in folder.glob("executorch_openvino-*.whl"))


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def git_commit(root: Path) -> str:
    """The checkout's commit, with "+changes" when the working tree differs from it."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "HEAD") or "unknown (not a git checkout)"
    return commit + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def table(report: dict) -> str:
    """The release report (report.json's content) as Markdown."""
    lines = [f"Release check of {report['commit']} on {report['cpu']}", "",
             "| artifact | MB | build s | repair s |", "|---|---|---|---|"]
    built = {w["wheel"]: w for w in report["wheels"].values()}
    for a in report["artifacts"]:
        w = built.get(a["file"], {})
        lines.append(f"| {a['file']} | {a['bytes'] / 1e6:.2f} | {w.get('build_s', '')} | {w.get('repair_s', '')} |")
    lines += ["", "| Python | installed by name | registered | outputs | equal to eager | venv GB | s | torch |",
              "|---|---|---|---|---|---|---|---|"]
    for r in report["installs"]:
        downloaded = f", downloaded in {r['download_s']} s" if "download_s" in r else ""
        lines.append(f"| {r['python']} | {', '.join(r['installed'])} | {r['registered']} | {', '.join(r['outputs'])} | "
                     f"{'yes' if not r['problems'] else '; '.join(r['problems'])} | {r['venv_bytes'] / 1e9:.1f} | "
                     f"{r['seconds']} | {r['torch']}{downloaded} |")
    picks = report.get("aarch64_index_picks", {})
    if picks:
        lines += ["", "| Python on aarch64 | pip picks from the index |", "|---|---|"]
        lines += [f"| {python} | {wheel} |" for python, wheel in picks.items()]
    lines += ["", f"Download cache (build/release/wheelhouse): {report['wheelhouse_bytes'] / 1e9:.1f} GB"]
    return "\n".join(lines) + "\n"
