"""Spells edge-dialect nodes the way OpenVINO's PyTorch frontend reads them: ATen ops for dim-order ops,
dim lists written out in full, average-pool arguments explicit (on a partition, before conversion)."""

from __future__ import annotations

import torch

from ..ops import DIM_ORDER_OPS, op_name
from . import avg_pool_padding


def restore_aten_ops(program: torch.export.ExportedProgram) -> None:
    """Rewrites `program`'s nodes in place (see the module docstring)."""
    for node in program.graph.nodes:
        if node.op == "call_function":
            aten_op = DIM_ORDER_OPS.get(op_name(node.target))
            if aten_op is not None:
                node.target = aten_op
                node.kwargs = {k: v for k, v in node.kwargs.items() if k != "dim_order"}
            _spell_out_all_dims(node)
            if op_name(node.target) in avg_pool_padding.AVG_POOLS:
                avg_pool_padding.spell_out_arguments(node)
    program.graph_module.recompile()


# Reductions whose dim list, when absent, None or [], means every dim; its argument position.
_REDUCTION_DIMS = {"aten.amax.default": 1, "aten.amin.default": 1, "aten.mean.dim": 1, "aten.sum.dim_IntList": 1}
_PERMUTES = ("aten.permute_copy.default", "aten.permute.default")


def _spell_out_all_dims(node: torch.fx.Node) -> None:
    """Dim lists written out in full, as OpenVINO 2025.4.1's converter needs them.

    ``x.amax()`` and ``torch.mean(x, dim=None)`` become reductions over
    ``[0, ..., rank-1]`` ("Got less inputs 1 than expected 2"); ``x.permute(-1, 0, -2)``
    gets non-negative dims (its conversion failed).
    """
    name = op_name(node.target)
    value = node.args[0].meta.get("val") if node.args and isinstance(node.args[0], torch.fx.Node) else None
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        return
    if name in _REDUCTION_DIMS:
        position = _REDUCTION_DIMS[name]
        dims = node.kwargs.get("dim", node.args[position] if len(node.args) > position else None)
        if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
            args = list(node.args) + [None] * max(0, position + 1 - len(node.args))
            args[position] = list(range(value.dim()))
            node.args = tuple(args)
            node.kwargs = {k: v for k, v in node.kwargs.items() if k != "dim"}
    elif name in _PERMUTES and any(d < 0 for d in node.args[1]):
        node.args = (node.args[0], [d % value.dim() for d in node.args[1]], *node.args[2:])
