"""``python -m executorch_openvino doctor``: can the delegate run here, and on which OpenVINO?

Reports the installed wheel's build information, the executorch and openvino
versions, whether the delegate (and executorch's own ``OpenvinoBackend``) is
registered with ExecuTorch's runtime, every place searched for the OpenVINO C
library and which one was loaded, the available devices, the precision a
CPU program computes in, and whether a small float32 program run through the
delegate on CPU gives eager PyTorch's result; given a ``.pte``, also which backends each of its methods was
delegated to and whether they can run here (a program of another backend, executorch's own ``OpenvinoBackend``
included, is named with how to lower it for this package). Exit status 0 when the delegate (and the program,
if given) can run here, 1 when not; each failed check says what to do.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version



@dataclass
class Check:
    name: str
    ok: bool
    detail: list[str] = field(default_factory=list)
    fix: str = ""
    warn: bool = False  # ok, but something here costs the user (printed "[warn]"; the exit status stays 0)


def _installed(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _package_check(package) -> Check:
    problem = package.import_problem
    wheel = _installed("executorch-openvino") or "not installed (source tree?)"
    if problem is not None:
        return Check("executorch-openvino", False, [f"version {wheel}", f"import failed: {problem}"],
                     fix=_fix_from(str(problem)))
    try:
        info = package.build_info()
    except (OSError, ValueError) as exc:
        return Check("executorch-openvino", False, [f"version {wheel}", f"no readable build information: {exc}"],
                     fix="reinstall the wheel: pip install --force-reinstall --no-deps executorch-openvino")
    # Not info["openvino_location"]: a folder of the machine that built the wheel (build_info() has it).
    return Check("executorch-openvino", True, [
        f"version {wheel}, backend id {package.BACKEND_ID}",
        f"built against executorch {info['executorch_version']} and OpenVINO {info['openvino_version']} "
        f"headers (from {_HEADERS_FROM.get(info['openvino_source'], info['openvino_source'])})",
        f"compiler {info['compiler']}, {info['build_type']}, {info['system']}",
    ])


_HEADERS_FROM = {"pip": "the pip openvino package", "install tree": "an OpenVINO install tree",
                 "include dir": "an OpenVINO include folder"}


def _fix_from(message: str) -> str:
    marker = "run: "
    return message[message.index(marker) + len(marker):] if marker in message else \
        "reinstall executorch-openvino with its requirements: pip install --force-reinstall executorch-openvino"


def _versions_check() -> Check:
    openvino = _installed("openvino")
    detail = [f"executorch {_installed('executorch') or 'not installed'}",
              f"openvino (pip) {openvino or 'not installed'}",
              f"torch {_installed('torch') or 'not installed'}"]
    if openvino is None:
        detail.append("without the openvino package .pte files can run (on another OpenVINO found below) "
                      "but models cannot be lowered")
    return Check("versions", True, detail)


def _requirement(name: str) -> str:
    """This distribution's requirement on `name` (its metadata), e.g. ``torch==2.13.*``; `name` if none is found."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    try:
        listed = [Requirement(r) for r in requires("executorch-openvino") or []]
    except PackageNotFoundError:
        listed = []
    return next((f"{r.name}{r.specifier}" for r in listed if r.name == name and r.marker is None), name)


def _runtime_check() -> Check:
    """executorch's Python runtime must import: it runs .pte files (and needs torch, which executorch 1.5.1
    does not require)."""
    # torch first: without it executorch 1.5.1's runtime says its extension module is missing.
    set_before = "OPENVINO_LIB_PATH" in os.environ
    for module, fix in (("torch", f"install torch: pip install '{_requirement('torch')}'"),
                        ("executorch.runtime",
                         f"reinstall executorch: pip install --force-reinstall '{_requirement('executorch')}'")):
        try:
            __import__(module)
        except Exception as exc:  # noqa: BLE001 - reported with the fix
            return Check("runtime", False, [f"{module} cannot be imported: {type(exc).__name__}: {exc}"], fix=fix)
    detail = ["torch and executorch.runtime import"]
    if not set_before and "OPENVINO_LIB_PATH" in os.environ:
        # executorch.runtime's import points OPENVINO_LIB_PATH at the pip openvino package's library (for
        # executorch's own delegate): not the user's setting, which the library check below reports.
        detail.append(f"(importing executorch.runtime sets OPENVINO_LIB_PATH={os.environ.pop('OPENVINO_LIB_PATH')}; "
                      "the checks below leave it unset, as exov.load_method's processes have it)")
    return Check("runtime", True, detail)


def _openmp_check(package) -> Check:
    """torch's OpenMP threads spin after its parallel operations and slow OpenVINO's next inference, unless
    OMP_WAIT_POLICY=PASSIVE (docs/user-guide/troubleshooting.md). Advice, not a failure: the delegate runs."""
    import torch  # noqa: F401  # loads libgomp, as the programs' processes do

    problem = package._native.spinning_openmp_threads_problem()
    if not problem:
        return Check("OpenMP threads", True, ["torch's OpenMP threads do not spin beside OpenVINO's inferences "
                                             "(OMP_WAIT_POLICY=PASSIVE or a GOMP_SPINCOUNT of at most 10000 when "
                                             "Python started, or one thread)"])
    return Check("OpenMP threads", True, ["executorch.runtime's calls of programs with large outputs are slowed "
                                          "here:", *problem.splitlines()], warn=True)


def _registration_check(package) -> Check:
    ok = package.is_registered()
    detail = [f"{package.BACKEND_ID}: {'registered' if ok else 'NOT registered'}"]
    try:
        from executorch.runtime import Runtime

        from ..runtime.foreign_backends import EXECUTORCH_OWN_OPENVINO_BACKEND, own_openvino_backend_problem

        names = list(Runtime.get().backend_registry.registered_backend_names)
        detail.append(f"executorch.runtime sees: {', '.join(names)}")
        if EXECUTORCH_OWN_OPENVINO_BACKEND in names:
            detail.append(f"executorch's own {EXECUTORCH_OWN_OPENVINO_BACKEND} is registered too; "
                          "it is a different delegate (a .pte names the one that lowered it)")
            problem = own_openvino_backend_problem()
            if problem:
                detail.append(f"its programs: {problem}; exov.load_method loads them from memory (or lower "
                              "with executorch_openvino.OpenVINOPartitioner)")
    except Exception as exc:  # noqa: BLE001 - reported, the registration flag above decides
        detail.append(f"executorch.runtime could not be asked: {type(exc).__name__}: {exc}")
    return Check("registration", ok, detail,
                 fix="" if ok else "another delegate holds the id, or the executorch runtime library "
                                   "differs from the one this wheel links; reinstall both wheels")


def _openvino_check(package) -> tuple[Check, bool]:
    native = package._native
    plan = native.host_library_search()
    searched = [f"{'*' if c['explicit'] else ' '} {c['source']}: {c['path']}" for c in plan["candidates"]]
    searched += [f"  {note}" for note in plan["notes"]]
    try:
        loaded = _without_restated_log(package.load_openvino)
    except RuntimeError as exc:
        explicit = next((c for c in plan["candidates"] if c["explicit"]), None)
        if explicit is not None and explicit["source"].startswith("OPENVINO_LIB_PATH"):
            fix = ("unset OPENVINO_LIB_PATH to search the other places, or point it at the OpenVINO C library "
                   "file itself (libopenvino_c.so.<version> / openvino_c.dll) of OpenVINO 2025.4 or newer")
        elif explicit is not None:
            fix = "call executorch_openvino.set_library_path() with the OpenVINO C library file itself"
        else:
            fix = ("pip install 'openvino>=2025.4.1,<2027', or set OPENVINO_LIB_PATH to the full path of the "
                   "OpenVINO C library (libopenvino_c.so.<version> / openvino_c.dll)")
        # The message's own "Fix:" line would be a second fix beside this check's.
        failure = [line for line in f"load failed: {exc}".splitlines() if not line.startswith("Fix: ")]
        return Check("OpenVINO C library", False, ["search order (* = explicit choice):", *searched, *failure],
                     fix=fix), False
    detail = [f"loaded {loaded['path']}", f"from: {loaded['source']}", f"OpenVINO {loaded['version']}",
              "search order (* = explicit choice):", *searched]
    detail += [f"also present, not used: {other}" for other in loaded["not_used"]]
    return Check("OpenVINO C library", True, detail), True


def _without_restated_log(load):
    """``load()``, with the process's stderr captured meanwhile: the delegate logs a failure to load OpenVINO
    (outside any pybindings call, so straight to file descriptor 2) in the words of the exception this report
    shows, so those lines are dropped; every other line is written out after."""
    import os
    import tempfile

    from ..runtime.native_log import restated_by

    sys.stderr.flush()
    saved = os.dup(2)
    error: BaseException | None = None
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            return load()
        except BaseException as exc:
            error = exc
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            for line in captured.read().decode("utf-8", "replace").splitlines(keepends=True):
                if error is None or not restated_by(line.rstrip("\n"), error):
                    sys.stderr.write(line)


def _devices_check(package) -> Check:
    native = package._native
    try:
        devices = list(native.available_devices())
    except RuntimeError as exc:
        return Check("devices", False, [str(exc)], fix="check the OpenVINO installation (plugins next to "
                                                        "the C library)")
    detail = [f"available: {', '.join(devices) or 'none'}"]
    ok = "CPU" in devices
    if ok:
        try:
            default = native.device_property("CPU", "INFERENCE_PRECISION_HINT")
            capabilities = native.device_property("CPU", "OPTIMIZATION_CAPABILITIES")
            detail.append(f"CPU: {native.device_property('CPU', 'FULL_DEVICE_NAME')}")
        except RuntimeError as exc:
            return Check("devices", False, detail + [f"the CPU's properties could not be read: {exc}"],
                         fix="check the OpenVINO installation (the CPU plugin next to the C library)")
        detail.append(f"CPU programs compute in f32: the delegate asks for it unless a program was lowered "
                      f"with inference_precision (OpenVINO's own default here: {default}; "
                      f"capabilities: {capabilities})")
    return Check("devices", ok, detail, fix="" if ok else "OpenVINO's CPU plugin is missing from the "
                                                          "OpenVINO installation; reinstall openvino")


# A 32 -> 10 linear layer on 2 rows: measured wrong by up to 0.77 (f32 hint, OpenVINO 2026.4.1) on an
# emulated ARM CPU with 512-bit SVE (qemu's `max`), right with 128- and 256-bit SVE and on x86_64.
SELF_TEST_TOLERANCE = 1e-4  # relative to the largest output; f32 rounding here is about 1e-7


def _cpu_results_check() -> Check:
    import importlib.util

    if importlib.util.find_spec("openvino") is None:  # a machine that only runs .pte files (an install tree)
        return Check("CPU results", True, ["not run: lowering the test layer needs the openvino Python package "
                                           "(pip install openvino)"])
    import torch

    import executorch_openvino as exov

    generator = torch.Generator().manual_seed(0)
    layer = torch.nn.Linear(32, 10).eval()
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    x = torch.randn(2, 32, generator=generator)
    try:
        program = exov.lower(layer, (x,), device="CPU")
        result = exov.load_method(program.buffer).execute([x])[0]
    except Exception as exc:  # any failure here is the finding
        return Check("CPU results", False, [f"a 32 -> 10 linear layer could not run: {exc}"],
                     fix="run the failing step by hand to see the full error; report it with this output")
    with torch.no_grad():
        expected = layer(x)
    error = ((result - expected).abs().max() / expected.abs().max()).item()
    detail = [f"a 32 -> 10 linear layer through the delegate: {error:.1e} from eager PyTorch (relative)"]
    if error <= SELF_TEST_TOLERANCE:
        return Check("CPU results", True, detail)
    return Check("CPU results", False, detail + ["OpenVINO's CPU plugin computes wrong float32 results on this CPU"],
                 fix="do not use OpenVINO's CPU plugin on this CPU (another OpenVINO release may differ: check "
                     "with this command); docs/user-guide/aarch64.md lists the CPUs where this was measured")


def _program_check(program: str) -> Check:
    """The backends each method of the .pte `program` uses, and whether each can run here."""
    from executorch.runtime import Runtime  # registers executorch's own backends, as running would

    from ..runtime import _native  # type: ignore[attr-defined]
    from ..runtime.foreign_backends import check_method_backends, own_openvino_backend_problem

    Runtime.get()
    try:
        methods = _native.program_backends(program)
    except ValueError as exc:
        return Check(f"program {program}", False, [str(exc)], fix="give a .pte file that ExecuTorch wrote")
    detail, problems = [], []
    for method, backends in sorted(methods.items()):
        names = (", ".join(f"{b}{'' if ok else ' (not registered)'}" for b, ok in backends)
                 or "none (ExecuTorch's kernels)")
        detail.append(f"{method}: delegated to {names}")
        try:
            if check_method_backends(program, method):
                detail.append(f"{method}: executorch's own OpenVINO delegate: {own_openvino_backend_problem()}; "
                              "exov.load_method loads it from memory")
        except RuntimeError as exc:
            problems.append(str(exc))
    return Check(f"program {program}", not problems, detail + problems,
                 fix="" if not problems else "lower the model again with executorch_openvino.OpenVINOPartitioner")


def diagnose(program: str | None = None) -> list[Check]:
    """Runs every check (with `program`, a .pte path, also which backends its methods need); a check that cannot
    run (its prerequisite failed) is left out."""
    import executorch_openvino as package

    checks = [_package_check(package), _versions_check()]
    if package.import_problem is not None:
        return checks
    runtime = _runtime_check()
    checks.append(runtime)
    if runtime.ok:
        checks.append(_openmp_check(package))
    checks.append(_registration_check(package))
    openvino, loaded = _openvino_check(package)
    checks.append(openvino)
    if loaded:
        devices = _devices_check(package)
        checks.append(devices)
        if devices.ok and runtime.ok:  # lowering and running need torch and executorch.runtime
            checks.append(_cpu_results_check())
    if program is not None and runtime.ok:
        checks.append(_program_check(program))
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m executorch_openvino doctor", description=__doc__.split("\n")[0])
    parser.add_argument("program", nargs="?", help="a .pte: also check which backends its methods need")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    args = parser.parse_args(argv)
    checks = diagnose(args.program)
    ok = all(c.ok for c in checks)
    if args.json:
        print(json.dumps({"ok": ok, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for c in checks:
            print(f"[{'FAIL' if not c.ok else 'warn' if c.warn else 'ok'}] {c.name}")
            for line in c.detail:
                print(f"    {line}")
            if not c.ok:
                print(f"    fix: {c.fix}")
        delegate_ok = all(c.ok for c in checks if not c.name.startswith("program "))
        print(("the delegate can run here" if delegate_ok else "the delegate cannot run here: see the fixes above")
              + ("" if ok or not delegate_ok else "; the program cannot: see its fix above"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
