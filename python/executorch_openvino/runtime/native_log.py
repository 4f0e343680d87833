"""ExecuTorch's C++ log during this package's calls of a loaded method: noise dropped, restated lines held back.

executorch 1.5.1's pybindings print ExecuTorch's log (``[file:line] message``) through ``sys.stderr`` during
each of their calls (pybind11's ``scoped_estream_redirect`` looks ``sys.stderr`` up when a call starts). Inside
:func:`executorch_log` the calling thread's lines go through a filter installed as ``sys.stderr``:

- :data:`executorch_openvino.support.quiet.EXECUTORCH_LOG_LINES` (ExecuTorch's thread pool sizing), and what this
  package's own look at the method's inputs makes ExecuTorch log, are dropped;
- the lines ExecuTorch logs when it refuses a call's inputs (:data:`INPUT_REFUSALS`) are held until the block
  ends, then dropped if the block raised this package's explanation of the refusal (:meth:`Call.explained`),
  written out otherwise;
- this delegate's own lines (``[ExecutorchOpenvinoBackend] ...``) are held until the block ends, then dropped
  if the exception leaving the block carries their text (:class:`..loaded_method.OpenVINOMethod` adds the
  delegate's message to ExecuTorch's error), written out otherwise; so is ExecuTorch's line saying that the
  delegate's init failed (:data:`INIT_FAILURE`), dropped when the exception carries the delegate's message;
- every other line is written at once.

A loaded method's own load and calls (``_native.Method``, native/python/python_method.h) run without the
pybindings: ExecuTorch's lines of such a call are held in C++ (native/python/executorch_log_capture.h) and go
through the same rules afterwards, by :func:`write_held_lines`.

Other threads' writes, and this thread's outside the block, pass through untouched. Lines logged while a call
has let the interpreter go (OpenVINO's inference) or outside ExecuTorch's pybindings go straight to the
process's stderr, unfiltered. Held lines all precede an error return, never an abort, so a crash loses none.
"""

from __future__ import annotations

import re
import sys
import threading

from ..support.quiet import is_known_log_line

BACKEND_ID = "ExecutorchOpenvinoBackend"

# What ExecuTorch 1.5.1 logs when Method::set_inputs refuses an input (its pybindings' execute), each restated
# with the input, what the method takes and what to pass by method_inputs.explain_refused_inputs.
INPUT_REFUSALS = tuple(re.compile(p) for p in (
    r"^\[tensor_impl\.cpp:\d+\] Attempted to resize a static tensor\. Expected shape \([\d, ]*\), "
    r"but received \([\d, ]*\)\.$",
    r"^\[tensor_impl\.cpp:\d+\] Attempted to resize a bounded tensor with a maximum capacity of \d+ elements "
    r"to \d+ elements\.$",
    r"^\[tensor_impl\.cpp:\d+\] Attempted to change the tensor rank which is immutable: old=\d+, new=\d+$",
    r"^\[method\.cpp:\d+\] Error resizing tensor at input \d+$",
    r"^\[method\.cpp:\d+\] Input \d+ has unexpected scalar type: expected \w+ but was \w+\.$",
    r"^\[method\.cpp:\d+\] Input \d+ was expected to have type \w+ but was \w+\.$",
    r"^\[method\.cpp:\d+\] Invalid number of inputs provided\. Expected \d+, but got \d+$",
    r"^\[method\.cpp:\d+\] The \d+-th input of method should have the same value as the input_evalue, but got "
    r"\S+ and \S+$",
))
# Logged when explain_refused_inputs asks MethodMeta for the tensor meta of an input that is not a tensor (an
# int), its way to find out: this package's probe, never the user's concern.
_PROBE = re.compile(r"^\[method_meta\.cpp:\d+\] Tag: \d+ input: \d+ is not Tensor$")
# The delegate's lines as the pybindings print them, and as ExecuTorch's default log does ("E 00:00:00.001234
# executorch:error_report.cpp:51] ..."), where no pybindings call redirects it (library loading).
_OURS = re.compile(r"^(?:\[[\w.]+:\d+\]|[DIEF] [\d:.]+ executorch:[\w.]+:\d+\]) \[" + BACKEND_ID + r"\] (.*)$")
# ExecuTorch's line when this delegate's init fails (the delegate's own lines say why).
INIT_FAILURE = re.compile(r"^\[method\.cpp:\d+\] Init failed for backend " + BACKEND_ID + r": 0x[0-9a-f]+$")
# ExecuTorch's line when a delegate call fails; the error raised carries its code ("failed with error 0x12").
CALL_FAILURE = re.compile(r"^\[method\.cpp:\d+\] CALL_DELEGATE execute failed at instruction \d+: (0x[0-9a-f]+)$")
# The error OpenVINOMethod raises with the delegate's message (loaded_method._DelegateErrors).
_WITH_DELEGATE_MESSAGE = "\nexecutorch-openvino: "


def restated_by(line: str, error: BaseException) -> bool:
    """True when ``line`` is one of this delegate's log lines and ``error``'s message holds its text."""
    ours = _OURS.match(line)
    return ours is not None and ours.group(1) in str(error)


class Call:
    """The lines of one :func:`executorch_log` block of one thread."""

    __slots__ = ("partial", "held", "_explained")

    def __init__(self):
        self.partial = ""  # text after the last newline
        self.held: list[tuple[str, str, str]] = []  # (line, "input", "init" or "delegate", the delegate's text)
        self._explained = False

    def explained(self) -> None:
        """The error about to leave the block explains ExecuTorch's refusal of the inputs: drop its lines."""
        self._explained = True

    def line(self, line: str, write) -> None:
        if is_known_log_line(line) or _PROBE.match(line):
            return
        ours = _OURS.match(line)
        if ours is not None:
            self.held.append((line, "delegate", ours.group(1)))
            return
        if any(p.match(line) for p in INPUT_REFUSALS):
            self.held.append((line, "input", ""))
            return
        if INIT_FAILURE.match(line):
            self.held.append((line, "init", ""))
            return
        if (failure := CALL_FAILURE.match(line)) is not None:
            self.held.append((line, "call", failure.group(1)))
            return
        write(line + "\n")

    def finish(self, error: BaseException | None, write) -> None:
        if not self.held and not self.partial:  # nothing was logged: the common case
            return
        message = str(error) if error is not None else ""
        for line, kind, text in self.held:
            # (A delegate's refusal of an input is raised as a ValueError without its "execute: ".)
            restated = {"input": self._explained, "init": _WITH_DELEGATE_MESSAGE in message,
                        "delegate": text in message or text.removeprefix("execute: ") in message,
                        "call": f"failed with error {text}" in message}[kind]
            if not (error is not None and restated):
                write(line + "\n")
        if self.partial:
            write(self.partial)
        self.held.clear()
        self.partial = ""


class _ThreadBlocks(threading.local):
    block = None  # this thread's innermost open executorch_log (a class default: a missing attribute is slow)


_local = _ThreadBlocks()
_lock = threading.Lock()  # guards sys.stderr's swaps and the filters' users
_spare = []  # a _LogFilter no block uses, kept for the next first block


class _LogFilter:
    """``sys.stderr`` while blocks are open: the calling thread's lines through its innermost block's
    :class:`Call`, everything else to ``target`` (the ``sys.stderr`` it replaced) unchanged."""

    def __init__(self, target):
        self.target = target
        self.users = 0

    def write(self, text: str) -> int:
        block = _local.block
        if block is None:
            return self.target.write(text)
        call = block.call
        *lines, call.partial = (call.partial + text).split("\n")
        for line in lines:
            call.line(line, self.target.write)
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def __getattr__(self, name):  # encoding, fileno, isatty, ...
        return getattr(self.target, name)


class executorch_log:  # noqa: N801 - used as a function: ``with executorch_log() as block:``
    """Filters ExecuTorch's log lines of this thread while the block runs (see the module's text). The block
    gets itself: ``block.explained()`` is its :meth:`Call.explained`. It runs around every call of a method,
    so it costs little when nothing is logged: its :class:`Call` is made at the first line, and one filter
    object serves every block (an empty block: 0.77 us against 1.37 us with a new filter and Call each time,
    ``timeit`` on an Intel Xeon with AVX-512, Python 3.11)."""

    __slots__ = ("_call", "filter", "outer")

    @property
    def call(self) -> Call:
        """This block's lines (made when first asked for)."""
        if self._call is None:
            self._call = Call()
        return self._call

    def explained(self) -> None:
        self.call.explained()

    def __enter__(self) -> executorch_log:
        self._call = None
        _lock.acquire()  # not `with`: 0.15 us against 0.07 for the pair
        try:
            current = sys.stderr
            if type(current) is not _LogFilter:
                if current is None:  # no stderr (pythonw): nothing is printed anyway
                    self.filter = None
                    return self
                log_filter = _spare.pop() if _spare else _LogFilter(None)
                log_filter.target = current
                current = sys.stderr = log_filter
            current.users += 1
        finally:
            _lock.release()
        self.filter = current
        self.outer = _local.block
        _local.block = self
        return self

    def __exit__(self, kind, error, traceback) -> None:
        log_filter = self.filter
        if log_filter is None:
            return
        _local.block = self.outer
        if self._call is not None:
            self._call.finish(error, log_filter.target.write)
        _lock.acquire()
        try:
            log_filter.users -= 1
            if log_filter.users == 0 and sys.stderr is log_filter:
                sys.stderr = log_filter.target
                if not _spare:
                    _spare.append(log_filter)
        finally:
            _lock.release()


def write_held_lines(text: str, error: BaseException | None = None, *, explained: bool = False) -> None:
    """Writes ``text``, ExecuTorch's lines that ``_native.Method`` held during a load or call on this thread, to
    ``sys.stderr`` as a block would (see the module's text): ``error`` is the exception leaving the call
    (``None`` when it succeeded), ``explained`` says it explains ExecuTorch's refusal of the inputs."""
    target = sys.stderr
    if not text or target is None:
        return
    call = Call()
    if explained:
        call.explained()
    *lines, call.partial = text.split("\n")
    for line in lines:
        call.line(line, target.write)
    call.finish(error, target.write)
