"""Stage lines of a lowering: on a terminal by default, never when asked not to, not in a pipe unless asked;
a nested call adds to the outer lines (executorch_openvino.support.progress)."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import textwrap

import pytest
import torch

from executorch_openvino.support import progress

pytestmark = [pytest.mark.own_runtime]

LOWER = """
    import sys
    import torch
    import executorch_openvino as exov

    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) * 2 + torch.argmax(x, 1, keepdim=True)

    exov.lower(Model(), (torch.randn(2, 3),))
    print("--- progress=False ---", file=sys.stderr, flush=True)
    exov.lower(Model(), (torch.randn(2, 3),), progress=False)
"""


def _stderr_on_a_terminal() -> str:
    """The stderr of a fresh interpreter lowering a small model twice (by default, then with progress=False),
    read through a pseudo-terminal."""
    main, child = pty.openpty()
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(LOWER)], stdout=subprocess.DEVNULL, stderr=child)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child's side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=300) == 0, b"".join(chunks).decode(errors="replace")[-3000:]
    return b"".join(chunks).decode(errors="replace")


def _stage_lines(text: str) -> list[str]:
    return [line.split("] ", 1)[1] for line in text.replace("\r", "").splitlines() if line.startswith("exov [")]


def test_a_terminal_sees_each_stage_by_default_and_none_with_progress_false():
    default, quiet = _stderr_on_a_terminal().split("--- progress=False ---")
    lines = _stage_lines(default)
    assert lines[:2] == ["exporting Model with torch.export",
                         "ExecuTorch's edge lowering: decompositions and the partitioner's support checks"], lines
    assert "1 partition for OpenVINO: 5 of 6 operators" in lines, lines
    assert "partition 1 of 1: converting 5 operators to OpenVINO" in lines, lines
    assert lines[-2:] == ["writing the ExecuTorch program (memory planning, serialization)", "lowered"], lines
    assert _stage_lines(quiet) == []


class _Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def test_a_pipe_gets_no_stage_lines_unless_asked(monkeypatch):
    import executorch_openvino as exov

    for progress_argument, expected in ((None, False), (True, True)):
        stream = io.StringIO()  # not a terminal, as a pipe
        monkeypatch.setattr(sys, "stderr", stream)
        exov.lower(_Model(), (torch.randn(2, 3),), progress=progress_argument)
        monkeypatch.undo()
        found = "partition 1 of 1: converting 3 operators to OpenVINO" in _stage_lines(stream.getvalue())
        assert found == expected, stream.getvalue()[-2000:]


def test_a_nested_call_adds_to_the_outer_lines_and_keeps_its_choice(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress.reporting(True) as outer:
        with progress.reporting(None) as inner:
            assert inner is outer
            progress.stage("inner stage")
        with progress.reporting(False):
            progress.stage("silenced")
        progress.stage("outer stage")
    progress.stage("after: no reporting")
    assert _stage_lines(stream.getvalue()) == ["inner stage", "outer stage"]


def test_a_bar_shows_only_where_stage_lines_do(monkeypatch):
    pytest.importorskip("tqdm")
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress.reporting(False):
        items = [1, 2, 3]
        assert progress.bar(items, 3, "quiet") is items
    with progress.reporting(True):
        assert list(progress.bar(range(3), 3, "matching")) == [0, 1, 2]
    assert "exov: matching" in stream.getvalue() and "quiet" not in stream.getvalue()


def test_a_closed_or_missing_stderr_does_not_fail_a_lowering(monkeypatch):
    # A tester's closed sys.stderr made exov.lower raise "I/O operation on closed file" from isatty.
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    with progress.reporting(None) as reporter:
        progress.stage("nowhere")
    assert not reporter.shown
    monkeypatch.setattr(sys, "stderr", None)
    with progress.reporting(True) as reporter:  # print(file=None) would write to stdout
        progress.stage("nowhere")
    assert not reporter.shown
