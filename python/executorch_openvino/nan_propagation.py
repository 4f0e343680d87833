"""NaN and infinities through OpenVINO's min/max-type ops, as PyTorch computes them (``numerics="exact"``).

OpenVINO's CPU plugin drops a NaN where it compares: ``relu(nan)`` is 0,
``clamp(nan, -1, 1)`` is -1, ``maximum(nan, 0)`` is 0, ``amax([1, nan, 3])`` is 3,
a max-pool window holding a NaN gives its largest number, and a softmax row
holding a NaN or an infinity gives numbers where PyTorch gives NaN. Its amax,
amin and max pools also start from the largest finite numbers, so ``amax`` of
only ``-inf`` is -3.4e38 (measured with openvino 2026.4.1 on CPU; tests/
test_nan_propagation.py runs on 2025.4.1 too). PyTorch returns NaN, or the
infinity, in each case.

:func:`propagate_nans` rewrites a partition's graph before conversion so that
each such result is NaN exactly where PyTorch's is, with ops OpenVINO computes
correctly (``isnan``, ``where``, ``amax`` over a 0/1 mask, ``isinf``). Integer
and bool tensors hold no NaN and are left alone.
"""

from __future__ import annotations

import math
import operator

import torch

aten = torch.ops.aten

# name -> how the op's NaN is restored
_ELEMENTWISE = {"aten.relu.default", "aten.clamp.default", "aten.hardtanh.default"}
_BINARY = {"aten.maximum.default", "aten.minimum.default"}
_REDUCTIONS = {"aten.amax.default", "aten.amin.default"}
_POOLS = {"aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default"}
_SOFTMAXES = {"aten._softmax.default", "aten._log_softmax.default"}
TARGETS = _ELEMENTWISE | _BINARY | _REDUCTIONS | _POOLS | _SOFTMAXES


def _value(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _floating(node) -> bool:
    value = _value(node)
    return isinstance(value, torch.Tensor) and value.is_floating_point()


class _Builder:
    """Adds aten nodes after `anchor`, each with its fake value, in order."""

    def __init__(self, graph: torch.fx.Graph, anchor: torch.fx.Node):
        self.graph, self.anchor = graph, anchor

    def __call__(self, target, *args, **kwargs) -> torch.fx.Node:
        with self.graph.inserting_after(self.anchor):
            node = self.graph.call_function(target, args, kwargs)
        fake = [_value(a) if isinstance(a, torch.fx.Node) else a for a in args]
        node.meta["val"] = target(*fake, **kwargs)
        self.anchor = node
        return node

    def either(self, a: torch.fx.Node, b: torch.fx.Node) -> torch.fx.Node:
        """a or b, for bool masks, counted in float32: openvino 2025.4.1 converts neither
        logical_or nor a select between bool tensors."""
        count = self(aten.add.Tensor, self(aten._to_copy.default, a, dtype=torch.float32),
                     self(aten._to_copy.default, b, dtype=torch.float32))
        return self(aten.gt.Scalar, count, 0)

    def ones(self, condition: torch.fx.Node, like: torch.fx.Node) -> torch.fx.Node:
        """1 where the bool `condition` holds, else 0, in `like`'s dtype (to be reduced or pooled)."""
        return self(aten._to_copy.default, condition, dtype=_value(like).dtype)

    def nan_where(self, mask: torch.fx.Node, like: torch.fx.Node) -> torch.fx.Node:
        """NaN where `mask` holds, else `like`."""
        nan = self(aten.full_like.default, like, math.nan)
        return self(aten.where.self, mask, nan, like)

    def any_nan(self, x: torch.fx.Node, dims: list, keepdim: bool) -> torch.fx.Node:
        """True where a reduction of `x` over `dims` meets a NaN (as a 0/1 mask reduced with amax)."""
        nans = self.ones(self(aten.isnan.default, x), x)
        return self(aten.gt.Scalar, self(aten.amax.default, nans, dims, keepdim), 0)


def propagate_nans(program: torch.export.ExportedProgram) -> int:
    """Rewrites `program`'s graph in place; returns how many ops were rewritten."""
    from .conversion import op_name

    graph = program.graph
    rewritten = 0
    for node in list(graph.nodes):
        name = op_name(node.target) if node.op == "call_function" else ""
        if name not in TARGETS or not node.args or not _floating(node.args[0]):
            continue
        users = list(node.users)
        build = _Builder(graph, node)
        x = node.args[0]
        if name in _ELEMENTWISE:
            result = build(aten.where.self, build(aten.isnan.default, x), x, node)
        elif name in _BINARY:
            other = node.args[1]
            either = build.either(build(aten.isnan.default, x), build(aten.isnan.default, other))
            result = build(aten.where.self, either, build(aten.add.Tensor, x, other), node)
        elif name in _REDUCTIONS:
            dims = list(node.args[1]) if len(node.args) > 1 else list(range(_value(x).dim()))
            keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
            # OpenVINO also starts ReduceMax at the lowest finite number: amax of only -inf is -3.4e38.
            infinity = -math.inf if name == "aten.amax.default" else math.inf
            only = build.ones(build(aten.eq.Scalar, x, infinity), x)
            all_infinite = build(aten.gt.Scalar, build(aten.amin.default, only, dims, keepdim), 0)
            fixed = build(aten.where.self, all_infinite, build(aten.full_like.default, node, infinity), node)
            result = build.nan_where(build.any_nan(x, dims, keepdim), fixed)
        elif name in _SOFTMAXES:
            dim = node.args[1] % max(_value(x).dim(), 1)
            # PyTorch's row is NaN when it holds a NaN, or its max is infinite (inf - inf).
            infinite_max = build(aten.isinf.default, build(aten.amax.default, x, [dim], True))
            bad = build.either(build.any_nan(x, [dim], True), infinite_max)
            result = build.nan_where(bad, node)
        else:  # max pools: (values, indices) read through getitem
            values = next((u for u in users if u.target is operator.getitem and u.args[1] == 0), None)
            if values is None:
                continue
            users = list(values.users)
            build = _Builder(graph, values)
            mask = build.ones(build(aten.isnan.default, x), x)
            pooled = build(node.target, mask, *node.args[1:], **node.kwargs)
            hit = build(aten.gt.Scalar, build(operator.getitem, pooled, 0), 0)
            # A window of only -inf gives -3.4e38 in OpenVINO: pooling minus the -inf mask finds
            # such windows (padding never counts, as in PyTorch).
            minus_ones = build(aten.neg.default, build.ones(build(aten.eq.Scalar, x, -math.inf), x))
            pooled_minus = build(node.target, minus_ones, *node.args[1:], **node.kwargs)
            only_minus_inf = build(aten.lt.Scalar, build(operator.getitem, pooled_minus, 0), 0)
            fixed = build(aten.where.self, only_minus_inf, build(aten.full_like.default, values, -math.inf), values)
            result = build.nan_where(hit, fixed)
            node = values
        for user in users:
            user.replace_input_with(node, result)
        rewritten += 1
    if rewritten:
        graph.lint()
        program.graph_module.recompile()
    return rewritten
