"""Checks an editable install of executorch-openvino, or a wheel's RUNPATHs (for ``nox -s editable``).

    python editable_check.py redirect SOURCE [PROBE]   pip install --no-build-isolation -e SOURCE
    python editable_check.py rebuild SOURCE [PROBE]    ... -C editable.rebuild=true
    python editable_check.py wheel WHEEL               every ELF file's RUNPATH is $ORIGIN-relative

An editable install must import from SOURCE (the Python files) and from where
its mode puts the native libraries (redirect: site-packages; rebuild: the
install tree in SOURCE's build folder), report OpenVINO in ``library_info()``,
lower a small model, run the saved ``.pte`` through the delegate as eager
PyTorch computes it, and start the C++ runner through its entry point. The
native libraries' RUNPATH starts with the wheel's ``$ORIGIN`` entries; an
absolute entry may name only the executorch package's ``lib/``.

PROBE, in redirect mode: ``compile_specs.EDITABLE_PROBE`` (appended to the
source after the install) must equal it. In rebuild mode: ``_native.EDITABLE_PROBE``
and the delegate library's ``exov_editable_probe()`` (C++ added after the
install) must; this import rebuilt them.
"""

from __future__ import annotations

import ctypes
import importlib.util
import io
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile


def runpath(data) -> list[str]:
    """The DT_RUNPATH (or DT_RPATH) entries of an ELF file (a path or an open binary file); None if not ELF."""
    if isinstance(data, (str, Path)):
        with open(data, "rb") as f:
            return runpath(f)
    if data.read(4) != b"\x7fELF":
        return None
    data.seek(0)
    entries = []
    for section in ELFFile(data).iter_sections():
        if isinstance(section, DynamicSection):
            for tag in section.iter_tags():
                if tag.entry.d_tag == "DT_RUNPATH":
                    entries += tag.runpath.split(":")
                elif tag.entry.d_tag == "DT_RPATH":
                    entries += tag.rpath.split(":")
    return entries


def loaded_library(name: str) -> Path:
    """The file of a shared library this process has mapped."""
    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split(maxsplit=5)[-1]
        if path.endswith("/" + name):
            return Path(path)
    raise AssertionError(f"{name} is not loaded")


def check_wheel(wheel: Path) -> None:
    checked = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            with archive.open(name) as member:
                entries = runpath(io.BytesIO(member.read()))
            if entries is None:
                continue
            assert entries, f"{name} has no RUNPATH"
            bad = [e for e in entries if not e.startswith("$ORIGIN")]
            assert not bad, f"{name} in {wheel.name} has the RUNPATH entries {bad} (an editable build leaked?)"
            checked.append(f"{name}: {':'.join(entries)}")
    assert checked, f"no ELF file in {wheel}"
    print("wheel RUNPATHs, all $ORIGIN-relative:\n  " + "\n  ".join(checked))


def check_editable(mode: str, source: Path, probe: int | None) -> None:
    start = time.monotonic()
    import torch

    import executorch_openvino as exov
    from executorch_openvino.runtime import _native
    imported = time.monotonic() - start

    package = Path(exov.__file__).resolve().parent
    assert package == source / "python" / "executorch_openvino", f"Python files from {package}, not the source"
    # The libraries' folder: the extension sits in its runtime/ subfolder.
    native = Path(_native.__file__).resolve().parent.parent
    if mode == "redirect":
        expected = Path(sysconfig.get_paths()["platlib"]).resolve() / "executorch_openvino"
        assert native == expected, f"redirect mode: the extension is in {native}, expected {expected}"
    else:
        build = (source / "build").resolve()
        assert native.is_relative_to(build) and native.parent.name == "platlib", \
            f"rebuild mode: the extension is in {native}, not an install tree under {build}"

    executorch_lib = Path(importlib.util.find_spec("executorch").submodule_search_locations[0]).resolve() / "lib"
    backend = loaded_library("libexecutorch_openvino_backend.so")
    assert backend.resolve().parent == native, f"the delegate library was loaded from {backend}"
    threadpool = loaded_library("libexecutorch_threadpool.so")
    assert threadpool.resolve().parent == executorch_lib, f"libexecutorch_threadpool.so from {threadpool}"
    for library, up in ((Path(_native.__file__), "/.."), (backend, ""), (native / "executorch_openvino_run", "")):
        entries = runpath(library)
        # The wheel's entries first; an absolute one may only name that executorch's lib/.
        assert entries[:2] == [f"$ORIGIN{up}", f"$ORIGIN{up}/../executorch/lib"] and all(
            e.startswith("$ORIGIN") or Path(e).resolve() == executorch_lib for e in entries), \
            f"{library.name}: RUNPATH {entries}"

    info = exov.library_info()
    assert info["registered"] and info["error"] is None and info["version"], info
    built = exov.build_info()
    from importlib.metadata import version
    assert built["executorch_version"] == version("executorch"), built

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.GELU(), torch.nn.Linear(8, 4)).eval()
    x = torch.randn(3, 16)
    program = exov.lower(model, (x,))
    assert exov.BACKEND_ID.encode() in program.buffer, "nothing was delegated"
    with tempfile.TemporaryDirectory() as folder:
        pte = Path(folder) / "model.pte"
        pte.write_bytes(program.buffer)
        with torch.no_grad():
            difference = (exov.load_method(pte).execute([x])[0] - model(x)).abs().max().item()
        assert exov.last_compile_report()["device"] == "CPU", exov.last_compile_report()
        assert difference < 1e-5, f"max abs difference {difference} against eager"
        # Random inputs: the runner loads OpenVINO (--list would not), finding the environment's package.
        env = {k: v for k, v in os.environ.items() if k != "OPENVINO_LIB_PATH"}
        run = subprocess.run([str(Path(sys.executable).parent / "executorch-openvino-run"), str(pte),
                              "--random-inputs"], capture_output=True, text=True, timeout=120, env=env)
        assert run.returncode == 0 and "output 0: Float (3, 4)" in run.stdout, \
            f"the runner: {run.returncode}\n{run.stdout}{run.stderr}"

    if probe is not None:
        if mode == "redirect":
            from executorch_openvino.contract import compile_specs
            assert getattr(compile_specs, "EDITABLE_PROBE", None) == probe, "a Python edit did not take effect"
        else:
            assert getattr(_native, "EDITABLE_PROBE", None) == probe, \
                f"_native.EDITABLE_PROBE is {getattr(_native, 'EDITABLE_PROBE', None)}: the rebuild did not take effect"
            marker = ctypes.CDLL(str(backend)).exov_editable_probe
            assert marker() == probe, "the delegate library was not rebuilt"
    print(f"editable ({mode}): import {imported:.1f} s (with any rebuild); Python from {package}; "
          f"native from {native}; OpenVINO {info['version']} ({info['source']}); max abs difference "
          f"{difference:.1e}; runner ran it" + (f"; probe {probe} seen" if probe is not None else ""))


def main() -> int:
    mode = sys.argv[1]
    if mode == "wheel":
        check_wheel(Path(sys.argv[2]))
    else:
        check_editable(mode, Path(sys.argv[2]).resolve(), int(sys.argv[3]) if len(sys.argv) > 3 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
