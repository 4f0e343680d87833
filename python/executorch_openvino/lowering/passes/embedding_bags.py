"""``embedding_bag`` as ``_embedding_bag``, the core ATen operator the partitioner takes.

``torch.export`` records ``aten.embedding_bag.padding_idx``, which ExecuTorch's
decomposition turns into ``_embedding_bag`` when the weight requires a gradient
(a module's parameter) and into ``_embedding_bag_forward_only`` otherwise (a
weight passed as an input, or a buffer): an operator outside core ATen that
``to_edge`` refuses. Both compute the same four results (the second only skips
what a backward pass would reuse), so on the ATen program, before ExecuTorch's
decomposition, each call becomes ``_embedding_bag`` with the same arguments
(``padding_idx=None`` spelled -1, as the composite operator does).

ExecuTorch 1.5.1 has no kernel for either: only calls the partitioner takes
(:func:`refusal`: no ``padding_idx``, bags over a static number of indices, side results unused) are rewritten;
the others stay as they were and fail as before. Max mode is computed by ``max_embedding_bags``.
"""

from __future__ import annotations

import operator

import torch

from ..ops import NodeBuilder, op_name, result_read
from .max_embedding_bags import MAX_MODE

aten = torch.ops.aten

_CALLS = ("aten.embedding_bag.padding_idx", "aten.embedding_bag.default", "aten._embedding_bag_forward_only.default")


_NAMES = ("weight", "indices", "offsets", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
          "include_last_offset", "padding_idx")
_DEFAULTS = (None, None, None, False, 0, False, None, False, -1)


def arguments(node: torch.fx.Node) -> list:
    """The nine arguments of an embedding bag call, defaults filled in, ``padding_idx=None`` as -1."""
    values = list(node.args) + [node.kwargs.get(n, d) for n, d in zip(_NAMES[len(node.args):],
                                                                      _DEFAULTS[len(node.args):])]
    return values[:8] + [-1 if values[8] is None else values[8]]


def refusal(node: torch.fx.Node) -> str | None:
    """Why the partitioner leaves an embedding bag call to ExecuTorch, which has no kernel for it, or None
    (completing "an embedding bag ...")."""
    args = arguments(node)
    if args[4] not in (0, 1, MAX_MODE):
        return f"in mode {args[4]}, which PyTorch does not define"
    if args[8] != -1:
        return "with padding_idx, which OpenVINO's converter ignores"
    indices = args[1].meta.get("val") if isinstance(args[1], torch.fx.Node) else None
    if isinstance(indices, torch.Tensor) and indices.dim() == 1 and not isinstance(indices.shape[0], int):
        # index_checks compares the offsets with the count, and add_spare_bag (which also computes
        # include_last_offset, refused by OpenVINO's converter) appends it: both need it at lowering.
        return "over a dynamic number of indices, against which its offsets cannot be checked"
    if args[4] == MAX_MODE and isinstance(indices, torch.Tensor) and indices.dim() == 1 and indices.shape[0] == 0:
        return "in max mode over no indices"
    if any(result_read(node, i) for i in (1, 2, 3)):
        return "whose int64 side results are used, which OpenVINO does not compute"
    return None


def call_embedding_bag_directly(program: torch.export.ExportedProgram) -> int:
    """Retargets each embedding bag call of `program`'s graph that the partitioner takes (:func:`refusal`) to
    ``_embedding_bag``, in place; returns how many. The others stay as they were, and fail to lower as before."""
    changed = 0
    for node in program.graph.nodes:
        if node.op != "call_function" or op_name(node.target) not in _CALLS or refusal(node):
            continue
        args = arguments(node)
        if args[7] and isinstance(args[2], torch.fx.Node) and (args[4] == MAX_MODE or last_bag_runs_to_the_end(node)):
            # Eager's last bag ends with the indices here (see _FAST_PATH_DTYPES; in max mode always): the last
            # offset becomes their number, which every later stage computes alike (the weight's layout is lost
            # after to_edge).
            count = args[1].meta["val"].shape[0]
            build = NodeBuilder(program.graph, node.prev)
            args[2] = build(aten.cat.default, [build(aten.slice.Tensor, args[2], 0, 0, -1),
                                               build(aten.full.default, [1], count, dtype=args[2].meta["val"].dtype)])
        node.target, node.args, node.kwargs = aten._embedding_bag.default, tuple(args), {}
        changed += 1
    if changed:
        program.graph.lint()
        program.graph_module.recompile()
    return changed


# The weights eager's embedding bag reads on its fast path (torch 2.13's CPU kernel): a contiguous float32,
# float16 or bfloat16 weight. With include_last_offset and a last offset below the number of indices, that
# path sums the last bag up to the last offset, the other one (a transposed weight, float64) up to the end
# of the indices; both divide a mean by the indices from the bag's start to the end (offsets [0, 4, 6] over
# 8 indices: [4, 6) or [4, 8), divided by 4; measured by a tester, issue 51).
_FAST_PATH_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def last_bag_runs_to_the_end(node: torch.fx.Node) -> bool:
    """Whether eager's last bag of `node` (``include_last_offset=True``) takes every index from its start on,
    whatever the last offset: a weight off eager's fast path (:data:`_FAST_PATH_DTYPES`, contiguous)."""
    weight = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    return isinstance(weight, torch.Tensor) and not (weight.dtype in _FAST_PATH_DTYPES and weight.is_contiguous())


def scales_last_mean_bag(node: torch.fx.Node) -> bool:
    """Whether :func:`add_spare_bag` gives `node` eager's last bag in mean mode with ``include_last_offset``
    (see :data:`_FAST_PATH_DTYPES`): on eager's fast path the sum up to the last offset, divided by the
    indices from the bag's start to the end of the indices. Done where the offsets have a static length of 2
    or more; elsewhere the call fails for a last offset other than the number of indices
    (passes/index_checks.py)."""
    args = list(node.args)
    offsets = args[2] if len(args) > 2 else None
    if not (len(args) > 7 and args[7] and args[4] == 1 and isinstance(offsets, torch.fx.Node)):
        return False
    length = offsets.meta["val"].shape[0] if offsets.meta["val"].dim() == 1 else None
    return isinstance(length, int) and length >= 2


def _eager_last_mean_bag(build: NodeBuilder, bags: torch.fx.Node, offsets: torch.fx.Node, count: int):
    """`bags` (B, D), the means of OpenVINO's bags, with the last one's mean rescaled to eager's divisor:
    times (its own length) / (count - its start); 1 where it starts at count (an empty bag: 0 either way)."""
    dtype = bags.meta["val"].dtype
    start = build(aten.slice.Tensor, offsets, 0, -2, -1)
    length = build(aten.sub.Tensor, build(aten.slice.Tensor, offsets, 0, -1, 2**62), start)
    divisor = build(aten.clamp_min.default, build(aten.rsub.Scalar, start, count), 1)
    factor = build(aten.div.Tensor, build(aten._to_copy.default, length, dtype=dtype),
                   build(aten._to_copy.default, divisor, dtype=dtype))
    ones = build(aten.ones_like.default, build(aten.slice.Tensor, bags, 1, 0, 1))
    scale = build(aten.cat.default, [build(aten.slice.Tensor, ones, 0, 0, -1),
                                     build(aten.view.default, factor, [1, 1])])
    return build(aten.mul.Tensor, bags, scale)


def add_spare_bag(program: torch.export.ExportedProgram) -> int:
    """Gives each embedding bag with offsets over a static number of indices n one more index and one more bag
    starting at n, whose row is then dropped; returns how many it changed (a partition, before conversion, after
    its index checks). OpenVINO's EmbeddingBagOffsets refuses an offset equal to the number of indices
    ("Offset value exceeds indices size", 2026.4.1), which PyTorch takes as an empty bag at the end
    (``offsets=[0, 8, 8]`` over 8 indices): with the spare index every such offset is below the count, and every
    real bag keeps its elements. The same computes ``include_last_offset=True``, which OpenVINO's converter
    refuses: there the last offset starts the spare bag (PyTorch ignores the indices from it on)."""
    graph = program.graph
    changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) != "aten._embedding_bag.default":
            continue
        args = list(node.args)
        indices, offsets = args[1], args[2] if len(args) > 2 else None
        count = indices.meta["val"].shape[0] if indices.meta["val"].dim() == 1 else None
        bags = [u for u in node.users if u.target is operator.getitem and u.args[1] == 0]
        if not isinstance(offsets, torch.fx.Node) or not isinstance(count, int) or len(bags) != 1:
            continue
        scaled = scales_last_mean_bag(node)
        build = NodeBuilder(graph, node.prev)
        dtype = indices.meta["val"].dtype
        args[1] = build(aten.cat.default, [indices, build(aten.full.default, [1], 0, dtype=dtype)])
        if len(args) > 7 and args[7]:  # include_last_offset: the last offset already starts the spare bag
            args[7] = False
        else:
            args[2] = build(aten.cat.default, [offsets, build(aten.full.default, [1], count,
                                                                dtype=offsets.meta["val"].dtype)])
        if len(args) > 6 and isinstance(args[6], torch.fx.Node):  # per_sample_weights: one for the spare index
            spare = build(aten.zeros.default, [1], dtype=args[6].meta["val"].dtype)
            args[6] = build(aten.cat.default, [args[6], spare])
        node.args = tuple(args)
        node.meta["val"] = node.target(*torch.fx.node.map_arg(node.args, lambda n: n.meta["val"]))
        bag = bags[0]
        bag.meta["val"] = node.meta["val"][0]
        users = list(bag.users)
        build = NodeBuilder(graph, bag)
        trimmed = build(aten.slice.Tensor, bag, 0, 0, -1)
        if scaled:
            trimmed = _eager_last_mean_bag(build, trimmed, offsets, count)
        for user in users:
            user.replace_input_with(bag, trimmed)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed
