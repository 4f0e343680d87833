"""The delegate's Windows loader, run under wine against the real openvino_c.dll.

`nox -s windows_loader` cross-compiles tests/windows/loader_check.cpp with
mingw-w64 (together with the delegate's native/ loader sources) and runs this
file with:

  EXOV_LOADER_CHECK      the program, loader_check.exe
  EXOV_WINDOWS_OPENVINO  the win_amd64 openvino wheel's openvino/libs folder, unpacked
  EXOV_WINE              the wine binary; WINEPREFIX a prepared prefix
  EXOV_OPENVINO_VERSION  that wheel's release

Each case starts a fresh Windows process, so nothing loaded by one case helps
another (tests/windows/wine.py runs them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from wine import lines, run_windows, windows_path

LOADER_CHECK = Path(os.environ["EXOV_LOADER_CHECK"])
OPENVINO_LIBS = Path(os.environ["EXOV_WINDOWS_OPENVINO"])


def run(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return run_windows(LOADER_CHECK, *args, cwd=cwd, **env)


def install_tree(root: Path, *, tbb_dir: bool = True) -> tuple[Path, Path]:
    """A release archive's layout: runtime\\bin\\intel64\\Release, TBB in runtime\\3rdparty\\tbb\\bin.

    Returns (the tree's root, the folder that got the TBB DLLs). Without
    `tbb_dir` the archive's TBB folder stays empty and the DLLs go to a folder
    outside the tree.
    """
    release = root / "runtime" / "bin" / "intel64" / "Release"
    tbb = root / "runtime" / "3rdparty" / "tbb" / "bin"
    elsewhere = root.parent / f"{root.name}-tbb-elsewhere"
    for folder in (release, tbb, elsewhere):
        folder.mkdir(parents=True, exist_ok=True)
    for dll in OPENVINO_LIBS.glob("*.dll"):
        target = (tbb if tbb_dir else elsewhere) if dll.name.startswith("tbb") else release
        # A copy of openvino_c.dll (the loader tells files apart by identity); hard links for the rest.
        try:
            if dll.name == "openvino_c.dll":
                raise OSError("copy")
            os.link(dll, target / dll.name)
        except OSError:
            shutil.copy2(dll, target / dll.name)
    return root, (tbb if tbb_dir else elsewhere)


def test_pip_layout_loads_and_computes_in_f32():
    result = run("--pip-dir", windows_path(OPENVINO_LIBS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result, "loaded:") == [windows_path(OPENVINO_LIBS / "openvino_c.dll")]
    assert lines(result, "source:") == ["pip openvino package"]
    assert lines(result, "version:")[0].startswith(os.environ["EXOV_OPENVINO_VERSION"])
    assert lines(result, "result:") == ["ok"]


def test_install_tree_with_tbb_in_its_own_folder(tmp_path):
    tree, _ = install_tree(tmp_path / "openvino")
    result = run(INTEL_OPENVINO_DIR=windows_path(tree))
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result, "loaded:") == [windows_path(tree / "runtime/bin/intel64/Release/openvino_c.dll")]
    assert lines(result, "source:") == ["INTEL_OPENVINO_DIR install tree"]
    assert lines(result, "result:") == ["ok"]


def test_pip_package_and_install_tree_pip_wins_and_the_tree_is_reported(tmp_path):
    tree, _ = install_tree(tmp_path / "openvino")
    result = run("--pip-dir", windows_path(OPENVINO_LIBS), INTEL_OPENVINO_DIR=windows_path(tree))
    assert result.returncode == 0, result.stdout
    assert lines(result, "source:") == ["pip openvino package"]
    assert lines(result, "not used:") == [
        "INTEL_OPENVINO_DIR install tree: " + windows_path(tree / "runtime/bin/intel64/Release/openvino_c.dll")]


def test_dependencies_on_path_are_not_found(tmp_path):
    # TBB only on PATH: openvino.dll's dependency must not be found there...
    tree, tbb_elsewhere = install_tree(tmp_path / "openvino", tbb_dir=False)
    result = run(INTEL_OPENVINO_DIR=windows_path(tree), WINEPATH=windows_path(tbb_elsewhere))
    assert result.returncode == 1, result.stdout
    assert "INTEL_OPENVINO_DIR install tree: " + windows_path(tree / "runtime/bin/intel64/Release/openvino_c.dll") \
        in result.stdout
    assert "Windows error 126" in result.stdout  # ERROR_MOD_NOT_FOUND: a dependency is missing
    # ...where Windows' default search, which includes PATH, finds it.
    control = run("--plain-load", windows_path(tree / "runtime/bin/intel64/Release/openvino_c.dll"),
                  WINEPATH=windows_path(tbb_elsewhere))
    assert control.returncode == 0, control.stdout


def test_library_only_on_path_is_not_found():
    result = run(WINEPATH=windows_path(OPENVINO_LIBS))
    assert result.returncode == 1, result.stdout
    assert "could not load the OpenVINO C library" in result.stdout
    assert "pip openvino package: not installed" in result.stdout
    assert "system loader" not in result.stdout  # a bare name is never given to Windows
    control = run("--plain-load", "openvino_c.dll", WINEPATH=windows_path(OPENVINO_LIBS))
    assert control.returncode == 0, control.stdout


def test_library_only_in_the_current_folder_is_not_found(tmp_path):
    shutil.copy2(LOADER_CHECK, tmp_path / LOADER_CHECK.name)  # the program's own folder is searched by design
    result = run_windows(tmp_path / LOADER_CHECK.name, cwd=OPENVINO_LIBS)
    assert result.returncode == 1, result.stdout
    assert "could not load the OpenVINO C library" in result.stdout
    control = run_windows(tmp_path / LOADER_CHECK.name, "--plain-load", "openvino_c.dll", cwd=OPENVINO_LIBS)
    assert control.returncode == 0, control.stdout


def test_relative_names_are_refused():
    result = run("--open", "openvino_c.dll", cwd=OPENVINO_LIBS)
    assert result.returncode == 1
    assert lines(result, "error:") == [
        "refused: 'openvino_c.dll' is not an absolute path (relative names would search PATH)"]
    result = run(cwd=OPENVINO_LIBS, OPENVINO_LIB_PATH="openvino_c.dll")
    assert result.returncode == 1
    # An environment variable outlives the folder it was set in: never resolved against it.
    assert (": openvino_c.dll: is not an absolute path; give the library file's full path, e.g. "
            + windows_path(OPENVINO_LIBS / "openvino_c.dll")) in result.stdout, result.stdout
    assert "stopped here: OPENVINO_LIB_PATH is an explicit choice" in result.stdout


def test_openvino_lib_path_naming_a_folder_says_which_file_to_name():
    result = run(OPENVINO_LIB_PATH=windows_path(OPENVINO_LIBS))
    assert result.returncode == 1
    assert (f"OPENVINO_LIB_PATH: {windows_path(OPENVINO_LIBS)}: is a folder; set it to the library file "
            f"itself, e.g. {windows_path(OPENVINO_LIBS / 'openvino_c.dll')}") in result.stdout, result.stdout


def test_openvino_lib_path_naming_a_missing_file(tmp_path):
    missing = windows_path(tmp_path / "openvino_c.dll")
    result = run(OPENVINO_LIB_PATH=missing)
    assert result.returncode == 1
    assert f"OPENVINO_LIB_PATH: {missing}: no such file" in result.stdout, result.stdout


def test_openvino_lib_path_naming_another_dll():
    other = windows_path(OPENVINO_LIBS / "tbb12.dll")
    result = run(OPENVINO_LIB_PATH=other)
    assert result.returncode == 1
    assert (f"OPENVINO_LIB_PATH: {other}: opened, but it has no symbol 'ov_get_openvino_version': it is not "
            "the OpenVINO C library") in result.stdout, result.stdout
