"""Float32 by default on every CPU, against OpenVINO's own low-precision defaults as controls.

OpenVINO's CPU plugin computes float32 models in bf16 on x86 CPUs with bf16
units and in f16 on ARM CPUs with f16 arithmetic (its INFERENCE_PRECISION_HINT
default). The delegate asks for f32 unless a compile spec says otherwise. Each
control below shows that the tolerance would catch a low-precision result on
the CPU at hand, and skips, saying why, where that CPU has no such unit.
Under `nox -s aarch64_emulated` these run on an emulated ARM CPU with f16.
"""

from __future__ import annotations

import functools
import platform

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import eager, lower, run

pytestmark = [pytest.mark.aarch64]

RELATIVE_TOLERANCE = 1e-5  # f16 keeps 11 significant bits (~5e-4), bf16 8 (~4e-3)
INPUT = (torch.randn(16, 256, generator=torch.Generator().manual_seed(3)),)


def _linear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(256, 256).eval()


def _relative_error(result: torch.Tensor, expected: torch.Tensor) -> float:
    return ((result - expected).abs().max() / expected.abs().max()).item()


@functools.cache
def _capabilities() -> list[str]:
    import openvino as ov

    return list(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))


def _delegate_error(**options) -> tuple[float, str]:
    """(relative error against eager, the precision the compiled model took)."""
    model = _linear()
    pte, _ = lower(model, INPUT, partitioner=exov.OpenvinoPartitioner(**options))
    error = _relative_error(run(pte, INPUT)[0], eager(model, INPUT)[0])
    return error, exov.last_compile_report()["effective_precision"]


def test_default_lowering_computes_in_float32():
    error, precision = _delegate_error()
    assert precision == "f32"
    assert error < RELATIVE_TOLERANCE, f"{error:.2e} on {platform.machine()}, capabilities {_capabilities()}"


def test_openvinos_own_default_misses_the_tolerance_where_the_cpu_has_low_precision_units():
    import openvino as ov

    model = _linear()
    compiled = ov.Core().compile_model(ov.convert_model(model, example_input=INPUT), "CPU")
    precision = str(compiled.get_property("INFERENCE_PRECISION_HINT"))
    if precision == "f32":
        pytest.skip(f"OpenVINO's CPU default is f32 on this CPU (capabilities {_capabilities()})")
    result = torch.from_numpy(compiled(INPUT[0].numpy())[0])
    error = _relative_error(result, eager(model, INPUT)[0])
    assert error > RELATIVE_TOLERANCE, f"OpenVINO's default {precision} gave {error:.2e}"


def test_f16_hint_misses_the_tolerance_where_the_cpu_has_f16():
    if "FP16" not in _capabilities():
        pytest.skip(f"no f16 arithmetic on this CPU (capabilities {_capabilities()})")
    error, precision = _delegate_error(inference_precision="f16")
    assert precision == "f16"
    assert error > RELATIVE_TOLERANCE, f"the f16 hint gave {error:.2e}"
