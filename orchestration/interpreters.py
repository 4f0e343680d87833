"""Finding the CPython interpreters the release sessions build and test with.

nox finds an interpreter as ``pythonX.Y`` on PATH. On machines where the
CPythons are pyenv installs that are not all selected (``pyenv global``),
PATH holds only pyenv's shims, which refuse to start the others. So each
wanted version that PATH cannot start is linked from pyenv's versions folder
into a folder of the project's, which goes first on PATH for this nox run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path


def _starts(executable: str | None, version: str) -> bool:
    if not executable:
        return False
    try:
        out = subprocess.run([executable, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):  # cannot start, or hangs
        return False
    return out.returncode == 0 and out.stdout.strip() == version


def _pyenv_interpreter(version: str) -> Path | None:
    """The newest pyenv install of `version` (3.12.1 before 3.12.0; no free-threaded builds)."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv").absolute() / "versions"
    found = []
    for folder in root.glob(f"{version}.*"):
        match = re.fullmatch(rf"{re.escape(version)}\.(\d+)", folder.name)
        executable = folder / "bin" / f"python{version}"
        if match and executable.is_file():
            found.append((int(match.group(1)), executable))
    return max(found)[1] if found else None


def expose(versions: list[str], folder: Path) -> dict[str, str]:
    """Makes ``pythonX.Y`` for each of `versions` startable from PATH where an install exists.

    Returns {version: what it is or why not} for the session log.
    """
    found = {}
    for version in versions:
        link = folder / f"python{version}"
        if link.is_symlink() and link.resolve().is_file():  # linked by an earlier run: nothing to start
            found[version] = str(link.resolve())
            continue
        on_path = shutil.which(f"python{version}")
        if on_path and _starts(on_path, version):
            found[version] = on_path
            continue
        installed = _pyenv_interpreter(version)
        if installed is None:
            found[version] = "not installed (no pythonX.Y on PATH, none under pyenv)"
            continue
        folder.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(installed)
        found[version] = str(installed)
    if folder.is_dir() and str(folder) not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = str(folder) + os.pathsep + os.environ.get("PATH", "")
    return found
