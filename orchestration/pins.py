"""Every version this project pins or supports, defined once.

noxfile.py and orchestration/ read these names. The files that cannot import
this module (pyproject.toml, the build backend in wheels/, the package's NNCF
table, .github/workflows/release.yml, README.md) are checked against it by
tests/tooling/test_pins.py, which the `tooling` session runs in seconds.
"""

from __future__ import annotations

EXECUTORCH = "1.5.1"  # every wheel is compiled against, and pins, this release
TORCH = "2.13.0"  # what executorch 1.5.1 runs with; its CPU build is on this machine's disk for 3.11
# PyTorch's own index of CPU-only builds (https://pytorch.org/get-started/locally/, "Compute Platform: CPU"):
# on Linux x86_64, PyPI's torch for most Pythons is the CUDA build, which pulls NVIDIA's libraries too.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# The OpenVINO releases every wheel is tested with, oldest first; the newest builds the wheels.
OPENVINO_RELEASES = ("2025.4.1", "2026.4.1")
OPENVINO_NEWEST = OPENVINO_RELEASES[-1]
OPENVINO_OLDEST = OPENVINO_RELEASES[0]
OPENVINO_REQUIREMENT = ">=2025.4.1,<2027"  # the wheels' run-time range: 2027 may change the C API
# The NNCF release that imports beside each OpenVINO release (measured with torch 2.13.0).
NNCF_FOR_OPENVINO = {"2025.4.1": "3.1.0", "2026.4.1": "3.4.0"}
TRANSFORMERS = "5.25.0"  # the static-cache export the LLM tests use

# Interpreters. PYTHON runs the sessions; the release has a wheel per interpreter for 3.10 and
# 3.11 and one stable-ABI wheel (cp312-abi3) for 3.12 and later.
PYTHON = "3.11"
REQUIRES_PYTHON = ">=3.10"
RELEASE_WHEEL_TAGS = {"3.10": "cp310-cp310", "3.11": "cp311-cp311", "3.12": "cp312-abi3"}
WHEEL_PYTHONS = tuple(RELEASE_WHEEL_TAGS)
ABI3_PYTHONS = ("3.12", "3.13", "3.14")  # what the cp312-abi3 wheel claims; 3.14 is not on these machines
INSTALL_PYTHONS = ("3.10", "3.11", "3.12", "3.13")  # where the release installs by name and runs a program

# Platform tags: executorch 1.5.1's own Linux wheels are manylinux_2_28 on both architectures.
MANYLINUX_X86_64 = "manylinux_2_28_x86_64"
MANYLINUX_AARCH64 = "manylinux_2_28_aarch64"
WINDOWS_WHEEL_TAG = "cp311-cp311-win_amd64"

# Tools, pinned so that a new release of one cannot turn CI red by itself.
NOX = "2026.10.20"  # what .ci/run, the README's commands and .github/workflows/release.yml install
AUDITWHEEL = "6.8.2"
DELVEWHEEL = "1.13.2"
LINT_TOOLS = ("ruff==0.17.6", "mypy==2.4.1", "clang-format==23.1.5")
CMAKE_TOOLS = ("cmake>=3.28", "ninja")  # executorch's CMake targets need 3.28


def torch_requirement() -> str:
    return f"torch=={TORCH}"


def executorch_requirement() -> str:
    return f"executorch=={EXECUTORCH}"


def openvino_requirement(release: str = OPENVINO_NEWEST) -> str:
    return f"openvino=={release}"


def nncf_requirement(openvino: str) -> str:
    return f"nncf=={NNCF_FOR_OPENVINO[openvino]}"


def release_tag(python: str) -> str:
    """The wheel tag pip picks on CPython `python`: its own, or the abi3 wheel's from 3.12 on.

    Raises KeyError for an interpreter the release has no wheel for (before 3.10).
    """
    major, minor = (int(part) for part in python.split("."))
    if (major, minor) >= (3, 12):
        return RELEASE_WHEEL_TAGS[ABI3_PYTHONS[0]]
    return RELEASE_WHEEL_TAGS[python]
