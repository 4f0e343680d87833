"""Calls per second of one loaded program called from 1, 2 and 4 threads at once.

The program is ``models.py``'s case (``minilm_b8`` by default) lowered with
``exov.lower`` twice, with the default ``numerics="exact"`` and with
``numerics="fast"``, each once with ``performance_hint="LATENCY"`` and once
with ``"THROUGHPUT"``, saved, and loaded once each with ``exov.load_method``:
every thread calls that one ``OpenVINOMethod``, which runs up to
``max_concurrent_calls`` calls at once on copies of the method (OpenVINO's
OPTIMAL_NUMBER_OF_INFER_REQUESTS: 1 with LATENCY, one per stream with
THROUGHPUT). Beside them, the limit: the model converted as
``numerics="fast"`` converts it (``engines.openvino_model``, the same IR as the
fast lowering's one partition), compiled with each hint and run with
OpenVINO's Python API, each thread on its own infer request (its ``infer()``
lets the GIL go).

Each figure is the calls all threads finished over the time from their common
start to the last one's end; settings run in rounds of rotated order and the
median of the rounds is reported, so a noisy neighbour slows all alike. The
goal of issue 36 compares the fast lowering with OpenVINO's API round by round
(``report.paired_ratio`` of calls/s: same IR, same streams). Each thread's
first output is checked against the single-threaded one (``torch.equal``), and
that one against eager PyTorch.

Standalone: ``python benchmarks/concurrency.py [--case minilm_b8] [--seconds 4] [--rounds 5]``
(prints the table and a JSON line); ``bench.py`` calls :func:`measure`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch
from models import make_case
from exov_testing.bench_report import CONCURRENCY_SPEEDUP_GOAL, concurrency_table, ratio_of_rounds, times_text

HINTS = ("LATENCY", "THROUGHPUT")
THREADS = (1, 2, 4)
GOAL_CASE = "minilm_b8"
DELEGATES = {"delegate": "exact", "delegate_fast": "fast"}  # engine key -> numerics


def _calls_per_second(calls, seconds: float, expected) -> float:
    """Calls per second of one thread per entry of `calls` (each a function making one call and returning
    its first output) for about `seconds`; each thread's first output must equal `expected`."""
    threads = len(calls)
    start_line = threading.Barrier(threads + 1)
    counts = [0] * threads
    problems: list[str] = []

    def work(i: int) -> None:
        try:
            start_line.wait()
            deadline = time.perf_counter() + seconds
            while True:
                out = calls[i]()
                if counts[i] == 0 and not torch.equal(out, expected):
                    problems.append(f"thread {i}: an output differs from the single-threaded one")
                counts[i] += 1
                if time.perf_counter() >= deadline:
                    break
        except BaseException as exc:  # reported below
            problems.append(f"thread {i}: {type(exc).__name__}: {exc}")

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    start_line.wait()
    start = time.perf_counter()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    if problems:
        raise AssertionError("; ".join(problems[:3]))
    return sum(counts) / elapsed


def _openvino_calls(compiled, arrays: list, threads: int) -> list:
    """One call per thread for OpenVINO's Python API, each on its own infer request of `compiled`."""
    import openvino as ov

    calls = []
    for _ in range(threads):
        request = compiled.create_infer_request()
        for i, array in enumerate(arrays):
            request.set_input_tensor(i, ov.Tensor(array, shared_memory=True))
        calls.append(lambda request=request: (request.infer(), torch.from_numpy(request.get_output_tensor(0).data))[1])
    return calls


def measure(workdir: Path, case_name: str = GOAL_CASE, seconds: float = 4.0, rounds: int = 5) -> dict:
    """Lowers, loads and times `case_name` for each engine, hint and thread count; prints a table.

    Returns ``{"case", "seconds", "rounds", "engines": {"delegate" | "delegate_fast" | "openvino": {hint:
    {"max_concurrent_calls", "num_streams", "max_abs_vs_eager", "threads": {"1": {"calls_per_s", "rounds",
    "loaded_copies"}, "2": ..., "4": ...}}}}, "speedup", "speedup_over_latency_1_thread"}`` (thread counts as
    strings, as JSON keeps them; ``loaded_copies`` only for the delegate's engines; ``rounds`` the calls/s of
    each round, in round order). ``speedup`` is the default delegate's THROUGHPUT calls/s with 2 threads over
    its LATENCY's better of 1 and 2 threads (``report.CONCURRENCY_SPEEDUP_GOAL``). `seconds` is per setting
    and round.
    """
    import openvino as ov

    import executorch_openvino as exov
    from engines import openvino_model

    case = make_case(case_name)
    with torch.inference_mode():
        eager = case.module(*case.inputs)
    inputs = list(case.inputs)
    arrays = [t.numpy() for t in case.inputs]
    ir = openvino_model(case)
    core = ov.Core()
    out = {"case": case_name, "seconds": seconds, "rounds": rounds,
           "engines": {engine: {} for engine in (*DELEGATES, "openvino")}}
    print(f"\n== concurrent calls of one loaded {case_name} program ({case.description})", flush=True)
    calls, expected, methods = {}, {}, {}
    for hint in HINTS:
        for engine, numerics in DELEGATES.items():
            pte = workdir / f"{case_name}.concurrency.{engine}.{hint}.pte"
            pte.write_bytes(exov.lower(case.module, case.inputs, performance_hint=hint, numerics=numerics).buffer)
            method = methods[(engine, hint)] = exov.load_method(pte)
            report = exov.last_compile_report()
            expected[(engine, hint)] = method.execute(inputs)[0]
            out["engines"][engine][hint] = {"max_concurrent_calls": method.max_concurrent_calls,
                                            "num_streams": report["num_streams"]}
            for n in THREADS:
                calls[(engine, hint, n)] = [lambda method=method: method.execute(inputs)[0]] * n
        compiled = core.compile_model(ir, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": hint})
        expected[("openvino", hint)] = _openvino_calls(compiled, arrays, 1)[0]().clone()
        out["engines"]["openvino"][hint] = {"max_concurrent_calls": compiled.get_property(
            "OPTIMAL_NUMBER_OF_INFER_REQUESTS"), "num_streams": str(compiled.get_property("NUM_STREAMS"))}
        for n in THREADS:
            calls[("openvino", hint, n)] = _openvino_calls(compiled, arrays, n)
    for engine, hints in out["engines"].items():
        for hint, h in hints.items():
            h["max_abs_vs_eager"] = float((expected[(engine, hint)].double() - eager.double()).abs().max())
    settings = list(calls)
    for setting in settings:  # warm-up; the delegate's copies are made here, not while timed
        _calls_per_second(calls[setting], 0.0, expected[setting[:2]])
    rates: dict = {s: [] for s in settings}
    for r in range(rounds):
        for setting in settings[r % len(settings):] + settings[:r % len(settings)]:
            rates[setting].append(_calls_per_second(calls[setting], seconds, expected[setting[:2]]))
    for engine, hint, n in settings:
        figures = {"calls_per_s": statistics.median(rates[(engine, hint, n)]), "rounds": rates[(engine, hint, n)]}
        if engine in DELEGATES:
            figures["loaded_copies"] = methods[(engine, hint)].loaded_copies
        out["engines"][engine][hint].setdefault("threads", {})[str(n)] = figures
    # The goal's ratio: THROUGHPUT with 2 threads over the better of LATENCY with 1 and 2.
    through, latency = (out["engines"]["delegate"][h]["threads"] for h in ("THROUGHPUT", "LATENCY"))
    out["speedup"] = through["2"]["calls_per_s"] / max(latency["1"]["calls_per_s"], latency["2"]["calls_per_s"])
    out["speedup_over_latency_1_thread"] = through["2"]["calls_per_s"] / latency["1"]["calls_per_s"]
    print(concurrency_table(out), flush=True)
    print(f"   this delegate, THROUGHPUT with 2 threads: {out['speedup']:.2f}x LATENCY's best of 1 and 2 threads "
          f"(goal {CONCURRENCY_SPEEDUP_GOAL:g}x), {out['speedup_over_latency_1_thread']:.2f}x its 1 thread", flush=True)
    # Issue 36's goal: the fast lowering (one partition, the OpenVINO API's IR) against the API, round by round.
    for n in THREADS[1:]:
        ours, theirs = (out["engines"][e]["THROUGHPUT"]["threads"][str(n)] for e in ("delegate_fast", "openvino"))
        ratio = ratio_of_rounds([a / b for a, b in zip(ours["rounds"], theirs["rounds"])],
                                ours["calls_per_s"] / theirs["calls_per_s"])
        out.setdefault("throughput_vs_openvino", {})[str(n)] = ratio
        print(f"   THROUGHPUT, {n} threads: numerics=fast delegate at {times_text(ratio)} OpenVINO API's calls/s",
              flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default=GOAL_CASE)
    parser.add_argument("--seconds", type=float, default=4.0, help="timed seconds per setting and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        result = measure(Path(tmp), args.case, args.seconds, args.rounds)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
