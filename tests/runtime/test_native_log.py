"""ExecuTorch's C++ log during a loaded method's load and calls (runtime/native_log.py): the lines an error of
this package restates are not printed twice, the rest is, and the patterns match what ExecuTorch really logs."""

from __future__ import annotations

import io
import sys
import threading
import warnings
from contextlib import redirect_stderr

import pytest
import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec

import executorch_openvino as exov
from executorch_openvino.runtime import native_log

from exov_testing.programs import lower

pytestmark = [pytest.mark.own_runtime]

X = torch.randn(2, 8)


class Scaled(torch.nn.Module):
    def forward(self, x, n: int):
        return torch.relu(x) * n


def _raw_lines(pte: bytes, inputs: list) -> list[str]:
    """What executorch.runtime itself prints (no filter of this package) for a call that it refuses."""
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    captured = io.StringIO()
    with redirect_stderr(captured), pytest.raises(RuntimeError, match="set_inputs"):
        method.execute(inputs)
    return captured.getvalue().splitlines()


@pytest.fixture(scope="module")
def programs():
    static, _ = lower(Scaled(), (X, 2))
    dynamic = exov.lower(Scaled(), (X, 2), dynamic_shapes=({0: torch.export.Dim("b", max=4)}, None)).buffer
    return static, dynamic


REFUSED = {  # inputs ExecuTorch refuses in set_inputs, and the ValueError of this package that explains each
    "static size": ("static", [torch.randn(3, 8), 2], "has shape (3, 8), the method was exported for (2, 8)"),
    "bounded size": ("dynamic", [torch.randn(5, 8), 2], "has shape (5, 8), the method was exported for (4, 8)"),
    "rank": ("static", [torch.randn(8), 2], "has 1 dimension (shape (8,)), the method was exported for 2"),
    "dtype": ("static", [X.double(), 2], "has dtype torch.float64, the method was exported for torch.float32"),
    "type": ("static", [3, 2], "input 0 of method 'forward' is of type int"),
    "count": ("static", [X], "takes 2 inputs, 1 was given"),
    "number": ("static", [X, 3], "input 1 of method 'forward' is 3, the method was exported with 2"),
    "number, dynamic": ("dynamic", [X, 3], "input 1 of method 'forward' is 3, the method was exported with 2"),
}


def test_every_refusal_pattern_matches_what_executorch_logs(programs):
    # Each pattern against executorch 1.5.1's real lines: a changed message shows again, never something else.
    static, dynamic = programs
    seen = set()
    for which, inputs, _ in REFUSED.values():
        lines = _raw_lines(static if which == "static" else dynamic, inputs)
        assert lines, which
        for line in lines:
            matching = [p for p in native_log.INPUT_REFUSALS if p.match(line)]
            assert matching, f"ExecuTorch logged {line!r}, which no pattern of native_log.INPUT_REFUSALS matches"
            seen.update(p.pattern for p in matching)
    assert {p.pattern for p in native_log.INPUT_REFUSALS} - seen == set()


@pytest.mark.parametrize("case", list(REFUSED))
def test_lines_a_refusal_error_restates_are_not_printed(programs, case, capsys):
    static, dynamic = programs
    which, inputs, explanation = REFUSED[case]
    method = exov.load_method(static if which == "static" else dynamic)
    with pytest.raises(ValueError, match=explanation.replace("(", r"\(").replace(")", r"\)")):
        method.execute(inputs)
    assert capsys.readouterr().err == ""
    assert sys.stderr is not None and not isinstance(sys.stderr, native_log._LogFilter)
    method.execute([X, 2])  # and the method still runs


@pytest.fixture
def unexplained_kinds(monkeypatch):
    """A float for an int input stays unexplained by this package (method_inputs knows no number kinds): a
    refusal whose only explanation is ExecuTorch's own line."""
    from executorch_openvino.runtime import method_inputs

    monkeypatch.setattr(method_inputs, "_NUMBER_TAGS", {})


def test_a_refusal_this_package_does_not_explain_keeps_executorchs_lines(programs, capsys, unexplained_kinds):
    method = exov.load_method(programs[0])
    with pytest.raises(RuntimeError, match="0x12"):
        method.execute([X, 1.5])  # a float for the int input: ExecuTorch's line is the only explanation
    assert "[method.cpp:" in capsys.readouterr().err


def test_the_delegates_lines_are_dropped_when_the_error_carries_them(capsys):
    from executorch.runtime import Runtime

    pte, _ = lower(Scaled(), (X, 2), partitioner=exov.OpenvinoPartitioner([CompileSpec("device", b"GPU")]))
    raw = io.StringIO()
    with redirect_stderr(raw), pytest.raises(RuntimeError):
        Runtime.get().load_program(pte).load_method("forward")
    lines = raw.getvalue().splitlines()  # what executorch.runtime alone prints
    assert any(native_log.INIT_FAILURE.match(line) for line in lines), lines
    assert any("[ExecutorchOpenvinoBackend] init: OpenVINO device 'GPU' is not available" in line for line in lines)
    capsys.readouterr()
    with pytest.raises(RuntimeError, match="OpenVINO device 'GPU' is not available on this machine"):
        exov.load_method(pte)
    assert "ExecutorchOpenvinoBackend" not in capsys.readouterr().err


def test_a_held_line_is_printed_when_nothing_restates_it():
    written = []
    call = native_log.Call()
    line = "[error_report.cpp:51] [ExecutorchOpenvinoBackend] init: the blob's field 3 is bad"
    call.line(line, written.append)
    call.line("[tensor_impl.cpp:135] Attempted to resize a static tensor. Expected shape (2,), but received (3,).",
              written.append)
    call.line("[program.cpp:80] something else", written.append)
    assert written == ["[program.cpp:80] something else\n"]  # at once; the others wait for the outcome
    call.finish(RuntimeError("another failure"), written.append)
    assert written[1:] == [line + "\n", "[tensor_impl.cpp:135] Attempted to resize a static tensor. Expected "
                                        "shape (2,), but received (3,).\n"]


def test_the_precision_notice_is_a_python_warning():
    pte, _ = lower(torch.nn.Linear(8, 4).eval(), (X,), partitioner=exov.OpenvinoPartitioner(inference_precision="f16"))
    captured = io.StringIO()
    with redirect_stderr(captured), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exov.load_method(pte)
    effective = exov.last_compile_report()["effective_precision"]
    notices = [w for w in caught if "was asked for" in str(w.message)]
    if effective == "f16":
        assert notices == []
    else:  # a CPU without float16 arithmetic: bf16 or f32 (OpenVINO 2026.4.1)
        assert [str(w.message) for w in notices] == [
            f"inference_precision 'f16' was asked for, but OpenVINO's CPU plugin computes in {effective!r} on this "
            f"machine (exov.last_compile_report() shows it); lower with inference_precision={effective!r} to "
            f"silence this"]
        assert notices[0].category is UserWarning and notices[0].filename == __file__  # the caller's line
    assert "was asked for" not in captured.getvalue()


def test_other_doors_get_the_delegates_precision_notice_as_a_log_line():
    # Only a load that records its inits (exov.load_method) turns the notice into a warning; executorch.runtime's
    # load records none, so the delegate logs it (issue 52: the facts travel as data, not as log text to match).
    from executorch.runtime import Runtime

    pte, _ = lower(torch.nn.Linear(8, 4).eval(), (X,), partitioner=exov.OpenvinoPartitioner(inference_precision="f16"))
    captured = io.StringIO()
    with redirect_stderr(captured), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Runtime.get().load_program(pte).load_method("forward")
    effective = exov.last_compile_report()["effective_precision"]
    assert [w for w in caught if "was asked for" in str(w.message)] == []
    logged = "[ExecutorchOpenvinoBackend] warning: init: inference_precision 'f16' was asked for" in captured.getvalue()
    assert logged == (effective != "f16"), captured.getvalue()


def test_other_threads_writes_pass_through_while_a_call_filters():
    entered, release = threading.Event(), threading.Event()
    captured = io.StringIO()

    def call():
        with native_log.executorch_log():
            entered.set()
            release.wait(10)

    with redirect_stderr(captured):
        worker = threading.Thread(target=call)
        worker.start()
        assert entered.wait(10)
        print("[cpuinfo_utils.cpp:71] Reading file /sys/devices/soc0/image_version", file=sys.stderr)
        print("partial ", end="", file=sys.stderr)
        release.set()
        worker.join()
        assert sys.stderr is captured  # put back when the last block ended
    assert captured.getvalue() == "[cpuinfo_utils.cpp:71] Reading file /sys/devices/soc0/image_version\npartial "


def test_each_call_filters_into_the_stderr_of_its_time(programs, unexplained_kinds):
    # The filter object is kept between calls and pointed at whatever sys.stderr is when a call starts.
    method = exov.load_method(programs[0])
    first, second = io.StringIO(), io.StringIO()
    for captured in (first, second):
        with redirect_stderr(captured):
            with pytest.raises(ValueError, match="has shape"):
                method.execute([torch.randn(3, 8), 2])  # explained: ExecuTorch's lines are dropped
            with pytest.raises(RuntimeError, match="0x12"):
                method.execute([X, 1.5])  # not explained: ExecuTorch's line is written
            assert sys.stderr is captured
    for captured in (first, second):
        lines = captured.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("[method.cpp:"), lines


def test_a_block_inside_a_block_keeps_its_own_lines():
    written = io.StringIO()
    with redirect_stderr(written):
        with native_log.executorch_log() as outer:
            with pytest.raises(ValueError), native_log.executorch_log() as inner:
                print("[tensor_impl.cpp:135] Attempted to change the tensor rank which is immutable: old=2, new=1",
                      file=sys.stderr)
                inner.explained()
                raise ValueError("input 0 has 1 dimension")
            assert written.getvalue() == ""  # held by the inner block, then dropped with the explanation
            print("[method.cpp:1] Input 0 was expected to have type Tensor but was Int.", file=sys.stderr)
            assert outer.call.held and written.getvalue() == ""
        assert written.getvalue() == "[method.cpp:1] Input 0 was expected to have type Tensor but was Int.\n"
