"""Fixtures shared by every test. The helpers live in tests/support/exov_testing/ (pyproject.toml's pytest
`pythonpath`); the tests import the *installed* executorch_openvino (the nox sessions run pytest outside
the source tree against the repaired wheel)."""

from __future__ import annotations

from pathlib import Path

import pytest

# tests/tooling/ tests the orchestration from the source tree (`nox -s tooling`), not the installed wheel.
collect_ignore = ["tooling"]


@pytest.fixture(scope="session")
def pip_openvino_c_library() -> Path:
    """The C library of the pip openvino package installed with the tests."""
    from executorch_openvino.runtime.library_discovery import pip_openvino_library_dir

    libs = pip_openvino_library_dir()
    assert libs is not None, "the tests need the pip openvino package"
    found = sorted(libs.glob("libopenvino_c.so*")) + sorted(libs.glob("openvino_c.dll"))
    assert found, f"no OpenVINO C library in {libs}"
    return found[-1]
