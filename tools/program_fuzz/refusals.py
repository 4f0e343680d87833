"""Which errors are documented refusals (counted as "refused") rather than failures.

A refusal is a clear error the project documents (docs/user-guide/numerics.md,
docs/user-guide/troubleshooting.md): raised by executorch_openvino's own code, of the kinds it
promises (``ValueError``/``TypeError``/``ConversionError`` at lowering; the
int32-range ``RuntimeError`` at run time). Anything else, an error from deep
inside torch or ExecuTorch, a wrong value or a crash, is a failure.
"""

from __future__ import annotations

import re
import traceback

# (reason, stage prefix, exception type names, pattern): the first match names the refusal.
KNOWN = [
    ("int64 value outside the int32 range at run time", "run", ("RuntimeError",),
     r"outside the int32 range"),
    ("int64 constant outside the int32 range", "lower", ("ConversionError",),
     r"int64 constant .* outside the int32"),
    ("OpenVINO's frontend could not convert a partition", "lower", ("ConversionError",),
     r"could not convert the partition"),
]
# Errors that ask to be reported are never a refusal.
NOT_A_REFUSAL = re.compile(r"[Pp]lease report")
LOWERING_TYPES = ("ValueError", "TypeError", "ConversionError")


def _raised_by_the_delegate(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and "executorch_openvino" in frames[-1].filename


def refusal_reason(stage: str, exc: BaseException) -> str | None:
    """The documented refusal that `exc`, raised at `stage` (lower, save, load, run1, run2), is, or None."""
    message = str(exc)
    kind = type(exc).__name__
    if NOT_A_REFUSAL.search(message):
        return None
    for reason, prefix, kinds, pattern in KNOWN:
        if stage.startswith(prefix) and kind in kinds and re.search(pattern, message, re.S):
            return reason
    if stage == "lower" and kind in LOWERING_TYPES and _raised_by_the_delegate(exc):
        return f"{kind} at lowering: {normalised(message)}"
    return None


def normalised(message: str) -> str:
    """The first line of a message with numbers and quoted names blanked, to group alike refusals."""
    line = message.strip().splitlines()[0] if message.strip() else ""
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r"\d+", "N", line)
    return line[:160]
