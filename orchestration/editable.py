"""The steps of `nox -s editable`: a copy of the sources to install and edit, the edits, a stand-in
for pip's build isolation, and the time each step took."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import nox

from orchestration import ROOT


def copy_sources(source: Path, names: list[str]) -> None:
    """The repository's files and folders `names` copied into `source` (the session edits the copy)."""
    source.mkdir(parents=True)
    for name in names:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)


def edit_python(source: Path, probe: str) -> None:
    """A Python edit of the copy: compile_specs.EDITABLE_PROBE = probe."""
    with (source / "python" / "executorch_openvino" / "compile_specs.py").open("a") as f:
        f.write(f"\nEDITABLE_PROBE = {probe}  # nox -s editable\n")


def edit_cxx(source: Path, probe: str) -> None:
    """A C++ edit of the copy: a new attribute of _native (EDITABLE_PROBE) and a new function in the
    delegate library (exov_editable_probe), both returning probe."""
    module = source / "native" / "python_module.cpp"
    text = module.read_text()
    attribute = '  m.attr("BACKEND_ID") = executorch_openvino::kBackendId;\n'
    assert text.count(attribute) == 1, f"{module} changed: update the editable session's probe"
    module.write_text(text.replace(attribute, attribute + f'  m.attr("EDITABLE_PROBE") = {probe};\n'))
    with (source / "native" / "compile_specs.cpp").open("a") as f:
        exported = 'extern "C" __attribute__((visibility("default")))'
        f.write(f"\n{exported} int exov_editable_probe() {{ return {probe}; }}\n")


def isolated_executorch(executorch: Path, folder: Path) -> Path:
    """A folder for PYTHONPATH holding a copy (symbolic links) of the `executorch` package.

    pip's isolation puts a build environment of its own first on sys.path through
    PYTHONPATH; such a copy of the executorch package stands in for it.
    """
    fake = folder / "executorch"
    fake.mkdir(parents=True)
    for entry in executorch.iterdir():
        (fake / entry.name).symlink_to(entry)
    return folder


class TimedSteps:
    """session.run, with the time each named step took summed up for the session's last line."""

    def __init__(self, session: nox.Session):
        self.session = session
        self.started = time.monotonic()
        self.times: dict[str, float] = {}

    def run(self, name: str, *args, **kwargs):
        begin = time.monotonic()
        result = self.session.run(*args, **kwargs)
        self.times[name] = self.times.get(name, 0.0) + time.monotonic() - begin
        return result

    def summary(self) -> str:
        return ("times: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in self.times.items())
                + f"; session {time.monotonic() - self.started:.0f} s")


def new_probe() -> str:
    """A six-digit value the edits write and the checks look for (a new one each run)."""
    return str(100000 + int(time.time()) % 900000)
