"""Dynamic-metadata provider (scikit-build-core, [[tool.dynamic-metadata]]): the run-time requirements.

executorch is pinned to exactly the release the delegate is compiled against
(executorch_location.py says which), because that release's C++ runtime
interface is not stable across releases. openvino gets the tested range: the
delegate reads OpenVINO IR, which releases 2025.4.1 and 2026.4.1 both load
(tested by the nox `tests` sessions). torch is required too: executorch 1.5.1
does not declare it, yet its runtime (``executorch.runtime``) and every
lowering import it, so without it nothing of this package runs. It gets the
minor release the executorch release is built with (TORCH_FOR_EXECUTORCH).

The sdist's requirements are marked Dynamic (core metadata 2.2, PEP 643): a
wheel built from it pins the executorch of wherever it is built, so installers
must build it (or read the wheel's metadata) to know its requirements.
"""

from __future__ import annotations

import executorch_location

# Tested releases: 2025.4.1 and 2026.4.1. 2027 may change the C API.
OPENVINO_REQUIREMENT = "openvino>=2025.4.1,<2027"
# executorch release (major.minor) -> the torch minor release it runs with (executorch 1.5.1 with torch 2.13.0:
# the release the nox sessions install, noxfile.TORCH). An executorch release missing here gets an unpinned torch.
TORCH_FOR_EXECUTORCH = {"1.5": "2.13"}

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


def _torch_requirement(executorch_requirement: str) -> str:
    release = ".".join(executorch_requirement.split("==")[1].split(".")[:2])
    torch = TORCH_FOR_EXECUTORCH.get(release)
    return f"torch=={torch}.*" if torch else "torch"


def dynamic_metadata(settings=None, project=None) -> dict:
    executorch = _executorch_requirement()
    return {"dependencies": [executorch, _torch_requirement(executorch), OPENVINO_REQUIREMENT, "packaging>=21"]}
