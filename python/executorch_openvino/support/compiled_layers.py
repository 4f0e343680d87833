"""What OpenVINO's plugin compiles a lowered program's partitions into: each layer's execution precision.

OpenVINO's C API, which the delegate runs on, does not list a compiled model's
layers; its Python API does (``CompiledModel.get_runtime_model()``, whose
operations carry ``layerType`` and ``runtimePrecision`` in their runtime
information). So each partition's IR is compiled here again, from its processed
blob, with the properties the delegate passes for its compile specs: the same
IR, device and ``INFERENCE_PRECISION_HINT`` give the plugin the same choices.
"""

from __future__ import annotations

import collections

__all__ = ["runtime_precisions"]


def runtime_precisions(program, method: str = "forward") -> list[collections.Counter]:
    """Per delegated partition of ``method`` (in graph order), a ``Counter`` of ``(layer type, precision)``.

    ``program``: what :func:`~executorch_openvino.lower` returns (an ``ExecutorchProgramManager``) or an
    ``EdgeProgramManager``. Layer types and precisions are OpenVINO's names (``("FullyConnected", "i8")``:
    a matmul on 8-bit integer kernels; ``"u8"``, ``"f32"``, ``"bf16"``...). Compiles every partition on
    its own device, so it needs that device here. Raises ``ValueError`` when ``method`` has no partition
    of this delegate.
    """
    import numpy as np
    import openvino as ov

    from ..contract import processed_blob
    from ..contract.compile_specs import openvino_properties, resolve_options
    from ..lowering.preprocess import BACKEND_ID

    graph_module = program.exported_program(method).graph_module
    core = ov.Core()
    found = []
    for _, lowered in graph_module.named_children():
        if getattr(lowered, "backend_id", None) != BACKEND_ID:
            continue
        ir = processed_blob.unpack(lowered.processed_bytes)
        options = resolve_options(lowered.compile_specs)
        properties = openvino_properties(options)
        model = core.read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy()))
        compiled = core.compile_model(model, options.device, properties)
        layers: collections.Counter = collections.Counter()
        for operation in compiled.get_runtime_model().get_ordered_ops():
            info = operation.get_rt_info()
            layers[(info["layerType"].astype(str), info["runtimePrecision"].astype(str))] += 1
        found.append(layers)
    if not found:
        raise ValueError(f"method {method!r} has no partition of the OpenVINO delegate ({BACKEND_ID})")
    return found
