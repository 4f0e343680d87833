"""Checks on the repaired wheel file itself (EXOV_WHEEL, set by the nox tests session)."""

from __future__ import annotations

import io
import platform
import zipfile
from email.parser import Parser
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename
from packaging.version import Version

import executorch_openvino
from exov_testing.environment import nox_provided

pytestmark = [pytest.mark.own_runtime, pytest.mark.aarch64, pytest.mark.packaging]

OUR_LIBRARIES = {"executorch_openvino/libexecutorch_openvino_backend.so"}
TESTED_OPENVINO = ["2025.4.1", "2026.4.1"]


@pytest.fixture(scope="module")
def wheel() -> Path:
    return Path(nox_provided("EXOV_WHEEL", "the repaired wheel"))


def _members(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as z:
        return {name: z.read(name) for name in z.namelist()}


def test_manylinux_2_28_tag(wheel):
    # executorch's own wheels are manylinux_2_28 (Ubuntu 20.04, RHEL 8) on x86_64 and aarch64; ours must
    # not ask for more. The wheel is that of the machine the tests run on (aarch64 under nox -s aarch64_emulated).
    _, _, _, tags = parse_wheel_filename(wheel.name)
    assert {t.platform for t in tags} == {f"manylinux_2_28_{platform.machine()}"}, [str(t) for t in tags]


def _elf_files(wheel: Path):
    from elftools.elf.elffile import ELFFile

    for name, data in _members(wheel).items():
        if data.startswith(b"\x7fELF"):
            yield name, ELFFile(io.BytesIO(data))


def _needed_versions(elf) -> dict[str, set[str]]:
    """{library file name: symbol versions required from it} (the ELF's .gnu.version_r)."""
    from elftools.elf.gnuversions import GNUVerNeedSection

    needed: dict[str, set[str]] = {}
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for library, versions in section.iter_versions():
                needed.setdefault(library.name, set()).update(v.name for v in versions)
    return needed


def test_libraries_need_glibc_2_28_at_most_and_no_shared_libstdcxx(wheel):
    # cmake/Glibc.cmake's EXOV_GLIBC_2_28: libstdc++ linked statically, glibc symbols bound to old versions.
    for name, elf in _elf_files(wheel):
        needed = _needed_versions(elf)
        assert "libstdc++.so.6" not in needed, f"{name} needs the shared libstdc++: {needed['libstdc++.so.6']}"
        # From any of glibc's libraries (libc, libm, libdl, libpthread, ld-linux).
        glibc = {Version(v.split("_", 1)[1]) for versions in needed.values() for v in versions
                 if v.startswith("GLIBC_2")}
        assert glibc and max(glibc) <= Version("2.28"), f"{name} needs glibc {max(glibc)}"
        assert not any(v.startswith(("GLIBCXX_", "CXXABI_")) for vs in needed.values() for v in vs), needed


def test_libraries_that_call_dlopen_need_libdl(wheel):
    # Before glibc 2.34, dlopen@GLIBC_2.2.5 is defined in libdl.so.2, not libc.so.6.
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.sections import SymbolTableSection

    for name, elf in _elf_files(wheel):
        dynsym = next(s for s in elf.iter_sections() if isinstance(s, SymbolTableSection) and s.name == ".dynsym")
        if not any(sym.name == "dlopen" and sym["st_shndx"] == "SHN_UNDEF" for sym in dynsym.iter_symbols()):
            continue
        needed = [t.needed for sec in elf.iter_sections() if isinstance(sec, DynamicSection)
                  for t in sec.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        assert "libdl.so.2" in needed, f"{name} calls dlopen but does not need libdl.so.2: {needed}"


def test_static_libstdcxx_is_not_exported(wheel):
    # Another library in the process (torch, executorch) brings its own libstdc++: ours stays private.
    from elftools.elf.sections import SymbolTableSection

    for name, elf in _elf_files(wheel):
        dynsym = next(s for s in elf.iter_sections() if isinstance(s, SymbolTableSection) and s.name == ".dynsym")
        # Weak symbols are std templates instantiated by our own code (vector<string>::push_back...);
        # libstdc++.a's own definitions are strong.
        leaked = [sym.name for sym in dynsym.iter_symbols()
                  if sym["st_shndx"] != "SHN_UNDEF" and sym["st_info"]["bind"] == "STB_GLOBAL"
                  and sym.name.startswith(("_ZNSt", "_ZSt", "_ZNKSt", "_ZTVSt", "_ZTISt", "_ZTSSt",
                                           "_Znw", "_Zna", "_Zdl", "_Zda", "__cxa", "__gxx"))]
        assert not leaked, f"{name} exports libstdc++ symbols: {leaked[:5]}"


def test_nothing_vendored_from_other_wheels(wheel):
    libraries = {n for n in _members(wheel) if ".so" in Path(n).name or n.endswith((".dll", ".dylib"))}
    extension = {n for n in libraries if Path(n).name.startswith("_native.")}
    assert len(extension) == 1
    assert libraries - extension == OUR_LIBRARIES, "the repaired wheel vendors libraries"
    assert not any(".libs/" in n for n in _members(wheel))


def test_runpaths_are_origin_relative(wheel):
    from elftools.elf.dynamic import DynamicSection

    for name, elf in _elf_files(wheel):
        entries = []
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    if tag.entry.d_tag in ("DT_RUNPATH", "DT_RPATH"):
                        entries += tag.runpath.split(":") if tag.entry.d_tag == "DT_RUNPATH" else tag.rpath.split(":")
        assert entries, f"{name} has no RUNPATH (it must find libexecutorch.so)"
        for entry in entries:
            assert entry.startswith("$ORIGIN"), f"{name} has the non-relative RUNPATH entry {entry!r}"
        # site-packages/executorch/lib, seen from the file's own folder in the wheel
        up = "../" * (len(Path(name).parts) - 1)
        assert f"$ORIGIN/{up}executorch/lib" in entries, f"{name}: RUNPATH {entries}"


def test_metadata_pins(wheel):
    metadata = next(data for name, data in _members(wheel).items() if name.endswith(".dist-info/METADATA"))
    requirements = [Requirement(r) for r in Parser().parsestr(metadata.decode()).get_all("Requires-Dist")]
    runtime = {r.name: r for r in requirements if r.marker is None}
    # executorch: exactly the version the wheel was built against (= the one installed with it).
    assert str(runtime["executorch"].specifier) == f"=={version('executorch')}"
    # torch: executorch 1.5.1 does not require it, yet nothing runs without it; the installed one satisfies it.
    assert runtime["torch"].specifier.contains(Version(version("torch")).base_version), runtime["torch"]
    # openvino: a range that covers every tested release.
    for release in TESTED_OPENVINO:
        assert runtime["openvino"].specifier.contains(Version(release)), runtime["openvino"]


def test_tests_import_the_installed_wheel_not_the_source_tree():
    location = Path(executorch_openvino.__file__).resolve()
    assert "site-packages" in location.parts, location
    assert (location.parent / "libexecutorch_openvino_backend.so").exists()


def test_build_information_is_recorded_in_the_wheel(wheel):
    import json
    import os
    import re

    recorded = json.loads(_members(wheel)["executorch_openvino/build_info.json"])
    assert recorded == executorch_openvino.build_info()
    assert recorded["executorch_version"] == version("executorch")  # the pin's source
    # nox builds against the pip openvino package unless a session says otherwise
    assert recorded["openvino_source"] == os.environ.get("EXOV_BUILT_WITH_OPENVINO_SOURCE", "pip")
    assert re.fullmatch(r"20\d\d\.\d+\.\d+", recorded["openvino_version"]), recorded
    assert recorded["openvino_version"] in TESTED_OPENVINO


def test_licenses_of_what_is_linked_in_ship_with_the_wheel(wheel):
    # Ours (Apache-2.0) and the notices of what _native links statically: nanobind (BSD-3-Clause)
    # and its robin-map (MIT).
    members = _members(wheel)
    licenses = {n.split(".dist-info/licenses/", 1)[1]: data for n, data in members.items()
                if ".dist-info/licenses/" in n and not n.endswith("/")}
    assert set(licenses) == {"LICENSE", "nanobind/LICENSE", "robin-map/LICENSE"}, sorted(licenses)
    assert b"Apache License" in licenses["LICENSE"] and b"Version 2.0" in licenses["LICENSE"]
    assert b"Wenzel Jakob" in licenses["nanobind/LICENSE"] and b"Redistribution and use" in licenses["nanobind/LICENSE"]
    assert licenses["robin-map/LICENSE"].startswith(b"MIT License") and b"Permission is hereby granted" in licenses["robin-map/LICENSE"]
    metadata = next(data for n, data in members.items() if n.endswith(".dist-info/METADATA")).decode()
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
