"""The steps of `nox -s editable`: a copy of the sources to install and edit, the edits, a stand-in
for pip's build isolation, and the time each step took."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import nox

from orchestration import ROOT, environments, site_packages

FOLDER = ROOT / "build" / "editable-check"
# What an editable install of the project reads (copied: the session edits the copy).
SOURCES = ["pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "cmake", "native", "python", "wheels"]


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
    with (source / "python" / "executorch_openvino" / "contract" / "compile_specs.py").open("a") as f:
        f.write(f"\nEDITABLE_PROBE = {probe}  # nox -s editable\n")


def edit_cxx(source: Path, probe: str) -> None:
    """A C++ edit of the copy: a new attribute of _native (EDITABLE_PROBE) and a new function in the
    delegate library (exov_editable_probe), both returning probe."""
    module = source / "native" / "python" / "python_module.cpp"
    text = module.read_text()
    attribute = '  m.attr("BACKEND_ID") = executorch_openvino::kBackendId;\n'
    assert text.count(attribute) == 1, f"{module} changed: update the editable session's probe"
    module.write_text(text.replace(attribute, attribute + f'  m.attr("EDITABLE_PROBE") = {probe};\n'))
    with (source / "native" / "delegate" / "compile_specs.cpp").open("a") as f:
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


def session_steps(session: nox.Session) -> None:
    """Both editable install modes of a copy of the sources (build/editable-check/src), in one venv.

    1. `pip install --no-build-isolation -e SRC` (redirect mode): tests/scripts/editable_check.py imports the
       Python files from SRC and the libraries from site-packages, lowers, saves and runs a small model
       against eager, runs the runner's entry point; a Python edit of SRC takes effect without reinstalling.
    2. The same with `-C editable.rebuild=true`: the libraries come from SRC's build folder
       (build/editable/<tag>), found through the absolute RUNPATH entry only editable builds get; a C++ edit
       (a new attribute of _native, a new function in the delegate library) is compiled by the next import.
    3. An executorch found through PYTHONPATH, as pip's build isolation provides one, is refused at configure.
    4. A wheel built in the editable's build folder has $ORIGIN-relative RUNPATHs only.
    torch and executorch are neither reinstalled nor upgraded by any of it.
    """
    steps = TimedSteps(session)
    source = FOLDER / "src"
    shutil.rmtree(FOLDER, ignore_errors=True)
    copy_sources(source, SOURCES)
    environments.install_torch(session)
    session.install(*environments.BUILD_REQUIREMENTS, "numpy", "pyelftools")
    before = site_packages.distribution_state(session, ["torch", "executorch"])
    check = [str(ROOT / "tests" / "scripts" / "editable_check.py")]
    install = ["python", "-m", "pip", "install", "--no-build-isolation", "-e", str(source)]
    workdir = session.create_tmp()  # nothing importable from here

    probe = new_probe()
    steps.run("redirect install", *install)
    edit_python(source, probe)
    with session.chdir(workdir):
        steps.run("redirect check", "python", *check, "redirect", str(source), probe)

    steps.run("rebuild install", *install, "-C", "editable.rebuild=true")
    with session.chdir(workdir):
        steps.run("rebuild check", "python", *check, "rebuild", str(source))
    edit_cxx(source, probe)
    with session.chdir(workdir):
        steps.run("rebuild on import after a C++ edit", "python", *check, "rebuild", str(source), probe)

    isolated = FOLDER / "isolated"
    path = isolated_executorch(site_packages.package_dir(session, "executorch"), isolated / "path")
    output = steps.run("isolated build refused", *install, "-C", f"build-dir={isolated / 'build'}",
                       env={"PYTHONPATH": str(path)}, silent=True, stderr=subprocess.STDOUT, success_codes=[1])
    if "must be built against the executorch of the environment it is installed in" not in " ".join(output.split()):
        session.error(f"an editable build against another executorch was not refused:\n{output[-3000:]}")
    session.log("an editable build against an executorch the environment does not import was refused")

    caches = sorted((source / "build" / "editable").glob("*/CMakeCache.txt"))
    if len(caches) != 1:
        session.error(f"expected one editable build folder, found {caches}")
    wheels = FOLDER / "wheel"
    with session.chdir(source):
        steps.run("wheel in the editable's build folder", "python", "-m", "pip", "wheel", "--no-build-isolation",
                  "--no-deps", "-C", f"build-dir={caches[0].parent}", "-w", str(wheels), ".")
    wheel = next(wheels.glob("executorch_openvino-*.whl"))
    session.run("python", *check, "wheel", str(wheel))

    after = site_packages.distribution_state(session, ["torch", "executorch"])
    if after != before:
        session.error(f"torch or executorch changed:\nbefore: {before}\nafter:  {after}")
    session.log(f"torch and executorch untouched: {before}")
    session.log(steps.summary())
