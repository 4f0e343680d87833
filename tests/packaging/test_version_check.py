"""The package refuses to load beside an executorch other than the one it was built against."""

from __future__ import annotations

import pytest

from executorch_openvino.support import version_check

pytestmark = [pytest.mark.own_runtime]


def test_mismatched_executorch_names_both_versions_and_the_fix(monkeypatch):
    monkeypatch.setattr(version_check, "built_against_executorch", lambda: "1.5.1")
    monkeypatch.setattr(version_check, "version", lambda name: "1.4.0")
    with pytest.raises(ImportError, match=r"built against executorch 1\.5\.1, but executorch 1\.4\.0 is "
                                          r"installed; run: pip install executorch==1\.5\.1"):
        version_check.check_executorch_version()


def test_missing_executorch_names_the_fix(monkeypatch):
    def missing(name):
        raise version_check.PackageNotFoundError(name)

    monkeypatch.setattr(version_check, "built_against_executorch", lambda: "1.5.1")
    monkeypatch.setattr(version_check, "version", missing)
    with pytest.raises(ImportError, match=r"needs executorch==1\.5\.1, which is not installed; "
                                          r"run: pip install executorch==1\.5\.1"):
        version_check.check_executorch_version()


def test_installed_wheel_records_the_executorch_it_was_built_against():
    from importlib.metadata import version

    assert version_check.built_against_executorch() == version("executorch")
    version_check.check_executorch_version()  # the matching pair imports
