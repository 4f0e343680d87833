"""Building wheels with pip and repairing them with auditwheel; the `build` and `repair` sessions.

`repair` keeps a repaired wheel newer than every source file (layout.SOURCES)
and otherwise builds and repairs one, so that the test sessions that require
it share one build.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import nox

from orchestration import ROOT, environments, layout, pins


def newest_mtime(root: Path, patterns: tuple[str, ...] | list[str]) -> float:
    return max(p.stat().st_mtime for pattern in patterns for p in root.glob(pattern) if p.is_file())


def fresh_wheel(folder: Path, newer_than: float) -> Path | None:
    """The newest wheel in `folder` if it is newer than `newer_than` (a time stamp)."""
    wheels = sorted(folder.glob("executorch_openvino-*.whl"), key=lambda p: p.stat().st_mtime)
    if wheels and wheels[-1].stat().st_mtime >= newer_than:
        return wheels[-1]
    return None


def exclusions(name: str, folder: Path = ROOT / "wheels") -> list[str]:
    """The non-comment lines of wheels/`name` (an *-exclude.txt file)."""
    lines = (folder / name).read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def pip_wheel(session: nox.Session, source: Path, out: Path, *, build_dir: str = "", env=None,
              cmake_defines: dict | None = None, python: str = "python") -> tuple[Path, float]:
    """Builds one wheel of `source` (the source tree or an sdist) into the emptied `out`: (wheel, seconds).

    No build isolation: the wheel is compiled against, and pinned to, exactly
    the executorch installed in the environment of `python` (by default the session's).
    """
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    settings = [f"--config-settings=build-dir={build_dir}"] if build_dir else []
    settings += [f"--config-settings=cmake.define.{k}={v}" for k, v in (cmake_defines or {}).items()]
    started = time.perf_counter()
    session.run(python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", *settings,
                "-w", str(out), str(source), env=env, external=python != "python")
    seconds = time.perf_counter() - started
    wheels = sorted(out.glob("executorch_openvino-*.whl"))
    if len(wheels) != 1:
        session.error(f"pip wheel left {len(wheels)} wheels in {out}")
    session.log(f"built wheel: {wheels[0]} in {seconds:.0f} s")
    return wheels[0], seconds


def auditwheel_repair(session: nox.Session, raw: Path, out: Path, platform: str, excluded: list[str],
                      *, clean: bool = True) -> Path:
    """`auditwheel repair --plat platform` with one --exclude per pattern; the repaired wheel in `out`.

    --plat makes auditwheel refuse a wheel that needs more than that tag
    allows (CMakeLists.txt: EXOV_GLIBC_2_28).
    """
    if clean:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    args = ["auditwheel", "repair", "--plat", platform, "-w", str(out)]
    for pattern in excluded:
        args += ["--exclude", pattern]
    session.run(*args, str(raw))
    prefix = "-".join(raw.name.split("-")[:4])  # name-version-python tag-abi tag
    architecture = raw.name.removesuffix(".whl").split("-")[-1].removeprefix("linux_")  # x86_64, aarch64
    # `out` may hold the other architecture's wheel of the same interpreter (dist/ does).
    written = sorted(out.glob(f"{prefix}-*_{architecture}.whl"), key=lambda p: p.stat().st_mtime)
    if not written:
        session.error(f"auditwheel wrote no wheel into {out}")
    session.log(f"repaired wheel: {written[-1]}")
    return written[-1]


def repaired_wheel_of(session: nox.Session, source: Path, raw_dir: Path, out: Path, *,
                      platform: str = pins.MANYLINUX_X86_64, build_dir: str = "", env=None,
                      cmake_defines: dict | None = None, python: str = "python",
                      clean: bool = True) -> tuple[Path, float, float]:
    """How every session that makes a Linux wheel makes it: `pip_wheel` of `source` (the tree or an sdist) with
    `python`'s build environment into `raw_dir`, then `auditwheel_repair` into `out` for `platform` ("auto" for
    a cross-built wheel: auditwheel picks the tag) with wheels/auditwheel-exclude.txt. Returns (the repaired
    wheel, build seconds, repair seconds). Windows wheels are packed and repaired otherwise (windows.py)."""
    raw, build_seconds = pip_wheel(session, source, raw_dir, build_dir=build_dir, env=env,
                                   cmake_defines=cmake_defines, python=python)
    started = time.perf_counter()
    repaired = auditwheel_repair(session, raw, out, platform, exclusions("auditwheel-exclude.txt"), clean=clean)
    return repaired, build_seconds, time.perf_counter() - started


def fresh_repaired_wheel() -> Path | None:
    """The repaired wheel in build/wheels/repaired/ if it is newer than every source file."""
    return fresh_wheel(layout.REPAIRED_DIR, newest_mtime(ROOT, layout.SOURCES))


def repaired_wheel(session: nox.Session) -> Path:
    """The repaired wheel that the `repair` session (run first through `requires`) left."""
    repaired = fresh_repaired_wheel()
    if repaired is None:
        session.error("no up-to-date repaired wheel in build/wheels/repaired; run `nox -s repair`")
    session.log(f"using the repaired wheel {repaired}")
    return repaired


def build(session: nox.Session, out: Path = layout.RAW_DIR, *, build_dir: str = "", env=None,
          cmake_defines: dict | None = None) -> Path:
    """The project's wheel, built against the pinned executorch and the pip openvino package, in `out`."""
    environments.install_build(session)
    return pip_wheel(session, ROOT, out, build_dir=build_dir, env=env, cmake_defines=cmake_defines)[0]


def repair(session: nox.Session, raw: Path, out: Path = layout.REPAIRED_DIR) -> Path:
    """auditwheel repair of `raw` to the manylinux_2_28_x86_64 tag, with wheels/auditwheel-exclude.txt."""
    session.install(*environments.REPAIR_REQUIREMENTS)
    return auditwheel_repair(session, raw, out, pins.MANYLINUX_X86_64, exclusions("auditwheel-exclude.txt"))


def repair_session(session: nox.Session) -> None:
    """Keeps an up-to-date repaired wheel, else repairs the built wheel, building it first when needed."""
    repaired = fresh_repaired_wheel()
    if repaired is not None:
        session.log(f"up to date, reusing the repaired wheel: {repaired}")
        return
    raw = fresh_wheel(layout.RAW_DIR, newest_mtime(ROOT, layout.SOURCES)) or build(session)
    repair(session, raw)
