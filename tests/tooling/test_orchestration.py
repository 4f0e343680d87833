"""What orchestration/ decides without a build: wheel tags, stale wheels, exclusion lists, the release's
index and checksums, interpreter discovery, and the session list."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import nox
import pytest

from orchestration import interpreters, package_index, pins, release, test_runs, wheel_build

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("python", "tag"), [("3.10", "cp310-cp310"), ("3.11", "cp311-cp311"),
                                             ("3.12", "cp312-abi3"), ("3.13", "cp312-abi3"), ("3.14", "cp312-abi3")])
def test_release_tag_is_the_interpreter_s_own_or_the_abi3_wheel(python, tag):
    assert pins.release_tag(python) == tag


def test_release_tag_refuses_an_interpreter_without_a_wheel():
    with pytest.raises(KeyError):
        pins.release_tag("3.9")


def test_every_install_interpreter_has_a_release_wheel():
    assert {pins.release_tag(p) for p in pins.INSTALL_PYTHONS} == set(pins.RELEASE_WHEEL_TAGS.values())


def test_the_release_expects_an_sdist_and_a_wheel_per_tag_and_architecture():
    names = release.expected_artifacts("0.1.0")
    assert "executorch_openvino-0.1.0.tar.gz" in names
    assert "executorch_openvino-0.1.0-cp312-abi3-manylinux_2_28_aarch64.whl" in names
    assert len(names) == 1 + 2 * len(pins.RELEASE_WHEEL_TAGS)


def test_a_wheel_older_than_a_source_is_stale(tmp_path):
    old, new = tmp_path / "executorch_openvino-0.1-a.whl", tmp_path / "executorch_openvino-0.2-a.whl"
    for path, stamp in ((old, 100), (new, 200)):
        path.write_bytes(b"")
        os.utime(path, (stamp, stamp))
    assert wheel_build.fresh_wheel(tmp_path, 150) == new
    assert wheel_build.fresh_wheel(tmp_path, 250) is None
    assert wheel_build.fresh_wheel(tmp_path / "missing", 0) is None


def test_exclusion_lists_skip_comments_and_blank_lines(tmp_path):
    (tmp_path / "x.txt").write_text("# why\nlibopenvino*.so*\n\n  libtbb.so.12  # kept out\n")
    assert wheel_build.exclusions("x.txt", tmp_path) == ["libopenvino*.so*", "libtbb.so.12  # kept out"]


def test_the_project_s_exclusion_lists_are_not_empty():
    for name in ("auditwheel-exclude.txt", "delvewheel-exclude.txt"):
        assert wheel_build.exclusions(name), name


def test_the_index_links_every_artifact_with_its_hash(tmp_path):
    (tmp_path / "executorch_openvino-0.1.0.tar.gz").write_bytes(b"sdist")
    (tmp_path / "executorch_openvino-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"wheel")
    (tmp_path / "notes.txt").write_text("not an artifact")
    sums = package_index.write_sha256sums(tmp_path).read_text().splitlines()
    assert sums == [f"{hashlib.sha256(b'wheel').hexdigest()}  executorch_openvino-0.1.0-cp311-cp311-"
                    "manylinux_2_28_x86_64.whl", f"{hashlib.sha256(b'sdist').hexdigest()}  "
                    "executorch_openvino-0.1.0.tar.gz"]
    root = package_index.write_simple_index(tmp_path, "Executorch_OpenVINO", ">=3.10")
    assert 'href="executorch-openvino/"' in (root / "index.html").read_text()
    page = (root / "executorch-openvino" / "index.html").read_text()
    assert page.count("<a ") == 2 and "notes.txt" not in page
    assert f'../../executorch_openvino-0.1.0.tar.gz#sha256={hashlib.sha256(b"sdist").hexdigest()}' in page
    assert 'data-requires-python="&gt;=3.10"' in page


def _fake_pyenv(root: Path, *versions: str) -> None:
    for version in versions:
        minor = ".".join(version.split(".")[:2]).rstrip("t")
        executable = root / "versions" / version / "bin" / f"python{minor}"
        executable.parent.mkdir(parents=True)
        executable.write_text("#!/bin/sh\n")
        executable.chmod(0o755)


def test_pyenv_discovery_takes_the_newest_patch_release_and_no_free_threaded_build(tmp_path, monkeypatch):
    _fake_pyenv(tmp_path, "3.12.1", "3.12.10", "3.12.3t", "3.13.0")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert interpreters._pyenv_interpreter("3.12") == tmp_path / "versions" / "3.12.10" / "bin" / "python3.12"
    assert interpreters._pyenv_interpreter("3.10") is None


def test_expose_links_a_pyenv_interpreter_and_reports_a_missing_one(tmp_path, monkeypatch):
    _fake_pyenv(tmp_path / "pyenv", "3.97.2")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    found = interpreters.expose(["3.97", "3.98"], tmp_path / "links")
    assert found["3.97"] == str(tmp_path / "pyenv" / "versions" / "3.97.2" / "bin" / "python3.97")
    assert (tmp_path / "links" / "python3.97").resolve() == Path(found["3.97"])
    assert found["3.98"].startswith("not installed")
    assert os.environ["PATH"].split(os.pathsep)[0] == str(tmp_path / "links")


def test_sessions_pass_their_selection_and_pytest_s_own_options_come_from_pyproject():
    args = test_runs.pytest_args("native")
    assert args[-2:] == ["-m", "native"]
    assert "-m" not in test_runs.pytest_args("")
    # A plain `pytest tests/<dir>` behaves as the sessions do (issue 52): the options live where pytest looks.
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert {"--import-mode=importlib", "--strict-markers"} <= set(options["addopts"]) and options["xfail_strict"]
    assert not {"--import-mode=importlib", "--strict-markers"} & set(args)


def _session_functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_the_noxfile_holds_short_sessions_only():
    source = (ROOT / "noxfile.py").read_text()
    assert len(source.splitlines()) <= 250
    tree = ast.parse(source)
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Import", "Assign", "FunctionDef"}, kinds
    for name, node in _session_functions().items():
        body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        assert len(body) <= 3, f"session {name} has {len(body)} statements: move its steps to orchestration/"


def test_ci_names_sessions_that_exist():
    import nox.registry
    import noxfile

    sessions = set(nox.registry.get())
    assert {name.split("-")[0].split("(")[0] for name in noxfile.CI} <= sessions, set(noxfile.CI) - sessions


def test_a_subset_that_selects_nothing_names_the_sessions_markers_and_the_way_out(monkeypatch, tmp_path):
    logged = []

    class Session:
        posargs = ["-k", "test_bad_inputs"]
        log = staticmethod(logged.append)
        create_tmp = staticmethod(lambda: str(tmp_path))
        chdir = staticmethod(lambda path: contextlib.nullcontext())

        @staticmethod
        def run(*args, **kwargs):
            raise nox.command.CommandFailed("Returned code 5", return_code=test_runs.NOTHING_SELECTED)

    monkeypatch.setattr(test_runs, "other_openvino_runtime", lambda session, openvino: tmp_path)
    with pytest.raises(nox.command.CommandFailed):
        test_runs.run_suite(Session(), tmp_path / "x.whl", pins.OPENVINO_NEWEST, "not slow and not native")
    assert logged == [test_runs.nothing_selected_hint("not slow and not native")]
    assert '`-m "not slow and not native"`' in logged[0] and "-m native -k" in logged[0]


def test_a_misspelled_marker_after_the_double_dash_is_named_before_pytest_runs():
    # Under pytest-xdist pytest's own refusal is an INTERNALERROR naming a "crashed" test (seen by hand).
    assert test_runs.unknown_markers(["-m", "slwo and not native", "-k", "x"]) == ["slwo"]
    assert test_runs.unknown_markers(["-mslow", "-m", "native or runner"]) == []
    assert test_runs.unknown_markers(["-k", "slwo"]) == []
    assert {"slow", "native", "sampled", "xfail"} <= test_runs.registered_markers()


def test_pytest_takes_the_last_marker_expression(tmp_path):
    (tmp_path / "test_x.py").write_text("import pytest\n@pytest.mark.native\ndef test_a():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "test_x.py"), "-q", "-p", "no:cacheprovider",
                           "-W", "ignore::pytest.PytestUnknownMarkWarning", "-m", "not native", "-m", "native"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout
