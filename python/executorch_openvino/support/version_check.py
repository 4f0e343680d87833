"""Refuses to load the delegate next to an executorch it was not built against.

The wheel's metadata pins ``executorch==X`` (taken from the build environment,
``wheels/metadata_provider.py``); the C++ runtime interface is not stable
across releases, so a mismatch could crash instead of failing.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, requires, version

from packaging.requirements import Requirement

DISTRIBUTION = "executorch-openvino"


def built_against_executorch() -> str | None:
    """The executorch version this installed wheel was built against, or ``None`` (source tree)."""
    try:
        for line in requires(DISTRIBUTION) or ():
            req = Requirement(line)
            if req.name == "executorch":
                pinned = [s.version for s in req.specifier if s.operator == "=="]
                return pinned[0] if pinned else None
    except PackageNotFoundError:
        return None
    return None


def check_executorch_version() -> None:
    """Raises ``ImportError`` naming both versions and the fixing pip command on a mismatch."""
    expected = built_against_executorch()
    if expected is None:
        return
    try:
        installed = version("executorch")
    except PackageNotFoundError:
        raise ImportError(
            f"executorch-openvino needs executorch=={expected}, which is not installed; "
            f"run: pip install executorch=={expected}"
        ) from None
    if installed != expected:
        raise ImportError(
            f"executorch-openvino was built against executorch {expected}, but executorch "
            f"{installed} is installed; run: pip install executorch=={expected} "
            "(or install the executorch-openvino build made for your executorch)"
        )
