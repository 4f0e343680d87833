"""The project's build backend: scikit-build-core, told which executorch to build against.

Every hook is scikit-build-core's. The wheel hooks first find the executorch
to compile against (executorch_location.py) and hand its folder and version to
CMake (EXECUTORCH_PACKAGE_DIR, EXOV_EXECUTORCH_VERSION in CMakeLists.txt);
when no environment has one, `executorch` is added to the build requirements.
"""

from __future__ import annotations

import sys

from scikit_build_core import build as _scikit_build

import executorch_location

build_sdist = _scikit_build.build_sdist
get_requires_for_build_sdist = _scikit_build.get_requires_for_build_sdist


def _with_executorch(config_settings: dict | None) -> dict:
    location = executorch_location.find()
    settings = dict(config_settings or {})
    if location is not None:  # a value the caller set explicitly wins
        print(f"executorch-openvino: building against executorch {location.version} from the "
              f"{location.found_in} ({location.package_dir})", file=sys.stderr)
        settings.setdefault("cmake.define.EXECUTORCH_PACKAGE_DIR", location.package_dir)
        settings.setdefault("cmake.define.EXOV_EXECUTORCH_VERSION", location.version)
    return settings


def _requirements(requires: list[str]) -> list[str]:
    return requires if executorch_location.find() is not None else [*requires, "executorch"]


def get_requires_for_build_wheel(config_settings=None):
    return _requirements(_scikit_build.get_requires_for_build_wheel(config_settings))


def get_requires_for_build_editable(config_settings=None):
    return _requirements(_scikit_build.get_requires_for_build_editable(config_settings))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _scikit_build.build_wheel(wheel_directory, _with_executorch(config_settings), metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _scikit_build.build_editable(wheel_directory, _with_executorch(config_settings), metadata_directory)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _scikit_build.prepare_metadata_for_build_wheel(metadata_directory, _with_executorch(config_settings))


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _scikit_build.prepare_metadata_for_build_editable(metadata_directory, _with_executorch(config_settings))
