"""scikit-build-core dynamic-metadata provider: the wheel's run-time requirements.

executorch is pinned to exactly the release the delegate is compiled against
(executorch_location.py says which), because that release's C++ runtime
interface is not stable across releases. openvino gets the tested range: the
delegate reads OpenVINO IR, which releases 2025.4.1 and 2026.4.1 both load
(tested by the nox `tests` session).
"""

from __future__ import annotations

import executorch_location

# Tested releases: 2025.4.1 and 2026.4.1. 2027 may change the C API.
OPENVINO_REQUIREMENT = "openvino>=2025.4.1,<2027"


def _build_executorch_version() -> str:
    location = executorch_location.find()
    if location is None:  # build_backend.py asked for executorch; a frontend that ignores that gets here
        raise RuntimeError(
            "no executorch to build against: install the executorch release to build against "
            "(e.g. pip install executorch==1.5.1) in the build environment or the one installed into"
        )
    return location.version


def dynamic_metadata(field, settings=None, project=None):
    if field != "dependencies":
        raise RuntimeError(f"this provider only computes 'dependencies', not {field!r}")
    return [
        f"executorch=={_build_executorch_version()}",
        OPENVINO_REQUIREMENT,
        "packaging>=21",
    ]
