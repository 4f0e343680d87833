"""The ``executorch-openvino-run`` command: starts the C++ runner shipped in the wheel (``native/runner.cpp``).

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
RUNNER = Path(files(__package__).joinpath("executorch_openvino_run"))


def main() -> None:
    if not RUNNER.is_file():
        sys.exit(f"executorch-openvino-run: {RUNNER} is missing: this wheel was built without the runner "
                 "(it is built on Linux only for now)")
    os.execv(RUNNER, [str(RUNNER), *sys.argv[1:]])
