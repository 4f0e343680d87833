"""Matrix products on their operand's own shape instead of a flattened view of it.

ExecuTorch's edge decomposition writes a linear layer, or a recurrent layer's step, on an input of rank 3 or
more as ``view_copy(x, [M, K])``, ``addmm`` (or ``mm``), then ``view_copy`` back to ``x``'s leading sizes.
``openvino.convert_model`` of the same ``torch.export`` program gives a MatMul on ``x`` itself; the two views
are two Reshapes more per product in the delegate's IR (the bench's LSTM: 254 of them, 2 per step, and
4% to 6% slower than ``convert_model``'s IR through OpenVINO's own API in the same rounds; docs/benchmarks.md
at 996094c). :func:`unflatten_matmuls` writes such a product as ``linear(x, w, bias)`` on ``x`` itself, which
OpenVINO's converter keeps whole (``ops_to_not_decompose`` of openvino 2025.4.1 and 2026.4.1; it decomposes ``matmul``
into the views again) and converts to one MatMul and an Add, as it converts ``addmm``.

A linear layer on a non-contiguous input (``Linear(x.transpose(0, 1))``, the input projection of
``MultiheadAttention`` under ``batch_first=True``) is decomposed as a ``bmm`` instead, whose right operand is the
weight broadcast over the batch (``expand_copy`` to ``[B, K, N]``). OpenVINO folds that broadcast of a constant
into a constant B times the weight's size: a 52.7 MB program for 3.16 MB of weights, and calls 1.55x to 1.60x
``convert_model``'s (a tester's ``TransformerEncoderLayer(batch_first=True)``, issue 36). Such a ``bmm``
is rewritten as ``linear`` on the unexpanded operand too.
"""

from __future__ import annotations

import math

import torch
from torch.fx.experimental.symbolic_shapes import statically_known_true

from ..ops import NodeBuilder, is_bare_copy, op_name

aten = torch.ops.aten

_VIEW = "aten.view_copy.default"
_BMM = "aten.bmm.default"
_PRODUCTS = {"aten.addmm.default", "aten.mm.default", _BMM}


def _shape(node) -> list | None:
    """Sizes of `node`'s tensor: ints, and SymInts for dynamic sizes."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return list(value.shape) if isinstance(value, torch.Tensor) else None


def _same(a: list | None, b: list | None) -> bool:
    """Equal sizes, as torch's shape environment proves them (without adding a guard on a dynamic size)."""
    return (a is not None and b is not None and len(a) == len(b)
            and all(statically_known_true(x == y) for x, y in zip(a, b)))


def _never_empty(shape: list) -> bool:
    return all(statically_known_true(size != 0) for size in shape)


def _is(node, name: str) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and op_name(node.target) == name


def _through_copies(node):
    while is_bare_copy(node):
        node = node.args[0]
    return node


def _operands(product: torch.fx.Node):
    """``(bias or None, left, right)`` of an ``addmm``, ``mm`` or ``bmm``."""
    if op_name(product.target) == "aten.addmm.default":
        return tuple(product.args[:3])
    return (None, *product.args[:2])


def _rewritable(product: torch.fx.Node) -> bool:
    """mm, bmm, or addmm with beta and alpha 1 and a bias of shape [N] or [1, N] (one row for every row of the
    product, so it broadcasts over the unflattened sizes the same way)."""
    if op_name(product.target) != "aten.addmm.default":
        return True
    bias = _shape(product.args[0])
    return (all(product.kwargs.get(name, 1) == 1 for name in ("beta", "alpha")) and len(product.args) == 3
            and bias is not None and len(bias) in (1, 2) and (len(bias) == 1 or _same(bias[:1], [1])))


def _weight(product: torch.fx.Node):
    """The ``[K, N]`` right operand: ``addmm``'s or ``mm``'s own; for ``bmm``, the 2-d ``w`` that its right operand
    ``view_copy(expand_copy(w, batch + [K, N]), [B, K, N])`` broadcasts over the batch, or None when it is not
    one matrix for every batch entry (attention's products)."""
    right = _operands(product)[2]
    if op_name(product.target) != _BMM:
        return right
    expanded = right.args[0] if _is(right, _VIEW) else None
    if not _is(expanded, "aten.expand_copy.default"):
        return None
    weight = expanded.args[0]
    shape, broadcast = _shape(weight), _shape(expanded)
    # The view must keep each batch entry [K, N] too (a breaker's w.expand(B, 4, 6).reshape(B, 8, 3) does not).
    if (shape is None or broadcast is None or len(shape) != 2 or not _same(broadcast[-2:], shape)
            or not _same(_shape(right)[-2:], shape)):
        return None
    return weight


def _source(product: torch.fx.Node):
    """``x`` where `product`'s left operand is a floating-point `x` of shape ``lead + [K]``, ``len(lead) >= 2``,
    flattened to ``[prod(lead), K]`` (``addmm``, ``mm``) or ``[prod(lead[:-1]), lead[-1], K]`` (``bmm``) by
    ``view_copy`` (and copies that keep the shape), and every reader of `product` is a ``view_copy`` to
    ``lead + [N]``, each size equal as torch's shape environment proves it; None otherwise."""
    left = _operands(product)[1]
    if not _is(left, _VIEW):
        return None
    x = _through_copies(left.args[0])
    shape, flat, result = _shape(x), _shape(left), _shape(product)
    if shape is None or flat is None or result is None or len(shape) < 3 or not x.meta["val"].is_floating_point():
        return None  # integer products stay as the partitioner checked them
    lead = shape[:-1]
    flattened = [math.prod(lead[:-1]), lead[-1]] if op_name(product.target) == _BMM else [math.prod(lead)]
    if not _same(flat, flattened + [shape[-1]]) or not _never_empty(shape) or not _never_empty(result):
        return None  # an empty weight made the IR unloadable (Linear(8, 0) on (2, 3, 8), found by a tester)
    readers = list(product.users)
    if not readers or not all(_is(r, _VIEW) and _same(_shape(r), lead + [result[-1]]) for r in readers):
        return None
    return x


def _erase_if_unused(graph: torch.fx.Graph, node) -> None:
    """Erases `node`, then the operands only it read (the flattening and broadcasting chain)."""
    if not (isinstance(node, torch.fx.Node) and node.op == "call_function") or node.users:
        return
    operands = [a for a in node.args if isinstance(a, torch.fx.Node)]
    graph.erase_node(node)
    for operand in operands:
        _erase_if_unused(graph, operand)


def unflatten_matmuls(program: torch.export.ExportedProgram) -> int:
    """Rewrites each ``view_copy -> addmm | mm | bmm -> view_copy`` of `program`'s graph (found by ``_source``
    and ``_weight``) as ``linear`` on the unflattened operand (with ``addmm``'s bias); returns how many it
    rewrote.

    Dynamic sizes are rewritten where torch's shape environment proves the views' sizes equal to the
    operand's (it takes a dynamic size for 2 or more while tracing; a call with 0 rows still runs). A dynamic
    length had made the broadcast weight of a transposed linear a Broadcast that OpenVINO computed on every
    call (a tester's batch_first MultiheadAttention: 24.5 ms against ``convert_model``'s 1.17 ms)."""
    graph = program.graph
    rewritten = 0
    for product in list(graph.nodes):
        if product.op != "call_function" or op_name(product.target) not in _PRODUCTS or not _rewritable(product):
            continue
        x, right = _source(product), _weight(product)
        if x is None or right is None:
            continue
        build = NodeBuilder(graph, product)
        bias, flat, product_right = _operands(product)
        # linear, which OpenVINO's converter keeps whole (matmul it decomposes to the views again), takes the
        # weight as [N, K]: the decomposition's own permute_copy of it, or a transpose of another right operand.
        if _is(right, "aten.permute_copy.default") and list(right.args[1]) == [1, 0]:
            weight = right.args[0]
        else:
            weight = build(aten.permute_copy.default, right, [1, 0])
        if bias is not None and len(_shape(bias)) == 1:
            result = build(aten.linear.default, x, weight, bias)
        else:
            result = build(aten.linear.default, x, weight)
            if bias is not None:
                result = build(aten.add.Tensor, result, bias)
        for view in list(product.users):
            view.replace_all_uses_with(result)
            graph.erase_node(view)
        graph.erase_node(product)
        for unused in (flat, product_right):
            _erase_if_unused(graph, unused)
        rewritten += 1
    if rewritten:
        graph.lint()
        program.graph_module.recompile()
    return rewritten
