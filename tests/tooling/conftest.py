"""tests/tooling/: the orchestration's own tests, run by `nox -s tooling` from the repository root with
--confcutdir here (no build, no torch: tests/conftest.py is not loaded). The other sessions skip this folder
(tests/conftest.py's collect_ignore)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> Path:
    return ROOT
