"""`nox -s bench`'s script on its smallest setting, so that it keeps working between benchmark runs.

Times nothing that is asserted: it checks that every figure the report
promises is there and plausible (each engine's output matches eager PyTorch,
the C++ harness ran and found OpenVINO's outputs right, the Markdown, JSON and
PNG files are written).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time

import pytest

from exov_testing import REPOSITORY
from exov_testing.environment import require_all

pytestmark = [pytest.mark.own_runtime, pytest.mark.slow]  # the benchmarks themselves run by hand

BENCH = REPOSITORY / "benchmarks" / "bench.py"


def test_bench_writes_every_figure_for_the_tiny_model(tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        if require_all():
            pytest.fail("matplotlib is needed for the benchmark's chart")
        pytest.skip("matplotlib is not installed (the chart needs it)")
    out = tmp_path / "bench"
    proc = subprocess.run([sys.executable, str(BENCH), "--out", str(out), "--cases", "tiny_add", "mlp",
                           "--engines", "openvino", "openvino_same_ir", "delegate", "delegate_runner", "eager",
                           "--seconds", "0.2", "--rounds", "2"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads((out / "results.json").read_text())
    assert results["machine"]["cores"] >= 1 and results["machine"]["openvino"]
    assert "FP32" in results["machine"]["cpu_features"]["openvino_capabilities"]
    for model in ("tiny_add", "mlp"):
        engines = results["models"][model]["engines"]
        assert set(engines) == {"openvino", "openvino_same_ir", "delegate", "delegate_runner", "eager"}
        for key, e in engines.items():
            assert "error" not in e, (model, key, e)
            assert e["calls"] >= 3 and 0 < e["median_ms"] <= e["p90_ms"], (model, key, e)
            assert e["max_abs_vs_eager"] <= 1e-5, (model, key, e)
        assert engines["openvino"]["ratio_to_openvino"] == 1.0
        assert engines["delegate"]["lower_s"] > 0 and engines["delegate"]["load_s"] > 0
        # OpenVINO's operations of both conversions and of the delegate's partitions
        for key in ("openvino", "openvino_same_ir", "delegate", "delegate_runner"):
            ops = engines[key]["ir_operations"]
            assert ops["total"] == sum(ops["types"].values()) > 0 and ops["partitions"] == 1, (model, key, ops)
        assert engines["delegate"]["ir_operations"]["types"].get("Add") == (1 if model == "tiny_add" else 3)
    cpp = results["overhead_cpp"]
    assert set(cpp) == {"openvino_infer_only", "openvino_bind_infer", "delegate_same_buffers",
                        "delegate_alternating_buffers"}
    assert all(0 < v["median_us"] <= v["p90_us"] for v in cpp.values())
    path = results["call_path"]  # no XNNPACK engine ran, so no XNNPACK row
    assert set(path) == {"openvino_python_api", "pybindings_uncloned", "executorch_runtime", "exov_load_method"}
    assert all(v > 0 for v in path.values())
    report = (out / "results.md").read_text()
    assert "| exov_load_method |" in report
    assert "| tiny_add | OpenVINO convert_model + API |" in report and "| mlp | this delegate |" in report
    assert "| tiny_add | OpenVINO API (same IR) |" in report
    assert "| mlp | this delegate via the C++ runner (Module) |" in report
    assert re.search(r"^\| mlp \| \d+ \| \d+ \| \d+ \(1\) \| - \| - \|", report, re.MULTILINE), report  # IR operations
    assert "delegate_same_buffers" in report and "| goal | measured | met |" in report
    assert (out / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_runs_the_int8_and_bf16_engines(tmp_path):
    if importlib.util.find_spec("nncf") is None or importlib.util.find_spec("matplotlib") is None:
        if require_all():
            pytest.fail("nncf and matplotlib are needed for the benchmark's INT8 rows and chart")
        pytest.skip("nncf or matplotlib is not installed")
    out = tmp_path / "bench"
    low_precision = ["delegate_int8", "openvino_int8_same_ir", "openvino_int8", "xnnpack_int8", "delegate_bf16"]
    proc = subprocess.run([sys.executable, str(BENCH), "--out", str(out), "--cases", "mlp", "--engines", *low_precision,
                           "--seconds", "0.2", "--rounds", "2", "--no-loading"],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    engines = json.loads((out / "results.json").read_text())["models"]["mlp"]["engines"]
    assert set(engines) == set(low_precision)
    bf16 = re.fullmatch(r"this delegate, bf16 hint \(compiled: (bf16|f32)\)", engines["delegate_bf16"]["engine"])
    assert bf16, engines["delegate_bf16"]
    for key, e in engines.items():
        assert "error" not in e and e["calls"] >= 3, (key, e)
        if key == "delegate_bf16" and bf16.group(1) == "f32":  # no bfloat16 units: float32 was computed
            assert e["max_abs_vs_eager"] <= 1e-5, e
        else:  # off from float32 eager by the reduced precision's error only (outputs of about 0.3)
            assert 1e-5 < e["max_abs_vs_eager"] < 0.05, (key, e)


def test_the_concurrency_benchmark_reports_every_setting(tmp_path):
    # benchmarks/concurrency.py on the MLP, a moment per setting: the figures are there and the table has them.
    from exov_testing.bench_report import concurrency_table, goals

    proc = subprocess.run([sys.executable, str(REPOSITORY / "benchmarks" / "concurrency.py"), "--case", "mlp",
                           "--seconds", "0.05", "--rounds", "1"], capture_output=True, text=True, timeout=900,
                          cwd=tmp_path, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    for engine in ("delegate", "delegate_fast", "openvino"):
        assert set(result["engines"][engine]) == {"LATENCY", "THROUGHPUT"}
        for hint, h in result["engines"][engine].items():
            assert set(h["threads"]) == {"1", "2", "4"} and h["max_abs_vs_eager"] <= 1e-5, (engine, hint, h)
            assert all(t["calls_per_s"] > 0 for t in h["threads"].values()), (engine, hint, h)
    for engine in ("delegate", "delegate_fast"):
        delegate = result["engines"][engine]
        assert delegate["LATENCY"]["max_concurrent_calls"] == 1 and result["speedup"] > 0
        for h in delegate.values():
            assert all(1 <= t["loaded_copies"] <= h["max_concurrent_calls"] for t in h["threads"].values()), h
    table = concurrency_table(result)
    assert "| this delegate (`exov.load_method`) | THROUGHPUT |" in table
    assert "| this delegate, numerics=fast (`exov.load_method`) | THROUGHPUT |" in table
    # One round: the ratio to OpenVINO's API is of the medians, with no spread.
    assert set(result["throughput_vs_openvino"]) == {"2", "4"}
    assert all(r["rounds"] == 1 and r["low"] is None and r["median"] > 0 for r in result["throughput_vs_openvino"].values())
    named = [g[0] for g in goals({"models": {}, "concurrency": result})]
    assert any(g.startswith("THROUGHPUT 2 threads >= 1.5x LATENCY") for g in named), named
    assert sum("OpenVINO API's calls/s, same IR" in g for g in named) == 2, named


def test_an_interrupted_run_resumes_with_the_finished_models_and_starts_over_on_other_settings(tmp_path):
    # A full run takes over 90 minutes on 2 cores: --resume keeps the models a killed run finished, and only a
    # run with the same settings (and wheel, scripts, machine) and its saved programs may give them.
    out = tmp_path / "bench"
    run = [sys.executable, str(BENCH), "--out", str(out), "--cases", "tiny_add", "mlp", "--engines", "openvino",
           "delegate", "--rounds", "1", "--no-loading"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    partial = out / "results.partial.json"

    def killed_after_the_first_model() -> dict:
        (out / "results.json").unlink(missing_ok=True)
        killed = subprocess.Popen([*run, "--seconds", "2"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 600
            while not partial.exists() and killed.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
        finally:
            killed.kill()
            killed.wait()
        assert partial.exists() and not (out / "results.json").exists(), "the run ended before it was killed"
        finished = json.loads(partial.read_text())["models"]
        assert list(finished) == ["tiny_add"]
        return finished

    def resume(*extra: str) -> subprocess.CompletedProcess:
        done = subprocess.run([*run, *extra, "--resume"], capture_output=True, text=True, timeout=900, cwd=tmp_path,
                              env=env)
        assert done.returncode == 0, done.stderr[-4000:]
        assert not partial.exists() and not (out / "work").exists()  # a finished run leaves neither
        return done

    killed_after_the_first_model()
    assert "from another wheel, machine or setting; starting over" in resume("--seconds", "0.2").stdout

    killed_after_the_first_model()
    partial.write_text("{")  # damaged: named, then a run from the start
    assert f"{partial} cannot be read" in resume("--seconds", "2").stdout

    finished = killed_after_the_first_model()
    resumed = resume("--seconds", "2")
    assert "--resume: keeping tiny_add from" in resumed.stdout
    assert "== tiny_add" not in resumed.stdout and "== mlp" in resumed.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["models"]["tiny_add"] == finished["tiny_add"] and set(results["models"]) == {"tiny_add", "mlp"}
    assert results["overhead_cpp"] and results["call_path"]  # measured from the killed run's saved program
