"""Does a wheel's native code find every executorch symbol it imports in each executorch wheel it may meet?

The delegate library, the pybindings and the runner import symbols from
executorch's shared libraries (libexecutorch.so, and for the runner
libexecutorch_kernels_optimized.so), which executorch ships once per CPython.
A stable-ABI wheel, built against one of them, meets the others. For each
ELF file of our wheel and each executorch wheel, every undefined dynamic
symbol that the build's own executorch defines must be defined, with the same
symbol version, by the same-named library of the other wheel. Reads symbols
with binutils' `nm -D`; standard library otherwise.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
import zipfile
from pathlib import Path

EXECUTORCH_LIB = "executorch/lib/"


def _symbols(path: Path, which: str) -> set[str]:
    """`name@version` (or `name`) of the dynamic symbols `nm -D` lists as undefined or defined."""
    flag = "--undefined-only" if which == "undefined" else "--defined-only"
    out = subprocess.run(["nm", "-D", flag, "--with-symbol-versions", str(path)],
                         check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[-1] and (which == "undefined" or len(parts) == 3):
            names.add(parts[-1].replace("@@", "@"))
    return names


def _needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], check=True, capture_output=True, text=True).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


def _machine(path: Path) -> int:
    """The ELF header's e_machine (62: x86_64, 183: aarch64); little-endian files only, as both are."""
    with path.open("rb") as f:
        return int.from_bytes(f.read(20)[18:20], "little")


def _is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def _executorch_libraries(wheel: Path, into: Path) -> dict[str, Path]:
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith(EXECUTORCH_LIB) and ".so" in n]
        z.extractall(into, names)
    return {Path(n).name: into / n for n in names}


def check(wheel: Path, built_against: Path, targets: list[Path]) -> list[dict]:
    """One row per (ELF file of `wheel`, executorch wheel in `targets`); `missing` must be empty.

    built_against: the executorch wheel the build linked (the reference for
    which imported symbols are executorch's).
    """
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp / "ours")
        ours = [p for p in (tmp / "ours").rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)
                and ".libs" not in p.parent.name]
        reference = _executorch_libraries(built_against, tmp / "reference")
        machines = {_machine(p) for p in [*ours, *reference.values()]}
        if len(machines) != 1:  # symbols that one architecture lacks would be left out, not reported
            raise ValueError(f"{wheel.name} and {built_against.name} hold ELF files of different architectures "
                             f"(e_machine {sorted(machines)}): compare a wheel with executorch's wheels for its own")
        reference_defined = {name: _symbols(path, "defined") for name, path in reference.items()}
        imports = {elf: (_symbols(elf, "undefined"), _needed(elf)) for elf in sorted(ours)}
        for index, target in enumerate(targets):
            libraries = _executorch_libraries(target, tmp / f"target{index}")
            if {_machine(p) for p in libraries.values()} - machines:
                raise ValueError(f"{target.name} is for another architecture than {wheel.name}")
            defined_in = {}  # read once per library of this target
            for elf, (imported, needed_libraries) in imports.items():
                for needed in needed_libraries:
                    if needed not in reference_defined:
                        continue  # not one of executorch's libraries
                    from_executorch = imported & reference_defined[needed]
                    present = needed in libraries
                    if present and needed not in defined_in:
                        defined_in[needed] = _symbols(libraries[needed], "defined")
                    defined = defined_in.get(needed, set())
                    same_file = present and _sha256(libraries[needed]) == _sha256(reference[needed])
                    rows.append({"elf": elf.name, "library": needed, "executorch_wheel": target.name,
                                 "imported": len(from_executorch), "same_bytes": same_file,
                                 "missing": sorted(from_executorch - defined)})
    return rows


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table(wheel: Path, rows: list[dict]) -> str:
    lines = [f"ABI check of {wheel.name}", "",
             "| file | imports from | executorch wheel | symbols | same bytes | missing |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if not r["imported"]:
            continue  # linked for what loading it does (the kernels register themselves), no symbol used
        lines.append(f"| {r['elf']} | {r['library']} | {r['executorch_wheel']} | {r['imported']} | "
                     f"{'yes' if r['same_bytes'] else 'no'} | {len(r['missing'])} |")
    return "\n".join(lines)
