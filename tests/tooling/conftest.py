"""tests/tooling/: the orchestration's own tests, run by `nox -s tooling` as a plain `pytest tests/tooling` from
the repository root (no build, no torch: pyproject.toml's `tooling` dependency group). The other sessions skip
this folder (tests/conftest.py's collect_ignore)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> Path:
    return ROOT
