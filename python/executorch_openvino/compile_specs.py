"""Compile specs of the OpenVINO delegate: what they mean and how they are checked.

Keys (bytes values, UTF-8):

``device``
    The OpenVINO device name the runtime compiles the partition for, e.g.
    ``"CPU"`` (default) or ``"GPU"``. Checked against the devices OpenVINO finds
    when the program is loaded.
``inference_precision``
    OpenVINO's ``INFERENCE_PRECISION_HINT``: ``"f32"``, ``"f16"``, ``"bf16"`` or
    ``""`` for the default. On ``CPU`` (and ``AUTO``, or any device list naming
    ``CPU``) the default is ``f32``: OpenVINO itself
    would compute in bf16 on x86 CPUs with bf16 units and in f16 on ARM, which
    gave a max abs error of 0.099 on MiniLM against 1.2e-5 in f32 (measured with
    OpenVINO 2026.4.1, DESIGN.md). The native runtime applies the same rule.

When a key is given twice the last value wins, here and in the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

PRECISIONS = ("f32", "f16", "bf16", "")
KEYS = ("device", "inference_precision")


@dataclass(frozen=True)
class OpenvinoOptions:
    """The options a list of compile specs resolves to.

    ``inference_precision`` is the value the runtime passes as
    ``INFERENCE_PRECISION_HINT`` (``""``: none, OpenVINO's device default).
    """

    device: str = "CPU"
    inference_precision: str = "f32"


def make_compile_specs(device: str = "CPU", inference_precision: str = "") -> list:
    """Builds the ExecuTorch ``CompileSpec`` list for the delegate.

    Raises ``ValueError`` (before anything is converted) for an empty device or
    a precision outside ``f32``, ``f16``, ``bf16``, ``""``.
    """
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    specs = [
        CompileSpec("device", device.encode()),
        CompileSpec("inference_precision", inference_precision.encode()),
    ]
    resolve_options(specs)
    return specs


def may_run_on_cpu(device: str) -> bool:
    """True for ``CPU`` and devices that may pick it (``AUTO``, ``HETERO:GPU,CPU``, ``MULTI:CPU``)."""
    return "CPU" in device or device == "AUTO"


def resolve_options(specs: Iterable) -> OpenvinoOptions:
    """Checks compile specs and returns what they mean; the last duplicate wins.

    Raises ``ValueError`` naming the key and the allowed values for an unknown
    key, an empty device, or an unknown precision.
    """
    device, precision, precision_given = "CPU", "", False
    for spec in specs:
        key = spec.key
        try:
            value = bytes(spec.value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"compile spec {key!r} is not UTF-8 text") from exc
        if key == "device":
            if not value:
                raise ValueError("compile spec 'device' is empty; give an OpenVINO device such as 'CPU'")
            device = value
        elif key == "inference_precision":
            if value not in PRECISIONS:
                raise ValueError(
                    f"compile spec 'inference_precision' is {value!r}; allowed values are "
                    "'f32', 'f16', 'bf16', or '' for the device default"
                )
            precision, precision_given = value, True
        else:
            raise ValueError(f"unknown compile spec {key!r}; the OpenVINO delegate knows {', '.join(KEYS)}")
    if may_run_on_cpu(device) and (not precision_given or precision == ""):
        precision = "f32"
    return OpenvinoOptions(device=device, inference_precision=precision)
