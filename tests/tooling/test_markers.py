"""The pytest markers that choose what each session runs: registered once, used consistently."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from orchestration import pins, test_runs

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _registered() -> set[str]:
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return {line.split(":", 1)[0].split("(", 1)[0].strip() for line in ini["markers"]}  # "name(args): text"


def _module_markers(path: Path) -> set[str]:
    """The `pytest.mark.<name>` names in a module's `pytestmark`."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}
    return set()


def _markers_anywhere(path: Path) -> set[str]:
    """Every `pytest.mark.<name>` of a module: its pytestmark and its tests' decorators."""
    return {n.attr for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}


def _test_modules() -> dict[str, set[str]]:
    return {str(p.relative_to(TESTS)): _module_markers(p) for p in sorted(TESTS.rglob("test_*.py"))
            if "tooling" not in p.parts}


def test_every_marker_a_session_selects_is_registered():
    names = set()
    for expression in (test_runs.NEWEST_RELEASE_CI, test_runs.SLOW, test_runs.OLDER_RELEASE_CI,
                       test_runs.OLDER_RELEASE_FULL, test_runs.SANITIZED, test_runs.EMULATED):
        names |= set(re.findall(r"[a-z_0-9]+", expression)) - {"not", "and", "or"}
    assert names and names <= _registered(), names - _registered()


BUILTIN = {"parametrize", "skipif", "skip", "xfail", "usefixtures", "filterwarnings"}


def test_every_marker_a_test_uses_is_registered_or_pytests_own():
    unknown = {str(p.relative_to(TESTS)): sorted(found) for p in sorted(TESTS.rglob("test_*.py"))
               if (found := _markers_anywhere(p) - _registered() - BUILTIN)}
    assert not unknown, f"unregistered markers (a misspelling?): {unknown}"


def test_every_registered_marker_is_used_by_a_test_module():
    used = set().union(*(_markers_anywhere(p) for p in TESTS.rglob("test_*.py") if "tooling" not in p.parts))
    unused = _registered() - used
    assert not unused, f"registered in pyproject.toml but on no test module: {unused}"


def test_no_module_runs_with_the_older_release_in_ci_yet_not_in_its_full_run():
    both = [name for name, marks in _test_modules().items() if {"older_openvino", "own_runtime"} <= marks]
    assert not both, both


def test_the_marker_reader_sees_a_list_and_a_single_marker(tmp_path):
    one = tmp_path / "test_one.py"
    one.write_text("import pytest\npytestmark = pytest.mark.native\n")
    many = tmp_path / "test_many.py"
    many.write_text("import pytest\npytestmark = [pytest.mark.own_runtime, pytest.mark.skipif(True, reason='x')]\n")
    assert _module_markers(one) == {"native"}
    assert _module_markers(many) == {"own_runtime", "skipif"}


def test_each_session_selection_is_what_the_module_markers_say():
    modules = _test_modules()
    older = {n for n, m in modules.items() if "older_openvino" in m}
    assert {"numerics/test_operators.py", "llm/test_llm.py", "lowering/test_quantization.py"} <= older
    assert test_runs.selection(pins.OPENVINO_NEWEST) == "not slow and not native"
    assert test_runs.selection(pins.OPENVINO_OLDEST) == "older_openvino and not own_runtime and not slow"
    assert test_runs.selection(pins.OPENVINO_OLDEST, full_older_release=True) == "not own_runtime"
