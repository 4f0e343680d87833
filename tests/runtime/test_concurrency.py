"""Threads: methods loaded and run from several threads give exactly the single-threaded results.

Two ways to use threads. Raw ``executorch.runtime`` methods hold the GIL for
a whole call (measured), so threads calling them take turns; the delegate
keeps it that way. ``exov.load_method`` returns an ``OpenVINOMethod`` whose
calls let the GIL go during each OpenVINO inference, each call on its own
loaded copy of the method (up to ``max_concurrent_calls``), the copies sharing
one OpenVINO compiled model per partition. Every result here is compared
exactly (``torch.equal``) with the single-threaded result for the same input,
which differs per thread, so a mix-up between calls shows. Nothing here
measures time: overlap is shown by the delegate's count of inferences in
flight, as seen by Python code that can only run while the GIL is let go.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import warnings

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.runtime import _native
from exov_testing.environment import require_all, run_python_json
from exov_testing.programs import lower, run, ThreadsModel

from exov_testing.compile_harness import build_harness, compiler

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]


def _lowered() -> bytes:
    torch.manual_seed(0)
    pte, summary = lower(ThreadsModel(), (torch.randn(4, 32),))
    assert summary.delegated == summary.total
    return pte


class Mlp(torch.nn.Module):
    """Enough work per call (about 0.2 GFLOP at batch 256) that an inference outlasts a thread switch."""

    def __init__(self, seed: int):
        super().__init__()
        torch.manual_seed(seed)
        self.layers = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                          torch.nn.ReLU(), torch.nn.Linear(512, 256))

    def forward(self, x):
        return self.layers(x)


class TwoPartitions(torch.nn.Module):
    """The float argmax stays on ExecuTorch's kernels (numerics="exact"), between two OpenVINO partitions."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.a, self.b = torch.nn.Linear(256, 256), torch.nn.Linear(256, 256)

    def forward(self, x):
        y = torch.relu(self.a(x))
        return self.b(y) + y.argmax(-1, keepdim=True).to(y.dtype)


def _inputs(count: int, shape=(256, 256)) -> list[torch.Tensor]:
    return [torch.randn(*shape, generator=torch.Generator().manual_seed(100 + i)) for i in range(count)]


def _mlp_pte(hint: str, seed: int = 1) -> bytes:
    pte, summary = lower(Mlp(seed), (_inputs(1)[0],), partitioner=exov.OpenvinoPartitioner(performance_hint=hint))
    assert summary.delegated == summary.total and summary.partitions == 1
    return pte


def _in_threads(work, count: int) -> None:
    """Runs work(i) in `count` threads released at once; re-raises the first error of any."""
    start = threading.Barrier(count)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        try:
            start.wait()
            work(i)
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    if errors:
        raise errors[0]


def _exact_from_threads(method, inputs: list, calls: int) -> None:
    """len(inputs) threads call `method` `calls` times each on their own input: every output as one thread gives it."""
    expected = [method.execute([x]) for x in inputs]  # one thread
    assert not torch.equal(expected[0][0], expected[1][0])  # a mix-up between threads would show
    wrong: list[tuple[int, int]] = []

    def work(i: int) -> None:
        for n in range(calls):
            out = method.execute([inputs[i]])
            if len(out) != len(expected[i]) or not all(torch.equal(a, b) for a, b in zip(out, expected[i])):
                wrong.append((i, n))

    _in_threads(work, len(inputs))
    assert not wrong, f"{len(wrong)} of {len(inputs) * calls} results differ, first {wrong[:5]}"


def _hold_copy(method):
    """Takes one idle copy out of `method`'s pool (white box): the next call then finds every copy busy.

    Returns the function that gives it back."""
    copy = method._take()

    def release() -> None:
        with method._changed:
            method._idle.append(copy)
            method._changed.notify()

    return release


def _wait_for(condition, what: str) -> None:
    """Polls `condition` (a deadline for a hang, not a measurement)."""
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("hint", ["LATENCY", "THROUGHPUT"])
def test_four_threads_on_one_method_each_get_their_own_single_threaded_results(hint):
    method = exov.load_method(_mlp_pte(hint))
    streams = int(exov.last_compile_report()["num_streams"])
    # OpenVINO's OPTIMAL_NUMBER_OF_INFER_REQUESTS: 1 for LATENCY, one per stream for THROUGHPUT.
    assert method.max_concurrent_calls == (1 if hint == "LATENCY" else streams)
    _native.reset_infer_peak()
    _exact_from_threads(method, _inputs(4), calls=25)
    assert 1 <= method.loaded_copies <= method.max_concurrent_calls
    if hint == "THROUGHPUT" and (os.cpu_count() or 1) >= 2:
        assert method.max_concurrent_calls >= 2
        assert _native.infer_counters()["peak"] >= 2, "no two inferences ever ran at once"


def test_latency_programs_can_be_given_more_copies_and_stay_exact():
    # Four infer requests of one single-stream compiled model, at once.
    method = exov.load_method(_mlp_pte("LATENCY", seed=2), max_concurrent_calls=4)
    assert method.max_concurrent_calls == 4
    _exact_from_threads(method, _inputs(4), calls=25)


def test_sequential_calls_use_one_copy_and_a_busy_one_makes_a_second():
    method = exov.load_method(_mlp_pte("THROUGHPUT", seed=4))
    x = _inputs(1)[0]
    first = method.execute([x])[0]
    for _ in range(5):
        method.execute([x])
    assert method.loaded_copies == 1
    release = _hold_copy(method)
    try:
        second = method.execute([x])[0]  # every copy busy: a new one
    finally:
        release()
    assert method.loaded_copies == 2 and torch.equal(first, second)


def test_copies_share_the_compiled_model_and_are_freed_with_the_method():
    gc.collect()
    models, requests = _native.live_compiled_models(), _native.live_infer_requests()
    method = exov.load_method(_mlp_pte("THROUGHPUT", seed=5))
    release = _hold_copy(method)
    try:
        method.execute(_inputs(1))
    finally:
        release()
    assert method.loaded_copies == 2
    # One compiled model, an infer request per copy.
    assert (_native.live_compiled_models(), _native.live_infer_requests()) == (models + 1, requests + 2)
    del method, release
    gc.collect()
    assert (_native.live_compiled_models(), _native.live_infer_requests()) == (models, requests)


def test_two_loads_of_one_program_share_one_compiled_model_until_both_are_gone():
    gc.collect()
    models, requests = _native.live_compiled_models(), _native.live_infer_requests()
    pte = _mlp_pte("LATENCY", seed=6)
    x = _inputs(1)[0]
    a = exov.load_method(pte)
    assert exov.last_compile_report()["shared"] is False
    b = exov.load_method(pte)
    assert exov.last_compile_report()["shared"] is True
    assert (_native.live_compiled_models(), _native.live_infer_requests()) == (models + 1, requests + 2)
    other_hint = exov.load_method(_mlp_pte("THROUGHPUT", seed=6))  # the same IR, other options: its own model
    assert exov.last_compile_report()["shared"] is False
    assert _native.live_compiled_models() == models + 2
    expected = a.execute([x])[0]
    del a
    gc.collect()
    assert (_native.live_compiled_models(), _native.live_infer_requests()) == (models + 2, requests + 2)
    assert torch.equal(b.execute([x])[0], expected)  # the survivor still has the shared model
    assert torch.equal(other_hint.execute([x])[0], expected)
    del b, other_hint
    gc.collect()
    assert (_native.live_compiled_models(), _native.live_infer_requests()) == (models, requests)


def test_a_shared_compiled_model_does_not_touch_the_model_cache(tmp_path):
    pte = _mlp_pte("LATENCY", seed=7)
    exov.set_cache_dir(tmp_path / "cache")
    try:
        first = exov.load_method(pte)
        entries = sorted(p.relative_to(tmp_path) for p in (tmp_path / "cache").rglob("*"))
        assert entries and exov.last_compile_report()["loaded_from_cache"] is False
        second = exov.load_method(pte)
        report = exov.last_compile_report()
        assert report["shared"] is True and report["loaded_from_cache"] is False
        assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "cache").rglob("*")) == entries
        x = _inputs(1)[0]
        assert torch.equal(first.execute([x])[0], second.execute([x])[0])
    finally:
        exov.set_cache_dir(None)


def test_a_python_thread_runs_while_an_openvino_method_infers():
    # The observer holds the GIL whenever it runs; it can see an inference in
    # flight only if the calling thread let the GIL go during it.
    method = exov.load_method(_mlp_pte("LATENCY", seed=8))
    assert _most_inferences_seen(lambda x: method.execute([x]), calls=2000, stop_when_seen=True) >= 1


def test_raw_executorch_methods_keep_the_gil_for_the_whole_call():
    from executorch.runtime import Runtime

    # executorch's Method does not keep the Program, which owns the program's bytes: hold it.
    program = Runtime.get().load_program(_mlp_pte("THROUGHPUT", seed=8))
    method = program.load_method("forward")
    assert _most_inferences_seen(lambda x: method.execute([x]), calls=30, stop_when_seen=False) == 0


def _most_inferences_seen(call, calls: int, stop_when_seen: bool, looks_needed: int = 20) -> int:
    """Makes at least `calls` calls of `call` in a thread while this one keeps reading the delegate's
    inferences in flight; returns the most it saw (the worker stops at the first when `stop_when_seen`).

    The worker goes on past `calls` until the observer has looked `looks_needed` times, because
    a call may take less than Python's 5 ms switch interval: all of them could end before the
    observer first gets the GIL (seen in CI: 30 calls, no look).
    """
    x = _inputs(1)[0]
    done, made, looks = threading.Event(), [0], [0]
    deadline = time.monotonic() + 60

    def worker() -> None:
        while not done.is_set() and (made[0] < calls or looks[0] < looks_needed):
            if time.monotonic() > deadline:
                return
            call(x)
            made[0] += 1

    thread = threading.Thread(target=worker)
    most = 0
    thread.start()
    while thread.is_alive():
        most = max(most, _native.infer_counters()["in_flight"])
        looks[0] += 1
        if most and stop_when_seen:
            done.set()
    thread.join()
    assert made[0] > 0 and (looks[0] >= looks_needed or (most and stop_when_seen)), (made[0], looks[0])
    return most


def test_raw_executorch_method_called_from_two_threads_stays_exact():
    # executorch.runtime keeps the GIL for the whole call, so it serialises the calls.
    from executorch.runtime import Runtime

    # executorch's Method does not keep the Program, which owns the program's bytes: hold it.
    program = Runtime.get().load_program(_mlp_pte("THROUGHPUT", seed=9))
    method = program.load_method("forward")
    _exact_from_threads(method, _inputs(2), calls=20)


def test_dynamic_shapes_from_several_threads():
    model = Mlp(10)
    n = torch.export.Dim("n", max=64)
    program = exov.lower(model, (_inputs(1, (64, 256))[0],), dynamic_shapes={"x": {0: n}},
                         performance_hint="THROUGHPUT")
    method = exov.load_method(program.buffer)
    assert method.max_concurrent_calls >= (2 if (os.cpu_count() or 1) >= 2 else 1)
    inputs = [torch.randn(rows, 256, generator=torch.Generator().manual_seed(rows)) for rows in (5, 17, 33, 64)]
    _exact_from_threads(method, inputs, calls=25)
    with torch.no_grad():
        for x in inputs:
            torch.testing.assert_close(method.execute([x])[0], model(x), rtol=1e-5, atol=1e-5)


def test_a_failing_call_reports_its_own_error_while_other_threads_run():
    # Rows of 8 instead of 256: ExecuTorch checks only the element count of a dynamic input, the delegate refuses it.
    model = Mlp(11)
    n = torch.export.Dim("n", max=64)
    method = exov.load_method(exov.lower(model, (_inputs(1, (64, 256))[0],), dynamic_shapes={"x": {0: n}},
                                         performance_hint="THROUGHPUT").buffer)
    good, bad = _inputs(1, (16, 256))[0], torch.zeros(16, 8)
    expected = method.execute([good])[0]
    problems: list[str] = []

    def work(i: int) -> None:
        for _ in range(20):
            if i == 0:
                try:
                    method.execute([bad])
                    problems.append("a bad input was accepted")
                except ValueError as error:  # the delegate refused it: a ValueError through load_method
                    if "input 0 ('x') has shape (16, 8)" not in str(error):
                        problems.append(str(error))
            elif not torch.equal(method.execute([good])[0], expected):
                problems.append("a wrong result")

    _in_threads(work, 3)
    assert not problems, problems[:3]


def test_a_program_with_two_partitions_from_several_threads():
    model = TwoPartitions()
    x = _inputs(1)[0]
    pte, summary = lower(model, (x,), partitioner=exov.OpenvinoPartitioner(performance_hint="THROUGHPUT"))
    assert summary.partitions == 2
    method = exov.load_method(pte)
    assert method.max_concurrent_calls >= (2 if (os.cpu_count() or 1) >= 2 else 1)
    _exact_from_threads(method, _inputs(4), calls=25)


class Accumulator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 2


def test_a_program_that_keeps_state_runs_one_call_at_a_time_on_one_copy():
    # Copies would each accumulate their own total; one copy gives every count once.
    x = torch.ones(4)
    method = exov.load_method(exov.lower(Accumulator(), (x,), performance_hint="THROUGHPUT").buffer)
    assert method.max_concurrent_calls == 1
    seen: list[float] = []

    def work(i: int) -> None:
        for _ in range(10):
            seen.append(method.execute([x])[0][0].item())

    _in_threads(work, 4)
    assert sorted(seen) == [2.0 * k for k in range(1, 41)]
    with pytest.raises(ValueError, match="keeps state between calls"):
        exov.load_method(exov.lower(Accumulator(), (x,)).buffer, max_concurrent_calls=2)


def test_a_program_file_that_changed_is_not_loaded_again_for_a_copy(tmp_path):
    path = tmp_path / "model.pte"
    path.write_bytes(_mlp_pte("THROUGHPUT", seed=12))
    method = exov.load_method(path)
    assert method.max_concurrent_calls >= 2 or (os.cpu_count() or 1) < 2
    if method.max_concurrent_calls < 2:
        pytest.skip("one stream: no copies are made")
    x = _inputs(1)[0]
    expected = method.execute([x])[0]
    # Another program at the same path, renamed over it (a file written in place
    # fails the loaded method's calls instead: test_weights_memory.py).
    (tmp_path / "new.pte").write_bytes(_mlp_pte("THROUGHPUT", seed=13))
    os.replace(tmp_path / "new.pte", path)
    release = _hold_copy(method)
    outputs: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call = threading.Thread(target=lambda: outputs.append(method.execute([x])[0]))
        call.start()
        # The call tries to load a copy, refuses the changed file, then waits for the held copy.
        _wait_for(lambda: method.max_concurrent_calls == 1, "the refused copy")
        release()
        call.join(timeout=120)
    assert any("changed since the method was loaded" in str(w.message) for w in caught), [str(w.message) for w in caught]
    assert method.loaded_copies == 1 and len(outputs) == 1 and torch.equal(outputs[0], expected)


def test_bad_max_concurrent_calls_are_refused():
    pte = _mlp_pte("LATENCY", seed=14)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_concurrent_calls is"):
            exov.load_method(pte, max_concurrent_calls=bad)


def test_standard_streams_are_left_as_they_were_after_overlapping_calls(tmp_path):
    # executorch's pybindings redirect std::cout and std::cerr for each call
    # and put back what they found on exit; overlapping calls would leave them on
    # a finished call's buffer. A probe built against the system's libstdc++
    # reads them before and after, then writes through std::cout.
    if compiler() is None:
        if require_all():
            pytest.fail("a C++ compiler (g++) is needed for the standard streams test")
        pytest.skip("no C++ compiler")
    probe = build_harness("stdio_probe", tmp_path)
    pte = tmp_path / "model.pte"
    pte.write_bytes(_mlp_pte("THROUGHPUT", seed=15))
    result = run_python_json(f"""
        import ctypes, json, threading, torch
        import executorch_openvino as exov
        probe = ctypes.CDLL({str(probe)!r})
        probe.exov_cout_buffer.restype = probe.exov_cerr_buffer.restype = ctypes.c_void_p
        method = exov.load_method({str(pte)!r}, max_concurrent_calls=4)
        x = torch.randn(256, 256)
        method.execute([x])
        before = [probe.exov_cout_buffer(), probe.exov_cerr_buffer()]
        def work():
            for _ in range(25):
                method.execute([x])
        threads = [threading.Thread(target=work) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        after = [probe.exov_cout_buffer(), probe.exov_cerr_buffer()]
        probe.exov_write_cout(b"written through std::cout\\n")
        print(json.dumps({{"before": before, "after": after, "copies": method.loaded_copies}}))
    """, {}, tmp_path)
    assert result["after"] == result["before"]


def test_four_threads_each_with_its_own_method_1000_runs_exact():
    pte = _lowered()
    inputs = [torch.randn(4, 32, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    expected = [run(pte, (x,))[0] for x in inputs]  # one thread
    assert not torch.equal(expected[0], expected[1])  # a mix-up between threads would show
    methods = [exov.load_method(pte) for _ in range(4)]
    wrong: list[tuple[int, int]] = []

    def work(i: int) -> None:
        for n in range(1000):
            out = methods[i].execute([inputs[i]])[0]
            if not torch.equal(out, expected[i]):
                wrong.append((i, n))

    _in_threads(work, 4)
    assert not wrong, f"{len(wrong)} of 4000 results differ, first {wrong[:5]}"


def test_many_threads_trigger_the_first_openvino_load_at_once(tmp_path):
    # A fresh process: 16 threads load and run a method at the same moment, so the
    # first OpenVINO load happens under contention; it is loaded once, and all results are exact.
    pte = tmp_path / "model.pte"
    pte.write_bytes(_lowered())
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(7))
    torch.save(x, tmp_path / "x.pt")
    expected = run(pte, (x,))[0]
    torch.save(expected, tmp_path / "expected.pt")
    code = f"""
        import json, threading, torch
        import executorch_openvino as exov
        x, expected = torch.load({str(tmp_path / 'x.pt')!r}), torch.load({str(tmp_path / 'expected.pt')!r})
        start, results, errors = threading.Barrier(16), [], []
        def work():
            try:
                start.wait()
                method = exov.load_method({str(pte)!r})
                results.append(bool(torch.equal(method.execute([x])[0], expected)))
            except BaseException as e:
                errors.append(repr(e))
        threads = [threading.Thread(target=work) for _ in range(16)]
        [t.start() for t in threads]
        [t.join(300) for t in threads]
        info = exov.library_info()
        print(json.dumps({{"results": results, "errors": errors, "path": info["path"], "error": info["error"]}}))
    """
    result = run_python_json(code, {}, tmp_path)
    assert result["errors"] == []
    assert result["results"] == [True] * 16
    assert result["path"] and result["error"] is None
