"""Finding and loading libopenvino_c: each wrong setting gets an error saying what to fix, and a retry works.

Each case runs in a fresh interpreter, because a process keeps the first
OpenVINO it loads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from exov_testing.environment import run_python_json, SEARCH_VARIABLES

from exov_testing.compile_harness import build_harness

pytestmark = [pytest.mark.older_openvino, pytest.mark.native]

LOAD = """
    import json, executorch_openvino as exov
    try:
        print(json.dumps({"ok": True, **exov.load_openvino()}))
    except RuntimeError as e:
        print(json.dumps({"ok": False, "error": str(e)}))
"""


def test_pip_package_is_found_without_configuration(tmp_path, pip_openvino_c_library):
    result = run_python_json(LOAD, {}, tmp_path)
    assert result["ok"], result
    assert result["source"] == "pip openvino package"
    assert result["path"] == str(pip_openvino_c_library)
    assert result["version"].startswith(os.environ.get("EXOV_OPENVINO_VERSION", ""))


def test_openvino_lib_path_to_a_missing_file(tmp_path):
    missing = tmp_path / "nowhere" / "libopenvino_c.so.2641"
    result = run_python_json(LOAD, {"OPENVINO_LIB_PATH": str(missing)}, tmp_path)
    assert not result["ok"]
    assert f"OPENVINO_LIB_PATH: {missing}: no such file" in result["error"]
    assert "stopped here: OPENVINO_LIB_PATH is an explicit choice" in result["error"]
    assert "Fix: `pip install openvino`" in result["error"]


def test_openvino_lib_path_to_a_folder(tmp_path, pip_openvino_c_library):
    folder = pip_openvino_c_library.parent
    result = run_python_json(LOAD, {"OPENVINO_LIB_PATH": str(folder)}, tmp_path)
    assert not result["ok"]
    assert (f"OPENVINO_LIB_PATH: {folder}: is a folder; set it to the library file itself, e.g. "
            f"{pip_openvino_c_library}") in result["error"]


def test_openvino_lib_path_relative_is_refused_with_the_full_path_to_set(tmp_path, pip_openvino_c_library):
    # An environment variable outlives the folder it was set in: the library must not depend on it.
    relative = os.path.relpath(pip_openvino_c_library, tmp_path)
    result = run_python_json(LOAD, {"OPENVINO_LIB_PATH": relative}, tmp_path)
    assert not result["ok"]
    assert "OPENVINO_LIB_PATH" in result["error"]
    assert (f": {relative}: is not an absolute path; give the library file's full path, "
            f"e.g. {pip_openvino_c_library.resolve()}") in result["error"]


def test_openvino_lib_path_relative_to_a_folder_suggests_the_library_inside(tmp_path, pip_openvino_c_library):
    relative = os.path.relpath(pip_openvino_c_library.parent, tmp_path)
    result = run_python_json(LOAD, {"OPENVINO_LIB_PATH": relative}, tmp_path)
    assert not result["ok"]
    assert f": {relative}: is not an absolute path; give the library file's full path, e.g. " \
           f"{pip_openvino_c_library.resolve()} (" in result["error"]


def test_set_library_path_relative_through_a_link_and_dot_dot(tmp_path, pip_openvino_c_library):
    # "link/../name" is the link target's parent's name, as the loader sees it, not "./name".
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / pip_openvino_c_library.name).symlink_to(pip_openvino_c_library)
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "link").symlink_to(tmp_path / "real" / "sub")
    code = f"""
        import json, os, executorch_openvino as exov
        os.chdir("case")
        exov.set_library_path("link/../{pip_openvino_c_library.name}")
        try:
            print(json.dumps({{"ok": True, **exov.load_openvino()}}))
        except RuntimeError as e:
            print(json.dumps({{"ok": False, "error": str(e)}}))
    """
    result = run_python_json(code, {}, tmp_path)
    assert result["ok"], result["error"]
    assert result["path"] == str(pip_openvino_c_library.resolve())


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler for the statx-denying shim")
def test_library_search_works_where_statx_is_denied(tmp_path, pip_openvino_c_library):
    # Sandboxes such as Docker's seccomp profile before 18.04 answer statx with EPERM; the search
    # falls back to fstatat (native/delegate/file_system.cpp). The shim: tests/native/deny_statx.c.
    shim = build_harness("deny_statx", tmp_path)
    # After what is preloaded already (the sanitizers session preloads its runtimes first).
    preload = ":".join(filter(None, [os.environ.get("LD_PRELOAD"), str(shim)]))
    result = run_python_json(LOAD, {"LD_PRELOAD": preload}, tmp_path)
    assert result["ok"], result["error"]
    assert result["source"] == "pip openvino package"


def test_set_library_path_takes_a_path_relative_to_the_current_folder(tmp_path, pip_openvino_c_library):
    relative = os.path.relpath(pip_openvino_c_library, tmp_path)
    code = f"""
        import json, executorch_openvino as exov
        exov.set_library_path({relative!r})
        print(json.dumps(exov.load_openvino()))
    """
    result = run_python_json(code, {}, tmp_path)
    assert result["source"] == "explicit path (set_library_path)"
    assert result["path"] == str(pip_openvino_c_library.resolve())


def test_openvino_lib_path_to_a_file_that_is_no_library(tmp_path):
    text = tmp_path / "libopenvino_c.so"
    text.write_text("not a shared library\n")
    result = run_python_json(LOAD, {"OPENVINO_LIB_PATH": str(text)}, tmp_path)
    assert not result["ok"]
    assert f"OPENVINO_LIB_PATH: {text}: " in result["error"]
    assert "invalid ELF header" in result["error"] or "file too short" in result["error"]


def test_openvino_lib_path_to_the_cpp_library_instead_of_the_c_one(tmp_path, pip_openvino_c_library):
    cpp = next(pip_openvino_c_library.parent.glob("libopenvino.so.*"))
    result = run_python_json(LOAD, {"OPENVINO_LIB_PATH": str(cpp)}, tmp_path)
    assert not result["ok"]
    assert "opened, but it has no symbol 'ov_get_openvino_version': it is not the OpenVINO C library" in result["error"]


def test_no_openvino_anywhere_names_every_place_tried(tmp_path):
    code = """
        import json, executorch_openvino as exov
        from executorch_openvino.runtime import _native
        _native.set_pip_library_dir("")   # as if the pip package were absent
        try:
            exov.load_openvino(); print(json.dumps({"ok": True}))
        except RuntimeError as e:
            print(json.dumps({"ok": False, "error": str(e)}))
    """
    empty_tree = tmp_path / "openvino_tree"
    empty_tree.mkdir()
    result = run_python_json(code, {"LD_LIBRARY_PATH": "", "INTEL_OPENVINO_DIR": str(empty_tree)}, tmp_path)
    assert not result["ok"]
    assert "pip openvino package: not installed" in result["error"]
    assert (f"INTEL_OPENVINO_DIR install tree: no libopenvino_c.so in {empty_tree / 'runtime/lib/intel64'}"
            in result["error"])
    assert "system loader: libopenvino_c.so: libopenvino_c.so: cannot open shared object file" in result["error"]


def test_explicit_path_wins_over_environment(tmp_path, pip_openvino_c_library):
    code = f"""
        import json, executorch_openvino as exov
        exov.set_library_path({str(pip_openvino_c_library)!r})
        print(json.dumps(exov.load_openvino()))
    """
    result = run_python_json(code, {"OPENVINO_LIB_PATH": str(tmp_path / "missing.so")}, tmp_path)
    assert result["source"] == "explicit path (set_library_path)"
    assert result["path"] == str(pip_openvino_c_library)


def test_failed_init_is_an_error_and_a_retry_after_the_fix_runs(tmp_path, pip_openvino_c_library):
    # Lower in this process (it has openvino), run in a fresh one without it found.
    import torch

    from exov_testing.programs import lower

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh())
    x = torch.randn(3, 8)
    pte_path = tmp_path / "model.pte"
    pte_path.write_bytes(lower(model, (x,))[0])
    torch.save({"x": x, "expected": model(x).detach()}, tmp_path / "io.pt")
    code = f"""
        import json, os, torch, executorch_openvino as exov
        io = torch.load("io.pt")
        try:
            exov.load_method("model.pte"); first = "loaded"
        except RuntimeError as e:
            first = str(e)
        os.environ["OPENVINO_LIB_PATH"] = {str(pip_openvino_c_library)!r}
        out = exov.load_method("model.pte").execute([io["x"]])[0]
        print(json.dumps({{"first": first, "max_error": (out - io["expected"]).abs().max().item()}}))
    """
    result = run_python_json(code, {"OPENVINO_LIB_PATH": str(tmp_path / "missing" / "libopenvino_c.so")}, tmp_path)
    assert "could not load the OpenVINO C library. Places tried, in order:" in result["first"]
    assert result["max_error"] < 1e-5


AVAILABILITY = """
    import json, os, time, executorch_openvino as exov
    from executorch.runtime import Runtime
    from executorch_openvino.runtime import _native
    registry = Runtime.get().backend_registry
    os.environ.pop("OPENVINO_LIB_PATH", None)   # importing executorch set it to the pip package
    _native.set_pip_library_dir("")   # as if the pip package were absent
    started = time.perf_counter()
    without = registry.is_available(exov.BACKEND_ID)
    failed_check_ms = (time.perf_counter() - started) * 1e3
    detail = _native.last_error()
    again = registry.is_available(exov.BACKEND_ID)   # a failure is not cached
    exov.set_library_path(LIBRARY)
    started = time.perf_counter()
    found = registry.is_available(exov.BACKEND_ID)
    first_load_ms = (time.perf_counter() - started) * 1e3
    print(json.dumps({"without": without, "again": again, "detail": detail, "found": found,
                      "failed_check_ms": failed_check_ms, "first_load_ms": first_load_ms}))
"""


def test_availability_says_whether_openvino_can_be_loaded(tmp_path, pip_openvino_c_library):
    empty_tree = tmp_path / "openvino_tree"
    empty_tree.mkdir()
    code = AVAILABILITY.replace("LIBRARY", repr(str(pip_openvino_c_library)))
    result = run_python_json(code, {"LD_LIBRARY_PATH": "", "INTEL_OPENVINO_DIR": str(empty_tree)}, tmp_path)
    assert result["without"] is False and result["again"] is False, result
    assert result["detail"].startswith("is_available: could not load the OpenVINO C library. Places tried"), result
    assert result["found"] is True, result
    print(f"failed check {result['failed_check_ms']:.1f} ms, first successful check {result['first_load_ms']:.1f} ms")


def test_availability_polled_from_threads_stays_quiet(tmp_path):
    # ExecuTorch's Python log sink is not safe for two writers: a failed check
    # keeps its reason in last_error() and writes nothing to the log.
    code = """
    import json, os, threading, executorch_openvino as exov
    from executorch.runtime import Runtime
    from executorch_openvino.runtime import _native
    registry = Runtime.get().backend_registry
    os.environ.pop("OPENVINO_LIB_PATH", None)
    _native.set_pip_library_dir("")
    answers = []
    def poll():
        for _ in range(100):
            answers.append(registry.is_available(exov.BACKEND_ID))
    threads = [threading.Thread(target=poll) for _ in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(json.dumps({"answers": sorted(set(answers)), "count": len(answers), "detail": _native.last_error()}))
    """
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**env, "LD_LIBRARY_PATH": ""},
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the interpreter died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    result, stderr = json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr
    assert result["answers"] == [False] and result["count"] == 400, result
    assert result["detail"].startswith("is_available: could not load the OpenVINO C library"), result
    assert "Places tried" not in stderr, stderr[-2000:]
