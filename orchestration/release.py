"""The release (docs/development.md, "Cutting a release"): the sdist, a wheel per interpreter and
architecture built from it into dist/, each checked (twine, abi3audit, the ABI check against
executorch's wheels), then dist/ indexed and installed by name on every interpreter.

.github/workflows/release.yml runs the same sessions on separate machines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import nox

from orchestration import ROOT, aarch64, abi_check, environments, package_index, pins, release_steps, site_packages
from orchestration import test_runs, wheel_build
from orchestration.layout import DIST, RELEASE_BUILD, WHEELHOUSE

PORTABLE_PROGRAM = ROOT / "tests" / "release" / "portable_program.py"
WHEEL_SESSIONS = [f"{name}-{python}" for name in ("release_wheel", "release_wheel_aarch64")
                  for python in pins.WHEEL_PYTHONS]


def project_metadata() -> dict:
    import tomllib  # type: ignore[import-not-found,unused-ignore]  # 3.11+; the workflow runs nox on 3.10 too

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def write_sdist(session: nox.Session, out: Path) -> Path:
    """python -m build --sdist into the emptied `out`; twine check. Returns the archive."""
    session.install("build", "twine", environments.BUILD_TOOLS[0])
    session.install("--no-deps", pins.executorch_requirement())  # the release the wheels pin, for the metadata
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # No isolation: writing an sdist runs no compiler and needs scikit-build-core only.
    session.run("python", "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
                "--outdir", str(out), str(ROOT))
    (archive,) = out.glob("*.tar.gz")
    session.run("twine", "check", "--strict", str(archive))
    session.log(f"sdist: {archive.name}, {archive.stat().st_size / 1e6:.2f} MB, from {release_steps.git_commit(ROOT)}")
    return archive


def sdist_install(session: nox.Session) -> None:
    """`pip install` of a fresh sdist, with pip's default build isolation, into a venv that has executorch.

    The install must compile against the venv's executorch (wheels/executorch_location.py), pin it, and
    leave it and torch as they were (same version and the same RECORD file); the installed package then
    passes `doctor` and runs a lowered program equal to eager.
    """
    environments.install_torch(session)
    session.install(pins.executorch_requirement(), "numpy")
    before = site_packages.distribution_state(session, ["torch", "executorch"])
    archive = write_sdist(session, RELEASE_BUILD / "sdist-install")
    session.run("python", "-m", "pip", "uninstall", "-y", "build", "twine", "scikit-build-core")  # the user's venv
    started = time.perf_counter()
    # Isolated: pip's default. -v shows the build backend's report of which executorch it compiled against.
    output = environments.output(session, "python", "-m", "pip", "install", "-v", str(archive),
                                 stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    if f"building against executorch {pins.EXECUTORCH} from the installing environment" not in output:
        session.error("the isolated build did not compile against the environment's executorch:\n" + output[-5000:])
    after = site_packages.distribution_state(session, ["torch", "executorch"])
    if after != before:
        session.error(f"installing the sdist changed torch or executorch:\nbefore: {before}\nafter:  {after}")
    code = ("from importlib.metadata import requires; "
            "print([r for r in requires('executorch-openvino') if r.startswith('executorch')])")
    pinned = environments.output(session, "python", "-c", code).strip().splitlines()[-1]
    if pinned != f"[{pins.executorch_requirement()!r}]":
        session.error(f"the wheel built from the sdist requires {pinned}, not {pins.executorch_requirement()}")
    program = RELEASE_BUILD / "sdist-install" / "program"
    with session.chdir(session.create_tmp()):
        session.run("python", "-m", "executorch_openvino", "doctor")
        session.run("python", str(PORTABLE_PROGRAM), "lower", str(program))
        session.run("python", str(PORTABLE_PROGRAM), "check", str(program))
    session.log(f"sdist installed with build isolation in {seconds:.0f} s; pins {pinned}; "
                f"torch and executorch untouched: {before}")


def release_sdist(session: nox.Session) -> Path:
    found = sorted(DIST.glob("*.tar.gz"))
    if len(found) != 1:
        session.error(f"dist/ holds {len(found)} sdists, not one: run `nox -s sdist` (or drop --no-dependencies)")
    return found[0]


def release_wheel(session: nox.Session) -> None:
    """This interpreter's x86_64 release wheel from the sdist, repaired into dist/ and checked. The build
    environment has executorch without its dependencies (compiling needs no torch)."""
    session.install(*environments.BUILD_TOOLS, pins.openvino_requirement(), *environments.REPAIR_REQUIREMENTS,
                    "twine")
    session.install("--no-deps", pins.executorch_requirement())
    python = environments.python_version(session)
    repaired, build_seconds, repair_seconds = wheel_build.repaired_wheel_of(
        session, release_sdist(session), RELEASE_BUILD / "raw" / python, DIST, clean=False)
    check_wheel(session, repaired, pins.MANYLINUX_X86_64, f"release_wheel-{python}", {
        "build_s": round(build_seconds, 1), "repair_s": round(repair_seconds, 1)})


def release_wheel_aarch64(session: nox.Session) -> None:
    """This interpreter's aarch64 release wheel, cross-built from the sdist into dist/, with `release_wheel`'s checks
    (against executorch's aarch64 wheels; Debian's nm reads both architectures)."""
    session.install("twine")
    repaired, seconds = aarch64.cross_build(session, release_sdist(session), DIST, clean=False)
    check_wheel(session, repaired, pins.MANYLINUX_AARCH64,
                f"release_wheel_aarch64-{environments.python_version(session)}",
                {"build_s": round(seconds, 1), "cross_built": True})


def check_wheel(session: nox.Session, repaired: Path, platform: str, name: str, figures: dict) -> None:
    """twine's metadata check, abi3audit for an abi3 wheel, the ABI check (orchestration/abi_check.py) against
    executorch's `platform` wheels for every interpreter the wheel claims; writes
    build/release/abi-check-<name>.md and <name>.json (with `figures`)."""
    python = environments.python_version(session)
    if not repaired.name.endswith(f"-{platform}.whl"):
        session.error(f"the repaired wheel is {repaired.name}, not a {platform} wheel")
    session.run("twine", "check", "--strict", str(repaired))
    claims = list(pins.ABI3_PYTHONS) if "-abi3-" in repaired.name else [python]
    if "-abi3-" in repaired.name:  # the extension uses CPython's limited API only
        session.install("abi3audit")
        session.run("abi3audit", "--strict", str(repaired))
    executorch_wheels = release_steps.executorch_wheels(session, RELEASE_BUILD / "executorch-wheels",
                                                         pins.executorch_requirement(), sorted({python, *claims}),
                                                         platform)
    rows = abi_check.check(repaired, executorch_wheels[python], [executorch_wheels[p] for p in claims])
    report = abi_check.table(repaired, rows)
    session.log(report)
    missing = [r for r in rows if r["missing"]]
    if missing:
        session.error(f"symbols missing from executorch's libraries: {missing}")
    if not any(r["imported"] for r in rows):
        session.error(f"the ABI check found no executorch symbol imported by {repaired.name}: did nm read it?")
    RELEASE_BUILD.mkdir(parents=True, exist_ok=True)
    (RELEASE_BUILD / f"abi-check-{name}.md").write_text(report + "\n")
    (RELEASE_BUILD / f"{name}.json").write_text(json.dumps({
        "wheel": repaired.name, "bytes": repaired.stat().st_size, **figures, "claims": claims}, indent=1))


def install_torch(session: nox.Session, python: str, interpreter: str) -> dict:
    return release_steps.install_torch(session, interpreter, python, pins.torch_requirement(), WHEELHOUSE,
                                       local_build=python == pins.PYTHON, index_args=environments.torch_index_args())


def expected_artifacts(version: str) -> set[str]:
    wheels = {f"executorch_openvino-{version}-{tag}-{platform}.whl" for tag in pins.RELEASE_WHEEL_TAGS.values()
              for platform in (pins.MANYLINUX_X86_64, pins.MANYLINUX_AARCH64)}
    return {f"executorch_openvino-{version}.tar.gz", *wheels}


def index_and_install(session: nox.Session, found: dict[str, str]) -> None:
    """dist/ with the sdist and the six wheels, SHA256SUMS and a PEP 503 index (dist/simple/); then for each
    of pins.INSTALL_PYTHONS a fresh venv installs `executorch-openvino` by name from that index and runs a
    program lowered on 3.11 (tests/release/portable_program.py), equal to eager; pip on each picks its
    aarch64 wheel from the index (`pip download --platform`). Writes build/release/report.{json,md}.

    found: interpreters.expose's answer, for the error when an interpreter is missing.
    """
    session.install("twine")
    artifacts = package_index.artifacts(DIST)
    project = project_metadata()
    version = project["version"]
    expected, held = expected_artifacts(version), {p.name for p in artifacts}
    if held != expected:
        session.error(f"dist/ lacks {sorted(expected - held)} and should not hold {sorted(held - expected)}: "
                      "`nox -s release` makes all of them again; `nox --no-dependencies -s release_wheel-<python>` "
                      "or `release_wheel_aarch64-<python>` adds one beside an sdist already there")
    session.run("twine", "check", "--strict", *map(str, artifacts))
    package_index.write_sha256sums(DIST)
    index = package_index.write_simple_index(DIST, project["name"], project["requires-python"])

    program = RELEASE_BUILD / "program"
    (own,) = [p for p in artifacts if p.name.endswith(f"-cp311-cp311-{pins.MANYLINUX_X86_64}.whl")]
    environments.install_runtime(session, own, pins.OPENVINO_NEWEST, "numpy")
    with session.chdir(session.create_tmp()):
        session.run("python", str(PORTABLE_PROGRAM), "lower", str(program))
    results = [_install_by_name(session, python, index, program, version, found) for python in pins.INSTALL_PYTHONS]
    picked_aarch64 = {python: _aarch64_pick(session, python, index, version) for python in pins.INSTALL_PYTHONS}
    # Build figures exist where this machine built the wheels (not when CI jobs built them elsewhere).
    built = {n: json.loads(f.read_text()) for n in WHEEL_SESSIONS if (f := RELEASE_BUILD / f"{n}.json").is_file()}
    report = {"cpu": release_steps.cpu_model(), "commit": release_steps.git_commit(ROOT),
              "artifacts": [{"file": p.name, "bytes": p.stat().st_size} for p in artifacts],
              "wheels": built, "installs": results, "aarch64_index_picks": picked_aarch64,
              "wheelhouse_bytes": release_steps.folder_bytes(WHEELHOUSE)}
    (RELEASE_BUILD / "report.json").write_text(json.dumps(report, indent=1))
    table = release_steps.table(report)
    (RELEASE_BUILD / "report.md").write_text(table)
    session.log("\n" + table)


def _install_by_name(session: nox.Session, python: str, index: Path, program: Path, version: str,
                     found: dict[str, str]) -> dict:
    started = time.perf_counter()
    folder = RELEASE_BUILD / "venvs" / python
    interpreter = release_steps.venv(session, python, folder, found)
    cost = install_torch(session, python, interpreter)
    wanted = DIST / f"executorch_openvino-{version}-{pins.release_tag(python)}-{pins.MANYLINUX_X86_64}.whl"
    release_steps.install_by_name(session, interpreter, index, wanted, folder / "pip-report.json")
    with session.chdir(session.create_tmp()):
        out = environments.output(session, interpreter, str(PORTABLE_PROGRAM), "check", str(program), external=True)
    check = json.loads(out.strip().splitlines()[-1])
    result = {"python": check["python"], "installed": [wanted.name],
              "registered": check["registered"], "outputs": check["outputs"], "problems": check["problems"],
              "venv_bytes": release_steps.folder_bytes(folder), "seconds": round(time.perf_counter() - started, 1),
              **cost}
    shutil.rmtree(folder)  # several GB each with torch's CUDA build
    return result


def _aarch64_pick(session: nox.Session, python: str, index: Path, version: str) -> str:
    wanted = pins.release_tag(python)
    chosen = release_steps.index_pick(session, python, pins.MANYLINUX_AARCH64, index,
                                      RELEASE_BUILD / "aarch64-picks" / python)
    if chosen != [f"executorch_openvino-{version}-{wanted}-{pins.MANYLINUX_AARCH64}.whl"]:
        session.error(f"pip for aarch64 CPython {python} picked {chosen} from the index, not the {wanted} wheel")
    return chosen[0]


def tests_abi3(session: nox.Session) -> None:
    """The whole test suite on CPython 3.12 with dist/'s cp312-abi3 wheel (not rebuilt: a `requires` would
    start a new release and empty dist/) and the newest OpenVINO; torch is the package index's CUDA build,
    from build/release/wheelhouse."""
    found = sorted(DIST.glob(f"executorch_openvino-*-cp312-abi3-{pins.MANYLINUX_X86_64}.whl"))
    if not found:
        session.error("no cp312-abi3 wheel in dist/: run `nox -s release_wheel-3.12` (or `nox -s release`) first")
    install_torch(session, environments.python_version(session), "python")
    environments.install_runtime(session, found[-1], pins.OPENVINO_NEWEST, *environments.TEST_REQUIREMENTS)
    test_runs.run_suite(session, found[-1], pins.OPENVINO_NEWEST)
