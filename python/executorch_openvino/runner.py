"""The ``executorch-openvino-run`` command: starts the C++ runner shipped in the wheel (``native/runner.cpp``).

The runner itself needs no Python: it can be copied with the ``executorch``
package's ``lib/`` folder and run as ``executorch_openvino_run``. This entry
point only makes it a command on ``PATH``; ``--help`` lists its options.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

RUNNER = Path(__file__).with_name("executorch_openvino_run")


def main() -> None:
    if not RUNNER.is_file():
        sys.exit(f"executorch-openvino-run: {RUNNER} is missing: this wheel was built without the runner "
                 "(it is built on Linux only for now)")
    os.execv(RUNNER, [str(RUNNER), *sys.argv[1:]])
