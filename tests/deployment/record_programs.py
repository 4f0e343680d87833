"""Pytest plugin: records every program the test suite runs through ``executorch.runtime``.

Used by the ``install_tree`` nox session to split lowering from running, as a
deployment does: the suite runs in an environment with the ``openvino``
Python package (lowering needs its PyTorch frontend), and each loaded method
is written to ``EXOV_RECORD_DIR`` with the inputs of every call and what the
call gave (outputs, or the error). ``replay_programs.py`` then runs the same
``.pte`` files with the same inputs where OpenVINO comes only from an install
tree, and requires the same results.

    pytest tests -p record_programs      (with tests/deployment on PYTHONPATH)

Layout: ``programs/<sha256>.pte`` once per distinct program, and
``methods/<n>.pt`` (``torch.save``) per loaded method: ``test`` (pytest node
id), ``program`` (the sha256), ``method``, ``load_error`` (text or None) and
``calls`` (``inputs``, ``outputs`` or ``error``) in call order.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import torch

_current_test = ["(outside a test)"]
_numbers = itertools.count()


def _detach(values):
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


class _Recorder:
    def __init__(self, root: Path):
        self.root = root
        (root / "programs").mkdir(parents=True, exist_ok=True)
        (root / "methods").mkdir(parents=True, exist_ok=True)

    def program(self, data) -> str:
        data = Path(data).read_bytes() if isinstance(data, (str, Path)) else bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / "programs" / f"{digest}.pte"
        if not path.exists():
            path.write_bytes(data)
        return digest

    def new_method(self, program: str, name: str) -> dict:
        return {"path": self.root / "methods" / f"{next(_numbers):05d}.pt", "test": _current_test[0],
                "program": program, "method": name, "load_error": None, "calls": []}

    @staticmethod
    def save(record: dict) -> None:
        torch.save({k: v for k, v in record.items() if k != "path"}, record["path"])


def _install(recorder: _Recorder) -> None:
    from executorch import runtime

    load_program, load_method, execute = (runtime.Runtime.load_program, runtime.Program.load_method,
                                          runtime.Method.execute)

    def recording_load_program(self, data, *args, **kwargs):
        if hasattr(data, "read"):
            data = data.read()
        program = load_program(self, data, *args, **kwargs)
        program._exov_sha = recorder.program(data)
        return program

    def recording_load_method(self, name):
        sha = getattr(self, "_exov_sha", None)
        try:
            method = load_method(self, name)
        except Exception as exc:
            if sha is not None:
                record = recorder.new_method(sha, name)
                record["load_error"] = f"{type(exc).__name__}: {exc}"
                recorder.save(record)
            raise
        if sha is not None and not hasattr(method, "_exov_record"):
            method._exov_record = recorder.new_method(sha, name)
            recorder.save(method._exov_record)
        return method

    def recording_execute(self, inputs):
        record = getattr(self, "_exov_record", None)
        inputs = list(inputs)
        call = {"inputs": _detach(inputs), "outputs": None, "error": None}
        try:
            outputs = execute(self, inputs)
        except Exception as exc:
            call["error"] = f"{type(exc).__name__}: {exc}"
            raise
        else:
            call["outputs"] = _detach(outputs)
            return outputs
        finally:
            if record is not None:
                record["calls"].append(call)
                recorder.save(record)

    runtime.Runtime.load_program = recording_load_program
    runtime.Program.load_method = recording_load_method
    runtime.Method.execute = recording_execute


def pytest_configure(config):
    root = os.environ.get("EXOV_RECORD_DIR")
    if not root:
        raise RuntimeError("record_programs needs EXOV_RECORD_DIR, the folder to record into")
    _install(_Recorder(Path(root)))


def pytest_runtest_setup(item):
    _current_test[0] = item.nodeid


def pytest_runtest_teardown(item):
    _current_test[0] = "(outside a test)"
