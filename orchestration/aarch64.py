"""Linux aarch64 wheels from this x86_64 machine, cross-built with Debian's toolchain.

The wheel is built by scikit-build-core with cmake/aarch64-linux-gnu.cmake,
against the aarch64 executorch and openvino wheels unpacked (never installed)
into build/aarch64/ (FOLDER), where every output lands. aarch64_emulation.py
tests it under qemu.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

import json

from orchestration import ROOT, environments, pins, wheel_build
from orchestration.debian import debian_tools

# pip's --platform choices that the aarch64 wheels of executorch (manylinux_2_28)
# and openvino (manylinux_2_35) carry.
PIP_PLATFORMS = ["manylinux_2_28_aarch64", "manylinux_2_35_aarch64"]
CROSS_CXX = "aarch64-linux-gnu-g++"
FOLDER = ROOT / "build" / "aarch64"
TOOLCHAIN_FILE = ROOT / "cmake" / "aarch64-linux-gnu.cmake"


def pip_target(python: str) -> list[str]:
    """pip's options that pick aarch64 wheels for CPython `python` on this x86_64 machine."""
    platforms = [arg for p in PIP_PLATFORMS for arg in ("--platform", p)]
    return ["--only-binary=:all:", *platforms, "--python-version", python, "--implementation", "cp",
            "--abi", f"cp{python.replace('.', '')}"]


def up_to_date(stamp: Path, requirements: list[str]) -> bool:
    return stamp.is_file() and stamp.read_text() == "\n".join(requirements)


def _add_arm64_architecture(session: nox.Session) -> None:
    # zlib1g-dev:arm64 is a multiarch package: dpkg must know the architecture first.
    if os.geteuid() == 0 and shutil.which("dpkg"):
        foreign = subprocess.run(["dpkg", "--print-foreign-architectures"], capture_output=True, text=True).stdout
        if "arm64" not in foreign.split():
            session.run("dpkg", "--add-architecture", "arm64", external=True)


def cross_toolchain(session: nox.Session) -> str:
    """The aarch64 C++ compiler; installs Debian's cross toolchain and arm64 zlib when missing."""
    _add_arm64_architecture(session)
    packages = ["g++-aarch64-linux-gnu", "zlib1g-dev:arm64"]
    zlib = Path("/usr/lib/aarch64-linux-gnu/libz.so")
    cxx, _ = debian_tools(session, packages, lambda: (shutil.which(CROSS_CXX), zlib if zlib.exists() else None))
    return cxx


def target_packages(session: nox.Session, folder: Path, python: str, requirements: list[str]) -> Path:
    """`requirements`' aarch64 wheels for CPython `python`, unpacked into one folder (downloaded once)."""
    target = folder / f"target-cp{python.replace('.', '')}"
    stamp = target / ".requirements"
    if not up_to_date(stamp, requirements):
        shutil.rmtree(target, ignore_errors=True)
        session.run("python", "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    *pip_target(python), *requirements)
        stamp.write_text("\n".join(requirements))
    return target


def cross_build_environment(python: str) -> dict[str, str]:
    """What tells scikit-build-core the wheel is for aarch64: its platform tag and extension suffix.

    A cp312-abi3 build names its extension _native.abi3.so whatever this says.
    """
    return {"_PYTHON_HOST_PLATFORM": "linux-aarch64",
            "SETUPTOOLS_EXT_SUFFIX": f".cpython-{python.replace('.', '')}-aarch64-linux-gnu.so"}


def cross_cmake_defines(target: Path) -> dict[str, str]:
    return {"CMAKE_TOOLCHAIN_FILE": str(TOOLCHAIN_FILE),
            "EXECUTORCH_PACKAGE_DIR": str(target / "executorch"),
            "OPENVINO_PACKAGE_DIR": str(target / "openvino")}


def cross_build(session: nox.Session, source: Path, out: Path, *, build_dir: str = "",
                clean: bool = True) -> tuple[Path, float]:
    """The aarch64 wheel of `source` (the tree or an sdist) for session.python, repaired into `out`; CMake
    builds in `build_dir` (kept between runs) or a temporary folder. Returns (wheel, build seconds).

    The extension gets this interpreter's headers (their pyconfig.h is the only architecture-dependent
    one: docs/design.md). auditwheel picks the tag (`--plat auto`: its --plat choices are this machine's
    architecture's), which must be manylinux_2_28_aarch64.
    """
    python = environments.python_version(session)
    cross_toolchain(session)
    session.install(*environments.BUILD_TOOLS, *environments.REPAIR_REQUIREMENTS)
    target = target_packages(session, FOLDER, python, [pins.executorch_requirement(), pins.openvino_requirement()])
    repaired, seconds, _ = wheel_build.repaired_wheel_of(
        session, source, FOLDER / "raw" / python, out, platform="auto", build_dir=build_dir,
        env=cross_build_environment(python), cmake_defines=cross_cmake_defines(target), clean=clean)
    if not repaired.name.endswith(f"-{pins.MANYLINUX_AARCH64}.whl"):
        session.error(f"auditwheel tagged {repaired.name}; the aarch64 wheel must be {pins.MANYLINUX_AARCH64}")
    return repaired, seconds


def wheel_session(session: nox.Session) -> None:
    """This interpreter's aarch64 wheel from the source tree, repaired into build/aarch64/repaired/<python>/."""
    python = environments.python_version(session)
    repaired, seconds = cross_build(session, ROOT, FOLDER / "repaired" / python,
                                    build_dir=f"build/aarch64/cmake-{python}")
    (FOLDER / f"wheel-{python}.json").write_text(json.dumps(
        {"wheel": repaired.name, "bytes": repaired.stat().st_size, "cross_build_s": round(seconds, 1)}, indent=1))

