"""Per-channel dequantization written out as ``(float(q) - zero_point) * scale`` before conversion.

torchao's ``convert_pt2e`` (executorch's bundled OpenVINOQuantizer, any PT2E
quantizer) stores a linear layer's weight as int8 read through
``dequantize_per_channel``. OpenVINO's PyTorch frontend keeps that result
int8 when ExecuTorch's decomposition has made the linear a transpose and an
``addmm``, whose conversion then fails ("Arguments do not have the same element
type", f32 and i8; 2025.4.1 and 2026.4.1). The same arithmetic in plain ops is
the pattern OpenVINO's CPU plugin reads as compressed weights (NNCF writes its
weights so) and runs on 8-bit kernels (tests/lowering/test_quantization.py). It is the
op's definition (``torch.ao.quantization.fx._decomposed``), in float32: the values are unchanged.
"""

from __future__ import annotations

import torch

from ..ops import op_name

aten = torch.ops.aten
_PER_CHANNEL = "quantized_decomposed.dequantize_per_channel.default"


def _fake(node: torch.fx.Node, value) -> torch.fx.Node:
    node.meta["val"] = value
    return node


def write_out_per_channel_dequantize(program: torch.export.ExportedProgram) -> int:
    """Rewrites each float32 ``dequantize_per_channel`` of the partition ``program`` in place; returns how many."""
    graph = program.graph
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) != _PER_CHANNEL:
            continue
        quantized, scales, zero_points, axis = node.args[:4]
        result = node.meta.get("val")
        if node.kwargs.get("out_dtype") not in (None, torch.float32) or not isinstance(result, torch.Tensor):
            continue
        rank = result.dim()
        axis %= rank
        shape = [-1 if d == axis else 1 for d in range(rank)]  # scales and zero points along `axis`
        with graph.inserting_before(node):
            values = _fake(graph.call_function(aten._to_copy.default, (quantized,), {"dtype": torch.float32}),
                           result)
            broadcast = result.new_empty([result.shape[axis] if d == axis else 1 for d in range(rank)])
            if zero_points is not None:
                zeros = _fake(graph.call_function(aten._to_copy.default, (zero_points,),
                                                  {"dtype": torch.float32}), broadcast.new_empty(result.shape[axis]))
                zeros = _fake(graph.call_function(aten.view.default, (zeros, shape)), broadcast)
                values = _fake(graph.call_function(aten.sub.Tensor, (values, zeros)), result)
            # torch's reference multiplies by each channel's 0-d scale, which a float32 tensor
            # reads as float32 (a float64 scale included).
            factors = _fake(graph.call_function(aten._to_copy.default, (scales,), {"dtype": torch.float32}),
                            broadcast.new_empty(result.shape[axis]))
            factors = _fake(graph.call_function(aten.view.default, (factors, shape)), broadcast)
            values = _fake(graph.call_function(aten.mul.Tensor, (values, factors)), result)
        node.replace_all_uses_with(values)
        graph.erase_node(node)
        rewritten += 1
    if rewritten:
        graph.lint()
        program.graph_module.recompile()
    return rewritten
