"""The checking process: ``python -m program_fuzz.worker RESULT_FD WORKDIR``.

Reads jobs, one JSON object per line, on stdin::

    {"id": 3, "spec": {...}, "run_seed": 0, "paths": [...], "options": {...}}

and writes JSON lines to the file descriptor RESULT_FD: ``{"ready": pid}`` once
the imports are done, ``{"id": 3, "stage": "exov.lower:run1"}`` before each
step (so that the parent knows where a crash happened), then
``{"id": 3, "outcome": {...}}``. Its stdout and stderr (ExecuTorch's and
OpenVINO's logs) go wherever the parent sends them. A job with
``"debug": "crash at exov.lower:run1"`` (or ``"hang at ..."``) kills (or stalls)
the worker at that step, to test the parent's handling of both.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path


def main() -> None:
    results = os.fdopen(int(sys.argv[1]), "w", buffering=1)
    workdir = Path(sys.argv[2])
    workdir.mkdir(parents=True, exist_ok=True)

    def send(message: dict) -> None:
        results.write(json.dumps(message) + "\n")
        results.flush()

    import executorch_openvino  # noqa: F401 - registers the delegate with ExecuTorch's runtime

    from .check import PATHS, check_program

    send({"ready": os.getpid()})
    for line in sys.stdin:
        job = json.loads(line)
        print(f"=== job {job.get('id')} ===", file=sys.stderr, flush=True)

        def progress(stage: str, job=job) -> None:
            send({"id": job["id"], "stage": stage})
            if job.get("debug") == f"crash at {stage}":
                os.kill(os.getpid(), signal.SIGSEGV)
            if job.get("debug") == f"hang at {stage}":
                time.sleep(3600)

        try:
            outcome = check_program(job["spec"], run_seed=job.get("run_seed", 0), paths=job.get("paths") or PATHS,
                                    workdir=workdir, options=job.get("options"), progress=progress)
        except Exception:  # noqa: BLE001 - the fuzzer's own bug: reported, never hidden
            outcome = {"status": "failed", "paths": {}, "seconds": 0.0,
                       "detail": "the fuzzer itself raised:\n" + traceback.format_exc()[-3000:],
                       "harness_error": True}
        sys.stdout.flush()
        sys.stderr.flush()
        send({"id": job["id"], "outcome": outcome})


if __name__ == "__main__":
    main()
