"""Windows, from Linux: mingw-w64 cross-compiles, wine runs.

The executorch Windows wheel has no runtime to link (docs/design.md), so what the
`windows_loader` and `windows_repair` sessions check is the delegate's loader
against the win_amd64 openvino wheel's real DLLs, and a delvewheel repair.
Every output lands in build/windows/ (FOLDER).
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import nox

from orchestration import ROOT, environments, native_checks, pins, wheel_build
from orchestration.debian import debian_tools

FOLDER = ROOT / "build" / "windows"
PACKAGES = ["g++-mingw-w64-x86-64-posix", "wine64"]  # Debian's
MINGW_CXX = "x86_64-w64-mingw32-g++-posix"


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
    import tomllib  # type: ignore[import-not-found,unused-ignore]  # 3.11+; the workflow runs nox on 3.10 too

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
    (dist_info / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: executorch-openvino orchestration\n"
                                     f"Root-Is-Purelib: false\nTag: {tag}\n")
    session.run("python", "-m", "wheel", "pack", str(tree), "-d", str(out))
    return next(out.glob(f"executorch_openvino-{version}-{tag}.whl"))


def mingw_runtime_dirs(session: nox.Session, cxx: str) -> list[Path]:
    """The folders of mingw-w64's shared C++ and thread runtimes (what a repair vendors)."""
    return sorted({Path(environments.output(session, cxx, f"-print-file-name={dll}", external=True).strip())
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
        # prepend, over pyproject.toml's importlib: the checks import their folder's helpers (wine.py).
        session.run("python", "-m", "pytest", str(folder / script), "-p", "no:cacheprovider", "--import-mode=prepend",
                    "--rootdir", str(folder), "--confcutdir", str(folder), "-ra", *session.posargs, env=env)


def loader_session(session: nox.Session, openvino: str) -> None:
    """Cross-compiles tests/windows/loader_check.cpp with the delegate's loader sources; tests/windows/
    loader_checks.py runs it under wine: pip and install-tree layouts load and compute; PATH, the current
    folder and relative names are never used."""
    cxx, wine = toolchain(session, PACKAGES, MINGW_CXX)
    session.install("pytest", *pins.CMAKE_TOOLS)
    openvino_root = openvino_wheel(session, FOLDER, openvino, pins.PYTHON)
    built = build_checks(session, cxx, openvino_root, FOLDER / f"checks-{openvino}", ["loader_check"])
    env = {**wine_environment(session, FOLDER, wine), "EXOV_LOADER_CHECK": str(built / "loader_check.exe"),
           "EXOV_WINE": wine, "EXOV_WINDOWS_OPENVINO": str(openvino_root / "openvino" / "libs"),
           "EXOV_OPENVINO_VERSION": openvino}
    run_checks(session, "loader_checks.py", env)


def repair_session(session: nox.Session) -> None:
    """delvewheel repair of a win_amd64 wheel, checked and then loaded under wine.

    1. The project's own CMake build configured for Windows (mingw-w64) stops at once with the message
       that the executorch Windows wheel has no runtime to link.
    2. A win_amd64 wheel of the Windows binaries mingw-w64 builds (mingw_wheel) is repaired with
       wheels/delvewheel-exclude.txt (plus the MSVC runtime on Linux), and once without the project's
       list (the control that shows what the list keeps out).
    3. tests/windows/repair_checks.py checks both and loads the repaired wheel's DLL under wine.
    """
    openvino = pins.OPENVINO_NEWEST
    cxx, wine = toolchain(session, PACKAGES, MINGW_CXX)
    session.install(f"delvewheel=={pins.DELVEWHEEL}", "wheel", "pytest", "pefile", *pins.CMAKE_TOOLS)
    openvino_root = openvino_wheel(session, FOLDER, openvino, pins.PYTHON)
    libs = openvino_root / "openvino" / "libs"
    guard_log = cmake_guard(session, cxx, FOLDER)
    out = FOLDER / "wheels"
    built = build_checks(session, cxx, openvino_root, FOLDER / f"checks-{openvino}",
                         ["loader_check", "executorch_openvino_loader", "excluded_imports_probe"])
    wheel = mingw_wheel(session, built, out / "raw", pins.WINDOWS_WHEEL_TAG)
    add_path = [*mingw_runtime_dirs(session, cxx), libs]
    linux_only = wheel_build.exclusions("delvewheel-exclude-on-linux.txt")
    exclusions = wheel_build.exclusions("delvewheel-exclude.txt") + linux_only
    delvewheel_show(session, wheel, exclusions, add_path)
    repaired = delvewheel_repair(session, wheel, out / "repaired", exclusions, add_path)
    control = delvewheel_repair(session, wheel, out / "control", linux_only, add_path)
    env = {**wine_environment(session, FOLDER, wine), "EXOV_LOADER_CHECK": str(built / "loader_check.exe"),
           "EXOV_WINE": wine, "EXOV_WINDOWS_OPENVINO": str(libs), "EXOV_OPENVINO_VERSION": openvino,
           "EXOV_RAW_WINDOWS_WHEEL": str(wheel), "EXOV_REPAIRED_WINDOWS_WHEEL": str(repaired),
           "EXOV_CONTROL_WINDOWS_WHEEL": str(control), "EXOV_CMAKE_GUARD_LOG": str(guard_log),
           "EXOV_DELVEWHEEL_EXCLUDE": str(ROOT / "wheels" / "delvewheel-exclude.txt")}
    run_checks(session, "repair_checks.py", env)
