"""What a session's virtualenv has installed, asked of its own interpreter."""

from __future__ import annotations

from pathlib import Path

import nox

from orchestration import environments


def package_dir(session: nox.Session, name: str) -> Path:
    """The folder of the package `name` in the session's environment, found without importing it."""
    code = f"import importlib.util; print(importlib.util.find_spec({name!r}).submodule_search_locations[0])"
    return Path(environments.output(session, "python", "-c", code).strip().splitlines()[-1])


def distribution_state(session: nox.Session, names: list[str]) -> str:
    """Version and RECORD file identity of installed distributions: a reinstall changes the latter."""
    code = ("import os, sys; from importlib.metadata import distribution as d\n"
            "for n in sys.argv[1:]:\n"
            "    r = next(f for f in d(n).files if f.name == 'RECORD' and f.parent.suffix == '.dist-info')\n"
            "    s = os.stat(r.locate())\n"
            "    print(n, d(n).version, s.st_ino, s.st_mtime_ns)")
    return "; ".join(environments.output(session, "python", "-c", code, *names).split("\n")).strip("; ")
