"""What the lowering and the runtime share has one definition each: the processed blob's layout
(python/executorch_openvino/contract/processed_blob_layout.json) and the compile specs' keys (compile_specs.json there).
The build writes the delegate's processed_blob_layout.h and compile_spec_keys.h from them (cmake/, run here in
CMake's script mode), the Python modules read them, and no C++ source spells what they define."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "executorch_openvino" / "contract"
LAYOUT = PACKAGE / "processed_blob_layout.json"
SPECS = PACKAGE / "compile_specs.json"
CMAKE = shutil.which("cmake")


def _generate(layout: Path, out: Path, function: str = "exov_generate_blob_layout",
              header: str = "processed_blob_layout.h") -> str:
    script = out / "generate.cmake"
    script.write_text(f'include("{ROOT / "cmake" / "CompileSpecKeys.cmake"}")\n{function}("{layout}" "{out}")\n')
    subprocess.run([CMAKE, "-P", str(script)], check=True, capture_output=True, text=True)
    return (out / header).read_text()


def _generate_keys(specs: Path, out: Path) -> str:
    return _generate(specs, out, "exov_generate_compile_spec_keys", "compile_spec_keys.h")


def _constants(header: str) -> dict[str, str]:
    return dict(re.findall(r"constexpr [\w ]+?\*? ?\b(k[A-Z]\w*)(?:\[\d*\])? = (.+);", header))


@pytest.mark.skipif(CMAKE is None, reason="needs cmake (nox -s tooling installs it)")
def test_the_generated_header_holds_each_fields_offset_and_size_and_the_names(tmp_path):
    constants = _constants(_generate(LAYOUT, tmp_path))
    layout = json.loads(LAYOUT.read_text())
    at = 0
    for field in layout["header"]:
        camel = "".join(part.capitalize() for part in field["name"].split("_"))
        assert (constants[f"k{camel}Offset"], constants[f"k{camel}Size"]) == (str(at), str(field["size"]))
        at += field["size"]
    assert constants["kHeaderSize"] == str(at) == "88"
    assert (constants["kChecksumOffset"], constants["kDigestOffset"]) == ("48", "56")
    assert constants["kFormatVersion"] == str(layout["format_version"])
    assert constants["kBlobMagic"] == "{" + ", ".join(f"'{c}'" for c in layout["magic"]) + "}"
    assert constants["kIndexCheckPrefix"] == json.dumps(layout["ir_names"]["index_check_prefix"])
    assert constants["kRestartStatePrefix"] == json.dumps(layout["ir_names"]["restart_state_prefix"])


@pytest.mark.skipif(CMAKE is None, reason="needs cmake (nox -s tooling installs it)")
def test_a_field_added_to_the_definition_is_one_edit(tmp_path):
    layout = json.loads(LAYOUT.read_text())
    layout["header"].insert(-1, {"name": "extra_count", "type": "uint", "size": 8})
    layout["ir_names"]["new_mark"] = "new:"
    edited = tmp_path / "layout.json"
    edited.write_text(json.dumps(layout))
    constants = _constants(_generate(edited, tmp_path))
    assert (constants["kExtraCountOffset"], constants["kDigestOffset"], constants["kHeaderSize"]) == ("56", "64", "96")
    assert constants["kNewMark"] == '"new:"'


@pytest.mark.skipif(CMAKE is None, reason="needs cmake (nox -s tooling installs it)")
def test_the_runtime_gets_the_keys_it_reads_with_their_defaults_and_values(tmp_path):
    constants = _constants(_generate_keys(SPECS, tmp_path))
    specs = json.loads(SPECS.read_text())["keys"]
    read = sorted(k for k, spec in specs.items() if "runtime" in spec["read_by"])
    assert read == ["device", "inference_precision", "performance_hint", "program_state"]
    assert sorted(k[1:-3] for k in constants if k.endswith("Key")) == sorted(
        "".join(part.capitalize() for part in key.split("_")) for key in read)
    assert constants["kDeviceDefault"] == '"CPU"' and constants["kInferencePrecisionDefaultOnCpu"] == '"f32"'
    assert constants["kPerformanceHintValues"] == "{" + ", ".join(
        json.dumps(v) for v in specs["performance_hint"]["values"]) + "}"
    assert "kNumericsKey" not in constants  # read at lowering only
    # which devices may run on the CPU (where default_on_cpu applies): the same data as compile_specs.py's rule
    assert constants["kDeviceCpuContaining"] == '"CPU"' and constants["kDeviceCpuNamed"] == '{"AUTO"}'
    assert constants["kInferencePrecisionProperty"] == '"INFERENCE_PRECISION_HINT"'
    assert constants["kPerformanceHintProperty"] == '"PERFORMANCE_HINT"'
    module = _compile_specs_module(SPECS, tmp_path / "module")
    options = module.resolve_options([])
    assert options == module.OpenVINOOptions()  # the dataclass's defaults are the JSON's
    assert module.openvino_properties(options) == {"INFERENCE_PRECISION_HINT": "f32"}  # "" hint: none passed
    may_run_on_cpu = module.may_run_on_cpu
    assert [may_run_on_cpu(d) for d in ("CPU", "AUTO", "HETERO:GPU,CPU", "GPU", "NPU")] == [True] * 3 + [False] * 2


@pytest.mark.skipif(CMAKE is None, reason="needs cmake (nox -s tooling installs it)")
def test_a_key_added_to_the_definition_reaches_both_sides_in_one_edit(tmp_path):
    specs = json.loads(SPECS.read_text())
    # A JSON string may hold quotes and backslashes: the C++ literal escapes them (a breaker's header did not compile).
    empty_means = 'OpenVINO\'s "default" \\ here'
    specs["keys"]["cache_mode"] = {"read_by": ["lowering", "runtime"], "values": ["size", "speed", ""],
                                   "empty_means": empty_means, "default": ""}
    edited = tmp_path / "compile_specs.json"
    edited.write_text(json.dumps(specs))
    constants = _constants(_generate_keys(edited, tmp_path))
    assert constants["kCacheModeKey"] == '"cache_mode"' and constants["kCacheModeValues"] == '{"size", "speed", ""}'
    assert constants["kCacheModeEmptyMeans"] == json.dumps(empty_means)
    module = _compile_specs_module(edited, tmp_path)
    assert "cache_mode" in module.USER_KEYS and module.DEFAULTS["cache_mode"] == ""
    module.check_option("cache_mode", "size")
    with pytest.raises(ValueError, match="'cache_mode' is 'fast'; allowed values are 'size', 'speed', or '' for "
                                         "OpenVINO's \"default\""):
        module.check_option("cache_mode", "fast")


def test_a_key_without_values_or_a_check_is_named_as_the_maintainers_to_finish(tmp_path):
    specs = json.loads(SPECS.read_text())
    specs["keys"]["num_streams"] = {"read_by": ["lowering"], "default": ""}
    specs["keys"]["only"] = {"read_by": ["lowering"], "values": ["on"], "default": "on"}
    specs["keys"]["maybe"] = {"read_by": ["lowering"], "values": ["on", ""], "default": ""}
    edited = tmp_path / "compile_specs.json"
    edited.write_text(json.dumps(specs))
    module = _compile_specs_module(edited, tmp_path)
    with pytest.raises(NotImplementedError, match="compile_specs.json has the key 'num_streams' without a list of "
                                                  "values: give it `values` there, or a branch in"):
        module.check_option("num_streams", "2")
    with pytest.raises(ValueError, match="'only' is 'off'; allowed values are 'on'$"):
        module.check_option("only", "off")
    with pytest.raises(ValueError, match="'maybe' is 'off'; allowed values are 'on', or ''$"):
        module.check_option("maybe", "off")


def test_every_key_the_lowering_reads_is_an_option_field(tmp_path):
    # resolve_options hands each key the lowering reads to its handling as an OpenVINOOptions field.
    import dataclasses

    module = _compile_specs_module(SPECS, tmp_path)
    lowering = {key for key, spec in json.loads(SPECS.read_text())["keys"].items() if "lowering" in spec["read_by"]}
    assert lowering == {f.name for f in dataclasses.fields(module.OpenVINOOptions)}


# Each format version's header fields (name, type, size). A header changed without a new format_version would be
# read by an older delegate as its own layout: record a new version here when the header changes.
HEADERS_OF_FORMAT_VERSIONS = {
    3: [("magic", "bytes", 8), ("format_version", "uint", 4), ("payload_kind", "uint", 4), ("xml_offset", "uint", 8),
        ("xml_size", "uint", 8), ("weights_offset", "uint", 8), ("weights_size", "uint", 8), ("checksum", "uint", 4),
        ("reserved", "uint", 4), ("digest", "bytes", 32)],
}


def test_a_changed_header_has_a_new_format_version():
    layout = json.loads(LAYOUT.read_text())
    fields = [(f["name"], f["type"], f["size"]) for f in layout["header"]]
    version = layout["format_version"]
    assert version in HEADERS_OF_FORMAT_VERSIONS, \
        f"format_version {version} is new: record its header in HEADERS_OF_FORMAT_VERSIONS (tests/tooling/test_contract.py)"
    assert fields == HEADERS_OF_FORMAT_VERSIONS[version], \
        f"the header changed but format_version is still {version}: give processed_blob_layout.json a new one"


def _compile_specs_module(specs: Path, folder: Path):
    """compile_specs.py loaded from a copy beside `specs` (it imports the standard library only)."""
    folder.mkdir(exist_ok=True)
    copy = folder / "compile_specs.py"
    copy.write_text((PACKAGE / "compile_specs.py").read_text())
    if specs != folder / "compile_specs.json":
        (folder / "compile_specs.json").write_text(specs.read_text())
    spec = importlib.util.spec_from_file_location(f"compile_specs_{folder.name}", copy)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses looks its module up
    spec.loader.exec_module(module)
    return module


def test_the_lowering_checks_each_key_and_its_messages_name_the_allowed_values(tmp_path):
    module = _compile_specs_module(SPECS, tmp_path)
    for key, default in module.DEFAULTS.items():
        if key != "program_state":
            module.check_option(key, default or {"device": "CPU", "gguf_weights": "w.gguf"}.get(key, default))
    with pytest.raises(ValueError, match="allowed values are 'f32', 'f16', 'bf16', or '' for the device default"):
        module.check_option("inference_precision", "fp32")
    with pytest.raises(ValueError, match="allowed values are 'exact' and 'fast'$"):
        module.check_option("numerics", "approximate")
    with pytest.raises(ValueError, match=r"'none' and 'mutable' \(the partitioner writes it\)"):
        module.check_option("program_state", "x")


def test_no_cpp_source_spells_what_the_definition_holds():
    layout = json.loads(LAYOUT.read_text())
    spelled = [f'"{value}"' for key, value in layout["ir_names"].items() if key != "about"]
    spelled += [f"'{layout['magic']}'", '"' + layout["magic"] + '"', "= 88;", "= 48;"]
    sources = [p for folder in ("native", "tests") for p in (ROOT / folder).rglob("*") if p.suffix in (".h", ".cpp")]
    code = {p: re.sub(r"//[^\n]*", "", p.read_text()) for p in sources}  # comments may name them
    found = {str(p.relative_to(ROOT)): hits for p, text in code.items() if (hits := [s for s in spelled if s in text])}
    assert not found, found


def test_the_runtimes_compile_spec_reader_spells_no_key():
    keys = [f'"{key}"' for key in json.loads(SPECS.read_text())["keys"]]
    code = {p: re.sub(r"//[^\n]*", "", p.read_text()) for p in (ROOT / "native" / "delegate").glob("compile_spec*")}
    found = {p.name: hits for p, text in code.items() if (hits := [k for k in keys if k in text])}
    assert not found, found
