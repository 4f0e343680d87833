"""The win_amd64 wheel's repair with delvewheel, and the repaired wheel loaded under wine.

`nox -s windows_repair` builds the wheels and runs this file with:

  EXOV_RAW_WINDOWS_WHEEL       the wheel as built (noxfile.py: _windows_test_wheel)
  EXOV_REPAIRED_WINDOWS_WHEEL  delvewheel repair with wheels/delvewheel-exclude.txt
  EXOV_CONTROL_WINDOWS_WHEEL   the same repair without the project's list: what the list keeps out
  EXOV_DELVEWHEEL_EXCLUDE      the project's list
  EXOV_CMAKE_GUARD_LOG         the output of configuring this project's CMake build for Windows
  EXOV_LOADER_CHECK, EXOV_WINDOWS_OPENVINO, EXOV_WINE, WINEPREFIX: as for loader_checks.py
"""

from __future__ import annotations

import fnmatch
import os
import re
import zipfile
from pathlib import Path, PurePosixPath

import pefile
import pytest

from wine import lines, run_windows, windows_path

RAW = Path(os.environ["EXOV_RAW_WINDOWS_WHEEL"])
REPAIRED = Path(os.environ["EXOV_REPAIRED_WINDOWS_WHEEL"])
CONTROL = Path(os.environ["EXOV_CONTROL_WINDOWS_WHEEL"])
LOADER_CHECK = Path(os.environ["EXOV_LOADER_CHECK"])
OPENVINO_LIBS = Path(os.environ["EXOV_WINDOWS_OPENVINO"])
OUR_DLLS = {"executorch_openvino/executorch_openvino_loader.dll", "executorch_openvino/excluded_imports_probe.dll"}
VENDORED_FOLDER = "executorch_openvino.libs"
# Names that code loads at run time, by name: our loader loads openvino_c.dll, and OpenVINO
# loads its plugins and TBB from its own folder; renaming any of them breaks that.
LOADED_BY_NAME = ["openvino_c.dll", "openvino.dll", "openvino_intel_cpu_plugin.dll", "tbb12.dll"]


def exclusions() -> list[str]:
    text = Path(os.environ["EXOV_DELVEWHEEL_EXCLUDE"]).read_text().splitlines()
    return [ln.strip() for ln in text if ln.strip() and not ln.startswith("#")]


def dlls(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return [n for n in z.namelist() if n.lower().endswith((".dll", ".pyd"))]


def imports(wheel: Path, member: str) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        pe = pefile.PE(data=z.read(member))
    return [entry.dll.decode() for entry in getattr(pe, "DIRECTORY_ENTRY_IMPORT", [])]


def original_name(vendored: str) -> str:
    """The name a DLL had before delvewheel mangled it to <stem>-<32 hex digits>.dll (unmangled: its name)."""
    name = PurePosixPath(vendored).name
    mangled = re.fullmatch(r"(.+)-[0-9a-f]{32}(\.dll)", name, re.IGNORECASE)
    return mangled.group(1) + mangled.group(2) if mangled else name


def test_the_windows_build_stops_at_once_with_what_to_give_instead():
    log = Path(os.environ["EXOV_CMAKE_GUARD_LOG"]).read_text()
    assert "exit status: 0" not in log
    assert "The executorch Windows wheel ships no runtime library to link" in " ".join(log.split())
    assert "-DEXECUTORCH_INSTALL_DIR=<its install" in " ".join(log.split())
    assert "Found Python" not in log  # nothing else was tried first


def test_the_control_repair_would_vendor_and_rename_what_the_list_excludes():
    # Without the project's list delvewheel copies OpenVINO and TBB into our wheel under new names.
    vendored = [original_name(n) for n in dlls(CONTROL) if n.startswith(VENDORED_FOLDER + "/")]
    assert {"openvino_c.dll", "openvino.dll", "tbb12.dll"} <= set(vendored), vendored
    probe_imports = imports(CONTROL, "executorch_openvino/excluded_imports_probe.dll")
    assert "openvino_c.dll" not in probe_imports, probe_imports


def test_original_names_of_mangled_and_unmangled_copies():
    assert original_name("x.libs/libstdc++-6-b8968769754f69eea7de64ff329e07ed.dll") == "libstdc++-6.dll"
    assert original_name("x.libs/openvino_c.dll") == "openvino_c.dll"  # delvewheel --no-mangle
    assert original_name("x.libs/libwinpthread-1.dll") == "libwinpthread-1.dll"


def test_nothing_excluded_is_copied():
    patterns = exclusions()
    copied = [n for n in dlls(REPAIRED) if n not in OUR_DLLS
              and any(fnmatch.fnmatch(original_name(n).lower(), p.lower()) for p in patterns)]
    assert not copied, copied


def test_names_loaded_at_run_time_are_not_renamed():
    assert OUR_DLLS <= set(dlls(REPAIRED))  # our own DLLs keep their names
    assert "openvino_c.dll" in imports(REPAIRED, "executorch_openvino/excluded_imports_probe.dll")
    vendored = [original_name(n) for n in dlls(REPAIRED) if n.startswith(VENDORED_FOLDER + "/")]
    assert not set(vendored) & set(LOADED_BY_NAME), vendored


def test_mingw_runtime_is_vendored_under_new_names_and_imported_by_them():
    vendored = {original_name(n): PurePosixPath(n).name for n in dlls(REPAIRED) if n.startswith(VENDORED_FOLDER + "/")}
    assert set(vendored) == {"libstdc++-6.dll", "libgcc_s_seh-1.dll", "libwinpthread-1.dll"}, vendored
    loader_imports = imports(REPAIRED, "executorch_openvino/executorch_openvino_loader.dll")
    assert vendored["libstdc++-6.dll"] in loader_imports, loader_imports
    assert "libstdc++-6.dll" in imports(RAW, "executorch_openvino/executorch_openvino_loader.dll")


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site-packages")
    with zipfile.ZipFile(REPAIRED) as z:
        z.extractall(root)
    return root


def test_the_repaired_dll_loads_openvino_under_wine(unpacked):
    dll = unpacked / "executorch_openvino" / "executorch_openvino_loader.dll"
    result = run_windows(LOADER_CHECK, "--via-dll", windows_path(dll), windows_path(unpacked / VENDORED_FOLDER),
                         "--pip-dir", windows_path(OPENVINO_LIBS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result, "loaded:") == [windows_path(OPENVINO_LIBS / "openvino_c.dll")]
    assert lines(result, "version:")[0].startswith(os.environ["EXOV_OPENVINO_VERSION"])


def test_without_the_vendored_folder_the_dll_does_not_load(unpacked, tmp_path):
    # The control: the vendored runtime is what makes it load (no mingw-w64 runtime on Windows).
    dll = unpacked / "executorch_openvino" / "executorch_openvino_loader.dll"
    result = run_windows(LOADER_CHECK, "--via-dll", windows_path(dll), windows_path(tmp_path),
                         "--pip-dir", windows_path(OPENVINO_LIBS))
    assert result.returncode == 1
    assert "Windows error 126" in result.stdout
