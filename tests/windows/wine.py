"""Running the cross-compiled Windows programs under wine (for loader_checks.py and repair_checks.py).

The nox sessions set EXOV_WINE (the wine binary) and WINEPREFIX. Windows sees
the Linux file system as drive Z:.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

WINE = os.environ["EXOV_WINE"]
# Variables the delegate's library search reads: a case sets the ones it wants.
SEARCH_VARIABLES = ("OPENVINO_LIB_PATH", "INTEL_OPENVINO_DIR", "CONDA_PREFIX", "WINEPATH")


def windows_path(path: Path) -> str:
    return "Z:" + str(Path(path).resolve()).replace("/", "\\")


def run_windows(program: Path, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    """`program` with `args` in a new Windows process; `env` adds variables (WINEPATH becomes PATH)."""
    base = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    result = subprocess.run([WINE, str(program), *args], cwd=cwd or Path(program).parent,
                            env={**base, **env}, capture_output=True, text=True, timeout=300)
    print(result.stdout)
    return result


def lines(result: subprocess.CompletedProcess, prefix: str) -> list[str]:
    """The rest of each output line that starts with `prefix`."""
    return [ln[len(prefix):].strip() for ln in result.stdout.splitlines() if ln.startswith(prefix)]
