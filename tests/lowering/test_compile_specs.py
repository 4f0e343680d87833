"""Compile specs: float32 by default on CPU, the precision hint really applied, bad values refused."""

from __future__ import annotations

import os
import warnings

import pytest
import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec

import executorch_openvino as exov
from exov_testing.programs import eager, lower, run


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).eval()


INPUT = (torch.randn(8, 256, generator=torch.Generator().manual_seed(1)),)


def _max_error(partitioner) -> float:
    """Max abs error against eager; the runtime's compile report is then that of this program."""
    model = _mlp()
    pte, _ = lower(model, INPUT, partitioner=partitioner)
    return (run(pte, INPUT)[0] - eager(model, INPUT)[0]).abs().max().item()


def test_default_is_float32_on_cpu():
    # bf16 (OpenVINO's own default on CPUs with bf16 units) measured 1.0e-3 on this MLP.
    assert _max_error(exov.OpenvinoPartitioner()) < 1e-5
    assert exov.last_compile_report() == {
        "device": "CPU", "requested_precision": "f32", "effective_precision": "f32",
        "loaded_from_cache": False, "cache_problem": "",  # no cache folder set
        # No hint passed: OpenVINO's CPU default (2025.4.1, 2026.4.1), one stream.
        "requested_performance_hint": "", "performance_hint": "LATENCY", "num_streams": "1",
        "optimal_infer_requests": "1", "shared": False,  # compiled by this load, not another's
        "weights": "copy"}  # loaded from memory: the bytes lie on the heap, not in a file mapping


@pytest.mark.parametrize("hint", ["LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"])
def test_performance_hint_reaches_the_compiled_model(hint):
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 3

    x = torch.randn(2, 5)
    program = exov.lower(Scale(), (x,), performance_hint=hint)
    method = exov.load_method(program.buffer)
    report = exov.last_compile_report()
    assert (report["requested_performance_hint"], report["performance_hint"]) == (hint, hint)
    # THROUGHPUT asks the CPU plugin for one stream per core pair or more: it must differ from LATENCY's 1
    # wherever the machine has 2 cores or more (measured 2 streams on 2 cores, OpenVINO 2026.4.1).
    if hint != "LATENCY" and (os.cpu_count() or 1) >= 2:
        assert int(report["num_streams"]) >= 2
    elif hint == "LATENCY":
        assert report["num_streams"] == "1"
    assert torch.equal(method.execute([x])[0], x * 3)


def test_unknown_performance_hint_is_refused_before_lowering():
    with pytest.raises(ValueError, match="'performance_hint' is 'latency'; allowed values are 'LATENCY'"):
        exov.OpenvinoPartitioner(performance_hint="latency")


def test_bf16_hint_reaches_openvino():
    error = _max_error(exov.OpenvinoPartitioner(inference_precision="bf16"))
    report = exov.last_compile_report()
    assert report["requested_precision"] == "bf16"
    if report["effective_precision"] == "bf16":
        assert error > 1e-4  # the float32 tolerance above would catch it
    else:
        assert report["effective_precision"] == "f32" and error < 1e-5


@pytest.mark.parametrize("order,expected", [(["bf16", "f32"], "f32"), (["f32", "bf16"], "bf16"), (["f16", ""], "f32")])
def test_last_duplicate_key_wins(order, expected):
    specs = [CompileSpec("device", b"CPU")] + [CompileSpec("inference_precision", p.encode()) for p in order]
    partitioner = exov.OpenvinoPartitioner(compile_specs=specs)
    assert partitioner.options.inference_precision == expected  # the lowering side
    error = _max_error(partitioner)
    assert exov.last_compile_report()["requested_precision"] == expected  # the runtime side
    if expected == "f32":
        assert error < 1e-5


@pytest.mark.parametrize("bad,message", [
    (dict(inference_precision="fp32"), "allowed values are 'f32', 'f16', 'bf16', or ''"),
    (dict(inference_precision="int8"), "allowed values are 'f32', 'f16', 'bf16', or ''"),
    (dict(device=""), "compile spec 'device' is empty"),
])
def test_bad_values_fail_at_lowering_before_conversion(bad, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        exov.OpenvinoPartitioner(**bad)


def test_unknown_key_is_refused_naming_the_keys_a_user_gives():
    with pytest.raises(ValueError) as info:
        exov.OpenvinoPartitioner(compile_specs=[CompileSpec("precision", b"f32")])
    # Not program_state, which the partitioner writes itself.
    assert str(info.value) == ("unknown compile spec 'precision'; the OpenVINO delegate knows device, "
                               "inference_precision, performance_hint, numerics, weight_compression, "
                               "weight_group_size, weight_ratio, gguf_weights, input_ranges")


def test_absent_device_fails_at_load_with_the_devices_available():
    pte, _ = lower(_mlp(), INPUT, partitioner=exov.OpenvinoPartitioner(device="GPU"))
    with pytest.raises(RuntimeError, match="OpenVINO device 'GPU' is not available on this machine"):
        exov.load_method(pte)
    assert "available: CPU" in exov.last_error()


@pytest.mark.parametrize("precision", ["f16", "bf16"])
def test_a_precision_the_cpu_does_not_compute_in_is_named_at_load(precision, tmp_path):
    import subprocess
    import sys

    code = f"""
import sys, torch, executorch_openvino as exov
model = torch.nn.Linear(8, 4).eval()
method = exov.load_method(exov.lower(model, (torch.randn(2, 8),), inference_precision={precision!r}).buffer)
print(exov.last_compile_report()["effective_precision"], file=sys.stdout)
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    effective = proc.stdout.split()[-1]
    # A Python warning (filterable, at the caller's line), not the delegate's log line ("[error_report.cpp:51]
    # [ExecutorchOpenvinoBackend] warning: ...", which read as an error).
    warned = (f"<string>:4: UserWarning: inference_precision '{precision}' was asked for, but OpenVINO's CPU plugin "
              f"computes in '{effective}' on this machine") in proc.stderr
    # f16 is bf16 on a bf16 CPU without float16 arithmetic, f32 on one with neither (OpenVINO 2026.4.1).
    assert warned == (effective != precision), (effective, proc.stderr[-2000:])
    assert "ExecutorchOpenvinoBackend" not in proc.stderr and "error_report" not in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("compression, options, unused", [
    ("", {"weight_group_size": 64}, "weight_group_size"),
    ("", {"weight_ratio": 0.8}, "weight_ratio"),
    ("int8", {"weight_group_size": 32, "weight_ratio": 0.5}, "weight_group_size and weight_ratio"),
])
def test_int4_only_options_without_int4_warn(compression, options, unused):
    # A tester's weight_group_size=64 without compression was accepted and did nothing.
    with pytest.warns(UserWarning, match=rf"^{unused} given with (no weight_compression|weight_compression='int8'): "
                                         r"they apply to weight_compression='int4' only"):
        exov.OpenVINOPartitioner(weight_compression=compression, **options)


def test_int4_options_with_int4_or_at_their_defaults_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exov.OpenVINOPartitioner(weight_compression="int4", weight_group_size=64, weight_ratio=0.8)
        exov.OpenVINOPartitioner(weight_group_size=128, weight_ratio=1.0)
        exov.OpenVINOPartitioner(weight_compression="int8", weight_group_size=-1)


def test_the_partitioners_option_parameters_are_the_keys_a_user_gives():
    # The signature's order is the partitioner's own; the keys are compile_specs.json's (issue 52).
    from executorch_openvino.contract.compile_specs import USER_KEYS
    from executorch_openvino.lowering.partitioner_arguments import OPTIONS

    assert sorted(OPTIONS) == sorted(key for key in USER_KEYS if key != "input_ranges")


def test_every_option_keywords_default_is_compile_specs_json_s():
    # A default written by hand beside the JSON's would differ from it after the next edit of the JSON (a
    # breaker changed numerics' default there: the partitioner, exov.lower and OpenVINOBackendConfig kept "exact").
    import dataclasses
    import inspect

    import executorch_openvino as exov
    from executorch_openvino.contract.backend_config import OpenVINOBackendConfig
    from executorch_openvino.contract.compile_specs import KEYWORD_DEFAULTS, OpenVINOOptions, make_compile_specs
    from executorch_openvino.lowering.operator_support import OpenVINOOperatorSupport
    from executorch_openvino.lowering.partitioner_arguments import given_value
    from executorch_openvino.lowering.weight_compression import compress_weights

    def defaults(function, renamed=()) -> dict:
        parameters = inspect.signature(function).parameters
        # input_ranges: a dict as a keyword, JSON text as a compile spec
        return {dict(renamed).get(name, name): given_value(p.default) for name, p in parameters.items()
                if dict(renamed).get(name, name) in KEYWORD_DEFAULTS and name != "input_ranges"}

    checked = {
        "OpenVINOPartitioner": defaults(exov.OpenVINOPartitioner.__init__),
        "lower": defaults(exov.lower),
        "export_llm": defaults(exov.export_llm, {"group_size": "weight_group_size", "ratio": "weight_ratio"}),
        "make_compile_specs": defaults(make_compile_specs),
        "OpenVINOOperatorSupport": defaults(OpenVINOOperatorSupport.__init__),
        "compress_weights": defaults(compress_weights, {"group_size": "weight_group_size", "ratio": "weight_ratio"}),
        "OpenVINOBackendConfig": {f.name: f.default for f in dataclasses.fields(OpenVINOBackendConfig)
                                  if f.name in KEYWORD_DEFAULTS and f.name != "performance_hint"},  # its own
        "OpenVINOOptions": {f.name: f.default for f in dataclasses.fields(OpenVINOOptions)
                            if f.name in KEYWORD_DEFAULTS and f.name not in ("inference_precision", "input_ranges")},
    }
    for where, found in checked.items():
        assert found, where
        for name, value in found.items():
            assert value == KEYWORD_DEFAULTS[name] and type(value) is type(KEYWORD_DEFAULTS[name]), \
                (where, name, value, KEYWORD_DEFAULTS[name])
    assert len(checked["OpenVINOPartitioner"]) == 8 and len(checked["lower"]) == 7
