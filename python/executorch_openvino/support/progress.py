"""Stage lines for work that takes seconds to minutes: exporting, partitioning, converting to OpenVINO, weight
compression, writing the program (a new user's ``export-llm`` of SmolLM2 ran 5 minutes with no output).

Lines go to stderr, each with the seconds since the work began, and only where someone watches: by default when
stderr is a terminal; ``progress=False`` (``lower``, ``export_llm``) or ``--quiet`` (the commands) silences
them, ``progress=True`` shows them in a log too. A call inside another's reporting (``export_llm`` lowering
its decoder) adds its stages to the outer one's lines. Long loops get a ``tqdm`` bar when tqdm is installed
(transformers installs it).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import time
from collections.abc import Iterable, Iterator

_current: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar("executorch_openvino_progress",
                                                                           default=None)


class Reporter:
    """Writes stage lines to `stream`; `shown` False keeps it silent (a quiet reporting still nests)."""

    def __init__(self, shown: bool, stream):
        self.shown, self.stream, self.started = shown, stream, time.perf_counter()
        self.partitions, self.converted = 0, 0  # set by the partitioner, counted by preprocess

    def line(self, text: str) -> None:
        if self.shown:
            try:
                print(f"exov [{time.perf_counter() - self.started:6.1f} s] {text}", file=self.stream, flush=True)
            except (ValueError, OSError):  # the stream was closed meanwhile: progress is not worth an error
                self.shown = False


@contextlib.contextmanager
def reporting(progress: bool | None) -> Iterator[Reporter]:
    """The reporter of the work inside: a new one unless an outer reporting is running and `progress` is None.

    `progress`: None shows the lines when stderr is a terminal, True always, False never."""
    outer = _current.get()
    if outer is not None and progress is None:
        yield outer
        return
    stream = sys.stderr
    shown = stream is not None and (progress if progress is not None else _is_terminal(stream))
    token = _current.set(Reporter(shown, stream))
    try:
        yield _current.get()
    finally:
        _current.reset(token)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def stage(text: str) -> None:
    """A stage line, when some reporting is running and shown."""
    reporter = _current.get()
    if reporter is not None:
        reporter.line(text)


def current() -> Reporter | None:
    return _current.get()


def bar(items: Iterable, total: int, description: str) -> Iterable:
    """`items` with a tqdm bar on the reporter's stream when reporting is shown and tqdm is installed."""
    reporter = _current.get()
    if reporter is None or not reporter.shown:
        return items
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return items
    return tqdm(items, total=total, desc=f"exov: {description}", file=reporter.stream, leave=False)
