"""tests/ holds tests grouped by what they test: no sys.path edits, no test module importing another (shared code
lives in tests/support/exov_testing/), and a test module named after each lowering pass."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
GROUPS = {"lowering", "numerics", "runtime", "native", "packaging", "llm", "aarch64", "tooling"}


def _test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def _sys_path_edits(tree: ast.AST) -> list[str]:
    """Every use of ``sys.path`` (calls, assignments, slices) and ``from sys import path`` outside strings."""
    found = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and ast.unparse(node) == "sys.path"]
    found += [f"from sys import {a.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
              and node.module == "sys" for a in node.names if a.name == "path"]
    return found


def test_no_python_file_under_tests_edits_sys_path():
    edits = {str(p.relative_to(ROOT)): found for p in sorted(TESTS.rglob("*.py"))
             if (found := _sys_path_edits(ast.parse(p.read_text())))}
    assert not edits, edits


def test_no_test_module_imports_another_or_the_conftest():
    found = {}
    for path in _test_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad = [n for n in names if n.split(".")[-1].startswith("test_") or n.split(".")[0] == "conftest"]
            if bad:
                found[str(path.relative_to(ROOT))] = bad
    assert not found, found


def test_every_test_module_is_in_a_group():
    loose = [p.name for p in _test_modules() if p.relative_to(TESTS).parts[0] not in GROUPS]
    assert not loose, f"test modules outside {sorted(GROUPS)}: {loose}"


def test_each_lowering_pass_has_a_test_module_named_after_it():
    passes = sorted(p.stem for p in (ROOT / "python" / "executorch_openvino" / "lowering" / "passes").glob("*.py")
                    if p.name != "__init__.py")
    missing = [name for name in passes if not (TESTS / "lowering" / "passes" / f"test_{name}.py").is_file()]
    assert not missing, f"lowering passes without tests/lowering/passes/test_<name>.py: {missing}"


def test_the_sys_path_check_sees_an_edit():
    assert _sys_path_edits(ast.parse("import sys\nsys.path.insert(0, 'x')\n")) == ["sys.path"]
    assert _sys_path_edits(ast.parse("import sys\nsys.path[:0] = ['x']\n")) == ["sys.path"]
    assert _sys_path_edits(ast.parse("from sys import path\n")) == ["from sys import path"]
    assert _sys_path_edits(ast.parse("code = 'sys.path.insert(0, 1)'\n")) == []
