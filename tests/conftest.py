"""Fixtures shared by every test, and the hook that marks slow the cases of a `sampled` table CI leaves out.
The helpers live in tests/support/exov_testing/ (pyproject.toml's pytest `pythonpath`); the tests import the
*installed* executorch_openvino (the nox sessions run pytest outside the source tree against the repaired wheel)."""

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


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: every case of a table is counted
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`@pytest.mark.sampled(every=N)` on a test function whose case table is long and whose cases share one code
    path: CI keeps its first case and each Nth after it; the others are also marked slow, so that
    `nox -s slow_tests` runs them (the order is the table's, the same in every pytest-xdist process)."""
    seen: dict[tuple, int] = {}
    for item in items:
        mark = item.get_closest_marker("sampled")
        if mark is None:
            continue
        key = (item.path, item.originalname if isinstance(item, pytest.Function) else item.name)
        index = seen[key] = seen.get(key, -1) + 1
        if index % mark.kwargs["every"]:
            item.add_marker(pytest.mark.slow)
