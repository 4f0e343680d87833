"""Other libraries' known messages are hidden where this package's code runs, and nothing else (quiet.py); each
filter still matches what the installed dependency really emits."""

from __future__ import annotations

import copy
import logging
import os
import platform
import re
import subprocess
import sys
import textwrap
import threading
import warnings

import pytest
import torch

from executorch_openvino.support import quiet
from executorch_openvino.support.quiet import hide_known_noise, quiet_dependencies

from exov_testing.environment import run_python_json

pytestmark = [pytest.mark.own_runtime]

TORCHAO_NOISE = ("Failed to load /venv/site-packages/torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so: "
                 "Could not load this library")
LEAFSPEC = "`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) and treespec.is_leaf()`"


def test_known_messages_are_dropped_and_others_kept(caplog):
    import executorch_openvino as exov

    assert exov.hide_known_noise is hide_known_noise  # the public name the README gives
    hide_known_noise()
    hide_known_noise()  # idempotent: one filter per logger
    assert len(logging.getLogger("torchao").filters) == 1
    with caplog.at_level(logging.WARNING):
        logging.getLogger("torchao").warning(TORCHAO_NOISE)
        logging.getLogger("torchao").warning("Failed to load /venv/site-packages/torchao/_C_cutlass_90a.abi3.so: x")
        logging.getLogger("torch.utils._pytree").warning(
            "%s is an Enum subclass and is now natively supported by torch.compile as an opaque value type.", "E")
        logging.getLogger("torchao").warning("Failed to load the calibration data")  # not a kernel library
        logging.getLogger("torch.utils._pytree").warning("another pytree warning")
        logging.getLogger("executorch_openvino").warning("our own")
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to load the calibration data", "another pytree warning", "our own"]


def test_only_the_known_future_warning_is_ignored():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        hide_known_noise()
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use ...", FutureWarning, stacklevel=1)
        warnings.warn("something else is deprecated", FutureWarning, stacklevel=1)
        warnings.warn("OpenVINO's CPU plugin flushes subnormal and -0.0 constant values to 0.0", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == [
        "something else is deprecated", "OpenVINO's CPU plugin flushes subnormal and -0.0 constant values to 0.0"]


def _warn_leafspec():
    warnings.warn(LEAFSPEC, FutureWarning, stacklevel=1)  # one location, so the warning registry is exercised


def test_quiet_dependencies_hides_only_inside_the_block(caplog, monkeypatch):
    for name in quiet.LOG_MESSAGES:  # without the process-wide filters of the tests above
        monkeypatch.setattr(logging.getLogger(name), "filters", [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        before = list(warnings.filters)
        loggers = {name: list(logging.getLogger(name).filters) for name in quiet.LOG_MESSAGES}
        with caplog.at_level(logging.WARNING):
            with quiet_dependencies():
                _warn_leafspec()
                warnings.warn("a user's FutureWarning", FutureWarning, stacklevel=1)
                logging.getLogger("torchao").warning(TORCHAO_NOISE)
                warnings.filterwarnings("error", message="the user's own filter")  # set during the block
            logging.getLogger("torchao").warning(TORCHAO_NOISE)
            _warn_leafspec()  # the same warning, same place: shown now
        assert [str(w.message) for w in caught] == ["a user's FutureWarning", LEAFSPEC]
        assert [r.getMessage() for r in caplog.records] == [TORCHAO_NOISE]
        assert warnings.filters[0][1].pattern == "the user's own filter" and warnings.filters[1:] == before
        assert {name: list(logging.getLogger(name).filters) for name in quiet.LOG_MESSAGES} == loggers


def test_a_process_wide_filter_outlives_a_block():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        hide_known_noise()
        with quiet_dependencies():
            pass
        _warn_leafspec()
    assert caught == []


def test_overlapping_blocks_in_threads_keep_the_filters_until_the_last_ends():
    inside, done = threading.Event(), threading.Event()

    def other():
        with quiet_dependencies():
            inside.set()
            done.wait(10)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        thread = threading.Thread(target=other)
        with quiet_dependencies():
            thread.start()
            assert inside.wait(10)
        _warn_leafspec()  # the other thread's block is still open
        done.set()
        thread.join()
        _warn_leafspec()
    assert [str(w.message) for w in caught] == [LEAFSPEC]


# -- each filter against what the installed dependencies emit ------------------------------------------------


def test_the_log_filters_match_what_torchao_and_torch_log(tmp_path):
    logged = run_python_json("""
        import json, logging
        records = {}

        class Record(logging.Filter):
            def filter(self, record):
                records.setdefault(record.name, []).append(record.getMessage())
                return True

        for name in ("torchao", "torch.utils._pytree"):
            logging.getLogger(name).addFilter(Record())
        import torch, torchao
        print(json.dumps({"records": records, "cuda": torch.version.cuda}))
    """, {}, tmp_path)
    for name, known in quiet.LOG_MESSAGES.items():
        for message in known:
            if name == "torchao" and logged["cuda"] is not None:
                continue  # a CUDA torch may load torchao's CUDA kernels: then nothing is logged
            assert any(re.search(message.pattern, m) for m in logged["records"].get(name, [])), (
                f"{name} no longer logs what quiet.py hides ({message.seen_with}); it logged "
                f"{logged['records'].get(name)}")


def test_the_warning_filter_matches_torchs_future_warning():
    from torch.utils import _pytree as pytree

    spec = pytree.tree_flatten((torch.ones(1), [2]))[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copy.deepcopy(spec)  # what torch.export and ExecuTorch do to programs
    for category, message in quiet.WARNINGS:
        if "LeafSpec" not in message.pattern:  # the others: their own tests below
            continue
        assert any(w.category is category and re.search(message.pattern, str(w.message)) for w in caught), (
            f"torch no longer warns what quiet.py hides ({message.seen_with}): {[str(w.message) for w in caught]}")


def test_the_side_effects_filter_matches_strict_export_of_a_transformers_decoder(monkeypatch):
    """torch.export's strict mode warns about transformers' own globals (a new user met it in export-llm): the
    filter matches what it really says, and export_decoder's export hides it."""
    pytest.importorskip("transformers")
    from contextlib import nullcontext

    from executorch_openvino.support import quiet as quiet_module
    from executorch_openvino.llm.export import export_decoder
    from exov_testing.llm_models import tiny_llama

    def exported_warnings():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            export_decoder(tiny_llama(), 8)
        return [w for w in caught if "side effects happened" in str(w.message)]

    with monkeypatch.context() as patched:
        patched.setattr(quiet_module, "quiet_dependencies", nullcontext)
        raw = exported_warnings()
    assert raw, "strict export no longer warns about side effects: drop the filter"
    category, message = next(m for m in quiet.WARNINGS if "side effects" in m[1].pattern)
    assert all(w.category is category and re.search(message.pattern, str(w.message)) for w in raw), \
        [str(w.message) for w in raw]
    assert exported_warnings() == []


def test_the_executorch_line_filters_match_its_thread_pool_lines(tmp_path):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import torch
        from executorch.exir import to_edge_transform_and_lower
        from executorch.runtime import Runtime

        class Softmax(torch.nn.Module):
            def forward(self, x):
                return torch.softmax(x @ x.T, -1)

        x = torch.randn(4, 8)
        program = to_edge_transform_and_lower(torch.export.export(Softmax(), (x,))).to_executorch()
        Runtime.get().load_program(program.buffer).load_method("forward").execute([x])
    """)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[cpuinfo_utils.cpp:")]
    assert lines, "ExecuTorch's first kernel call no longer logs its thread pool sizing:\n" + proc.stderr[-3000:]
    unknown = [line for line in lines if not quiet.is_known_log_line(line)]
    assert unknown == [], f"lines quiet.py does not know (executorch changed?): {unknown}"
    if platform.system() == "Linux" and platform.machine() == "x86_64":  # no ARM core files: every message
        for message in quiet.EXECUTORCH_LOG_LINES:
            assert any(re.search(message.pattern, line) for line in lines), (message.pattern, lines)


# -- what a user sees ------------------------------------------------------------------------------------------

NOISE = ("Failed to load", "Enum subclass", "LeafSpec", "cpuinfo_utils", "tensor_impl", "method_meta",
         "Error resizing")

SCENARIO = """
import sys, torch
import executorch_openvino as exov

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)
        self.register_buffer("scale", torch.tensor([1.0, 1e-40, 1.0, 1.0]))  # this package's warning: a subnormal

    def forward(self, x, n: int):
        y = torch.softmax(self.linear(x) * self.scale, -1)
        return y, y.argmax(-1) + n  # argmax of floats runs on ExecuTorch's kernels (its thread pool)

x = torch.randn(2, 8)
method = exov.load_method(exov.lower(Model().eval(), (x, 1)).buffer)
method.execute([x, 1])
try:
    method.execute([torch.randn(3, 8), 1])
except ValueError as error:
    print("refused:", str(error).splitlines()[0], file=sys.stderr)
try:
    method.execute([x, 1.5])
except ValueError as error:
    print("refused:", str(error).splitlines()[0], file=sys.stderr)
print("done")
"""


def test_lowering_and_running_show_only_what_concerns_the_user(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}  # Python's default warning filters
    proc = subprocess.run([sys.executable, "-c", SCENARIO], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr[-3000:]
    err = proc.stderr
    assert [n for n in NOISE if n in err] == [], err
    # This package's own warning and its explanations of refused inputs show, without ExecuTorch's lines that
    # they restate (a refusal this package does not explain keeps them: test_native_log.py).
    assert "UserWarning: OpenVINO's CPU plugin flushes subnormal and -0.0 constant values to 0.0" in err, err
    assert "refused: input 0 of method 'forward' has shape (3, 8), the method was exported for (2, 8)" in err, err
    assert "refused: input 1 of method 'forward' is a float (1.5), the method was exported with an int" in err, err
