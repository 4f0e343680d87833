"""scikit-build-core dynamic-metadata provider: the wheel's run-time requirements.

executorch is pinned to exactly the version in the build environment, because
the delegate is compiled against that release's C++ runtime, whose interface is
not stable across releases (DESIGN.md). openvino gets the tested range: the
delegate reads OpenVINO IR, which releases 2025.4.1 and 2026.4.1 both load
(tested by the nox `tests` session).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

# Tested releases: 2025.4.1 and 2026.4.1. 2027 may change the C API.
OPENVINO_REQUIREMENT = "openvino>=2025.4.1,<2027"


def _build_executorch_version() -> str:
    try:
        return version("executorch")
    except PackageNotFoundError as exc:  # pragma: no cover - build misconfigured
        raise RuntimeError(
            "executorch is not installed in the build environment; install the "
            "executorch release to build against (e.g. pip install executorch==1.5.1)"
        ) from exc


def dynamic_metadata(field, settings=None, project=None):
    if field != "dependencies":
        raise RuntimeError(f"this provider only computes 'dependencies', not {field!r}")
    return [
        f"executorch=={_build_executorch_version()}",
        OPENVINO_REQUIREMENT,
        "packaging>=21",
    ]
