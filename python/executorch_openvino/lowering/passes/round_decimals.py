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

For ``d < 0`` the quotient is rounded next, so a quotient 1 ulp off can move the
result by a whole ``10**-d`` (6500 / 1000 computed as 6.5000005 rounds to 7000,
eager 6000): it is divided in float64 and cast back, which gives eager's float32
quotient exactly, and with ``numerics="exact"`` the partitioner leaves the float64
ops to ExecuTorch's kernels (OpenVINO computes float64 in float32). For ``d > 0``
the division comes last and is within 1 ulp on OpenVINO (which multiplies by the
reciprocal, ``operator_support.DIVISIONS``).
"""

from __future__ import annotations

import math

import torch

from ..ops import NodeBuilder, op_name

aten = torch.ops.aten


def _quotient(build: NodeBuilder, x: torch.fx.Node, divisor: float) -> torch.fx.Node:
    """x / divisor rounded as eager rounds it in x's dtype: float64 division, then a cast for float32, which gives
    the correctly rounded float32 quotient (a float64 quotient of two float32 values rounds to it; ExecuTorch 1.5.1's
    float32 division by a 0-d tensor does not: 6500 / 1000 gave 6.5000005, and its round 7, eager 6)."""
    dtype = x.meta["val"].dtype
    wide = x if dtype == torch.float64 else build(aten._to_copy.default, x, dtype=torch.float64)
    quotient = build(aten.div.Tensor, wide, build(aten.scalar_tensor.default, divisor, dtype=torch.float64))
    return quotient if dtype == torch.float64 else build(aten._to_copy.default, quotient, dtype=dtype)


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
            else:  # the quotient is rounded next, so it must be eager's to the bit: divided in float64 (below)
                result = build(aten.mul.Tensor, build(aten.round.default, _quotient(build, wide, power)), scale)
        if dtype != math_type:
            result = build(aten._to_copy.default, result, dtype=dtype)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed
