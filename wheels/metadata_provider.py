"""Dynamic-metadata provider (scikit-build-core, [[tool.dynamic-metadata]]): the run-time requirements.

executorch is pinned to exactly the release the delegate is compiled against
(executorch_location.py says which), because that release's C++ runtime
interface is not stable across releases. openvino gets the tested range: the
delegate reads OpenVINO IR, which releases 2025.4.1 and 2026.4.1 both load
(tested by the nox `tests` sessions).

The sdist's requirements are marked Dynamic (core metadata 2.2, PEP 643): a
wheel built from it pins the executorch of wherever it is built, so installers
must build it (or read the wheel's metadata) to know its requirements.
"""

from __future__ import annotations

import executorch_location

# Tested releases: 2025.4.1 and 2026.4.1. 2027 may change the C API.
OPENVINO_REQUIREMENT = "openvino>=2025.4.1,<2027"

_state = {"build": "metadata_wheel"}


def build_state(state: str) -> None:
    _state["build"] = state


def dynamic_wheel(settings=None) -> dict:
    return {"dependencies": True}


def _executorch_requirement() -> str:
    location = executorch_location.find()
    if location is not None:
        return f"executorch=={location.version}"
    if _state["build"] == "sdist":  # informational only (Dynamic); nothing is compiled
        return f"executorch=={executorch_location.TESTED}"
    # build_backend.py asked for executorch; a frontend that ignored that gets here.
    raise RuntimeError("no executorch to build against: install the executorch release to build against "
                       f"(e.g. pip install executorch=={executorch_location.TESTED}) in the build environment "
                       "or the one installed into")


def dynamic_metadata(settings=None, project=None) -> dict:
    return {"dependencies": [_executorch_requirement(), OPENVINO_REQUIREMENT, "packaging>=21"]}
