"""wheels/executorch_location.py: which executorch a wheel build compiles against, and its errors.

The build backend runs in the build's interpreter, not from the installed wheel; these
checks import the source file, with the test environment's executorch as the real one.
"""

from __future__ import annotations

import importlib.util
from importlib.metadata import version
from pathlib import Path

import pytest
from exov_testing import REPOSITORY

pytestmark = [pytest.mark.own_runtime]

SOURCE = REPOSITORY / "wheels" / "executorch_location.py"


@pytest.fixture()
def location():
    spec = importlib.util.spec_from_file_location("executorch_location_under_test", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _installed_executorch() -> Path:
    return Path(importlib.util.find_spec("executorch").submodule_search_locations[0])


def test_the_build_environment_executorch_is_found_first(location):
    found = location.find()
    assert found.found_in == "build environment"
    assert Path(found.package_dir).resolve() == _installed_executorch().resolve()
    assert found.version == version("executorch")


def test_a_given_folder_takes_its_version_from_the_distribution_beside_it(location):
    given = location.use_folder(str(_installed_executorch()))
    assert given == (str(_installed_executorch()), version("executorch"), "given folder")
    assert location.find() == given  # what the metadata provider then pins


def test_a_folder_that_is_not_an_executorch_package_is_refused_by_name(location, tmp_path):
    with pytest.raises(ValueError, match=r"EXECUTORCH_PACKAGE_DIR=.*no share/cmake/ in it.*`import executorch` loads"):
        location.use_folder(str(tmp_path))


def test_a_package_without_its_distribution_is_refused_because_its_version_is_unknown(location, tmp_path):
    (tmp_path / "executorch" / "share" / "cmake").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"no executorch distribution \(\.dist-info\) beside it.*version is unknown"):
        location.use_folder(str(tmp_path / "executorch"))
