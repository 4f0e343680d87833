"""What `nox -s bench` measures besides tests/benchmarks/bench.py: executorch's bundled OpenvinoBackend's
own environment, and the packaging figures (wheel size, cold and warm build times)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from collections.abc import Callable

import nox


def bundled_environment(session: nox.Session, folder: Path, wheel: Path, torch: str,
                        requirements: list[str]) -> str:
    """A venv in `folder` (kept between runs) for executorch's bundled backend: `torch` first, then
    `requirements`, then `wheel` (for its MiniLM example) without dependencies; returns its python."""
    python = folder / "bin" / "python"
    if not python.exists():
        session.run("python", "-m", "venv", str(folder))  # this session's Python (3.11)
    pip = [str(python), "-m", "pip", "install", "-q"]
    session.run(*pip, torch, external=True)
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
             "## Operations kept whole (`tests/benchmarks/kept_ops.py`)\n", kept_ops.read_text(),
             "## INT8 accuracy (`tests/benchmarks/int8_accuracy.py`)\n", int8_accuracy.read_text()]
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
                   "`tests/benchmarks/llm_bench.py`; what they mean for users: "
                   "[user-guide/llm.md](user-guide/llm.md).\n\n" + table.read_text())
