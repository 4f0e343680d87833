"""What the sessions' environments install: torch's pip arguments, and EXOV_TORCH_INDEX_URL reaching every
torch install (orchestration/environments.py, release_steps.install_torch)."""

from __future__ import annotations

import re
from pathlib import Path

from orchestration import environments, pins, release_steps

ROOT = Path(__file__).resolve().parents[2]
TORCH = f"torch=={pins.TORCH}"


class RecordingSession:
    """Records what a session was asked to install or run, instead of doing it."""

    python = pins.PYTHON

    def __init__(self):
        self.calls: list[tuple[str, ...]] = []

    def install(self, *args: str) -> None:
        self.calls.append(("install", *args))

    def run(self, *args: str, **kwargs) -> None:
        self.calls.append(("run", *args))


def test_without_the_variable_torch_comes_from_pip_s_own_indexes():
    assert environments.torch_install_args({}) == [TORCH]
    assert environments.torch_install_args({environments.TORCH_INDEX_VARIABLE: " "}) == [TORCH]


def test_the_variable_adds_its_index_for_torch():
    environ = {environments.TORCH_INDEX_VARIABLE: pins.TORCH_CPU_INDEX}
    assert environments.torch_install_args(environ) == [TORCH, "--extra-index-url", pins.TORCH_CPU_INDEX]


def test_a_runtime_environment_installs_torch_alone_and_first_with_the_index(monkeypatch):
    monkeypatch.setenv(environments.TORCH_INDEX_VARIABLE, pins.TORCH_CPU_INDEX)
    session = RecordingSession()
    environments.install_runtime(session, Path("executorch_openvino-0-cp311-cp311-x.whl"))  # type: ignore[arg-type]
    assert session.calls[0] == ("install", TORCH, "--extra-index-url", pins.TORCH_CPU_INDEX)
    assert not any("--extra-index-url" in call for call in session.calls[1:]), session.calls


def test_another_interpreter_s_torch_comes_from_the_index_instead_of_the_wheelhouse(tmp_path):
    session = RecordingSession()
    cost = release_steps.install_torch(session, "/venv/bin/python", "3.12", TORCH, tmp_path,  # type: ignore[arg-type]
                                       local_build=False, index_args=["--extra-index-url", pins.TORCH_CPU_INDEX])
    assert session.calls == [("run", "/venv/bin/python", "-m", "pip", "install", "-q", TORCH, "--extra-index-url",
                              pins.TORCH_CPU_INDEX)]
    assert cost == {"torch": f"from {pins.TORCH_CPU_INDEX}"}
    session.calls.clear()
    release_steps.install_torch(session, "/venv/bin/python", "3.12", TORCH, tmp_path,  # type: ignore[arg-type]
                                local_build=False, index_args=[])
    assert [call[4] for call in session.calls] == ["download", "install"]  # PyPI's build, through the wheelhouse


def test_no_session_installs_torch_around_the_index_arguments():
    """torch's requirement is named only where the index arguments go with it: environments.py, and release.py,
    which passes them to release_steps.install_torch. The emulated arm64 root installs its own (aarch64_emulation:
    docs/development.md says it does not read the variable)."""
    named = {p.name for p in (ROOT / "orchestration").glob("*.py")
             if re.search(r"\bpins\.torch_requirement\(\)", p.read_text())}
    assert named == {"environments.py", "release.py", "aarch64_emulation.py"}, named
    release = (ROOT / "orchestration" / "release.py").read_text()
    assert "index_args=environments.torch_index_args()" in release


def test_the_development_guide_documents_the_variable():
    assert environments.TORCH_INDEX_VARIABLE in (ROOT / "docs" / "development.md").read_text()


def test_the_readme_s_two_commands_say_how_to_take_torch_s_cpu_build():
    # A new user's demo installed PyPI's CUDA torch: the variable was only in the development guide.
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Working on the project: two commands"):]
    section = section[:section.index("\n## ", 1)]
    assert f"{environments.TORCH_INDEX_VARIABLE}=https://download.pytorch.org/whl/cpu" in section
