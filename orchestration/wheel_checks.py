"""Sessions that install the repaired wheel in a fresh venv and run one of the repository's scripts on it:
the demo, the numerics table, ExecuTorch's conformance suite, the program fuzzer, and the C++ runner
built with plain CMake outside any wheel."""

from __future__ import annotations

import shutil
import time

import nox

from orchestration import ROOT, demo_report, environments, layout, pins, site_packages, wheel_build

CONFORMANCE_REQUIREMENTS = ("pytest", "numpy", "pytest-xdist", "pytest-timeout")
CONFORMANCE_MIN_PASSED = 400  # a full run passes more (docs/development.md)


def demo(session: nox.Session) -> None:
    """Lowers and runs MiniLM; `-- --publish` writes docs/demo.md from the figures the run printed."""
    started = time.perf_counter()
    wheel = wheel_build.repaired_wheel(session)
    environments.install_runtime(session, wheel, pins.OPENVINO_NEWEST, *environments.MINILM)
    out = layout.BUILD / "demo"
    out.mkdir(parents=True, exist_ok=True)
    with session.chdir(session.create_tmp()):
        session.run("python", "-m", "executorch_openvino.examples.minilm", "--output", str(out / "minilm.pte"),
                    "--summary", str(out / "summary.json"), env=environments.OFFLINE)
    session.log(f"wheel: {demo_report.wheel_figure(wheel)} ({wheel.parent})")
    if "--publish" in session.posargs:
        text = demo_report.publish(out / "summary.json", wheel, time.perf_counter() - started,
                                   ROOT / "docs" / "demo.md", ROOT)
        session.log(f"wrote {ROOT / 'docs' / 'demo.md'}:\n{text}")


def numerics(session: nox.Session, openvino: str) -> None:
    """What OpenVINO computes differently from eager PyTorch, as a Markdown table (no wheel needed)."""
    environments.install_torch(session)
    session.install(pins.openvino_requirement(openvino), "numpy", "packaging")
    session.run("python", str(layout.TESTS / "scripts" / "numerics_table.py"))


def conformance(session: nox.Session, openvino: str) -> None:
    """ExecuTorch's backend operator suite against the installed wheel; arguments after `--` go to its pytest."""
    wheel = wheel_build.repaired_wheel(session)
    environments.install_runtime(session, wheel, openvino, *CONFORMANCE_REQUIREMENTS)
    report = layout.BUILD / "conformance" / f"openvino-{openvino}.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    with session.chdir(session.create_tmp()):
        session.run("python", str(layout.TESTS / "conformance" / "run_suite.py"),
                    *([] if session.posargs else ["--min-passed", str(CONFORMANCE_MIN_PASSED)]),
                    "--report", str(report), "-n", "2", *session.posargs)


def program_fuzz(session: nox.Session) -> None:
    """Random programs lowered both ways and compared with eager (`python -m program_fuzz.run`'s arguments, run
    from tools/: python/ is not importable there)."""
    out = layout.BUILD / "program_fuzz"
    environments.install_runtime(session, wheel_build.repaired_wheel(session), pins.OPENVINO_NEWEST, "numpy")
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with session.chdir(layout.PROGRAM_FUZZ.parent):
        session.run("python", "-m", "program_fuzz.run", "--workdir", str(work),
                    "--report", str(out / "report.json"), *session.posargs)


def runner(session: nox.Session) -> None:
    """The C++ runner built and installed with plain CMake and Ninja (build/runner/install/), then checked
    bit for bit against executorch.runtime on MiniLM (tests/scripts/runner_check.py).

    The build targets this machine's glibc (no manylinux setup) with a RUNPATH naming the executorch
    package's lib/; OPENVINO_LIB_PATH names the pip package's C library, as nothing is found beside an
    installed runner.
    """
    wheel = wheel_build.repaired_wheel(session)
    environments.install_runtime(session, wheel, pins.OPENVINO_NEWEST, *environments.BUILD_REQUIREMENTS, "numpy",
                                 *environments.MINILM)
    executorch = site_packages.package_dir(session, "executorch")
    openvino = site_packages.package_dir(session, "openvino")
    folder = layout.BUILD / "runner"
    build, install = folder / "cmake", folder / "install"
    shutil.rmtree(folder, ignore_errors=True)
    session.run("cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython_EXECUTABLE={session.virtualenv.bin}/python", "-DEXOV_GLIBC_2_28=OFF",
                f"-DEXOV_RUNPATH=$ORIGIN:{executorch / 'lib'}", external=True)
    session.run("cmake", "--build", str(build), external=True)
    session.run("cmake", "--install", str(build), "--prefix", str(install), external=True)
    built = install / "executorch_openvino" / "executorch_openvino_run"
    library = sorted((openvino / "libs").glob("libopenvino_c.so*"))[-1]
    with session.chdir(session.create_tmp()):
        check = layout.TESTS / "scripts" / "runner_check.py"
        session.run("python", str(check), str(built), str(library), external=True)
