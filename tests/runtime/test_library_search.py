"""The OpenVINO C library search (native/delegate/library_search.h) against simulated folder layouts.

The platform is a parameter of the search, so the Linux, Windows and macOS
layouts of the pip package, an install tree and a conda environment are all
checked here with empty files of the right names (layouts from docs/design.md).
Nothing is loaded.
"""

from __future__ import annotations

import shutil

import pytest

from exov_testing.environment import INSTALL_TREE_LIB, run_python_json
from executorch_openvino.runtime import _native

pytestmark = [pytest.mark.own_runtime]


def _touch(root, *relative) -> str:
    for name in relative:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    return str(root / relative[0])


def _plan(platform, **settings):
    plan = _native.plan_library_search(platform, **{k: str(v) for k, v in settings.items()})
    return [(c["source"], c["path"]) for c in plan["candidates"]], plan


@pytest.mark.parametrize("platform, pip_files, expected", [
    ("linux", ["libopenvino_c.so.2641", "libopenvino.so.2641", "libopenvino_c.so.2541"], "libopenvino_c.so.2641"),
    ("windows", ["openvino_c.dll", "openvino.dll", "tbb12.dll", "openvino_c.lib"], "openvino_c.dll"),
    ("macos", ["libopenvino_c.2641.dylib", "libopenvino.2641.dylib"], "libopenvino_c.2641.dylib"),
])
def test_pip_package_layout(tmp_path, platform, pip_files, expected):
    libs = tmp_path / "site-packages" / "openvino" / "libs"
    _touch(libs, *pip_files)
    candidates, _ = _plan(platform, pip_dir=libs)
    assert candidates[0] == ("pip openvino package", str(libs / expected))


def test_other_platforms_files_are_not_taken(tmp_path):
    # A Windows DLL in a Linux pip folder (or the C++ library) is no C library here.
    libs = tmp_path / "libs"
    _touch(libs, "openvino_c.dll", "libopenvino.so.2641", "libopenvino_c.2641.dylib")
    candidates, plan = _plan("linux", pip_dir=libs)
    assert candidates == [("system loader", "libopenvino_c.so")]
    assert plan["notes"] == [f"pip openvino package: no libopenvino_c.so in {libs}"]


@pytest.mark.parametrize("platform, architecture, folder, name, dependency_dirs", [
    ("linux", "x86_64", "runtime/lib/intel64", "libopenvino_c.so.2026.4.1", []),
    ("linux", "arm64", "runtime/lib/aarch64", "libopenvino_c.so.2641", []),
    ("windows", "x86_64", "runtime/bin/intel64/Release", "openvino_c.dll", ["runtime/3rdparty/tbb/bin"]),
    ("macos", "arm64", "runtime/lib/arm64/Release", "libopenvino_c.2641.dylib", []),
    ("macos", "x86_64", "runtime/lib/intel64/Release", "libopenvino_c.2641.dylib", []),
])
def test_install_tree_layout(tmp_path, platform, architecture, folder, name, dependency_dirs):
    tree = tmp_path / "openvino_2026.4.1"
    _touch(tree, f"{folder}/{name}", "runtime/3rdparty/tbb/bin/tbb12.dll")
    plan = _native.plan_library_search(platform, architecture, install_tree=str(tree))
    found = plan["candidates"][0]
    assert (found["source"], found["path"]) == ("INTEL_OPENVINO_DIR install tree", str(tree / folder / name))
    assert found["dependency_dirs"] == [str(tree / d) for d in dependency_dirs]
    assert not found["explicit"]


@pytest.mark.parametrize("platform, files, expected", [
    # debug files, editor backups and folders named like the library are no library
    ("linux", ["libopenvino_c.so.2641", "libopenvino_c.so.2641.debug", "libopenvino_c.so.2641~",
               "libopenvino_c.so.", "libopenvino_c.so.9999/"], "libopenvino_c.so.2641"),
    # version numbers compare as numbers: 10001 > 2641, 2641 > 2026.4.1
    ("linux", ["libopenvino_c.so.2641", "libopenvino_c.so.10001", "libopenvino_c.so.2026.4.1"],
     "libopenvino_c.so.10001"),
    ("macos", ["libopenvino_c.2641.dylib", "libopenvino_c.2641.dylib.dSYM/", "libopenvino_c.x.dylib"],
     "libopenvino_c.2641.dylib"),
    ("windows", ["OpenVINO_C.DLL", "openvino_cd.dll", "openvino_c.dll.bak"], "OpenVINO_C.DLL"),
])
def test_only_the_library_file_itself_is_taken(tmp_path, platform, files, expected):
    libs = tmp_path / "libs"
    libs.mkdir()
    for name in files:
        (libs / name.rstrip("/")).mkdir() if name.endswith("/") else (libs / name).write_bytes(b"")
    candidates, _ = _plan(platform, pip_dir=libs)
    assert candidates[0] == ("pip openvino package", str(libs / expected))


def test_install_tree_of_another_architecture_is_reported(tmp_path):
    tree = tmp_path / "tree"
    _touch(tree, "runtime/lib/intel64/libopenvino_c.so.2641")
    candidates, plan = _plan("linux", architecture="arm64", install_tree=tree)
    assert candidates == [("system loader", "libopenvino_c.so")]
    assert f"INTEL_OPENVINO_DIR install tree: no libopenvino_c.so in {tree / 'runtime/lib/aarch64'}" in plan["notes"]


@pytest.mark.parametrize("platform, folder, name", [
    ("linux", "lib", "libopenvino_c.so.2641"),
    ("windows", "Library/bin", "openvino_c.dll"),
    ("macos", "lib", "libopenvino_c.2641.dylib"),
])
def test_conda_environment_layout(tmp_path, platform, folder, name):
    _touch(tmp_path, f"{folder}/{name}")
    candidates, _ = _plan(platform, conda_prefix=tmp_path)
    assert candidates[0] == ("CONDA_PREFIX conda environment", str(tmp_path / folder / name))


def test_every_place_in_one_documented_order(tmp_path):
    libs = tmp_path / "pip"
    _touch(libs, "libopenvino_c.so.2641")
    _touch(tmp_path, "tree/runtime/lib/intel64/libopenvino_c.so.2541", "conda/lib/libopenvino_c.so.2531")
    candidates, plan = _plan("linux", explicit_path="/opt/a/libopenvino_c.so", openvino_lib_path="/opt/b/x.so",
                             pip_dir=libs, install_tree=tmp_path / "tree", conda_prefix=tmp_path / "conda")
    assert [source for source, _ in candidates] == [
        "explicit path (set_library_path)", "OPENVINO_LIB_PATH", "pip openvino package",
        "INTEL_OPENVINO_DIR install tree", "CONDA_PREFIX conda environment", "system loader"]
    assert [c["explicit"] for c in plan["candidates"]] == [True, True, False, False, False, False]
    assert plan["notes"] == []


# What each place of the search order is called in docs/user-guide/deployment.md's numbered list.
DOC_WORDS = {"explicit path (set_library_path)": "set_library_path", "OPENVINO_LIB_PATH": "OPENVINO_LIB_PATH",
             "pip openvino package": "pip `openvino` package", "INTEL_OPENVINO_DIR install tree": "INTEL_OPENVINO_DIR",
             "CONDA_PREFIX conda environment": "CONDA_PREFIX", "system loader": "system loader"}


def test_the_deployment_guide_lists_the_places_in_the_codes_order(tmp_path):
    import re

    from exov_testing import REPOSITORY

    guide = (REPOSITORY / "docs" / "user-guide" / "deployment.md").read_text()
    section = guide[guide.index("## How the delegate finds OpenVINO"):]
    section = section[:section.index("`native/delegate/library_search.h` lists")]
    listed = re.findall(r"^(\d)\. (.+(?:\n   .+)*)", section, re.M)
    libs = tmp_path / "pip"
    _touch(libs, "libopenvino_c.so.2641")
    _touch(tmp_path, "tree/runtime/lib/intel64/libopenvino_c.so.2541", "conda/lib/libopenvino_c.so.2531")
    candidates, _ = _plan("linux", explicit_path="/opt/a/libopenvino_c.so", openvino_lib_path="/opt/b/x.so",
                          pip_dir=libs, install_tree=tmp_path / "tree", conda_prefix=tmp_path / "conda")
    sources = [source for source, _ in candidates]
    assert [int(n) for n, _ in listed] == list(range(1, len(sources) + 1)), listed
    for (number, text), source in zip(listed, sources):
        assert DOC_WORDS[source] in text, (number, text, source)


def test_pip_package_and_install_tree_choice_is_deterministic(tmp_path):
    # Both present: the pip package first, whatever the folder listing order; the tree follows.
    libs = tmp_path / "pip"
    _touch(libs, "libopenvino_c.so.2541", "libopenvino_c.so.2641", "libopenvino_c.so.2591")
    _touch(tmp_path, "tree/runtime/lib/intel64/libopenvino_c.so.2641")
    plans = [_plan("linux", pip_dir=libs, install_tree=tmp_path / "tree")[0] for _ in range(3)]
    assert plans[0] == plans[1] == plans[2]
    assert plans[0][:2] == [("pip openvino package", str(libs / "libopenvino_c.so.2641")),
                            ("INTEL_OPENVINO_DIR install tree",
                             str(tmp_path / "tree/runtime/lib/intel64/libopenvino_c.so.2641"))]


def test_windows_never_asks_the_loader_for_a_bare_name(tmp_path):
    candidates, plan = _plan("windows")
    assert candidates == []  # a bare name would search PATH and the current folder
    assert plan["notes"] == ["pip openvino package: not installed (or not told by Python)"]


def test_unknown_platform_is_refused():
    with pytest.raises(ValueError, match="platform must be 'linux', 'windows' or 'macos'"):
        _native.plan_library_search("solaris")


def test_openvino_lib_path_equal_to_the_pip_library_is_credited_to_pip(tmp_path):
    libs = tmp_path / "pip"
    library = _touch(libs, "libopenvino_c.so.2641")
    candidates, _ = _plan("linux", openvino_lib_path=library, pip_dir=libs)
    assert candidates[0] == ("OPENVINO_LIB_PATH (the pip openvino package)", library)


def test_a_loaded_library_reports_the_other_openvinos_present(tmp_path, pip_openvino_c_library):
    # A real load with an install tree present too: the pip package is used, the tree is reported.
    # (a copy: a link to the same file is the same OpenVINO, not another one)
    tree = tmp_path / "tree" / INSTALL_TREE_LIB
    tree.mkdir(parents=True)
    shutil.copy(pip_openvino_c_library, tree / pip_openvino_c_library.name)
    code = "import json, executorch_openvino as exov; print(json.dumps(exov.load_openvino()))"
    result = run_python_json(code, {"INTEL_OPENVINO_DIR": str(tmp_path / "tree")}, tmp_path)
    assert result["source"] == "pip openvino package"
    assert result["not_used"] == [f"INTEL_OPENVINO_DIR install tree: {tree / pip_openvino_c_library.name}"]
