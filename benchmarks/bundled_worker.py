"""Runs executorch's bundled ``OpenvinoBackend`` for ``bench.py``, in its own environment.

That environment holds executorch 1.5.1, openvino 2025.4.1 and the ``nncf``
release its Python side imports (3.1.0: 2.19 needs a torch.ao module torch
2.13 lacks, 3.4 needs OpenVINO 2026), plus this wheel for the MiniLM example.
Protocol: one JSON command per stdin line, one JSON reply per line on the
original stdout (library logs go to stderr):

- ``{"command": "prepare", "case": NAME, "workdir": DIR}`` ->
  ``{"lower_s", "load_s", "first_call_s", "max_abs"}``
- ``{"command": "time", "calls": N}`` -> ``{"times": [seconds, ...]}``
- ``{"command": "close"}``, ``{"command": "quit"}`` -> ``{}``

A failure is replied as ``{"error": message}``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

import torch
from engines import ExecutorchProgram
from models import make_case


class BundledLocal(ExecutorchProgram):
    key = "bundled"

    def _lower(self, case):
        from executorch.backends.openvino.partitioner import OpenvinoPartitioner
        from executorch.exir import to_edge_transform_and_lower
        from executorch.exir.backend.compile_spec_schema import CompileSpec

        exported = case.export()
        partitioner = OpenvinoPartitioner([CompileSpec("device", b"CPU")])
        return to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch()


def main() -> None:
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything printed by the libraries goes to stderr
    engine = None
    for line in sys.stdin:
        command = json.loads(line)
        try:
            if command["command"] == "prepare":
                case = make_case(command["case"])
                with torch.inference_mode():
                    expected = case.module(*case.inputs)
                engine = BundledLocal()
                max_abs = engine.prepare(case, Path(command["workdir"]), expected)
                reply = {"lower_s": engine.lower_s, "load_s": engine.load_s, "first_call_s": engine.first_call_s,
                         "max_abs": max_abs}
            elif command["command"] == "time":
                reply = {"times": engine.time_calls(command["calls"])}
            elif command["command"] == "close":
                engine.close()
                reply = {}
            elif command["command"] == "quit":
                replies.write("{}\n")
                replies.flush()
                return
            else:
                reply = {"error": f"unknown command {command['command']!r}"}
        except Exception as exc:  # reported to bench.py, which stops with it
            traceback.print_exc()
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
