"""What a model cache folder holds, and emptying it (``python -m executorch_openvino cache``).

The layout is the delegate's (``native/model_cache.h``): per partition, its IR
as ``ir/<sha256>.xml`` and ``ir/<sha256>.bin`` (the blob's digest), a stamp
``ir/<sha256>.checked`` and a lock file ``ir/<sha256>.lock``; per compile configuration and OpenVINO release, a
folder such as ``CPU_f32-openvino-2026.4.1-cpu1a2b3c4d`` (the last part hashes
the CPU's instruction sets) that OpenVINO's own model cache fills with
``<hash>.blob`` files. Nothing here imports torch or openvino.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import NamedTuple

IR_FOLDER = "ir"
_IR_FILE = re.compile(r"[0-9a-f]{64}\.(xml|bin|checked|lock)(\.tmp-\d+-\d+)?")
_ENTRY_FOLDER = re.compile(r".+-openvino-\d+\.\d+\.\d+(-cpu[0-9a-f]{8})?")


class Folder(NamedTuple):
    name: str  # relative to the cache folder: "ir", "CPU_f32-openvino-2026.4.1"
    files: int
    bytes: int


def _size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
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
        if folder.name == IR_FOLDER:
            for f in path.iterdir():
                if f.is_file() and _IR_FILE.fullmatch(f.name):
                    freed += f.stat().st_size
                    f.unlink()
            if not any(path.iterdir()):
                path.rmdir()
        else:
            freed += folder.bytes
            shutil.rmtree(path)
    return freed


def report(cache: str | Path) -> str:
    """``cache``'s folders as a few lines of text (sizes in MiB)."""
    folders = cache_folders(cache)
    lines = [f"model cache {str(cache)!r}: {partitions(cache)} partitions' IR, "
             f"{sum(f.bytes for f in folders) / 2**20:.1f} MiB in all"]
    lines += [f"  {f.name:<40} {f.files:5d} files {f.bytes / 2**20:10.1f} MiB" for f in folders]
    return "\n".join(lines)
