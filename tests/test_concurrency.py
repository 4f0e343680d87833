"""Threads: methods loaded and run from several threads give exactly the single-threaded results.

executorch.runtime may hold the GIL while a method runs; these tests check that
nothing is shared wrongly between loaded methods (OpenVINO's Core, compiled
models, infer requests, the delegate's buffers), whatever the interleaving.
"""

from __future__ import annotations

import threading

import torch

import executorch_openvino as exov
from conftest import ThreadsModel, lower, run, run_python_json


def _lowered() -> bytes:
    torch.manual_seed(0)
    pte, summary = lower(ThreadsModel(), (torch.randn(4, 32),))
    assert summary.delegated == summary.total
    return pte


def test_four_threads_each_with_its_own_method_1000_runs_exact():
    pte = _lowered()
    inputs = [torch.randn(4, 32, generator=torch.Generator().manual_seed(i)) for i in range(4)]
    expected = [run(pte, (x,))[0] for x in inputs]  # one thread
    assert not torch.equal(expected[0], expected[1])  # a mix-up between threads would show
    methods = [exov.load_method(pte) for _ in range(4)]
    start = threading.Barrier(4)
    wrong: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            start.wait()
            for n in range(1000):
                out = methods[i].execute([inputs[i]])[0]
                if not torch.equal(out, expected[i]):
                    wrong.append((i, n))
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads), "a thread hangs"
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
