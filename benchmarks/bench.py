"""`nox -s bench`: latency, load time, memory and packaging figures, every engine side by side.

For each model (``models.py``) every engine (``engines.py``) is prepared
(lowered, saved, loaded, checked against eager PyTorch), then timed in rounds:
each round gives every engine about the same share of time, in a rotated order,
so that a noisy neighbour slows all engines alike. Figures are per call:
median and 90th percentile. Ratios are to the median of OpenVINO's own
conversion (``openvino.convert_model``) of the same program in the same run.
Then fresh processes (``loading.py``) load MiniLM, the CNN and the LSTM to
measure load time (without and with the model cache) and peak memory against
XNNPACK and OpenVINO's own API.

Writes ``results.json``, ``results.md`` and ``latency.png`` to ``--out``; after each model and each
section, ``results.partial.json``, from which ``--resume`` goes on after an interrupted run (on 2 cores a
full run takes about 2 hours).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import platform
import statistics
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import call_path
import concurrency
import loading
import torch
from engines import LOCAL_ENGINES, SLOW_CALL_S, BundledOpenVINO
from low_precision_engines import LOW_PRECISION_ENGINES
from models import CASE_NAMES, make_case
from exov_testing.bench_report import paired_ratio, times_text
from exov_testing.compile_harness import build_harness, compiler, write_first_blob

HERE = Path(__file__).resolve().parent
ENGINES = LOCAL_ENGINES + LOW_PRECISION_ENGINES  # every engine of this environment, in the tables' order
PROBE_CASE = "minilm_b1"
MIN_CALLS = 3
MAX_CALLS = 20_000


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) with linear interpolation between the closest ranks."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def cpu_features() -> dict:
    """What decides OpenVINO's CPU speed here: the instruction sets of /proc/cpuinfo that matter for its kernels,
    and what OpenVINO's CPU plugin reports (``OPTIMIZATION_CAPABILITIES``)."""
    import openvino as ov

    flags = set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        flags = set(next((line.split(":", 1)[1].split() for line in cpuinfo.read_text().splitlines()
                          if line.startswith("flags")), []))
    wanted = ["avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8", "avx512_fp16"]
    # oneDNN (inside OpenVINO's CPU plugin) picks no kernel above ONEDNN_MAX_CPU_ISA: set to AVX2 on an
    # AVX-512 machine it runs AVX2 kernels (the plugin's capabilities still list the CPU's own).
    return {"flags": [f for f in wanted if f in flags],
            "openvino_capabilities": list(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
            "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", "")}


def machine_info() -> dict:
    import executorch_openvino as exov
    import openvino
    from importlib.metadata import version

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "threads": torch.get_num_threads(),
        # torch's OpenMP threads spin after executorch.runtime's output copy unless PASSIVE.
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "executorch": version("executorch"),
        "openvino": openvino.__version__,
        "executorch_openvino": version("executorch-openvino"),
        "openvino_loaded_by_delegate": exov.library_info()["version"],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def measure_case(name: str, engines: list, workdir: Path, seconds: float, rounds: int) -> dict:
    case = make_case(name)
    with torch.inference_mode():
        expected = case.module(*case.inputs)
    print(f"\n== {name}: {case.description}", flush=True)
    # Every engine gets about `seconds` of calls over all rounds (at least
    # MIN_CALLS), from the median of a few calls timed after warm-up; one
    # slower than SLOW_CALL_S on its first call is reported by that call.
    prepared = {}
    ready = []
    for engine in engines:
        try:
            max_abs = engine.prepare(case, workdir, expected)
        except Exception as exc:  # reported in the table; the other engines go on
            prepared[engine.key] = {"engine": engine.label, "error": f"{type(exc).__name__}: {exc}"[:300]}
            print(f"   FAILED {engine.label}: {prepared[engine.key]['error']}", flush=True)
            continue
        ready.append(engine)
        prepared[engine.key] = {"engine": engine.label, "max_abs_vs_eager": max_abs,
                                "lower_s": engine.lower_s, "load_s": engine.load_s}
        if engine.ir_operations:
            prepared[engine.key]["ir_operations"] = engine.ir_operations
        print(f"   prepared {engine.label}: max abs {max_abs:.2e}", flush=True)
    timed = [e for e in ready if e.first_call_s < SLOW_CALL_S]
    # A slow engine's figure is its first (cold) call, flagged as such.
    times = {e.key: [e.first_call_s] for e in ready if e not in timed}
    per_round = {}
    for e in timed:
        total = max(MIN_CALLS, min(MAX_CALLS, int(seconds / statistics.median(e.time_calls(3)))))
        # Slow engines run one call in each of the first `total` rounds.
        per_round[e.key] = [total // rounds + (r < total % rounds) for r in range(rounds)]
        times[e.key] = []
    # Each engine's median in each round: engines are compared round by round (report.paired_ratio),
    # so a neighbour that slows one round slows both sides of its ratio.
    round_ms: dict[str, list] = {e.key: [None] * rounds for e in timed}
    for r in range(rounds if timed else 0):
        for engine in timed[r % len(timed):] + timed[:r % len(timed)]:
            if per_round[engine.key][r]:
                calls = engine.time_calls(per_round[engine.key][r])
                times[engine.key] += calls
                round_ms[engine.key][r] = statistics.median(calls) * 1e3
    for engine in ready:
        engine.close()
    for key in [e.key for e in ready]:  # in the engines' order
        t = times[key]
        median = statistics.median(t)
        cold = key not in per_round
        prepared[key].update(calls=len(t), median_ms=median * 1e3,
                             p90_ms=None if cold else percentile(t, 0.9) * 1e3, single_cold_call=cold,
                             round_median_ms=round_ms.get(key))
    reference = prepared.get("openvino") if "openvino" in per_round else None
    for key in [e.key for e in ready]:
        ratio = paired_ratio(prepared[key], reference) if reference else None
        prepared[key]["ratio_to_openvino"] = ratio["median"] if ratio else None
        prepared[key]["ratio_to_openvino_spread"] = [ratio["low"], ratio["high"]] if ratio else None
        figures = prepared[key]
        p90 = "-" if figures["p90_ms"] is None else format(figures["p90_ms"], "9.3f")
        print(f"   {figures['engine']:<44} median {figures['median_ms']:9.3f} ms  p90 {p90} ms  ({figures['calls']} "
              f"calls)" + (f"  {times_text(ratio)} OpenVINO's" if ratio else ""), flush=True)
    return {"description": case.description, "engines": prepared}


def measure_lifecycle_memory(workdir: Path) -> dict:
    """Resident memory of an OpenVINOBackend of PROBE_CASE per state, in a fresh process (lifecycle_probe.py)."""
    import executorch_openvino as exov

    case = make_case(PROBE_CASE)
    backend = exov.OpenVINOBackend().build(case.module, case.inputs, cache_dir=workdir / "lifecycle")
    checkpoint, inputs = workdir / "lifecycle.json", workdir / f"{PROBE_CASE}.inputs.pt"
    checkpoint.write_text(json.dumps(backend.to_dict()))
    torch.save(list(case.inputs), inputs)
    del backend
    out = subprocess.run([sys.executable, str(HERE / "lifecycle_probe.py"), str(checkpoint), str(inputs)],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        return {"error": (out.stdout + out.stderr)[-2000:]}
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    print("   " + ", ".join(f"{k} {v:.0f}" for k, v in figures.items()), flush=True)
    return figures


def measure_overhead(workdir: Path, calls: int = 50_000) -> dict | None:
    """The C++ harness overhead.cpp on the tiny_add partition: microseconds per call, no Python involved."""
    import openvino

    if compiler() is None:
        print("   no C++ compiler: the C++ overhead figures are left out", flush=True)
        return None
    blob = write_first_blob((workdir / "tiny_add.delegate.pte").read_bytes(), workdir / "tiny_add.blob")
    ov_root = Path(openvino.__file__).parent
    library = sorted((ov_root / "libs").glob("libopenvino_c.so.*"))[-1]
    harness = build_harness("overhead", workdir)  # links `library` too (tests/CMakeLists.txt)
    env = {**os.environ, "OPENVINO_LIB_PATH": str(library)}  # the same library for both
    out = subprocess.run([str(harness), str(blob), str(calls)], env=env, check=True,
                         capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for key, r in result.items():
        print(f"   {key:<30} median {r['median_us']:7.2f} us  p90 {r['p90_us']:7.2f} us", flush=True)
    return result


def overhead_section(workdir: Path) -> dict | None:
    print("\n== per-call cost in C++ (tiny_add): OpenVINO's C API and the delegate's execute", flush=True)
    try:
        return measure_overhead(workdir)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        print(f"   FAILED: {exc}\n{detail[-3000:]}", flush=True)
        return None


def call_path_section(workdir: Path, rounds: int, seconds: float) -> dict:
    print("\n== per-call cost from Python (tiny_add): each layer of the call", flush=True)
    return call_path.measure(workdir, make_case("tiny_add").inputs, rounds, min(0.4, seconds / 10))


def loading_section(load_cases: tuple, workdir: Path) -> dict:
    print(f"\n== loading {', '.join(load_cases)} in fresh processes", flush=True)
    return loading.measure(load_cases, workdir)


def lifecycle_section(workdir: Path) -> dict:
    print(f"\n== OpenVINOBackend memory per state ({PROBE_CASE}, fresh process, RSS MiB)", flush=True)
    return measure_lifecycle_memory(workdir)


def sections(args: argparse.Namespace, workdir: Path) -> list:
    """(name in results.json, whether this run measures it, how) for each figure after the models'."""
    delegate = "delegate" in args.engines
    load_cases = tuple(c for c in loading.LOAD_CASES if c in args.cases)
    return [("overhead_cpp", "tiny_add" in args.cases and delegate, lambda: overhead_section(workdir)),
            ("call_path", "tiny_add" in args.cases and delegate,
             lambda: call_path_section(workdir, args.rounds, args.seconds)),
            ("concurrency", "minilm_b8" in args.cases and delegate, lambda: concurrency.measure(workdir)),
            ("loading", not args.no_loading and bool(load_cases) and delegate,
             lambda: loading_section(load_cases, workdir)),
            ("lifecycle_memory", not args.no_loading and PROBE_CASE in args.cases and delegate,
             lambda: lifecycle_section(workdir))]


def build_identity() -> dict:
    """What decides the figures besides the machine and the settings: the installed wheel (the SHA-256 of its
    RECORD, which lists every file's hash: its version string stays 0.1.0 across builds) and this folder's
    scripts."""
    from importlib.metadata import distribution

    scripts = hashlib.sha256()
    for script in sorted(HERE.glob("*.py")):
        scripts.update(script.name.encode() + b"\0" + script.read_bytes())
    record = distribution("executorch-openvino").read_text("RECORD") or ""
    return {"wheel_record_sha256": hashlib.sha256(record.encode()).hexdigest(), "scripts_sha256": scripts.hexdigest()}


def resumable(partial: Path, workdir: Path, results: dict, resume: bool) -> dict:
    """The finished parts of an earlier run with the same machine, versions, build and settings (``partial``,
    written by `checkpoint`) when `resume`, else `results` as given. A run of another wheel, release or setting
    starts over, as does one whose saved programs (`workdir`) are not that run's: its figures would not be
    comparable, or its later sections could not run."""
    if not (resume and partial.exists()):
        return results
    try:
        earlier = json.loads(partial.read_text())
        same = ({k: v for k, v in earlier["machine"].items() if k != "date"}
                == {k: v for k, v in results["machine"].items() if k != "date"}
                and earlier["settings"] == results["settings"] and earlier["build"] == results["build"])
        run = (workdir / "RUN").read_text() if (workdir / "RUN").exists() else None
        models = list(earlier["models"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        print(f"--resume: {partial} cannot be read ({type(exc).__name__}: {exc}); starting over", flush=True)
        return results
    if not same:
        print(f"--resume: {partial} is from another wheel, machine or setting; starting over", flush=True)
        return results
    if run != earlier.get("run"):
        print(f"--resume: {workdir} does not hold the programs of {partial}'s run; starting over", flush=True)
        return results
    kept = [*models, *(k for k in earlier if k not in results and k != "run" and earlier[k] is not None)]
    print(f"--resume: keeping {', '.join(kept)} from {partial}", flush=True)
    return earlier


def checkpoint(partial: Path, results: dict) -> None:
    """Writes what is finished so far, for `--resume` (renamed over the old file: never half-written)."""
    written = partial.with_suffix(".tmp")
    written.write_text(json.dumps(results, indent=1) + "\n")
    written.replace(partial)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for results.json/.md and latency.png")
    parser.add_argument("--cases", nargs="+", default=CASE_NAMES, choices=CASE_NAMES)
    parser.add_argument("--engines", nargs="+", default=[cls.key for cls in ENGINES],
                        choices=[cls.key for cls in ENGINES], help="the engines in this environment")
    parser.add_argument("--bundled-python", help="python of the environment with executorch's OpenvinoBackend")
    parser.add_argument("--seconds", type=float, default=4.0, help="timed seconds per engine and model")
    parser.add_argument("--rounds", type=int, default=10, choices=range(1, 1001), metavar="1..1000",
                        help="interleaved rounds per model")
    parser.add_argument("--packaging", type=Path, help="JSON with wheel size and build times (from noxfile.py)")
    parser.add_argument("--no-loading", action="store_true", help="skip the fresh-process load/memory probes")
    parser.add_argument("--resume", action="store_true",
                        help="keep the models and sections an interrupted run of the same wheel and settings finished")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    settings = {"seconds": args.seconds, "rounds": args.rounds, "cases": args.cases, "engines": args.engines,
                "bundled": bool(args.bundled_python), "loading": not args.no_loading}
    results = {"machine": machine_info() | {"cpu_features": cpu_features()}, "settings": settings,
               "build": build_identity(), "models": {}}
    print(json.dumps(results["machine"], indent=1))
    lock = open(args.out / ".bench.lock", "w")  # held until this process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"another bench.py run is writing to {args.out}: wait for it, or give another --out", file=sys.stderr)
        return 2
    partial = args.out / "results.partial.json"
    # Kept between runs for --resume: the sections after the models read the programs the models saved.
    workdir = args.out / "work"
    results = resumable(partial, workdir, results, args.resume)
    if "run" not in results:  # starting over: nothing of an earlier run is kept
        partial.unlink(missing_ok=True)
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir()
        results["run"] = uuid.uuid4().hex
        (workdir / "RUN").write_text(results["run"])
    bundled = BundledOpenVINO(args.bundled_python) if args.bundled_python else None
    try:
        for name in args.cases:
            if name in results["models"]:
                continue
            engines = [cls() for cls in ENGINES if cls.key in args.engines] + ([bundled] if bundled else [])
            results["models"][name] = measure_case(name, engines, workdir, args.seconds, args.rounds)
            checkpoint(partial, results)
    finally:
        if bundled:
            bundled.shutdown()
    for section, wanted, measure in sections(args, workdir):
        if wanted and results.get(section) is None:  # a section that failed is measured again on --resume
            results[section] = measure()
            checkpoint(partial, results)
    if args.packaging:
        results["packaging"] = json.loads(args.packaging.read_text())

    from exov_testing.bench_report import write_reports

    write_reports(results, args.out)
    partial.unlink(missing_ok=True)
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
