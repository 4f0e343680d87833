"""orchestration/'s import rules: it runs inside nox's own interpreter, which may be as old as the oldest
supported CPython (.github/workflows/release.yml runs nox on 3.10), so it imports only the standard library,
nox and itself, at module level nothing newer than 3.10, and no module depends on itself through others."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "orchestration"
NEWER_THAN_310 = {"tomllib"}  # standard-library modules that 3.10 lacks


def _module_level_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == "orchestration":
                found.update(f"orchestration.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = {f"orchestration.{p.stem}": p for p in FOLDER.glob("*.py") if p.name != "__init__.py"}
    return {name: {m for m in _module_level_imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start, [])):
            return found
    return []


def test_orchestration_imports_the_standard_library_nox_and_itself_only():
    allowed = set(sys.stdlib_module_names) | {"nox", "orchestration", "__future__"}
    for path in [*FOLDER.glob("*.py"), ROOT / "noxfile.py"]:
        outside = {m for m in _module_level_imports(path) if m.split(".")[0] not in allowed}
        assert not outside, f"{path.name} imports {outside}"
        newer = _module_level_imports(path) & NEWER_THAN_310
        assert not newer, f"{path.name} imports {newer} at module level: nox on 3.10 could not load it"


def test_orchestration_has_no_import_cycle():
    assert _cycle(_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
