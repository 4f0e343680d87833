"""Runs ExecuTorch's operator conformance suite against the installed executorch_openvino.

    python run_suite.py [--min-passed N] [pytest arguments...]

Runs pytest on ``executorch/backends/test/suite/operators`` of the installed
executorch wheel with the ``exov_flow`` plugin (beside this file), from the
current directory (keep it outside the source tree, so the installed
``executorch_openvino`` is imported). Extra arguments go to pytest, e.g.
``-n 2`` (pytest-xdist) or ``-k add``. Exits non-zero when a test failed or
fewer than ``--min-passed`` tests passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-passed", type=int, default=0)
    parser.add_argument("--report", help="write the per-operator JSON summary here")
    args, pytest_args = parser.parse_known_args()

    import executorch.backends.test.suite.operators as operators  # the installed suite

    suite = Path(operators.__file__).parent
    report = args.report or os.path.join(tempfile.mkdtemp(prefix="exov-conformance-"), "summary.json")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    env["EXOV_CONFORMANCE_REPORT"] = report
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")  # leave site-packages as installed
    command = [sys.executable, "-m", "pytest", str(suite), "-p", "exov_flow", "-p", "no:cacheprovider",
               "--rootdir", str(suite.parent), "-q", "-rN", "--disable-warnings", *pytest_args]
    print("+", " ".join(command), flush=True)
    code = subprocess.call(command, env=env)
    if not os.path.exists(report):
        print(f"no summary was written (pytest exit code {code})", file=sys.stderr)
        return code or 1
    total = json.load(open(report))["total"]
    if total["failed"]:
        return 1
    if total["passed"] < args.min_passed:
        print(f"only {total['passed']} tests passed, fewer than the {args.min_passed} required", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
