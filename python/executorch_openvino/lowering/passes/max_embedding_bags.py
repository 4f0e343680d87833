"""Embedding bags in max mode as operations OpenVINO's PyTorch frontend converts.

OpenVINO's ``EmbeddingBagOffsets`` sums or averages, and its PyTorch frontend refuses ``mode="max"``
(2026.4.1, 2025.4.1); ``SegmentMax`` (opset 16) is not reachable from a PyTorch program there: neither
``aten.scatter_reduce`` nor ``aten.segment_reduce`` has a conversion rule. So a partition's max-mode
``_embedding_bag`` becomes, before conversion, a segmented max scan over the gathered rows, in ATen
operations the frontend converts in both releases:

1. ``rows = weight[indices]`` (N, D), and each index's bag from ``bucketize`` over the bags' starts;
2. log2(N) steps of ``rows[i] = max(rows[i], rows[i - k])`` where index i - k lies in the same bag (k = 1, 2,
   4, ...): afterwards each row holds the maximum of its bag up to itself, in O(N x D) memory per step;
3. each bag's result is the row at its last index, and 0 for an empty bag, as eager computes.

NaN as eager's CPU kernel (torch 2.13) treats it: a bag's value is taken from its first index, then replaced by
each later one greater than it, so a NaN first stays and a NaN later is skipped (measured: a column NaN only
where the bag's first row holds NaN there). The scan therefore runs over the rows with NaN as -inf, and a
column whose first row is NaN takes NaN.

With ``include_last_offset`` eager's last bag in max mode runs to the end of the indices whatever the last
offset (measured, float32 and float64): ``embedding_bags.call_embedding_bag_directly`` makes the last offset the
number of indices, so the bags here are always ``[offsets[b], offsets[b + 1])``.
"""

from __future__ import annotations

import operator

import torch

from ..ops import NodeBuilder, op_name

aten = torch.ops.aten

MAX_MODE = 2


def expand_max_bags(program: torch.export.ExportedProgram) -> int:
    """Replaces each max-mode ``_embedding_bag`` of a partition whose indices have a static length (the
    partitioner takes no other, ``embedding_bags.refusal``) by the scan above, in place; returns how many."""
    graph = program.graph
    changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) != "aten._embedding_bag.default":
            continue
        args = list(node.args)
        if len(args) <= 4 or args[4] != MAX_MODE:
            continue
        results = [u for u in node.users if u.target is operator.getitem]
        bags = [u for u in results if u.args[1] == 0]
        bag = _scan(NodeBuilder(graph, node), args)
        for user in bags:
            user.replace_all_uses_with(bag)
        for user in results:
            graph.erase_node(user)  # the side results have no users (refusal)
        graph.erase_node(node)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed


def _scan(build: NodeBuilder, args: list) -> torch.fx.Node:
    """The bags (B, D) of ``_embedding_bag(*args)`` in max mode (offsets given; their last the number of
    indices with include_last_offset)."""
    weight, indices, offsets = args[0], args[1], args[2]
    count = indices.meta["val"].shape[0]
    include_last = len(args) > 7 and bool(args[7])
    starts = build(aten.slice.Tensor, offsets, 0, 0, -1) if include_last else offsets
    ends = (build(aten.slice.Tensor, offsets, 0, 1, 2**62) if include_last else
            build(aten.cat.default, [build(aten.slice.Tensor, offsets, 0, 1, 2**62),
                                     build(aten.full.default, [1], count, dtype=offsets.meta["val"].dtype)]))
    first_rows = build(aten.index_select.default, weight, 0, indices)
    rows = build(aten.where.self, build(aten.isnan.default, first_rows), build.scalar(-float("inf"), first_rows),
                 first_rows)
    positions = build(aten.arange.start_step, 0, count, 1, dtype=offsets.meta["val"].dtype)
    bag_of = build(aten.bucketize.Tensor, positions, starts, right=True)
    step = 1
    while step < count:
        before = build(aten.cat.default, [build(aten.slice.Tensor, rows, 0, 0, step),
                                          build(aten.slice.Tensor, rows, 0, 0, count - step)])
        bag_before = build(aten.cat.default, [build(aten.full.default, [step], -1, dtype=bag_of.meta["val"].dtype),
                                              build(aten.slice.Tensor, bag_of, 0, 0, count - step)])
        same_bag = build(aten.unsqueeze.default, build(aten.eq.Tensor, bag_of, bag_before), 1)
        rows = build(aten.where.self, same_bag, build(aten.maximum.default, rows, before), rows)
        step *= 2
    last = build(aten.clamp_min.default, build(aten.add.Scalar, ends, -1), 0)
    first = build(aten.clamp_max.default, starts, count - 1)
    picked = build(aten.index_select.default, rows, 0, last)
    first_of_bag = build(aten.index_select.default, first_rows, 0, first)
    picked = build(aten.where.self, build(aten.isnan.default, first_of_bag), first_of_bag, picked)
    empty = build(aten.unsqueeze.default, build(aten.le.Tensor, ends, starts), 1)
    return build(aten.where.self, empty, build.scalar(0.0, picked), picked)
