"""The bench's reduced-precision engines: INT8 (NNCF, XNNPACK's own quantizer) and the bfloat16 hint.

Every INT8 engine calibrates on the same inputs (:func:`calibration`): 16
items drawn like the case's inputs from other seeds (for MiniLM, random token
ids under the case's own attention mask). Their ``max_abs_vs_eager`` is
against the float32 model: the cost of quantization, not an error.
"""

from __future__ import annotations

import time

import torch

from engines import ExecutorchProgram, OpenVINOConvert, ThisDelegateProgram, openvino_model
from models import Case

CALIBRATION_ITEMS = 16
# NNCF's transformer rules for the attention models (exov.quantize's model_type).
TRANSFORMER_CASES = ("vit", "encoder", "minilm_b1", "minilm_b8", "minilm_s32_b1", "minilm_s32_b8")
# vocab of all-MiniLM-L6-v2 (bert-base-uncased's); ids below 1000 are special and unused tokens.
_TOKEN_IDS = (1000, 30522)


def calibration(case: Case) -> list[tuple]:
    """CALIBRATION_ITEMS input tuples shaped like ``case.inputs``, from seeds 1..CALIBRATION_ITEMS."""
    items = []
    for seed in range(1, CALIBRATION_ITEMS + 1):
        generator = torch.Generator().manual_seed(seed)
        if case.name.startswith("minilm"):
            ids, mask = case.inputs
            random_ids = torch.randint(*_TOKEN_IDS, ids.shape, generator=generator)
            items.append((torch.where(mask.bool(), random_ids, ids), mask))
        else:
            items.append(tuple(torch.randn(t.shape, generator=generator) for t in case.inputs))
    return items


def model_type(case: Case) -> str | None:
    return "transformer" if case.name in TRANSFORMER_CASES else None


_QUANTIZED: dict[str, torch.nn.Module] = {}


def quantized_module(case: Case) -> torch.nn.Module:
    """``exov.quantize`` of the case (once per case: the delegate and the same-IR engine share it)."""
    if case.name not in _QUANTIZED:
        import executorch_openvino as exov

        _QUANTIZED.clear()  # one case at a time
        _QUANTIZED[case.name] = exov.quantize(case.module, case.inputs, calibration(case),
                                              model_type=model_type(case))
    return _QUANTIZED[case.name]


class DelegateInt8(ThisDelegateProgram):
    key, label = "delegate_int8", "this delegate, INT8 (exov.quantize)"

    def _lower(self, case):
        import executorch_openvino as exov

        start = time.perf_counter()
        quantized = quantized_module(case)
        self.quantize_s = time.perf_counter() - start
        return exov.lower(quantized, case.inputs)


class OpenVINOInt8SameIr(OpenVINOConvert):
    """The INT8 program converted as the delegate converts it, run through OpenVINO's API: the delegate's
    INT8 limit."""

    key, label = "openvino_int8_same_ir", "OpenVINO API, INT8 (same IR)"

    def _model(self, case):
        return openvino_model(Case(case.name, quantized_module(case), case.inputs, case.description))


class OpenVINOInt8(OpenVINOConvert):
    """NNCF on OpenVINO's own conversion of the same ``torch.export`` program (what a user of
    ``openvino.convert_model`` + ``nncf.quantize`` gets), same calibration and model type."""

    key, label = "openvino_int8", "OpenVINO convert_model + NNCF INT8"

    def _model(self, case):
        import nncf
        import openvino as ov

        model = ov.convert_model(torch.export.export(case.module, case.inputs))
        items = [[t.numpy() for t in item] for item in calibration(case)]
        kind = model_type(case)
        return nncf.quantize(model, nncf.Dataset(items), subset_size=len(items),
                             model_type=None if kind is None else nncf.ModelType(kind))


class XnnpackInt8(ExecutorchProgram):
    """XNNPACK with its own PT2E quantizer (symmetric, per-channel weights): what an ExecuTorch user would
    pick for INT8 on a CPU."""

    key, label = "xnnpack_int8", "XNNPACK delegate, INT8 (XNNPACKQuantizer)"

    def _lower(self, case):
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (XNNPACKQuantizer,
                                                                             get_symmetric_quantization_config)
        from executorch.exir import to_edge_transform_and_lower
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
        prepared = prepare_pt2e(torch.export.export(case.module, case.inputs).module(), quantizer)
        for item in calibration(case):
            prepared(*item)
        exported = torch.export.export(convert_pt2e(prepared), case.inputs)
        return to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()


class DelegateBf16(ThisDelegateProgram):
    """``inference_precision="bf16"``; the label says what the compiled model took (``f32`` where the CPU has
    no bfloat16 units: OpenVINO then computes in float32 whatever was asked)."""

    key, label = "delegate_bf16", "this delegate, bf16 hint"

    def _lower(self, case):
        import executorch_openvino as exov

        return exov.lower(case.module, case.inputs, inference_precision="bf16")

    def _prepare(self, case, workdir):
        import executorch_openvino as exov

        super()._prepare(case, workdir)
        took = exov.last_compile_report().get("effective_precision") or "?"
        self.label = f"this delegate, bf16 hint (compiled: {took})"


class OpenVINOBf16(OpenVINOConvert):
    """OpenVINO's own conversion compiled with ``INFERENCE_PRECISION_HINT=bf16``: the limit for
    :class:`DelegateBf16`. The label says what the compiled model took."""

    key, label = "openvino_bf16", "OpenVINO convert_model + API, bf16 hint"
    properties = {"INFERENCE_PRECISION_HINT": "bf16"}

    def _prepare(self, case, workdir):
        super()._prepare(case, workdir)
        took = str(self.compiled.get_property("INFERENCE_PRECISION_HINT"))  # "<Type: 'bfloat16'>"
        self.label = f"OpenVINO convert_model + API, bf16 hint (compiled: {'bf16' if 'bfloat16' in took else 'f32'})"


LOW_PRECISION_ENGINES = [DelegateInt8, OpenVINOInt8SameIr, OpenVINOInt8, XnnpackInt8, OpenVINOBf16, DelegateBf16]
__all__ = ["LOW_PRECISION_ENGINES", "calibration"]
