"""Windows, from Linux: mingw-w64 cross-compiles, wine runs.

The executorch Windows wheel has no runtime to link (docs/design.md), so what the
`windows_loader` and `windows_repair` sessions check is the delegate's loader
against the win_amd64 openvino wheel's real DLLs, and a delvewheel repair.
Every output lands in the `folder` the noxfile names (build/windows/).
"""

from __future__ import annotations

import os
import shutil
import tomllib
import zipfile
from pathlib import Path

import nox

from orchestration import ROOT, native_checks
from orchestration.debian import debian_tools


def toolchain(session: nox.Session, packages: list[str], mingw_cxx: str) -> tuple[str, str]:
    """(the mingw-w64 C++ compiler, the wine binary); Debian's `packages` provide them."""
    def find() -> tuple[str | None, str | None]:
        wine = next((w for w in (shutil.which("wine64"), "/usr/lib/wine/wine64", shutil.which("wine"))
                     if w and os.access(w, os.X_OK)), None)
        return shutil.which(mingw_cxx), wine

    return debian_tools(session, packages, find)


def openvino_wheel(session: nox.Session, folder: Path, openvino: str, python: str) -> Path:
    """The win_amd64 openvino wheel of `openvino`, downloaded once and unpacked (headers and DLLs)."""
    root = folder / f"openvino-{openvino}"
    if not (root / "openvino" / "libs" / "openvino_c.dll").is_file():
        downloads = folder / "downloads"
        session.run("python", "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--platform", "win_amd64", "--python-version", python, "-d", str(downloads),
                    f"openvino=={openvino}")
        wheel = next(downloads.glob(f"openvino-{openvino}-*-win_amd64.whl"))
        partial = root.with_name(root.name + ".partial")  # renamed when complete: no half-unpacked cache
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
        with zipfile.ZipFile(wheel) as z:
            # The GPU and NPU plugins (180 MB) are not used here.
            z.extractall(partial, [n for n in z.namelist() if n.startswith("openvino/include/")
                                   or (n.startswith("openvino/libs/") and "_gpu_" not in n and "_npu_" not in n)])
        partial.rename(root)
    return root


def wine_environment(session: nox.Session, folder: Path, wine: str) -> dict:
    """A wine prefix of the project's own (created on first use) and quiet, offline settings."""
    env = {"WINEPREFIX": str(folder / "wineprefix"), "WINEDEBUG": "-all", "WINEARCH": "win64",
           "WINEDLLOVERRIDES": "mscoree,mshtml="}  # no Mono or Gecko installers (no network)
    if not (folder / "wineprefix" / "system.reg").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        session.run(wine, "wineboot", "-i", env=env, external=True)
    return env


def build_checks(session: nox.Session, cxx: str, openvino_root: Path, build_dir: Path,
                 targets: list[str]) -> Path:
    """The Windows `targets` of tests/CMakeLists.txt (loader_check, executorch_openvino_loader,
    excluded_imports_probe), cross-compiled with `cxx` against the unpacked openvino wheel
    `openvino_root`; returns the folder holding them (`build_dir`)."""
    return native_checks.build(session, "windows", build_dir, targets, {
        "CMAKE_SYSTEM_NAME": "Windows", "CMAKE_CXX_COMPILER": cxx,
        "OPENVINO_INCLUDE_DIR": openvino_root / "openvino" / "include",
        "OPENVINO_C_DLL": openvino_root / "openvino" / "libs" / "openvino_c.dll"})


def cmake_guard(session: nox.Session, cxx: str, folder: Path) -> Path:
    """Configures the project's own CMake build for Windows (mingw-w64), which must stop at once;
    returns the log of the attempt, its exit status last (tests/windows/repair_checks.py reads it)."""
    guard = folder / "cmake-guard"
    shutil.rmtree(guard, ignore_errors=True)
    guard_log = folder / "cmake-guard.log"
    session.run("bash", "-c", f'cmake -S "{ROOT}" -B "{guard}" -G Ninja -DCMAKE_SYSTEM_NAME=Windows '
                f'-DCMAKE_CXX_COMPILER={cxx} > "{guard_log}" 2>&1; echo "exit status: $?" >> "{guard_log}"',
                external=True)
    return guard_log


def mingw_wheel(session: nox.Session, built: Path, out: Path, tag: str) -> Path:
    """A win_amd64 wheel (`tag`) of this project's package with the Windows binaries mingw-w64 can build
    (build_checks, into `built`).

    executorch_openvino/executorch_openvino_loader.dll: the delegate's OpenVINO
    loader (tests/windows/loader_dll.cpp), linked against mingw-w64's shared
    C++ runtime, which the repair must vendor. executorch_openvino/
    excluded_imports_probe.dll imports openvino_c.dll, standing in for the DLLs
    of other wheels a Windows build imports, which the repair must leave out.
    """
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    tree = out / "tree"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(ROOT / "python" / "executorch_openvino", tree / "executorch_openvino",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for dll in ("executorch_openvino_loader.dll", "excluded_imports_probe.dll"):
        shutil.copy2(built / dll, tree / "executorch_openvino" / dll)
    dist_info = tree / f"executorch_openvino-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: executorch-openvino\nVersion: {version}\n")
    (dist_info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: noxfile.py\nRoot-Is-Purelib: false\n"
                                     f"Tag: {tag}\n")
    session.run("python", "-m", "wheel", "pack", str(tree), "-d", str(out))
    return next(out.glob(f"executorch_openvino-{version}-{tag}.whl"))


def mingw_runtime_dirs(session: nox.Session, cxx: str) -> list[Path]:
    """The folders of mingw-w64's shared C++ and thread runtimes (what a repair vendors)."""
    return sorted({Path(session.run(cxx, f"-print-file-name={dll}", silent=True, external=True).strip())
                   .resolve().parent for dll in ("libstdc++-6.dll", "libwinpthread-1.dll")})


def delvewheel_show(session: nox.Session, wheel: Path, exclusions: list[str], add_path: list[Path]) -> None:
    session.run("delvewheel", "show", "--analyze-existing", "--add-path",
                ":".join(str(p) for p in add_path), "--exclude", ":".join(exclusions), str(wheel))


def delvewheel_repair(session: nox.Session, wheel: Path, out: Path, exclusions: list[str],
                      add_path: list[Path]) -> Path:
    shutil.rmtree(out, ignore_errors=True)
    session.run("delvewheel", "repair", "--analyze-existing", "-w", str(out),
                "--add-path", ":".join(str(p) for p in add_path),
                *(["--exclude", ":".join(exclusions)] if exclusions else []), str(wheel))
    return next(out.glob("*.whl"))


def run_checks(session: nox.Session, script: str, env: dict) -> None:
    """pytest on tests/windows/`script` (and only that folder's conftest), outside the source tree."""
    folder = ROOT / "tests" / "windows"
    with session.chdir(session.create_tmp()):
        session.run("python", "-m", "pytest", str(folder / script), "-p", "no:cacheprovider",
                    "--rootdir", str(folder), "--confcutdir", str(folder), "-ra", *session.posargs, env=env)
