"""Replays one saved program: ``python -m program_fuzz.replay FILE [--seed N] [--reproducer]``,
run from ``tools/`` (the package's parent folder: no sys.path edit).

FILE is a regression file (``regressions/*.json``) or a bare spec; ``--seed N``
replays the generated program of seed N instead. Prints the program's
``forward``, then its outcome along both lowering paths (checked in a worker
process, so a crash is reported), or with ``--reproducer`` a standalone script.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from program_fuzz.check import PATHS
from program_fuzz.generator import generate
from program_fuzz.pool import Worker
from program_fuzz.spec import module_source, reproducer


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", nargs="?", type=Path)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--path", choices=PATHS, help="one lowering path (default: the file's, or both)")
    parser.add_argument("--reproducer", action="store_true", help="print a standalone script instead")
    args = parser.parse_args(argv)
    if args.seed is not None:
        spec, paths = generate(args.seed), None
    elif args.file:
        data = json.loads(args.file.read_text())
        spec, paths = (data["spec"], data.get("paths")) if "spec" in data else (data, None)
    else:
        parser.error("give a FILE or --seed")
    paths = [args.path] if args.path else paths or list(PATHS)
    if args.reproducer:
        print(reproducer(spec, path=paths[0]))
        return 0
    print(module_source(spec).split("\n\n", 1)[-1])
    worker = Worker(Path(tempfile.mkdtemp(prefix="program-fuzz-replay-")))
    try:
        outcome = worker.check(spec, paths=paths)
    finally:
        worker.close()
    print(json.dumps(outcome, indent=1))
    return 1 if outcome["status"] == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())
