"""Hides other libraries' known, harmless messages in this package's entry points (the demo, ``doctor``,
``OpenVINOBackend``); this package's own warnings and every error still show.

Each filter matches one message, seen with torch 2.13.0, executorch 1.5.1 and its torchao 0.18:

- torchao's logger: ``Failed to load .../torchao/_C_mxfp8...so`` and ``_C_cutlass_90a`` (CUDA kernels a CPU
  machine cannot load; nothing here uses them);
- torch's pytree logger: ``<enum ...> is an Enum subclass and is now natively supported by torch.compile``
  (torchao registers its enums the old way);
- Python warnings: torch's ``FutureWarning`` "`isinstance(treespec, LeafSpec)` is deprecated", raised by
  ``torch.export``'s own deep copies.

Importing the package changes nothing; :func:`hide_known_noise` does, once per process: ``python -m
executorch_openvino``, the demo, and the first use of ``OpenVINOBackend`` (its module) call it.
"""

from __future__ import annotations

import logging
import re
import warnings

# logger name -> messages (regular expressions, searched) that are dropped
_LOG_MESSAGES = {
    "torchao": (r"^Failed to load .*torchao[/\\]_C_\w*\.(?:cpython-[\w-]+|abi3)\.so",),
    "torch.utils._pytree": (r"is an Enum subclass and is now natively supported by torch\.compile",),
}
_WARNINGS = ((FutureWarning, r"`isinstance\(treespec, LeafSpec\)` is deprecated"),)


class _DropMessages(logging.Filter):
    def __init__(self, patterns):
        super().__init__()
        self.patterns = [re.compile(p) for p in patterns]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(p.search(message) for p in self.patterns)


def hide_known_noise() -> None:
    """Installs the filters above (one logging filter on each of those loggers, and warning filters); calling
    it again adds nothing."""
    for name, patterns in _LOG_MESSAGES.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropMessages) for f in logger.filters):
            logger.addFilter(_DropMessages(patterns))
    for category, message in _WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=category)  # a repeat replaces the first
