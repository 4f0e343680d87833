"""Every repository file or folder that orchestration/ names as a path expression (``ROOT / "tests" / "x.py"``,
``layout.TESTS / ...``) exists, outside what the sessions write (build/, dist/)."""

from __future__ import annotations

import ast
from pathlib import Path

from orchestration import layout

ROOT = Path(__file__).resolve().parents[2]
# The names a path expression may start from, and the folders they stand for.
BASES = {"ROOT": ROOT, "layout.TESTS": layout.TESTS, "TESTS": layout.TESTS, "layout.BENCHMARKS": layout.BENCHMARKS,
         "layout.PROGRAM_FUZZ": layout.PROGRAM_FUZZ}
WRITTEN = (layout.BUILD, layout.DIST)


def _named_paths(tree: ast.AST) -> list[Path]:
    found = []
    for node in ast.walk(tree):
        parts: list[str] = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant):
            parts.insert(0, str(node.right.value))
            node = node.left
        base = BASES.get(ast.unparse(node)) if parts else None
        if base is not None:
            found.append(base.joinpath(*parts))
    return found


def test_every_path_orchestration_names_exists():
    missing = []
    for module in sorted((ROOT / "orchestration").glob("*.py")):
        for path in _named_paths(ast.parse(module.read_text())):
            written = any(path == w or w in path.parents for w in WRITTEN)
            if not written and "{" not in str(path) and not path.exists():
                missing.append(f"{module.name}: {path.relative_to(ROOT)}")
    assert not missing, missing


def test_layout_names_existing_folders():
    for name in ("TESTS", "BENCHMARKS", "PROGRAM_FUZZ"):
        assert getattr(layout, name).is_dir(), name


def test_the_reader_follows_a_chain():
    assert ROOT / "tests" / "a.py" in _named_paths(ast.parse('x = ROOT / "tests" / "a.py"'))
