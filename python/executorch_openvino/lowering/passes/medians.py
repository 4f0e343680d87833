"""``median`` written out in operations OpenVINO's PyTorch frontend converts (it has no rule for it).

PyTorch's median of n values is the lower of the two middle ones: the
``(n - 1) // 2``-th of the sorted values. With a NaN among them the median is
NaN, and ``median(dim)``'s index that of the first NaN (eager PyTorch 2.13 on
CPU). So a median becomes a sort, the ``(n - 1) // 2``-th value and index, and
NaN with the first NaN's position where the row holds one. Rows holding NaN
are taken from the NaN mask, so the sort's own order of NaN (which OpenVINO
puts among the numbers) never matters, with either numerics setting.

Between equal values PyTorch's index is whichever of them its selection
algorithm stops at ("indices are not necessarily the first occurrence", its
documentation): here it is OpenVINO's sort's, also one whose value is the
median. 0.0 and -0.0 are equal values too: where both are at the middle, the
sign of the median is the one the sort put there (eager's may be the other).

ExecuTorch 1.5.1 has no kernel for ``median`` (its backend test suite skips
the operator for that reason), and ``to_edge`` refuses it as not core ATen. The
rewrite runs on the ATen program before ExecuTorch's decomposition, so the
partitioner then sees ops it delegates; only a float32, float16 or bfloat16
median over sizes known at export is rewritten (its sort is one ExecuTorch has
no kernel for either, so it must reach a partition); any other still fails
to lower, as before.
"""

from __future__ import annotations

import math
import operator

import torch

from ..ops import NodeBuilder, op_name

aten = torch.ops.aten

MEDIANS = ("aten.median.default", "aten.median.dim")


def _median_along(build: NodeBuilder, x: torch.fx.Node, dim: int, keepdim: bool):
    """(value, index) of the median of `x` along `dim` (static size), as PyTorch gives them."""
    value = x.meta["val"]
    size = value.shape[dim]
    middle = (size - 1) // 2
    ordered = build(aten.sort.default, x, dim)
    values = build(operator.getitem, ordered, 0)
    indices = build(operator.getitem, ordered, 1)
    if keepdim:
        median = build(aten.slice.Tensor, values, dim, middle, middle + 1)
        position = build(aten.slice.Tensor, indices, dim, middle, middle + 1)
    else:
        median = build(aten.select.int, values, dim, middle)
        position = build(aten.select.int, indices, dim, middle)
    # The first NaN's index: sorting the NaNs' positions (`size` for numbers) puts it first. A second
    # sort, not a cast of a float position: the partitioner refuses float -> int64 casts.
    shape = [1] * value.dim()
    shape[dim] = size
    positions = build(aten.view.default, build(aten.arange.default, size, dtype=torch.float32), shape)
    nan = build(aten.isnan.default, x)
    nan_positions = build(aten.where.self, nan, positions, build.scalar(float(size), positions))
    by_position = build(aten.sort.default, nan_positions, dim)
    first_nan = build(operator.getitem, by_position, 1)
    least = build(operator.getitem, by_position, 0)
    if keepdim:
        first_nan = build(aten.slice.Tensor, first_nan, dim, 0, 1)
        least = build(aten.slice.Tensor, least, dim, 0, 1)
    else:
        first_nan = build(aten.select.int, first_nan, dim, 0)
        least = build(aten.select.int, least, dim, 0)
    has_nan = build(aten.lt.Scalar, least, float(size))
    median = build(aten.where.self, has_nan, build.scalar(math.nan, median), median)
    position = build(aten.where.self, has_nan, first_nan, position)
    return median, position


def _can_write_out(node: torch.fx.Node) -> bool:
    """A median the partitioner will delegate once written out: float32, float16 or bfloat16 over
    sizes known at export, of at least one element."""
    source = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    if not isinstance(source, torch.Tensor) or source.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return False
    sizes = list(source.shape)
    if op_name(node.target) == "aten.median.dim" and source.dim() > 0:
        dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
        sizes = [source.shape[dim % source.dim()]]
    return all(isinstance(size, int) and size > 0 for size in sizes)


def write_out_medians(program: torch.export.ExportedProgram) -> int:
    """Rewrites each ``median`` of `program`'s graph that :func:`_can_write_out` allows, in place;
    returns how many."""
    graph = program.graph
    changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) not in MEDIANS or not _can_write_out(node):
            continue
        x = node.args[0]
        value = x.meta["val"]
        build = NodeBuilder(graph, node)
        if op_name(node.target) == "aten.median.default":
            if value.dim() == 0:  # one value: itself
                median = build(aten.clone.default, x)
            else:
                # reshape: a transposed or expanded input has no flat view (torch.median(x.t()))
                median, _ = _median_along(build, build(aten.reshape.default, x, [value.numel()]), 0, False)
            node.replace_all_uses_with(median)
        else:
            dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
            keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
            if value.dim() == 0:
                results = (build(aten.clone.default, x), build(aten.zeros_like.default, x, dtype=torch.int64))
            else:
                results = _median_along(build, x, dim % value.dim(), keepdim)
            for user in list(node.users):  # getitem 0 and 1
                user.replace_all_uses_with(results[user.args[1]])
                graph.erase_node(user)
        graph.erase_node(node)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed
