"""Where the pip ``openvino`` package keeps its libraries, found without importing it.

Importing ``openvino`` is not needed to run a ``.pte`` (only to lower one), so
the runtime side only locates the package: ``openvino/libs`` on Linux, macOS
and Windows (layouts measured on the 2025.4.1 and 2026.4.1 wheels, docs/design.md).
The native loader picks the C library inside that folder; see
``native/delegate/library_search.h`` for the whole search order.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def pip_openvino_library_dir() -> Path | None:
    """The pip ``openvino`` package's ``libs`` folder, or ``None`` when it is not installed."""
    try:
        spec = importlib.util.find_spec("openvino")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        libs = Path(location) / "libs"
        if libs.is_dir():
            return libs
    return None
