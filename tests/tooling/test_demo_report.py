"""docs/demo.md holds only the demo run's figures (orchestration/demo_report.py; issue 37: the page said 0.45 MB
where the run's wheel had another size, and typed the limits)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from orchestration import demo_report

ROOT = Path(__file__).resolve().parents[2]
FIGURE = re.compile(r"(?<![\w./-])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w/])")  # 20, 0.99999, 1e-04; not python3, avx512
SUMMARY = {"openvino": "2099.1.0-test", "cpu": {"name": "Test CPU", "cores": 3, "flags": ["avx2"],
                                                 "capabilities": ["FP32"]},
           "batch": [5, 17], "pte_mb": 71.3, "lower_s": 12.9, "delegated": 298, "total": 301, "partitions": 2,
           "max_abs": 2.5e-6, "min_cosine": 0.99999871, "delegate_ms": 13.57, "eager_ms": 24.68, "repeats": 9,
           "passed": True, "max_abs_limit": 3e-3, "min_cosine_limit": 0.97, "load_average": 2.25,
           "on_executorch": ["aten.where.self x2: test reason", "aten.full.default x1: other reason"]}


def _literal_text(function: ast.FunctionDef) -> list[str]:
    """The string literals of `function`'s body that reach its output: not its docstring, not format specs."""
    specs = {id(n.format_spec) for n in ast.walk(function) if isinstance(n, ast.FormattedValue) and n.format_spec}
    inside_specs = {id(c) for n in ast.walk(function) if id(n) in specs for c in ast.walk(n)}
    docstring = function.body[0].value if isinstance(function.body[0], ast.Expr) else None
    return [n.value for n in ast.walk(function) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in inside_specs and n is not docstring]


def test_the_page_types_no_figure():
    tree = ast.parse((ROOT / "orchestration" / "demo_report.py").read_text())
    (page,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "page"]
    typed = [text for text in _literal_text(page) if FIGURE.search(text)]
    assert not typed, f"figures typed into docs/demo.md's generator: {typed}"


def test_the_literal_reader_sees_a_typed_figure():
    function = ast.parse('def f(x):\n    "doc 1"\n    return f"{x:.2f} (limit 1e-04)"\n').body[0]
    assert _literal_text(function) == [" (limit 1e-04)"]
    assert [bool(FIGURE.search(t)) for t in (" (limit 1e-04)", "(20 runs)", "python3 -m nox", "avx2/avx512")] == [
        True, True, False, False]


def test_the_page_states_the_run_s_limits_and_the_wheel_s_size(tmp_path):
    wheel = tmp_path / "executorch_openvino-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"\0" * 1_234_567)
    text = demo_report.page(SUMMARY, wheel, 101.4, "abc1234", "2099-01-02")
    rows = dict(re.findall(r"^\| ([^|]+) \| (.+) \|$", text, re.M))
    assert rows["max abs difference"] == "2.500e-06 (limit 3e-03)"
    assert rows["min cosine"] == "0.99999871 (limit 0.97)"
    assert rows["wheel"] == f"{wheel.name}, 1.23 MB" == demo_report.wheel_figure(wheel)
    assert rows["demo session"].startswith("101 s ")
    assert rows["delegated operators"] == "298/301 in 2 partition(s)"
    assert rows["date, commit"] == "2099-01-02, abc1234"
    assert rows["on ExecuTorch"] == "aten.where.self x2: test reason; aten.full.default x1: other reason"
    assert rows["median latency"].endswith("(9 runs; load average 2.2)")


def test_a_summary_from_before_the_load_average_and_the_remainder_still_makes_a_page(tmp_path):
    older = {k: v for k, v in SUMMARY.items() if k not in ("load_average", "on_executorch")}
    rows = dict(re.findall(r"^\| ([^|]+) \| (.+) \|$", demo_report.page(older, tmp_path, 1.0, "a", "b"), re.M))
    assert rows["on ExecuTorch"] == "nothing" and rows["median latency"].endswith("(9 runs)")


def test_the_demo_writes_the_limits_into_its_summary():
    source = (ROOT / "python" / "executorch_openvino" / "examples" / "minilm.py").read_text()
    assert '"max_abs_limit": MAX_ABS_LIMIT' in source and '"min_cosine_limit": COSINE_LIMIT' in source
