"""`nox -s demo -- --publish`: docs/demo.md from the demo's own figures (examples/minilm.py --summary), so that
the figures the docs quote are that run's, never retyped: every number in the page comes from the summary, the
wheel file or the session's clock, and the session prints the page it wrote (tests/tooling/test_demo_report.py)."""

from __future__ import annotations

import json
import subprocess
from datetime import date
from pathlib import Path


def wheel_figure(wheel: Path) -> str:
    """The wheel as the demo session prints it and the page states it: its name and size."""
    return f"{wheel.name}, {wheel.stat().st_size / 1e6:.2f} MB"


def page(summary: dict, wheel: Path, session_s: float, commit: str, day: str) -> str:
    """docs/demo.md's text from the JSON that examples/minilm.py --summary wrote (`summary`), the wheel the
    session installed, the session's wall time (install, lower, run; the wheel build is the repair
    session's), the commit and the day."""
    s = summary
    cpu = s["cpu"]
    rows = [
        ("date, commit", f"{day}, {commit}"),
        ("CPU", f"{cpu['name']}, {cpu['cores']} cores; flags {', '.join(cpu['flags']) or 'none of avx2/avx512'}; "
                f"OpenVINO capabilities {', '.join(cpu['capabilities'])}"),
        ("OpenVINO", s["openvino"]),
        ("wheel", wheel_figure(wheel)),
        ("demo session", f"{session_s:.0f} s (install in a fresh venv, lower, run; after the repair session)"),
        ("input", f"{tuple(s['batch'])} tokens"),
        (".pte", f"{s['pte_mb']} MB, lowered in {s['lower_s']} s"),
        ("delegated operators", f"{s['delegated']}/{s['total']} in {s['partitions']} partition(s)"),
        ("on ExecuTorch", "; ".join(s.get("on_executorch", [])) or "nothing"),
        ("max abs difference", f"{s['max_abs']:.3e} (limit {s['max_abs_limit']:.0e})"),
        ("min cosine", f"{s['min_cosine']:.8f} (limit {s['min_cosine_limit']})"),
        ("median latency", f"{s['delegate_ms']} ms ExecuTorch+OpenVINO, {s['eager_ms']} ms eager PyTorch "
                           f"({s['repeats']} runs{_load(s.get('load_average'))})"),
        ("result", "PASS" if s["passed"] else "FAIL"),
    ]
    lines = ["# The demo's last published run", "",
             "Written by `python3 -m nox -s demo -- --publish` (orchestration/demo_report.py) from the figures "
             "the demo printed; nothing here is typed by hand.", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines) + "\n"


def _load(load: float | None) -> str:
    """The run's 1-minute load average, which says whether other work shared the CPU."""
    return "" if load is None else f"; load average {load:.1f}"


def publish(summary_file: Path, wheel: Path, session_s: float, out: Path, root: Path) -> str:
    """Writes `out` (page() of the summary in `summary_file`, at the checkout's commit, today) and returns it."""
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    text = page(json.loads(summary_file.read_text()), wheel, session_s, commit, date.today().isoformat())
    out.write_text(text)
    return text
