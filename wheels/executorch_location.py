"""Which installed executorch a wheel build compiles against and pins.

The delegate is compiled against one executorch release's C++ runtime, whose
interface is not stable across releases, and the wheel requires exactly that
release (metadata_provider.py). The release comes from, first match:

0. an explicit ``-C cmake.define.EXECUTORCH_PACKAGE_DIR=<folder of the executorch
   package>``: its version is read from the distribution installed beside it;
1. the build environment itself: a build without isolation
   (``pip install --no-build-isolation``, ``pip wheel --no-build-isolation``,
   the nox sessions), or one whose isolated environment was given executorch;
2. the environment pip is installing into, when pip's build isolation hides
   it (``pip install executorch-openvino-X.tar.gz`` beside an installed
   executorch). pip runs the build with that environment's interpreter and
   hides its packages through PYTHONPATH (a sitecustomize) and
   PYTHONNOUSERSITE, so the interpreter run without those two variables sees
   the environment's own packages. Building against them means pip keeps the
   user's executorch instead of replacing it with whichever release an
   isolated build environment would resolve. (Frontends that build in a
   separate virtual environment, such as uv and ``python -m build``, hide it
   completely: there, step 3 applies unless isolation is turned off.)
3. neither: ``executorch==TESTED`` becomes a build requirement
   (build_backend.py), the release this project is tested with.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

TESTED = "1.5.1"  # the executorch release the nox sessions build and test against

_PROBE = (
    "import importlib.util as u, importlib.metadata as m, json\n"
    "s = u.find_spec('executorch')\n"
    "print(json.dumps([s.submodule_search_locations[0], m.version('executorch')] if s else None))\n"
)
# What pip's build isolation sets to hide the installing environment's packages.
_ISOLATION_VARIABLES = ("PYTHONPATH", "PYTHONNOUSERSITE")


class ExecutorchLocation(NamedTuple):
    package_dir: str  # the folder of the `executorch` package (holds include/, lib/, share/cmake/)
    version: str      # its distribution's version, e.g. "1.5.1"
    found_in: str     # "given folder", "build environment" or "installing environment"


_given: ExecutorchLocation | None = None


def _probe(environment: dict) -> tuple[str, str] | None:
    out = subprocess.run([sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True,
                         env=environment)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return tuple(found) if found else None


def use_folder(package_dir: str) -> ExecutorchLocation:
    """Makes an explicitly given executorch package folder the one to build against.

    Raises ValueError naming the folder when it holds no executorch package
    with an installed distribution beside it.
    """
    global _given
    folder = Path(package_dir)
    if not (folder / "share" / "cmake").is_dir():
        raise ValueError(f"EXECUTORCH_PACKAGE_DIR={package_dir} is not the folder of an installed executorch "
                         "package (no share/cmake/ in it); give the folder that `import executorch` loads from")
    found = [d.version for d in metadata.distributions(path=[str(folder.parent)])
             if (d.metadata["Name"] or "").lower() == "executorch"]
    if not found:
        raise ValueError(f"EXECUTORCH_PACKAGE_DIR={package_dir}: no executorch distribution (.dist-info) "
                         f"beside it in {folder.parent}, so its version is unknown")
    _given = ExecutorchLocation(str(folder), found[0], "given folder")
    return _given


@functools.cache
def _found() -> ExecutorchLocation | None:
    installing = {k: v for k, v in os.environ.items() if k not in _ISOLATION_VARIABLES}
    for environment, where in ((dict(os.environ), "build environment"), (installing, "installing environment")):
        found = _probe(environment)
        if found:
            return ExecutorchLocation(found[0], found[1], where)
    return None


def find() -> ExecutorchLocation | None:
    """The executorch to build against (the order above), or None when no environment has one."""
    return _given or _found()
