"""Shrunk failures kept as regression cases: one JSON file each under ``regressions/``.

A file holds the program (``spec``, rebuilt by :mod:`.spec`), the lowering
``paths`` it is checked along, how it was found (``found``: seed, path, stage,
category, detail), and ``xfail``: None once the problem is fixed (or refused
at lowering with a clear error), otherwise the reason, naming the finding in
tools/program_fuzz/FINDINGS.md; tests/numerics/test_fuzzed_programs.py marks it
``xfail(strict=True)`` so that the test flips when the problem is fixed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REGRESSIONS_DIR = Path(__file__).resolve().parent / "regressions"


def load_all(folder: Path = REGRESSIONS_DIR) -> list:
    """Every saved regression, sorted by file name (each with its ``file`` name added)."""
    cases = []
    for file in sorted(Path(folder).glob("*.json")):
        case = json.loads(file.read_text())
        case["file"] = file.name
        cases.append(case)
    return cases


def save(spec, *, found: dict, paths=None, xfail: str | None = None, note: str = "",
         folder: Path = REGRESSIONS_DIR) -> Path:
    """Writes a regression named after the failure; an existing file of that name is not overwritten."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^a-z0-9]+", "-", f"{found.get('category')}-{found.get('path')}-seed{found.get('seed')}".lower())
    file = folder / f"{stem.strip('-')}.json"
    counter = 2
    while file.exists():
        file = folder / f"{stem.strip('-')}-{counter}.json"
        counter += 1
    case = {"note": note, "xfail": xfail, "expect": None, "paths": list(paths) if paths else None, "found": found, "spec": spec}
    file.write_text(json.dumps(case, indent=1) + "\n")
    return file
