"""The package's layout rules, read from the installed package's sources (docs/development.md, "Layout").

- no import cycle between the package's modules (imports inside functions count too: a cycle there is
  a module that cannot be understood without the other);
- ``runtime/`` imports nothing from ``lowering/`` and never OpenVINO's Python package;
- ``lowering/ops.py`` and the passes import nothing of the package but ``lowering/ops.py``.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

PACKAGE = "executorch_openvino"
ROOT = Path(importlib.util.find_spec(PACKAGE).origin).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The modules `path` imports, absolute names (package-internal ones resolved; ``from . import x``
    gives the module ``x`` where it is one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found.add(base)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if _source_of(candidate) is not None:
                    found.add(candidate)
    return found


def _source_of(module: str) -> Path | None:
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    relative = Path(*module.split(".")[1:])
    for candidate in (ROOT / relative.with_suffix(".py"), ROOT / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, or None. A package's ``__init__`` importing its own submodules is
    not a cycle with them (Python loads the package first)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph[name]):
            if target == name.rsplit(".", 1)[0] or name.startswith(target + "."):
                continue  # a module imports its own package (its __init__), which Python has already begun
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state:
            found = visit(name)
            if found:
                return found
    return None


def test_the_package_has_no_import_cycle():
    graph = _graph()
    assert len(graph) > 30 and f"{PACKAGE}.lowering.passes" in graph  # the sources were found
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_runtime_side_needs_no_lowering_and_no_openvino_python_package():
    for path in (ROOT / "runtime").rglob("*.py"):
        imports = _imports(path)
        assert not {m for m in imports if m.startswith(f"{PACKAGE}.lowering")}, path.name
        assert not {m for m in imports if m == "openvino" or m.startswith("openvino.")}, path.name


def test_passes_and_the_shared_leaf_import_only_the_leaf():
    allowed = {f"{PACKAGE}.lowering.ops", f"{PACKAGE}.lowering.passes"}
    leaves = [ROOT / "lowering" / "ops.py", *(ROOT / "lowering" / "passes").glob("*.py")]
    for path in leaves:
        inside = {m for m in _imports(path) if m.startswith(PACKAGE)}
        own = {m for m in inside if m.startswith(f"{PACKAGE}.lowering.passes")}
        assert inside - own <= allowed, (path.name, inside - own - allowed)
