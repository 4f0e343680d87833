"""The project's build backend: scikit-build-core, told which executorch to build against.

Every hook is scikit-build-core's. The wheel hooks first find the executorch
to compile against (executorch_location.py) and hand its folder and version to
CMake (EXECUTORCH_PACKAGE_DIR, EXOV_EXECUTORCH_VERSION in CMakeLists.txt); the
metadata provider pins the same one. When no environment has one,
``executorch==<tested>`` is added to the build requirements.
"""

from __future__ import annotations

import sys

from scikit_build_core import build as _scikit_build

import executorch_location

build_sdist = _scikit_build.build_sdist
get_requires_for_build_sdist = _scikit_build.get_requires_for_build_sdist

_FOLDER = "cmake.define.EXECUTORCH_PACKAGE_DIR"
_VERSION = "cmake.define.EXOV_EXECUTORCH_VERSION"


def _with_executorch(config_settings: dict | None) -> dict:
    settings = dict(config_settings or {})
    if settings.get(_FOLDER):
        location = executorch_location.use_folder(str(settings[_FOLDER]))
    else:
        location = executorch_location.find()
    if location is not None:
        settings[_FOLDER], settings[_VERSION] = location.package_dir, location.version
        print(f"executorch-openvino: building against executorch {location.version} from the "
              f"{location.found_in} ({location.package_dir})", file=sys.stderr)
    return settings


def _requirements(requires: list[str], config_settings: dict | None) -> list[str]:
    if (config_settings or {}).get(_FOLDER) or executorch_location.find() is not None:
        return requires
    return [*requires, f"executorch=={executorch_location.TESTED}"]


def get_requires_for_build_wheel(config_settings=None):
    return _requirements(_scikit_build.get_requires_for_build_wheel(config_settings), config_settings)


def get_requires_for_build_editable(config_settings=None):
    return _requirements(_scikit_build.get_requires_for_build_editable(config_settings), config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _scikit_build.build_wheel(wheel_directory, _with_executorch(config_settings), metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _scikit_build.build_editable(wheel_directory, _with_executorch(config_settings), metadata_directory)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _scikit_build.prepare_metadata_for_build_wheel(metadata_directory, _with_executorch(config_settings))


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _scikit_build.prepare_metadata_for_build_editable(metadata_directory, _with_executorch(config_settings))
