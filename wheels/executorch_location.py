"""Which installed executorch a wheel build compiles against and pins.

The delegate is compiled against one executorch release's C++ runtime, whose
interface is not stable across releases, and the wheel requires exactly that
release (metadata_provider.py). The release comes from, first match:

1. the build environment itself: a build without isolation
   (``pip install --no-build-isolation``, ``pip wheel --no-build-isolation``,
   the nox sessions), or one whose isolated environment was given executorch;
2. the environment pip is installing into, when pip's build isolation hides
   it (``pip install executorch-openvino-X.tar.gz`` beside an installed
   executorch): pip runs the build with that environment's interpreter and
   puts its isolated packages first through PYTHONPATH, so ``python -E`` sees
   the environment's own packages. Building against it means pip keeps the
   user's executorch instead of replacing it with whichever release an
   isolated build environment would resolve (and downloading torch for it);
3. neither: `executorch` becomes a build requirement (build_backend.py), so
   the newest release pip finds is compiled against and pinned.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from typing import NamedTuple

_PROBE = (
    "import importlib.util as u, importlib.metadata as m, json\n"
    "s = u.find_spec('executorch')\n"
    "print(json.dumps([s.submodule_search_locations[0], m.version('executorch')] if s else None))\n"
)


class ExecutorchLocation(NamedTuple):
    package_dir: str  # the folder of the `executorch` package (holds include/, lib/, share/cmake/)
    version: str      # its distribution's version, e.g. "1.5.1"
    found_in: str     # "build environment" or "installing environment"


def _probe(*flags: str) -> tuple[str, str] | None:
    out = subprocess.run([sys.executable, *flags, "-c", _PROBE], check=True, capture_output=True, text=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return tuple(found) if found else None


@functools.lru_cache(maxsize=None)
def find() -> ExecutorchLocation | None:
    """The executorch to build against (the order above), or None when neither environment has one."""
    for flags, where in (((), "build environment"), (("-E",), "installing environment")):
        found = _probe(*flags)
        if found:
            return ExecutorchLocation(found[0], found[1], where)
    return None
