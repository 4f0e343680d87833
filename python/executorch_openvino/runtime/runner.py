"""The ``executorch-openvino-run`` command: starts the C++ runner shipped in the wheel (``native/runner/runner.cpp``).

The runner itself needs no Python: it can be copied with the ``executorch``
package's ``lib/`` folder and run as ``executorch_openvino_run``. This entry
point only makes it a command on ``PATH``; ``--help`` lists its options.
"""

from __future__ import annotations

import os
import sys
from importlib.resources import files
from pathlib import Path

# Found through the package's resources, not __file__: an editable install
# serves this file from the source tree and the runner from where the build put it.
# (a file of the package: joinpath gives a pathlib.Path, which typeshed calls a Traversable)
RUNNER = Path(files("executorch_openvino").joinpath("executorch_openvino_run"))  # type: ignore[arg-type]


def _pip_openvino_elsewhere() -> str | None:
    """The pip package's C library when the runner is not next to that package.

    That is an editable install with ``editable.rebuild=true``, whose runner lives
    in the build folder: the runner's own search (the package next to its folder)
    cannot find the environment's ``openvino`` there.
    """
    if (RUNNER.parent.parent / "openvino").is_dir():
        return None
    from .library_discovery import pip_openvino_library_dir

    libs = pip_openvino_library_dir()
    found = sorted(libs.glob("libopenvino_c.so*")) if libs else []
    return str(found[0]) if found else None


def main() -> None:
    if not RUNNER.is_file():
        sys.exit(f"executorch-openvino-run: {RUNNER} is missing. " + (
            "The runner is built on Linux only for now: this platform's package has none."
            if not sys.platform.startswith("linux") else
            "Linux wheels and editable installs carry it, so this installation is incomplete: reinstall "
            "(pip install --force-reinstall executorch-openvino, or pip install -e <source> again)."))
    if "OPENVINO_LIB_PATH" not in os.environ and "--openvino-lib" not in sys.argv:
        library = _pip_openvino_elsewhere()
        if library:
            os.environ["OPENVINO_LIB_PATH"] = library
    os.execv(RUNNER, [str(RUNNER), *sys.argv[1:]])
