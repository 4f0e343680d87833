"""Gives integer ``torch.remainder`` (``%``) the sign of the divisor, as PyTorch does, through ExecuTorch.

ExecuTorch 1.5.1's portable ``remainder.Scalar_out`` and ``remainder.Tensor_out``
compute C's ``%`` for integers, which takes the sign of the dividend:
``remainder([-7, -1, 7], 4)`` gave ``[-3, -1, 3]`` (eager ``[1, 3, 3]``), int32 and
int64 alike, with or without any delegate. OpenVINO cannot take the op instead: it
computes integer remainders through float32 (wrong past 2**24), and ExecuTorch's
``fmod`` of int64 goes through float64 (wrong past 2**53). So the op is written as
``x - floor_divide(x, c) * c``: ExecuTorch's integer ``floor_divide`` is exact
(measured on int64 up to 2**63 - 1), and the product and difference wrap exactly as
the true remainder fits the dtype. (Dividing the smallest integer by -1 ends the
process in ExecuTorch's integer division, as it did in its remainder.)
"""

from __future__ import annotations

import torch

from ..ops import add_call, op_name

_REMAINDERS = {torch.ops.aten.remainder.Scalar, torch.ops.aten.remainder.Tensor}
_REMAINDER_NAMES = frozenset(str(op) for op in _REMAINDERS)  # edge-dialect nodes match by name


def _is_integer_tensor(value) -> bool:
    return isinstance(value, torch.Tensor) and not value.dtype.is_floating_point and value.dtype != torch.bool


_IN_PLACE = {torch.ops.aten.remainder_.Scalar, torch.ops.aten.remainder_.Tensor}


def _refuse_unrewritten(program: torch.export.ExportedProgram) -> None:
    """In-place integer remainders and those inside ``torch.cond`` branches are not rewritten: refused."""
    for module in program.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            inner = module is not program.graph_module and node.target in _REMAINDERS
            if node.op == "call_function" and (node.target in _IN_PLACE or inner) and _is_integer_tensor(
                    node.meta.get("val")):
                fix = ("write it out of place, `y = y % c`" if not inner
                       else "compute it outside the torch.cond branch")
                raise ValueError(
                    f"'{node.name}' is an integer remainder {'computed in place' if not inner else 'inside a branch'}"
                    ", which ExecuTorch 1.5.1 computes with the dividend's sign (remainder(-7, 4) gives -3) and the "
                    f"OpenVINO partitioner cannot rewrite there: {fix}, or as `y - torch.floor_divide(y, c) * c`")


def rewrite_integer_remainders(program: torch.export.ExportedProgram) -> int:
    """Rewrites each integer ``aten.remainder`` of ``program`` in place; returns how many.

    Raises ``ValueError`` for an in-place integer remainder or one inside a
    ``torch.cond`` branch (not rewritten: it would be wrong).
    """
    _refuse_unrewritten(program)
    graph = program.graph
    count = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _REMAINDERS or len(node.args) != 2:
            continue
        value = node.meta.get("val")
        if not _is_integer_tensor(value) or not isinstance(node.args[0], torch.fx.Node):
            continue
        x, divisor = node.args
        with graph.inserting_before(node):
            quotient = add_call(graph, torch.ops.aten.floor_divide.default, x, divisor)
            product = add_call(graph, torch.ops.aten.mul.Tensor, quotient, divisor)
            result = add_call(graph, torch.ops.aten.sub.Tensor, x, product)
        if result.meta["val"].dtype != value.dtype or result.meta["val"].shape != value.shape:
            raise AssertionError(f"integer remainder rewrite changed {node.name}: {result.meta['val']} vs {value}")
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        count += 1
    if count:
        graph.lint()
        program.graph_module.recompile()
    return count


def refuse_remainders_left_for_executorch(program: torch.export.ExportedProgram, delegated, rewritten: bool) -> None:
    """Raises ``ValueError`` for an integer remainder of the edge program that would run on ExecuTorch's
    kernel, which gives the dividend's sign without any error.

    ``delegated(node)``: whether the partitioner delegates a node of the program's own graph (nothing inside
    ``torch.cond`` branches is). ``rewritten``: :func:`rewrite_integer_remainders` ran before the edge
    decomposition (``to_edge_transform_and_lower`` with ``numerics="exact"``), so the remainders left are
    ExecuTorch's own decompositions' (``take_along_dim`` wraps indices with one), which are left alone.
    ``to_edge(...).to_backend(...)`` skips that step, and ``numerics="fast"`` leaves remainders to OpenVINO.
    """
    if rewritten:
        return
    for module in program.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            if (node.op != "call_function" or op_name(node.target) not in _REMAINDER_NAMES
                    or not _is_integer_tensor(node.meta.get("val"))):
                continue
            if module is program.graph_module and delegated(node):
                continue
            raise ValueError(
                f"'{node.name}' is an integer remainder that would run on ExecuTorch's kernel, which computes it "
                "with the dividend's sign in ExecuTorch 1.5.1 (remainder(-7, 4) gives -3, eager 1). Lower with "
                "numerics='exact' (the default) through to_edge_transform_and_lower(exported, "
                "partitioner=[OpenVINOPartitioner()]) or exov.lower, which rewrite it exactly before ExecuTorch's "
                "edge decomposition (to_edge(...).to_backend(...) skips that step)")
