"""Runs checks in a worker subprocess, so that a crash or a hang costs one program, not the run.

A :class:`Worker` starts ``python -m program_fuzz.worker`` on first use, sends it
one program at a time and reads the outcome. When the process dies (SIGSEGV in
OpenVINO, an abort in ExecuTorch) the program is reported as failed with
category ``crash``, the signal, the step it was in and the end of the
worker's log; on a timeout the process is killed and the program reported as
``timeout``. The next check starts a new process. Workers are also restarted
every ``recycle`` programs to keep memory bounded.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

TOOLS_DIR = Path(__file__).resolve().parent.parent  # where `python -m program_fuzz.worker` finds the package
DEFAULT_TIMEOUT = 300.0
STARTUP_TIMEOUT = 300.0


class Worker:
    def __init__(self, workdir: Path, *, python: str = sys.executable, recycle: int = 40):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.python = python
        self.recycle = recycle
        self.log_path = self.workdir / "worker.log"
        self._proc = None
        self._fd = None
        self._buffer = b""
        self._jobs_done = 0
        self._ids = itertools.count()
        self.restarts = 0

    # -- process management
    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(TOOLS_DIR)] + [p for p in [env.get("PYTHONPATH")] if p])
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                [self.python, "-m", "program_fuzz.worker", str(write_fd), str(self.workdir)],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,), env=env,
                cwd=self.workdir, start_new_session=True)
        os.close(write_fd)
        self._fd, self._buffer, self._jobs_done = read_fd, b"", 0
        message = self._read(STARTUP_TIMEOUT)
        if not message or "ready" not in message:
            tail = self.log_tail()
            self.close()
            raise RuntimeError(f"the fuzz worker did not start:\n{tail}")

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                try:
                    self._proc.stdin.close()
                    self._proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    self._kill()
            elif not self._proc.stdin.closed:  # a worker that ended (crashed): its pipe is closed here
                self._proc.stdin.close()
            self._proc = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _kill(self) -> None:
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._proc.wait()

    def log_tail(self, size: int = 3000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        text = data[-size:].decode(errors="replace")
        marker = text.rfind("=== job")
        return text[marker:] if marker >= 0 else text

    def _read(self, timeout: float):
        """The next JSON message, None at end of file, "timeout" after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            # poll, not select: select refuses descriptors past 1023, which a long test run reaches.
            poller = select.poll()
            poller.register(self._fd, select.POLLIN)
            if not poller.poll(left * 1000):
                continue
            chunk = os.read(self._fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    # -- checking
    def check(self, spec, *, run_seed: int = 0, paths=None, options=None, timeout: float = DEFAULT_TIMEOUT,
              debug: str | None = None) -> dict:
        """The outcome of :func:`check.check_program` for `spec`, run in the worker process."""
        if self._proc is None or self._proc.poll() is not None or self._jobs_done >= self.recycle:
            self.close()
            self._start()
        job_id = next(self._ids)
        job = {"id": job_id, "spec": spec, "run_seed": run_seed, "paths": list(paths) if paths else None,
               "options": options or {}}
        if debug:
            job["debug"] = debug
        start = time.monotonic()
        try:
            self._proc.stdin.write((json.dumps(job) + "\n").encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass
        stage = "reference"
        while True:
            message = self._read(max(1.0, timeout - (time.monotonic() - start)))
            if message == "timeout":
                self._kill()
                self.close()
                self.restarts += 1
                return _lost(stage, "timeout", f"no outcome after {timeout:.0f} s during {stage}; killed",
                             time.monotonic() - start)
            if message is None:
                code = self._proc.wait()
                tail = self.log_tail()
                self.close()
                self.restarts += 1
                how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
                return _lost(stage, "crash", f"the worker died ({how}) during {stage}; its log:\n{tail}",
                             time.monotonic() - start)
            if message.get("id") != job_id:
                continue
            if "stage" in message:
                stage = message["stage"]
            elif "outcome" in message:
                self._jobs_done += 1
                return message["outcome"]


def _lost(stage: str, category: str, detail: str, seconds: float) -> dict:
    """The outcome of a program whose worker crashed or hung at `stage` ("path:step" or "reference")."""
    if ":" not in stage:
        return {"status": "invalid", "detail": f"{category} in eager PyTorch or torch.export: {detail}",
                "paths": {}, "seconds": seconds}
    path, step = stage.split(":", 1)
    return {"status": "failed", "seconds": seconds,
            "paths": {path: {"status": "failed", "stage": step, "category": category, "detail": detail,
                             "delegated": [], "partitions": 0}}}
