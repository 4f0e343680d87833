"""libFuzzer targets (tests/fuzz/), built with Debian's clang, AddressSanitizer and UBSan (`nox -s fuzz`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nox

from orchestration import ROOT
from orchestration.debian import debian_tools
from orchestration.sanitizers import strip_deepbind_shim


def clang(session: nox.Session, packages: list[str], name: str) -> str:
    """The clang++ called `name`, from Debian's `packages`."""
    (found,) = debian_tools(session, packages, lambda: (shutil.which(name),))
    return found


def build_fuzzer(session: nox.Session, clang: str, flags: list[str], binary: Path, sources: list[str],
                 *libraries: str) -> Path:
    """A target that needs nothing beyond native/ (a parser): `sources`, relative to the repository."""
    session.run(clang, *flags, "-I", str(ROOT / "native"), *[str(ROOT / s) for s in sources], *libraries,
                "-o", str(binary), external=True)
    return binary


def build_init_fuzzer(session: nox.Session, clang: str, flags: list[str], binary: Path, sources: list[str],
                      executorch: Path, openvino: Path) -> Path:
    """tests/fuzz/delegate_init_fuzz.cpp with the delegate's `sources` (in native/), against the
    installed `executorch` package's runtime and headers and the `openvino` package's headers."""
    # -shared-libsan: the runtime is a library, so the shim (init_environment) can come before it.
    session.run(clang, *flags, "-shared-libsan", "-DC10_USING_CUSTOM_GENERATED_MACROS",
                "-DET_EVENT_TRACER_ENABLED", "-I", str(ROOT / "native"), "-I", str(openvino / "include"),
                "-I", str(executorch / "include"),
                "-I", str(executorch / "include" / "executorch" / "runtime" / "core" / "portable_type" / "c10"),
                *[str(ROOT / "native" / name) for name in sources],
                str(ROOT / "tests" / "fuzz" / "delegate_init_fuzz.cpp"),
                f"-L{executorch / 'lib'}", "-lexecutorch", "-lz", "-ldl", "-pthread",
                f"-Wl,-rpath,{executorch / 'lib'}", "-o", str(binary), external=True)
    return binary


def init_environment(session: nox.Session, clang: str, openvino: Path, out: Path) -> dict:
    """What the init fuzzer runs with: the `openvino` package's C library, and clang's ASan runtime
    preloaded after the strip_deepbind shim (built into `out`), which lets oneTBB's RTLD_DEEPBIND pass."""
    shim = strip_deepbind_shim(session, "gcc", out)
    asan = subprocess.check_output([clang, "-print-file-name=libclang_rt.asan-x86_64.so"], text=True).strip()
    library = sorted((openvino / "libs").glob("libopenvino_c.so.*"))[-1]
    return {"OPENVINO_LIB_PATH": str(library), "LD_PRELOAD": f"{shim}:{asan}",
            # OpenVINO keeps its plugins and caches until exit by design.
            "ASAN_OPTIONS": "detect_leaks=0:verify_asan_link_order=0"}


def run_fuzzer(session: nox.Session, binary: Path, seconds: int, corpora: list[Path], env=None) -> None:
    """Runs a libFuzzer binary; a finding fails the session and is written next to it as crash-*."""
    output = session.run(str(binary), f"-max_total_time={seconds}", "-print_final_stats=1",
                         f"-artifact_prefix={binary.parent}/crash-", *map(str, corpora),
                         external=True, silent=True, stderr=subprocess.STDOUT, env=env)
    stats = dict((part.strip() for part in line[len("stat::"):].split(":", 1))
                 for line in output.splitlines() if line.startswith("stat::"))
    session.log(f"{binary.name}: fuzzed {seconds} s: {stats.get('number_of_executed_units')} executions, "
                f"{stats.get('average_exec_per_sec')}/s, {stats.get('new_units_added')} new units, 0 crashes")
