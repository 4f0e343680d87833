"""Linux aarch64 from this x86_64 machine: cross-build with Debian's toolchain, test under qemu.

The wheel is built by scikit-build-core with cmake/aarch64-linux-gnu.cmake,
against the aarch64 executorch and openvino wheels unpacked (never installed)
into `folder`. The emulated tests run in an arm64 Debian root made with
debootstrap, through Debian's qemu-user-static registered with binfmt_misc.
Every output lands in the `folder` the noxfile names (build/aarch64/).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import ssl
import subprocess
from pathlib import Path

import nox

from orchestration import ROOT
from orchestration.debian import debian_tools

# pip's --platform choices that the aarch64 wheels of executorch (manylinux_2_28)
# and openvino (manylinux_2_35) carry.
PIP_PLATFORMS = ["manylinux_2_28_aarch64", "manylinux_2_35_aarch64"]
CROSS_CXX = "aarch64-linux-gnu-g++"
TOOLCHAIN_FILE = ROOT / "cmake" / "aarch64-linux-gnu.cmake"


def _pip_target(python: str) -> list[str]:
    """pip's options that pick aarch64 wheels for CPython `python` on this x86_64 machine."""
    platforms = [arg for p in PIP_PLATFORMS for arg in ("--platform", p)]
    return ["--only-binary=:all:", *platforms, "--python-version", python, "--implementation", "cp",
            "--abi", f"cp{python.replace('.', '')}"]


def _up_to_date(stamp: Path, requirements: list[str]) -> bool:
    return stamp.is_file() and stamp.read_text() == "\n".join(requirements)


def inside(root: Path, path: Path) -> Path:
    """`path` (under `root`) as a program chrooted into `root` sees it."""
    return Path("/") / path.relative_to(root)


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
    if not _up_to_date(stamp, requirements):
        shutil.rmtree(target, ignore_errors=True)
        session.run("python", "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    *_pip_target(python), *requirements)
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


# --- The emulated arm64 machine ---------------------------------------------------------------

DEBIAN_SUITE = "bookworm"  # Debian 12: Python 3.11, glibc 2.36
DEBIAN_PACKAGES = ["python3", "python3-venv"]
EMULATION_TOOLS = ["debootstrap", "qemu-user-static", "binfmt-support"]  # Debian's
BINFMT = Path("/proc/sys/fs/binfmt_misc")


def _binfmt_ready() -> bool:
    entry = BINFMT / "qemu-aarch64"
    return entry.is_file() and entry.read_text().startswith("enabled")


def emulation(session: nox.Session) -> None:
    """qemu-user-static registered for aarch64 ELF files (binfmt_misc, with the F flag that chroots need)."""
    debian_tools(session, EMULATION_TOOLS, lambda: (shutil.which("debootstrap"), shutil.which("qemu-aarch64-static")))
    if not _binfmt_ready() and os.geteuid() == 0:
        if not (BINFMT / "register").exists():
            session.run("mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT), external=True)
        session.run("update-binfmts", "--enable", "qemu-aarch64", external=True)
    if not _binfmt_ready():
        session.error("aarch64 programs cannot run here: binfmt_misc has no enabled qemu-aarch64 entry. As root: "
                      "mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; update-binfmts --enable qemu-aarch64")


def debian_root(session: nox.Session, folder: Path, mirror: str) -> Path:
    """An arm64 Debian root with Python 3.11 (debootstrap, made once: about 10 min under emulation)."""
    root = folder / f"debian-{DEBIAN_SUITE}-arm64"
    if (root / "usr" / "bin" / "python3").exists():
        return root
    partial = folder / "debian-partial"
    shutil.rmtree(partial, ignore_errors=True)
    session.run("debootstrap", "--arch=arm64", "--variant=minbase", "--foreign",
                f"--include={','.join(DEBIAN_PACKAGES)}", DEBIAN_SUITE, str(partial), mirror, external=True)
    session.run("chroot", str(partial), "/debootstrap/debootstrap", "--second-stage", external=True)
    partial.rename(root)
    return root


def _cpu_sysfs(root: Path) -> None:
    """root/sys holding only the processor lists and each CPU's topology, copied from this machine.

    Measured under qemu-user: with this machine's whole /sys mounted, `import torch` (2.13.0) crashed
    (its cpuinfo reads the x86_64 cache files as an ARM CPU's); with no /sys, OpenVINO 2026.4.1's CPU
    plugin crashed in compile_model. With only these files both work.
    """
    source, target = Path("/sys/devices/system/cpu"), root / "sys" / "devices" / "system" / "cpu"
    shutil.rmtree(root / "sys" / "devices", ignore_errors=True)
    target.mkdir(parents=True)
    for name in ("possible", "present", "online", "kernel_max"):
        if (source / name).is_file():
            (target / name).write_text((source / name).read_text())
    for cpu in sorted(source.glob("cpu[0-9]*")):
        (target / cpu.name / "topology").mkdir(parents=True)
        for item in (cpu / "topology").iterdir():
            (target / cpu.name / "topology" / item.name).write_text(item.read_text())


@contextlib.contextmanager
def mounted(root: Path):
    """/proc and /dev inside `root` while the block runs, and a reduced /sys (_cpu_sysfs)."""
    _cpu_sysfs(root)
    points = [(["-t", "proc", "proc"], "proc"), (["--rbind", "/dev"], "dev")]
    try:
        for args, point in points:
            subprocess.run(["mount", *args, str(root / point)], check=True)
        yield
    finally:
        for _, point in reversed(points):
            subprocess.run(["umount", "-R", "-l", str(root / point)], capture_output=True)


def chroot(session: nox.Session, root: Path, env: dict, program: str, *args: str) -> None:
    """`program args` inside `root` with only `env` (qemu-user runs it; QEMU_CPU picks the emulated CPU)."""
    session.run("chroot", str(root), "/usr/bin/env", "-i", *[f"{k}={v}" for k, v in env.items()],
                program, *args, external=True)


def emulated_venv(session: nox.Session, root: Path, work: Path, requirements: list[str], python: str) -> str:
    """A venv in `root` with `requirements` for aarch64 (made again when they change); its python, as the
    chroot sees it. The first three (torch, executorch, openvino) are downloaded natively into work/wheelhouse."""
    venv = work / "venv"
    stamp = venv / ".requirements"
    python_inside = str(inside(root, venv / "bin" / "python"))
    if _up_to_date(stamp, requirements):
        return python_inside
    # The large wheels are downloaded here, natively, without dependencies (pip here, given --platform, found
    # no aarch64 wheel for the tags above of one of torch's CUDA packages); pip inside resolves the rest.
    wheelhouse = work / "wheelhouse"
    session.run("python", "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheelhouse), *_pip_target(python),
                *requirements[:3])
    # pip inside reaches the package index as pip does here: this machine's name servers and CA bundle
    # (a proxy's own CA, where there is one).
    shutil.copy2("/etc/resolv.conf", root / "etc" / "resolv.conf")
    bundle = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE") or ssl.get_default_verify_paths().cafile
    shutil.rmtree(venv, ignore_errors=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root"}
    if bundle and Path(bundle).is_file():
        shutil.copy2(bundle, work / "ca-certificates.crt")
        env["PIP_CERT"] = str(inside(root, work / "ca-certificates.crt"))
    chroot(session, root, env, "/usr/bin/python3", "-m", "venv", str(inside(root, venv)))
    with mounted(root):
        chroot(session, root, env, python_inside, "-m", "pip", "install", "-q",
               "--find-links", str(inside(root, wheelhouse)), *requirements)
    stamp.write_text("\n".join(requirements))
    return python_inside


# Printed first under emulation: what the kernel (qemu) and OpenVINO report about the CPU.
CPU_REPORT = """
import platform, openvino as ov
core = ov.Core()
features = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("Features")), [])
print("machine:", platform.machine(), "| cpuinfo features:", " ".join(features))
print("OpenVINO", ov.get_version(), "CPU:", core.get_property("CPU", "FULL_DEVICE_NAME"),
      "| OPTIMIZATION_CAPABILITIES:", core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"),
      "| INFERENCE_PRECISION_HINT default:", core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
"""
