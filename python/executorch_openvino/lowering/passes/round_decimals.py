"""``round(x, decimals=d)`` written out in operations that both OpenVINO and ExecuTorch run.

OpenVINO's PyTorch frontend has no rule for it, ExecuTorch 1.5.1 no kernel
(its backend test suite skips the operator for that reason), and ``to_edge``
refuses it as not core ATen. So it is rewritten on the ATen program, before
ExecuTorch's decomposition, for any partitioner setting: eager PyTorch (2.13,
CPU) computes it in the input's math type (float32 for float32, float16 and
bfloat16 inputs, float64 for float64) with ``p = 10**|d|`` in that type, as
``nearbyint(x * p) / p`` for ``d > 0`` and ``nearbyint(x / p) * p`` for
``d < 0``, rounding half to even; so here, with ``round`` (OpenVINO's ``Round``
is half to even) and the result cast back to the input's dtype.

The partitioner then judges each op as any other: with ``numerics="exact"`` a
division whose quotient is rounded next (``d < 0``) stays on ExecuTorch's
kernels, which divide correctly rounded (``operator_support.DIVISIONS``:
OpenVINO's CPU plugin multiplies by the reciprocal, 1 ulp off at times).
"""

from __future__ import annotations

import math

import torch

from ..ops import NodeBuilder, op_name

aten = torch.ops.aten


def write_out_round_decimals(program: torch.export.ExportedProgram) -> int:
    """Rewrites each ``round.decimals`` of `program`'s graph in place; returns how many."""
    graph = program.graph
    changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) != "aten.round.decimals":
            continue
        x = node.args[0]
        decimals = node.kwargs.get("decimals", node.args[1] if len(node.args) > 1 else 0)
        dtype = x.meta["val"].dtype
        if not x.meta["val"].is_floating_point():
            continue  # PyTorch refuses it for integers
        math_type = torch.float64 if dtype == torch.float64 else torch.float32
        build = NodeBuilder(graph, node)
        wide = x if dtype == math_type else build(aten._to_copy.default, x, dtype=math_type)
        if decimals == 0:
            result = build(aten.round.default, wide)
        else:
            power = 10.0 ** abs(decimals) if abs(decimals) <= 308 else math.inf  # as float32: inf past 10**38
            scale = build(aten.scalar_tensor.default, power, dtype=math_type)
            if decimals > 0:
                result = build(aten.div.Tensor, build(aten.round.default, build(aten.mul.Tensor, wide, scale)), scale)
            else:
                result = build(aten.mul.Tensor, build(aten.round.default, build(aten.div.Tensor, wide, scale)), scale)
        if dtype != math_type:
            result = build(aten._to_copy.default, result, dtype=dtype)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed
