"""Other libraries' known, harmless messages, and the filters that hide them while this package's code runs.

A user sees what concerns them: this package's own warnings, every error, and every message of another library
that is not one of those below. Each filter matches one message, narrowly, and says which versions it was seen
with; ``tests/packaging/test_quiet.py`` checks that each still matches what the installed dependency really
emits, so a dependency that changes a message is noticed (and its message shows again, never something else
hidden).

Where they apply:

- :func:`quiet_dependencies`, a context, around this package's own calls: ``exov.lower``, ``lower_exported``,
  the partitioner's and the preprocess's work inside ExecuTorch's lowering, and the first use of the lowering
  side (``exov.lower``, ``exov.OpenVINOPartitioner``: importing ``executorch.exir`` imports torchao). Outside
  them nothing is filtered: ``import executorch_openvino`` changes no logging or warning setting, and the same
  messages raised by the user's own calls of torch or ExecuTorch still show.
- :func:`hide_known_noise`, process-wide, in this package's commands only (the demo, ``doctor``,
  ``export-llm``, ``generate``), whose whole process is ours.
- ExecuTorch's C++ log lines (:data:`EXECUTORCH_LOG_LINES`) during a loaded method's load and calls:
  :mod:`executorch_openvino.runtime.native_log`.
"""

from __future__ import annotations

import logging
import re
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast


@dataclass(frozen=True)
class KnownMessage:
    """One harmless message of another library: ``pattern`` (a regular expression searched in the message),
    who emits it and why it does not concern the user, and the versions it was seen with."""

    pattern: str
    origin: str
    seen_with: str


# Python logging: logger name -> its known messages.
LOG_MESSAGES: dict[str, tuple[KnownMessage, ...]] = {
    "torchao": (KnownMessage(
        r"^Failed to load .*torchao[/\\]_C_\w*\.(?:cpython-[\w-]+|abi3)\.so",
        "torchao's import (executorch.exir imports it) tries its CUDA kernel libraries (_C_mxfp8, "
        "_C_cutlass_90a), which a CPU-only machine cannot load; nothing here uses them",
        "torchao 0.18.0 (executorch 1.5.1's requirement), torch 2.13.0+cpu"),),
    "torch.utils._pytree": (KnownMessage(
        r"is an Enum subclass and is now natively supported by torch\.compile",
        "torchao registers its enums (KernelPreference at import, ScaleCalculationMode when a program is "
        "lowered) with torch's pytree the way torch now deprecates",
        "torch 2.13.0, torchao 0.18.0"),),
}

# Python warnings: (category, its known message).
WARNINGS: tuple[tuple[type[Warning], KnownMessage], ...] = (
    (FutureWarning, KnownMessage(
        r"^`isinstance\(treespec, LeafSpec\)` is deprecated",
        "torch's pytree, when torch.export and ExecuTorch deep-copy a program (several times per lowering)",
        "torch 2.13.0, executorch 1.5.1")),
    # Only when every source it lists is one of these two globals: any other side effect still shows.
    (UserWarning, KnownMessage(
        r"^While compiling, we found certain side effects happened in the model\.forward\. Here are the list of "
        r"potential sources you can double check: \[(?:\"G\['__import_(?:transformers_dot_utils_dot_output_capturing"
        r"'\]\._active_collector|kernels_dot__internals_dot_layer_dot_layer'\]\._ACTIVE_KERNEL_FUNCS)\"(?:, )?)+\]$",
        "torch.export's strict mode (export_llm) on a transformers decoder: transformers' output capturing and "
        "the kernels package set their own module globals during forward, which the exported program does not "
        "need",
        "torch 2.13.0, transformers 5.25")),
)

# ExecuTorch's C++ log as its pybindings print it ("[file:line] message"), during a loaded method's calls.
EXECUTORCH_LOG_LINES: tuple[KnownMessage, ...] = (
    KnownMessage(
        r"^\[cpuinfo_utils\.cpp:\d+\] Reading file "
        r"/sys/devices/(?:soc0/image_version|system/cpu/cpu\d+/regs/identification/midr_el1)$",
        "ExecuTorch's thread pool, sized on the first call that runs an ExecuTorch kernel, looks for ARM "
        "phones' core descriptions (logged at ExecuTorch's Info level)",
        "executorch 1.5.1"),
    KnownMessage(
        r"^\[cpuinfo_utils\.cpp:\d+\] Failed to open midr file "
        r"/sys/devices/(?:soc0/image_version|system/cpu/cpu\d+/regs/identification/midr_el1)$",
        "the same, where those files do not exist (x86, containers): it then uses every core (Info level)",
        "executorch 1.5.1"),
    KnownMessage(
        r"^\[cpuinfo_utils\.cpp:\d+\] CPU info and manual query on # of cpus dont match\.$",
        "the same thread pool sizing, when the files above are missing (Info level)",
        "executorch 1.5.1"),
)


def is_known_log_line(line: str) -> bool:
    """True when ``line`` (one line of ExecuTorch's log, without its newline) is one of
    :data:`EXECUTORCH_LOG_LINES`."""
    return any(p.search(line) for p in _LINE_PATTERNS)


_LINE_PATTERNS = tuple(re.compile(m.pattern) for m in EXECUTORCH_LOG_LINES)


class _DropMessages(logging.Filter):
    def __init__(self, known: tuple[KnownMessage, ...]):
        super().__init__()
        self.patterns = [re.compile(m.pattern) for m in known]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(p.search(message) for p in self.patterns)


def hide_known_noise() -> None:
    """Hides the known messages for the rest of the process (a logging filter on each of those loggers,
    and warning filters): for this package's commands, whose process is theirs; calling it again adds
    nothing."""
    for name, known in LOG_MESSAGES.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropMessages) for f in logger.filters):
            logger.addFilter(_DropMessages(known))
    for category, message in WARNINGS:
        warnings.filterwarnings("ignore", message=message.pattern, category=category)  # a repeat replaces it


_lock = threading.Lock()
_depth = 0  # quiet_dependencies blocks open, in every thread
_loggers: list[tuple[logging.Logger, logging.Filter]] = []  # what the outermost block added
_warnings: list[tuple] = []  # its entries of warnings.filters


@contextmanager
def quiet_dependencies() -> Iterator[None]:
    """Hides the known messages while the block runs, in every thread (nested and concurrent blocks share
    one set of filters, removed when the last ends). Also a decorator.

    The warning filters go first in ``warnings.filters`` and are taken out again by identity on exit, rather
    than with ``warnings.catch_warnings()``, which restores the whole list: a filter the user's code set
    meanwhile (in another thread, or in the module's ``forward`` while it is exported) would be lost; and
    rather than with ``warnings.filterwarnings``, which would move an equal filter that was there before
    (:func:`hide_known_noise`'s). The list is changed in place without the version count that
    ``filterwarnings`` raises: that count only clears the record of warnings already shown, and an
    ``"ignore"`` filter neither needs it cleared nor records anything, so nothing stays hidden after the block.
    """
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            _install()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _uninstall()


def _install() -> None:
    for name, known in LOG_MESSAGES.items():
        logger = logging.getLogger(name)
        drop = _DropMessages(known)
        logger.addFilter(drop)
        _loggers.append((logger, drop))
    for category, message in WARNINGS:
        entry = ("ignore", re.compile(message.pattern, re.I), category, None, 0)  # as filterwarnings makes it
        _filters().insert(0, entry)
        _warnings.append(entry)


def _uninstall() -> None:
    for logger, drop in _loggers:
        logger.removeFilter(drop)
    _loggers.clear()
    for entry in _warnings:
        index = next((i for i, e in enumerate(_filters()) if e is entry), None)
        if index is not None:
            del _filters()[index]
    _warnings.clear()


def _filters() -> list:
    return cast(list, warnings.filters)  # a list, although typeshed calls it a Sequence
