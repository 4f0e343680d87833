"""``python -m executorch_openvino doctor`` in a working and in broken environments (fresh interpreters)."""

from __future__ import annotations

import pytest
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from exov_testing.environment import SEARCH_VARIABLES

pytestmark = [pytest.mark.own_runtime]


def _doctor(tmp_path, *args, env_updates=None):
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    env.update(env_updates or {})
    return subprocess.run([sys.executable, "-m", "executorch_openvino", *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def _checks(proc) -> dict:
    report = json.loads(proc.stdout)
    return report["ok"], {c["name"]: c for c in report["checks"]}


def test_working_environment(tmp_path, pip_openvino_c_library):
    proc = _doctor(tmp_path, "doctor", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    ok, checks = _checks(proc)
    assert ok and all(c["ok"] for c in checks.values())
    assert list(checks) == ["executorch-openvino", "versions", "runtime", "OpenMP threads", "registration",
                            "OpenVINO C library", "devices", "CPU results"]
    assert checks["CPU results"]["detail"][0].startswith("a 32 -> 10 linear layer through the delegate: ")
    assert f"built against executorch {version('executorch')}" in checks["executorch-openvino"]["detail"][1]
    assert "ExecutorchOpenvinoBackend: registered" in checks["registration"]["detail"]
    assert f"loaded {pip_openvino_c_library}" in checks["OpenVINO C library"]["detail"]
    assert any("available: " in d and "CPU" in d for d in checks["devices"]["detail"])
    assert any(d.startswith("CPU programs compute in f32") for d in checks["devices"]["detail"])


def test_text_report_says_it_can_run(tmp_path):
    proc = _doctor(tmp_path, "doctor")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == "the delegate can run here"
    assert "[ok] OpenVINO C library" in proc.stdout
    # Where the wheel was built is that machine's (temporary) folder: not shown.
    location = json.loads(subprocess.run(
        [sys.executable, "-c", "import json, executorch_openvino as e; print(json.dumps(e.build_info()))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=True).stdout)["openvino_location"]
    assert location and location not in proc.stdout, proc.stdout
    assert "headers (from the pip openvino package)" in proc.stdout or "headers (from an OpenVINO" in proc.stdout
    # Other libraries' known noise (torchao's CUDA kernels, torch's pytree notice) is hidden (quiet.py).
    assert "Failed to load" not in proc.stderr and "Enum subclass" not in proc.stderr, proc.stderr


def test_missing_openvino_library_fails_with_the_places_tried_and_the_fix(tmp_path):
    missing = tmp_path / "libopenvino_c.so.2641"
    proc = _doctor(tmp_path, "doctor", "--json", env_updates={"OPENVINO_LIB_PATH": str(missing)})
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    ok, checks = _checks(proc)
    assert not ok
    library = checks["OpenVINO C library"]
    assert not library["ok"]
    assert f"* OPENVINO_LIB_PATH: {missing}" in library["detail"]
    assert any(f"OPENVINO_LIB_PATH: {missing}: no such file" in d for d in library["detail"])
    assert library["fix"].startswith("unset OPENVINO_LIB_PATH to search the other places, or point it at the "
                                     "OpenVINO C library file itself")
    assert "devices" not in checks  # cannot be asked without OpenVINO

    text = _doctor(tmp_path, "doctor", env_updates={"OPENVINO_LIB_PATH": str(missing)})
    assert text.returncode == 1
    assert "[FAIL] OpenVINO C library" in text.stdout and "fix: unset OPENVINO_LIB_PATH" in text.stdout
    assert "Traceback" not in text.stdout + text.stderr
    # The failure once, with one fix: not the delegate's log of it on stderr too, nor its own "Fix:" line.
    both = text.stdout + text.stderr
    assert both.count(f"OPENVINO_LIB_PATH: {missing}: no such file") == 1, both
    assert "ExecutorchOpenvinoBackend]" not in text.stderr and "Fix:" not in both, both
    assert [line.strip()[:4] for line in text.stdout.splitlines()].count("fix:") == 1, text.stdout


def test_other_executorch_version_fails_with_the_pip_command(tmp_path):
    # A distribution found first on sys.path: executorch 0.9.0 as far as importlib.metadata can tell.
    fake = tmp_path / "fake-site" / "executorch-0.9.0.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: executorch\nVersion: 0.9.0\n")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(fake.parent), os.environ.get("PYTHONPATH")]))}
    proc = _doctor(tmp_path, "doctor", "--json", env_updates=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    ok, checks = _checks(proc)
    package = checks["executorch-openvino"]
    assert not package["ok"]
    assert any("executorch 0.9.0 is installed" in d for d in package["detail"])
    assert package["fix"].startswith(f"pip install executorch=={version('executorch')}")

    for argv in (["--json", "doctor"], []):  # any spelling: a report or the usage, never a traceback
        other = _doctor(tmp_path, *argv, env_updates=env)
        assert other.returncode in (1, 2) and "Traceback" not in other.stderr, other.stderr[-2000:]

    # A plain import still fails (only the doctor run keeps going).
    plain = subprocess.run([sys.executable, "-c", "import executorch_openvino"], env={**os.environ, **env},
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert plain.returncode == 1 and "executorch 0.9.0 is installed" in plain.stderr


def test_a_missing_torch_fails_with_the_pip_command(tmp_path):
    """executorch 1.5.1 does not require torch, yet its runtime cannot import without it."""
    hidden = tmp_path / "no-torch"
    hidden.mkdir()
    (hidden / "torch.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(hidden), os.environ.get("PYTHONPATH")]))}
    proc = _doctor(tmp_path, "doctor", "--json", env_updates=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    ok, checks = _checks(proc)
    assert not ok and not checks["runtime"]["ok"]
    assert "No module named 'torch'" in checks["runtime"]["detail"][0]
    assert checks["runtime"]["fix"].startswith("install torch: pip install 'torch"), checks["runtime"]["fix"]
    text = _doctor(tmp_path, "doctor", env_updates=env)
    assert "[FAIL] runtime" in text.stdout and "the delegate cannot run here" in text.stdout


def test_unreadable_build_information_is_a_failed_check(tmp_path):
    # A copy of the package without build_info.json, found first on sys.path.
    import shutil

    import executorch_openvino

    copy = tmp_path / "site" / "executorch_openvino"
    shutil.copytree(Path(executorch_openvino.__file__).parent, copy)
    (copy / "build_info.json").unlink()
    # the libraries' RUNPATH finds libexecutorch.so in ../executorch/lib
    import importlib.util
    executorch_dir = importlib.util.find_spec("executorch").submodule_search_locations[0]
    (copy.parent / "executorch").symlink_to(executorch_dir)
    proc = _doctor(tmp_path, "doctor", "--json", env_updates={"PYTHONPATH": str(copy.parent)})
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    ok, checks = _checks(proc)
    assert not checks["executorch-openvino"]["ok"]
    assert any("no readable build information" in d for d in checks["executorch-openvino"]["detail"])


def test_unknown_command_prints_usage(tmp_path):
    proc = _doctor(tmp_path, "docter")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown command 'docter'; the commands are doctor, cache, export-llm")
    assert "usage: python -m executorch_openvino doctor [PROGRAM.pte] [--json]" in proc.stderr
    assert "python -m executorch_openvino cache FOLDER [--clear]" in proc.stderr


def test_wrong_cpu_results_fail_the_check_with_the_error_and_the_fix(monkeypatch):
    # A stand-in for a CPU plugin that computes wrongly (measured: 512-bit SVE under qemu): every output + 1.
    import executorch_openvino as exov
    from executorch_openvino.support import doctor

    real = exov.load_method

    class Off:
        def __init__(self, method):
            self.method = method

        def execute(self, inputs):
            return [t + 1 for t in self.method.execute(inputs)]

    monkeypatch.setattr(exov, "load_method", lambda program: Off(real(program)))
    check = doctor._cpu_results_check()
    assert not check.ok
    assert "from eager PyTorch (relative)" in check.detail[0]
    assert check.detail[1] == "OpenVINO's CPU plugin computes wrong float32 results on this CPU"
    assert check.fix.startswith("do not use OpenVINO's CPU plugin on this CPU")
