"""One fresh process that restores an OpenVINOBackend checkpoint and reports resident memory per state (for ``bench.py``).

Usage::

    python lifecycle_probe.py CHECKPOINT.json INPUTS.pt

Prints one JSON line of resident memory (MiB, ``VmRSS``): ``checkpoint_loaded``
(after ``from_dict``, nothing loaded), ``active`` (after ``activate()`` and 3
calls), ``inactive`` (after ``deactivate()``), ``active_again`` and
``inactive_again`` (a second cycle: what stays with the process), plus
``compiled_models`` alive when active and when inactive.
"""

from __future__ import annotations

import json
import sys


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024  # kB


def main() -> None:
    import torch

    import executorch_openvino as exov
    from executorch_openvino.runtime import _native

    checkpoint, inputs = sys.argv[1], list(torch.load(sys.argv[2]))
    exov.load_openvino()  # the library's own memory is not the backend's
    backend = exov.OpenVINOBackend.from_dict(None, json.loads(open(checkpoint).read()))
    figures = {"checkpoint_loaded": _rss_mib()}
    for suffix in ("", "_again"):
        backend.activate()
        for _ in range(3):
            backend.infer(*inputs)
        figures["active" + suffix] = _rss_mib()
        figures["compiled_models_active"] = _native.live_compiled_models()
        backend.deactivate()
        figures["inactive" + suffix] = _rss_mib()
        figures["compiled_models_inactive"] = _native.live_compiled_models()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
