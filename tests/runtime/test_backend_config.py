"""OpenVINOBackendConfig: checked when made, round trips through dicts and JSON, a stable key."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from executorch_openvino.contract.backend_config import OpenVINOBackendConfig

pytestmark = [pytest.mark.own_runtime]


def test_defaults_and_describe():
    config = OpenVINOBackendConfig()
    assert (config.device, config.inference_precision, config.performance_hint, config.numerics,
            config.model_cache_dir) == ("CPU", "", "LATENCY", "exact", None)
    assert config.describe() == "defaults"
    changed = OpenVINOBackendConfig(device="GPU", performance_hint="THROUGHPUT")
    assert changed.describe() == "device=GPU, performance_hint=THROUGHPUT"
    assert OpenVINOBackendConfig(performance_hint="").describe() == "performance_hint=''"


@pytest.mark.parametrize("field, value, message", [
    ("device", "cpu", "'device' is 'cpu'; OpenVINO device names are upper case \\(did you mean 'CPU'\\?\\)"),
    ("device", "", "'device' is empty; give an OpenVINO device such as 'CPU'"),
    ("device", "CPU ", "'device' is 'CPU '; OpenVINO device names have no spaces \\(did you mean 'CPU'\\?\\)"),
    ("inference_precision", "fp32", "'inference_precision' is 'fp32'; allowed values are 'f32', 'f16', 'bf16'"),
    ("performance_hint", "latency", "'performance_hint' is 'latency'; allowed values are 'LATENCY', 'THROUGHPUT', "
                                    "'CUMULATIVE_THROUGHPUT'"),
    ("numerics", "approximate", "'numerics' is 'approximate'; allowed values are 'exact' and 'fast'"),
    ("model_cache_dir", "", "'model_cache_dir' is empty"),
])
def test_an_invalid_value_fails_when_the_config_is_made(field, value, message):
    with pytest.raises(ValueError, match="OpenVINOBackendConfig field " + message):
        OpenVINOBackendConfig(**{field: value})


@pytest.mark.parametrize("field, value", [("device", 0), ("performance_hint", None), ("model_cache_dir", 3)])
def test_a_value_that_is_not_text_is_a_type_error(field, value):
    with pytest.raises(TypeError, match=f"'{field}' is a"):
        OpenVINOBackendConfig(**{field: value})


def test_config_file_errors_name_the_file(tmp_path, monkeypatch):
    with pytest.raises(OSError, match=f"cannot write the config to '{tmp_path / 'missing' / 'c.json'}'"):
        OpenVINOBackendConfig().to_json(tmp_path / "missing" / "c.json")
    (tmp_path / "latin1.json").write_bytes(b'{"device": "\xe9"}')
    with pytest.raises(ValueError, match="latin1.json' is not a JSON config"):
        OpenVINOBackendConfig.from_json(tmp_path / "latin1.json")
    monkeypatch.chdir(tmp_path)
    assert OpenVINOBackendConfig(model_cache_dir="cache").model_cache_dir == str(tmp_path / "cache")
    with pytest.raises(ValueError, match="'model_cache_dir' is '.*latin1.json', a file; give a folder"):
        OpenVINOBackendConfig(model_cache_dir="latin1.json")


def test_dict_round_trip_and_unknown_fields(tmp_path):
    config = OpenVINOBackendConfig(device="AUTO", inference_precision="f16", performance_hint="THROUGHPUT",
                                   numerics="fast", model_cache_dir=tmp_path)
    assert config.model_cache_dir == str(tmp_path)  # a Path is kept as text, for JSON
    assert OpenVINOBackendConfig.from_dict(config.to_dict()) == config
    assert OpenVINOBackendConfig.from_dict({"device": "GPU"}) == OpenVINOBackendConfig(device="GPU")
    with pytest.raises(ValueError, match="unknown OpenVINOBackendConfig field 'precision'; the fields are device, "
                                         "inference_precision, performance_hint, numerics, model_cache_dir"):
        OpenVINOBackendConfig.from_dict({"precision": "f32"})
    with pytest.raises(TypeError, match="takes a dict, got list"):
        OpenVINOBackendConfig.from_dict([("device", "CPU")])
    with pytest.raises(ValueError, match="'device' is 'gpu'"):
        OpenVINOBackendConfig.from_dict({"device": "gpu"})


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_to_json_writes_an_owner_only_file_even_over_a_wider_one(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{}")
    os.chmod(path, 0o644)
    config = OpenVINOBackendConfig(performance_hint="CUMULATIVE_THROUGHPUT", device="AUTO")
    config.to_json(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text())["performance_hint"] == "CUMULATIVE_THROUGHPUT"
    assert OpenVINOBackendConfig.from_json(path) == config
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]  # no temporary file left
    path.write_text("device: CPU")
    with pytest.raises(ValueError, match="is not a JSON config"):
        OpenVINOBackendConfig.from_json(path)


def test_key_is_stable_across_processes_and_distinguishes_configs():
    import subprocess

    # A golden value: the key of the default config must not change between processes, Python versions
    # or releases of this package (JSON with sorted keys, SHA-256; no salted hash()).
    assert OpenVINOBackendConfig().key() == GOLDEN_DEFAULT_KEY
    code = ("from executorch_openvino.contract.backend_config import OpenVINOBackendConfig as C; "
            "print(C(device='GPU', performance_hint='THROUGHPUT').key())")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True).stdout.split()[-1]
    assert other == OpenVINOBackendConfig(device="GPU", performance_hint="THROUGHPUT").key()
    keys = {OpenVINOBackendConfig(**c).key() for c in ({}, {"device": "GPU"}, {"performance_hint": "THROUGHPUT"},
                                                       {"numerics": "fast"}, {"inference_precision": "f16"})}
    assert len(keys) == 5 and all(len(k) == 16 for k in keys)


GOLDEN_DEFAULT_KEY = "0a2e088d0855429a"  # OpenVINOBackendConfig().key(), first computed on 2026-11-30
