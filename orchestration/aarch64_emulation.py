"""The aarch64 wheel tested on an emulated ARM CPU: qemu-user, in an arm64 Debian root made with
debootstrap, through Debian's qemu-user-static registered with binfmt_misc (build/aarch64/)."""

from __future__ import annotations

import contextlib
import os
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import nox

from orchestration import ROOT, environments, pins, test_runs, wheel_build
from orchestration.aarch64 import FOLDER, pip_target, up_to_date
from orchestration.debian import debian_tools

PYTHON = "3.11"  # Debian 12's, in the emulated root
# The emulated CPU: qemu's "max" has the f16 arithmetic (FEAT_FP16) of the ARM CPUs where
# OpenVINO's CPU default is f16; 128-bit SVE as on Neoverse N2/V2 (Graviton4, Grace). With qemu's
# default 512-bit SVE, raw OpenVINO 2026.4.1 computed small f32 linear layers wrongly (aarch64.md).
CPU = "max,sve128=on"


def inside(root: Path, path: Path) -> Path:
    """`path` (under `root`) as a program chrooted into `root` sees it."""
    return Path("/") / path.relative_to(root)


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
    if up_to_date(stamp, requirements):
        return python_inside
    # The large wheels are downloaded here, natively, without dependencies (pip here, given --platform, found
    # no aarch64 wheel for the tags above of one of torch's CUDA packages); pip inside resolves the rest.
    wheelhouse = work / "wheelhouse"
    session.run("python", "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheelhouse), *pip_target(python),
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


def session_steps(session: nox.Session) -> None:
    """The 3.11 aarch64 wheel under emulation (QEMU_CPU=CPU), in an arm64 Debian 12 root.

    1. The root is made once with debootstrap (EXOV_DEBIAN_MIRROR, default deb.debian.org); a venv in it gets
       torch, executorch, openvino and the test requirements for aarch64, then the repaired aarch64 wheel.
    2. Here (x86_64) the repaired x86_64 wheel lowers MiniLM (tests/aarch64/lower_on_x86_64.py).
    3. Under emulation: what OpenVINO reports about the CPU, doctor, the numerics table
       (tests/scripts/numerics_table.py -> build/aarch64/numerics.md), then the tests marked `aarch64`.
    """
    (wheel,) = sorted((FOLDER / "repaired" / PYTHON).glob("*.whl"))
    emulation(session)
    root = debian_root(session, FOLDER, os.environ.get("EXOV_DEBIAN_MIRROR", "http://deb.debian.org/debian"))
    environments.install_runtime(session, wheel_build.repaired_wheel(session), pins.OPENVINO_NEWEST,
                                 *environments.MINILM, "numpy")
    work = root / "opt" / "exov"
    shutil.rmtree(work / "x86_64-program", ignore_errors=True)
    with session.chdir(session.create_tmp()):
        session.run("python", str(ROOT / "tests" / "aarch64" / "lower_on_x86_64.py"), str(work / "x86_64-program"))
    requirements = [pins.torch_requirement(), pins.executorch_requirement(), pins.openvino_requirement(), "pytest",
                    "numpy", "pyelftools", *environments.MINILM, "packaging"]
    venv = emulated_venv(session, root, work, requirements, PYTHON)
    shutil.copy2(wheel, work / wheel.name)
    for folder in ("tests", "tools", "benchmarks"):  # the tests, and what pyproject.toml's pytest pythonpath names
        shutil.rmtree(work / folder, ignore_errors=True)
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", work / "pyproject.toml")  # the markers and pythonpath
    tests = inside(root, work / "tests")
    env = {"QEMU_CPU": CPU, **environments.OFFLINE, "EXOV_REQUIRE_ALL": "1", "HOME": "/root", "PATH": "/usr/bin:/bin",
           "EXOV_WHEEL": str(inside(root, work / wheel.name)),
           "EXOV_X86_64_PROGRAM": str(inside(root, work / "x86_64-program"))}
    started = time.perf_counter()
    with mounted(root):
        chroot(session, root, env, venv, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
               str(inside(root, work / wheel.name)))
        chroot(session, root, env, venv, "-c", CPU_REPORT)
        chroot(session, root, env, venv, "-m", "executorch_openvino", "doctor")
        # the aarch64 column of docs/user-guide/numerics.md
        chroot(session, root, env, venv, str(tests / "scripts" / "numerics_table.py"),
               str(inside(root, work / "numerics.md")))
        shutil.copy2(work / "numerics.md", FOLDER / "numerics.md")
        chroot(session, root, env, venv, "-m", "pytest", str(tests),
               *test_runs.pytest_args(test_runs.EMULATED, rootdir=tests), *session.posargs)
    session.log(f"emulated part: {time.perf_counter() - started:.0f} s")

