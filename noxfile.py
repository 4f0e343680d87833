"""Build, repair and test executorch-openvino wheels. `nox -l` lists the sessions; `nox -s ci` is CI.

Each session is a few lines: what it does lives in orchestration/ (one module per concern, typed and
unit-tested by `nox -s tooling`), the versions in orchestration/pins.py, and which tests a session runs
in the pytest markers of tests/ (pyproject.toml registers them). docs/development.md has the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).resolve().parent))  # orchestration/, beside this file
from orchestration import aarch64, aarch64_emulation, bench as benchmarks, editable as editable_install  # noqa: E402
from orchestration import fuzzing, install_tree as tree, interpreters, layout, lint as linters, pins  # noqa: E402
from orchestration import release as releases, sanitizers as sanitized, test_runs, wheel_build  # noqa: E402
from orchestration import local_index, wheel_checks, windows  # noqa: E402

nox.options.sessions = ["tests"]
PYTHON = pins.PYTHON
OPENVINO = list(pins.OPENVINO_RELEASES)
OTHER_PYTHONS = sorted({*pins.WHEEL_PYTHONS, *pins.INSTALL_PYTHONS} - {PYTHON})
# What CI runs (.ci/run, README.md), within 25 minutes on an idle 2-core machine; what is slow and rarely
# broken runs by hand before a release (docs/development.md, "The test command").
# The Windows loader with the newest release only: its search does not depend on the release (both by hand).
CI = ["lint", "tooling", "tests", f"windows_loader({pins.OPENVINO_NEWEST})", "windows_repair", "sanitizers",
      f"repair_aarch64-{PYTHON}", "sdist", "release_wheel-3.12"]


@nox.session(python=False)
def interpreters_on_path(session: nox.Session) -> None:
    """Puts pyenv's CPythons that PATH cannot start on PATH for this nox run (build/interpreters/)."""
    for version, found in interpreters.expose(OTHER_PYTHONS, layout.INTERPRETERS_DIR).items():
        session.log(f"python{version}: {found}")


@nox.session(python=False, requires=CI)
def ci(session: nox.Session) -> None:
    """CI: every session in CI, in order; fails when one does."""
    session.log(f"passed: {', '.join(CI)}")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, clang-format and mypy (seconds; `-- --fix` rewrites)."""
    linters.session_steps(session)


@nox.session(python=PYTHON)
def tooling(session: nox.Session) -> None:
    """orchestration/'s unit tests, the pins' and markers' consistency checks (tests/tooling/; seconds)."""
    session.install(*nox.project.dependency_groups(nox.project.load_toml(layout.ROOT / "pyproject.toml"), "tooling"))
    with session.chdir(layout.ROOT):  # as a plain `pytest tests/tooling` runs them
        session.run("pytest", "tests/tooling", "-q", *session.posargs)


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """The wheel against the pip openvino package -> build/wheels/raw/."""
    wheel_build.build(session)


@nox.session(python=PYTHON)
def repair(session: nox.Session) -> None:
    """auditwheel repair -> build/wheels/repaired/; builds first when needed, keeps an up-to-date wheel."""
    wheel_build.repair_session(session)


@nox.session(python=PYTHON, requires=["repair"])
@nox.parametrize("openvino", OPENVINO, ids=OPENVINO)
def tests(session: nox.Session, openvino: str) -> None:
    """tests/ on the repaired wheel with that OpenVINO release (markers: orchestration/test_runs.py).

    The newest release runs all but the slow tests; the older one the tests marked older_openvino (all but
    own_runtime with EXOV_OLDER_RELEASE_FULL=1)."""
    test_runs.tests_session(session, openvino)


@nox.session(python=PYTHON, requires=["repair"])
def slow_tests(session: nox.Session) -> None:
    """The tests marked slow and the cases of sampled tables, which CI leaves out (by hand before a release)."""
    test_runs.tests_session(session, pins.OPENVINO_NEWEST, test_runs.SLOW)


@nox.session(python=PYTHON, requires=["repair"])
def demo(session: nox.Session) -> None:
    """The main job: build, repair, install, lower and run MiniLM on OpenVINO (`-- --publish`: docs/demo.md)."""
    wheel_checks.demo(session)


@nox.session(python=PYTHON)
@nox.parametrize("openvino", OPENVINO, ids=OPENVINO)
def numerics(session: nox.Session, openvino: str) -> None:
    """What OpenVINO computes differently from PyTorch (docs/user-guide/numerics.md)."""
    wheel_checks.numerics(session, openvino)


@nox.session(python=PYTHON, requires=["repair"])
@nox.parametrize("openvino", OPENVINO, ids=OPENVINO)
def conformance(session: nox.Session, openvino: str) -> None:
    """ExecuTorch's backend operator suite on the repaired wheel (`-- -k add` narrows it)."""
    wheel_checks.conformance(session, openvino)


@nox.session(python=PYTHON)
def install_tree(session: nox.Session) -> None:
    """A wheel built against an OpenVINO install tree; the suite lowered in one venv, replayed in another."""
    tree.session_steps(session)


@nox.session(python=PYTHON)
@nox.parametrize("openvino", OPENVINO, ids=OPENVINO)
def windows_loader(session: nox.Session, openvino: str) -> None:
    """The delegate's Windows loader, cross-compiled with mingw-w64, loads openvino_c.dll under wine."""
    windows.loader_session(session, openvino)


@nox.session(python=PYTHON)
def windows_repair(session: nox.Session) -> None:
    """delvewheel repair of a win_amd64 wheel built with mingw-w64, loaded under wine."""
    windows.repair_session(session)


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """libFuzzer with ASan and UBSan on the blob parser, the .npy reader and the delegate's init; `-- SECONDS`."""
    fuzzing.session_steps(session)


@nox.session(python=PYTHON, requires=["repair"])
def program_fuzz(session: nox.Session) -> None:
    """Random programs lowered both ways, run from their .pte, compared with eager (`-- --help`)."""
    wheel_checks.program_fuzz(session)


@nox.session(python=PYTHON)
def sanitizers(session: nox.Session) -> None:
    """The delegate, pybindings and runner built with ASan and UBSan, and the tests marked native run under them.

    `-- -m "runner and not slow"` runs the runner's instead."""
    sanitized.session_steps(session)


@nox.session(python=PYTHON, requires=["repair"])
def runner(session: nox.Session) -> None:
    """The C++ runner built with plain CMake outside any wheel, equal to executorch.runtime on MiniLM."""
    wheel_checks.runner(session)


@nox.session(python=PYTHON)
def editable(session: nox.Session) -> None:
    """Both editable installs of a copy of the sources: import, run, a C++ edit rebuilt on import."""
    editable_install.session_steps(session)


@nox.session(python=PYTHON, requires=["repair"])
def bench(session: nox.Session) -> None:
    """Latency, load, memory, wheel size and build time of every engine -> docs/benchmarks.md."""
    benchmarks.bench_session(session)


@nox.session(python=PYTHON, requires=["repair"])
def load_bench(session: nox.Session) -> None:
    """Load time and memory per model in fresh processes -> docs/loading.md."""
    benchmarks.load_session(session)


@nox.session(python=PYTHON, requires=["repair"])
def llm_bench(session: nox.Session) -> None:
    """SmolLM2-135M against XNNPACK, eager, llama.cpp and OpenVINO GenAI -> docs/llm-benchmark.md."""
    benchmarks.llm_session(session)


@nox.session(python=list(pins.WHEEL_PYTHONS), requires=["interpreters_on_path"])
def repair_aarch64(session: nox.Session) -> None:
    """The Linux aarch64 wheel, cross-built and repaired -> build/aarch64/repaired/<python>/."""
    aarch64.wheel_session(session)


@nox.session(python=PYTHON, requires=[f"repair_aarch64-{aarch64_emulation.PYTHON}", "repair"])
def aarch64_emulated(session: nox.Session) -> None:
    """The aarch64 wheel tested under qemu-user in an arm64 Debian root (by hand, as root)."""
    aarch64_emulation.session_steps(session)


@nox.session(python=PYTHON)
def sdist(session: nox.Session) -> None:
    """Starts a release: empties dist/ and writes the sdist there; twine check."""
    releases.write_sdist(session, layout.DIST)


@nox.session(python=PYTHON)
def sdist_install(session: nox.Session) -> None:
    """`pip install` of the sdist with build isolation beside an installed executorch, which it keeps."""
    releases.sdist_install(session)


@nox.session(python=list(pins.WHEEL_PYTHONS), requires=["sdist", "interpreters_on_path"])
def release_wheel(session: nox.Session) -> None:
    """This interpreter's release wheel from the sdist, repaired into dist/, ABI and metadata checked."""
    releases.release_wheel(session)


@nox.session(python=list(pins.WHEEL_PYTHONS), requires=["sdist", "interpreters_on_path"])
def release_wheel_aarch64(session: nox.Session) -> None:
    """This interpreter's aarch64 release wheel, cross-built from the sdist into dist/, checked."""
    releases.release_wheel_aarch64(session)


@nox.session(python=PYTHON, requires=["sdist", *releases.WHEEL_SESSIONS, "interpreters_on_path"])
def release(session: nox.Session) -> None:
    """dist/ indexed (SHA256SUMS, PEP 503) and installed by name on every interpreter -> build/release/report.md."""
    releases.index_and_install(session, interpreters.expose(OTHER_PYTHONS, layout.INTERPRETERS_DIR))


@nox.session(python=PYTHON, requires=["repair"])
def index(session: nox.Session) -> None:
    """x86_64 wheels for the interpreters here and a PEP 503 index -> build/index/ (`-- 3.11 3.12` chooses)."""
    local_index.session_steps(session, interpreters.expose(OTHER_PYTHONS, layout.INTERPRETERS_DIR))


@nox.session(python=pins.ABI3_PYTHONS[0], requires=["interpreters_on_path"])
def tests_abi3(session: nox.Session) -> None:
    """tests/ on CPython 3.12 with dist/'s cp312-abi3 wheel (run `nox -s release_wheel-3.12` first)."""
    releases.tests_abi3(session)

