"""What a model cache folder holds, and emptying it (``python -m executorch_openvino cache``).

The layout is the delegate's (``native/delegate/model_cache.h``): per partition, its IR
as ``ir/<sha256>.xml`` and ``ir/<sha256>.bin`` (the blob's digest), a stamp
``ir/<sha256>.checked`` and a lock file ``ir/<sha256>.lock``; per compile configuration and OpenVINO release, a
folder such as ``CPU_f32-openvino-2026.4.1-cpu1a2b3c4d`` (the last part hashes
the CPU's instruction sets) that OpenVINO's own model cache fills with
``<hash>.blob`` files, each with the delegate's record of its bytes
(``<hash>.blob.exov-crc``).
Only these names are counted and removed: anything else in the folder is the
user's. Nothing here imports torch or openvino.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

IR_FOLDER = "ir"
_IR_FILE = re.compile(r"[0-9a-f]{64}\.(xml|bin|checked|lock)(\.tmp-\d+-\d+)?")
# "CPU_f32-openvino-2026.4.1-cpu1a2b3c4d": device, precision, optional hint, release, CPU
# (native/delegate/model_cache.h).
_ENTRY_FOLDER = re.compile(r"[A-Za-z0-9._]+_[A-Za-z0-9]+(_[A-Z_]+)?-openvino-\d+\.\d+\.\d+-cpu[0-9a-f]{8}")
# OpenVINO's compiled entries and the delegate's records of them.
_ENTRY_FILE = re.compile(r"[0-9A-Za-z_-]+\.blob(\.exov-crc)?(\.tmp-\d+-\d+)?")


class Folder(NamedTuple):
    name: str  # relative to the cache folder: "ir", "CPU_f32-openvino-2026.4.1"
    files: int
    bytes: int


def _ours(folder: Path) -> list[Path]:
    """The delegate's and OpenVINO's cache files in one of the delegate's folders (nothing else found there)."""
    pattern = _IR_FILE if folder.name == IR_FOLDER else _ENTRY_FILE
    return [p for p in folder.iterdir() if p.is_file() and pattern.fullmatch(p.name)]


def _size(folder: Path) -> tuple[int, int]:
    files = _ours(folder)
    return len(files), sum(p.stat().st_size for p in files)


def cache_folders(cache: str | Path) -> list[Folder]:
    """The delegate's folders in ``cache`` with their file counts and sizes (bytes), sorted by name.

    Raises ``NotADirectoryError`` when ``cache`` is not a folder.
    """
    root = Path(cache)
    if not root.is_dir():
        raise NotADirectoryError(f"{str(root)!r} is not a folder; give the folder passed to set_cache_dir")
    found = []
    for child in sorted(root.iterdir()):
        if child.is_dir() and (child.name == IR_FOLDER or _ENTRY_FOLDER.fullmatch(child.name)):
            found.append(Folder(child.name, *_size(child)))
    return found


def partitions(cache: str | Path) -> int:
    """Partitions whose IR the cache holds (``ir/*.xml``)."""
    folder = Path(cache) / IR_FOLDER
    return len(list(folder.glob("*.xml"))) if folder.is_dir() else 0


def clear(cache: str | Path) -> int:
    """Removes the delegate's files and folders from ``cache`` (nothing else in it); returns the bytes freed.

    A load that runs meanwhile only compiles again: OpenVINO maps what it
    reads, and a removed file stays readable to whoever mapped it.
    """
    freed = 0
    root = Path(cache)
    for folder in cache_folders(root):
        path = root / folder.name
        for f in _ours(path):
            freed += f.stat().st_size
            f.unlink()
        if not any(path.iterdir()):  # a folder holding anything else stays, with it
            path.rmdir()
    return freed


def report(cache: str | Path) -> str:
    """``cache``'s folders as a few lines of text (sizes in MiB)."""
    folders = cache_folders(cache)
    count = partitions(cache)
    lines = [f"model cache {str(cache)!r}: the IR of {count} partition{'s' if count != 1 else ''}, "
             f"{sum(f.bytes for f in folders) / 2**20:.1f} MiB in all"]
    lines += [f"  {f.name:<40} {f.files:5d} files {f.bytes / 2**20:10.1f} MiB" for f in folders]
    return "\n".join(lines)
