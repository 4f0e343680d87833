"""The C++ programs the sessions build around the delegate, from tests/CMakeLists.txt.

CMake says how each is compiled, with the source lists of native/sources.cmake,
as for the wheel; here a session only chooses the part (EXOV_CHECKS), the
compiler and the folders. The session's environment provides cmake and ninja.
"""

from __future__ import annotations

from pathlib import Path

import nox

from orchestration import ROOT


def build(session: nox.Session, checks: str, build_dir: Path, targets: list[str], defines: dict,
          out: Path | None = None) -> Path:
    """Configures tests/CMakeLists.txt in `build_dir` for `checks` (fuzz, sanitizers or windows) with
    the CMake `defines`, builds `targets`, and returns the folder holding them (`out` when given)."""
    folders = {}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        folders = {f"CMAKE_{kind}_OUTPUT_DIRECTORY": out for kind in ("RUNTIME", "LIBRARY")}
    settings = {"EXOV_CHECKS": checks, **folders, **defines}
    session.run("cmake", "-S", str(ROOT / "tests"), "-B", str(build_dir), "-G", "Ninja",
                *[f"-D{name}={value}" for name, value in settings.items()], external=True)
    session.run("cmake", "--build", str(build_dir), "--target", *targets, external=True)
    return out if out is not None else build_dir
