"""Every file that states a pinned or supported version agrees with orchestration/pins.py."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from orchestration import pins

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION_LITERAL = re.compile(r"\b(torch|executorch|openvino|nncf|transformers|auditwheel|delvewheel)==\d")


def _constant(path: Path, name: str):
    """A module-level constant of `path`, read without importing it."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} has no constant {name}")


def test_the_build_backend_pins_the_same_executorch_torch_and_openvino():
    assert _constant(ROOT / "wheels" / "executorch_location.py", "TESTED") == pins.EXECUTORCH
    provider = ROOT / "wheels" / "metadata_provider.py"
    assert _constant(provider, "OPENVINO_REQUIREMENT") == f"openvino{pins.OPENVINO_REQUIREMENT}"
    executorch_minor = ".".join(pins.EXECUTORCH.split(".")[:2])
    torch_minor = ".".join(pins.TORCH.split(".")[:2])
    assert _constant(provider, "TORCH_FOR_EXECUTORCH")[executorch_minor] == torch_minor


def test_the_supported_range_holds_every_tested_release():
    assert all(release in SpecifierSet(pins.OPENVINO_REQUIREMENT) for release in pins.OPENVINO_RELEASES)
    build_openvino = next(Requirement(r) for r in PYPROJECT["build-system"]["requires"] if r.startswith("openvino"))
    assert str(build_openvino.specifier) == f">={pins.OPENVINO_OLDEST}"


def test_the_package_names_the_same_nncf_for_each_openvino():
    table = _constant(ROOT / "python" / "executorch_openvino" / "support" / "nncf_library.py", "NNCF_FOR_OPENVINO")
    assert table == {".".join(ov.split(".")[:2]): nncf for ov, nncf in pins.NNCF_FOR_OPENVINO.items()}
    assert set(pins.NNCF_FOR_OPENVINO) == set(pins.OPENVINO_RELEASES)


def test_pyproject_states_the_interpreters_of_the_release():
    project = PYPROJECT["project"]
    assert project["requires-python"] == pins.REQUIRES_PYTHON
    classified = {c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if re.search(r"Python :: 3\.\d+$", c)}
    assert classified == {*pins.WHEEL_PYTHONS, *pins.ABI3_PYTHONS}
    assert PYPROJECT["tool"]["scikit-build"]["wheel"]["py-api"] == "cp" + pins.ABI3_PYTHONS[0].replace(".", "")
    llm = next(Requirement(r) for r in project["optional-dependencies"]["llm"] if r.startswith("transformers"))
    assert pins.TRANSFORMERS in llm.specifier


def test_the_test_groups_pin_the_same_transformers_cmake_and_nox():
    group = [Requirement(r) for r in PYPROJECT["dependency-groups"]["test"]]
    assert str(next(r for r in group if r.name == "transformers").specifier) == f"=={pins.TRANSFORMERS}"
    assert {str(r) for r in group} >= set(pins.CMAKE_TOOLS)
    tooling = {str(r) for r in (Requirement(r) for r in PYPROJECT["dependency-groups"]["tooling"])}
    assert f"nox=={pins.NOX}" in tooling and pins.CMAKE_TOOLS[0] in tooling


def test_the_release_workflow_uses_the_same_nox_and_interpreters():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow["env"]["NOX"] == f"nox=={pins.NOX}"
    for job in ("release_wheel", "release_wheel_aarch64"):
        assert workflow["jobs"][job]["strategy"]["matrix"]["python"] == list(pins.WHEEL_PYTHONS), job
    setups = [step["with"]["python-version"] for job in workflow["jobs"].values() for step in job.get("steps", [])
              if "setup-python" in step.get("uses", "") and isinstance(step["with"]["python-version"], str)
              and "matrix" not in step["with"]["python-version"] and "\n" not in step["with"]["python-version"]]
    assert setups and set(setups) == {pins.PYTHON}


def test_ci_and_the_readme_install_the_pinned_nox():
    assert f"pip install -q 'nox=={pins.NOX}'" in (ROOT / ".ci" / "run").read_text()
    commands = [line for line in (ROOT / "README.md").read_text().splitlines() if "pip install" in line and "nox" in line]
    assert commands and all(line.startswith(f"python3 -m pip install 'nox=={pins.NOX}' && ") for line in commands)


def test_the_readme_states_the_pinned_versions():
    readme = (ROOT / "README.md").read_text()
    torch_minor = ".".join(pins.TORCH.split(".")[:2])
    for stated in (f"torch=={pins.TORCH}", f"executorch=={pins.EXECUTORCH}", f"torch=={torch_minor}.*",
                   f"openvino{pins.OPENVINO_REQUIREMENT}", " and ".join(pins.OPENVINO_RELEASES)):
        assert stated in readme, stated
    assert f"openvino{pins.OPENVINO_REQUIREMENT}" in (ROOT / "python" / "executorch_openvino" / "support" / "doctor.py").read_text()


def test_the_docs_install_the_pinned_torch_from_the_cpu_index():
    """README.md and docs/: every torch pin is pins.TORCH (or its minor release), every PyTorch index the CPU one,
    and the install instructions give the CPU index command (issue 37: plain PyPI gives the CUDA build)."""
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    torch_minor = ".".join(pins.TORCH.split(".")[:2])
    stated = {pin for d in documents for pin in re.findall(r"\btorch==[\w.*+]+", d.read_text())}
    assert stated <= {f"torch=={pins.TORCH}", f"torch=={torch_minor}.*"}, stated
    indexes = {url for d in documents for url in re.findall(r"https://download\.pytorch\.org/[\w/.-]*", d.read_text())}
    assert indexes == {pins.TORCH_CPU_INDEX}, indexes
    command = f"pip install torch=={pins.TORCH} --index-url {pins.TORCH_CPU_INDEX}"
    for name in ("README.md", "docs/user-guide/deployment.md", "docs/user-guide/aarch64.md"):
        assert command in (ROOT / name).read_text(), f"{name} lacks `{command}`"


def test_no_version_is_pinned_outside_the_pins_module():
    """noxfile.py and orchestration/ name versions only through orchestration/pins.py."""
    files = [ROOT / "noxfile.py", *sorted((ROOT / "orchestration").glob("*.py"))]
    found = [f"{path.name}:{number}: {line.strip()}" for path in files if path.name != "pins.py"
             for number, line in enumerate(path.read_text().splitlines(), 1) if VERSION_LITERAL.search(line)]
    assert not found, found
