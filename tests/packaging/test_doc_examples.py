"""The README's and the user guide's commands that no session runs (exov_testing.doc_commands.to_run()), run
against the installed wheel: the README's Quickstart first, checked against eager PyTorch, then each document's
commands in order, in a copy of the folder the Quickstart wrote (issue 37: commands shown, run by nothing)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import executorch_openvino as exov
from exov_testing import doc_commands

pytestmark = [pytest.mark.own_runtime]


@dataclass
class Quickstart:
    folder: Path
    namespace: dict
    printed: str


@contextlib.contextmanager
def _inside(folder: Path):
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _run_python(command: doc_commands.Command, namespace: dict, folder: Path) -> None:
    with _inside(folder):
        exec(compile(command.text, f"{command.document}:{command.line}", "exec"), namespace)


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory) -> Quickstart:
    """The README's Python blocks, in order, in one namespace and an empty folder; then an ov-cache/ there,
    filled by loading the model.pte they wrote (docs/user-guide/model-cache.md's commands look at it)."""
    folder = tmp_path_factory.mktemp("quickstart")
    namespace: dict = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for command in doc_commands.to_run():
            if command.document == "README.md" and command.language == "python":
                _run_python(command, namespace, folder)
    subprocess.run([sys.executable, "-c", "import executorch_openvino as exov; exov.set_cache_dir('ov-cache'); "
                    "exov.load_method('model.pte')"], cwd=folder, check=True, timeout=300)
    return Quickstart(folder, namespace, printed.getvalue())


def test_the_readme_quickstart_runs_on_openvino_equal_to_eager(quickstart):
    ns = quickstart.namespace
    with torch.no_grad():
        expected = ns["model"](ns["x"])
    summary = exov.delegation_summary(ns["program"])
    assert summary.partitions >= 1 and summary.delegated == summary.total, summary.report()
    assert (quickstart.folder / "model.pte").read_bytes() == ns["program"].buffer
    torch.testing.assert_close(ns["method"].execute([ns["x"]])[0], expected)  # "float32 rounding differences only"
    from_upstream_api = exov.load_method(ns["pte"]).execute([ns["x"]])[0]  # the block "with ExecuTorch's own API"
    torch.testing.assert_close(from_upstream_api, expected)
    assert str(exov.library_info()) in quickstart.printed


@pytest.mark.parametrize("document", sorted({c.document for c in doc_commands.to_run()}))
def test_the_commands_a_document_shows_run(document, quickstart, tmp_path):
    folder = tmp_path / "work"
    shutil.copytree(quickstart.folder, folder)
    namespace = dict(quickstart.namespace)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command in [c for c in doc_commands.to_run() if c.document == document]:
        where = f"{command.document}:{command.line}"
        if command.language == "python":
            if command.document != "README.md":  # the README's ran in the quickstart fixture, checked above
                _run_python(command, namespace, folder)
            continue
        done = subprocess.run(["bash", "-c", command.text], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (f"{where}: `{command.text}` exited with {done.returncode}:\n"
                                      f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
