"""`nox -s demo -- --publish`: docs/demo.md from the demo's own figures (examples/minilm.py --summary), so that
the figures the docs quote are that run's, never retyped."""

from __future__ import annotations

import json
import subprocess
from datetime import date
from pathlib import Path


def publish(summary_file: Path, wheel: Path, session_s: float, out: Path, root: Path) -> None:
    """Writes `out` from the JSON that examples/minilm.py --summary wrote, with the wheel's size and the
    demo session's wall time (install, lower, run; the wheel build is the repair session's)."""
    s = json.loads(summary_file.read_text())
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    cpu = s["cpu"]
    rows = [
        ("date, commit", f"{date.today().isoformat()}, {commit}"),
        ("CPU", f"{cpu['name']}, {cpu['cores']} cores; flags {', '.join(cpu['flags']) or 'none of avx2/avx512'}; "
                f"OpenVINO capabilities {', '.join(cpu['capabilities'])}"),
        ("OpenVINO", s["openvino"]),
        ("wheel", f"{wheel.name}, {wheel.stat().st_size / 1e6:.2f} MB"),
        ("demo session", f"{session_s:.0f} s (install in a fresh venv, lower, run; after the repair session)"),
        ("input", f"{tuple(s['batch'])} tokens"),
        (".pte", f"{s['pte_mb']} MB, lowered in {s['lower_s']} s"),
        ("delegated operators", f"{s['delegated']}/{s['total']} in {s['partitions']} partition(s)"),
        ("max abs difference", f"{s['max_abs']:.3e} (limit 1e-04)"),
        ("min cosine", f"{s['min_cosine']:.8f} (limit 0.99999)"),
        ("median latency", f"{s['delegate_ms']} ms ExecuTorch+OpenVINO, {s['eager_ms']} ms eager PyTorch "
                           f"({s['repeats']} runs)"),
        ("result", "PASS" if s["passed"] else "FAIL"),
    ]
    lines = ["# The demo's last published run", "",
             "Written by `python3 -m nox -s demo -- --publish` (orchestration/demo_report.py) from the figures "
             "the demo printed; nothing here is typed by hand.", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    out.write_text("\n".join(lines) + "\n")
