"""Names and tables of graph operations that the lowering's modules share, and the rewriting passes'
NodeBuilder (a leaf: imports only torch)."""

from __future__ import annotations

import math
import operator

import torch


def add_call(graph: torch.fx.Graph, target, *args, **kwargs) -> torch.fx.Node:
    """A new node ``target(*args, **kwargs)`` at the graph's insertion point (args may hold lists of nodes),
    with its fake value as ``meta["val"]``."""
    created = graph.call_function(target, args, kwargs)
    values = torch.fx.node.map_arg(args, lambda a: a.meta["val"])
    with next(v for v in torch.utils._pytree.tree_leaves(values) if isinstance(v, torch.Tensor)).fake_mode:
        created.meta["val"] = target(*values, **kwargs)
    return created


def count_operators(graph: torch.fx.Graph) -> int:
    """The operator calls in `graph` (what the stage lines count)."""
    return sum(1 for node in graph.nodes if node.op == "call_function")


def op_name(target) -> str:
    """``aten.add.Tensor`` style name of an edge or aten op target (``getitem`` for operator.getitem)."""
    if not isinstance(target, torch._ops.OpOverload):
        target = getattr(target, "_op", target)  # EdgeOpOverload wraps an OpOverload
    return str(target) if isinstance(target, torch._ops.OpOverload) else getattr(target, "__name__", str(target))


# The cast ops of ATen and of ExecuTorch's dim-order dialect.
CASTS = frozenset({"aten._to_copy.default", "dim_order_ops._to_dim_order_copy.default"})


# torch dtype -> OpenVINO element type name; the delegate's runtime supports these.
TORCH_TO_OPENVINO = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "u8",
    torch.bool: "boolean",
}


# ExecuTorch's edge dialect spells these aten ops as dim-order ops; for the
# contiguous layout (the only one the partitioner takes) they mean the same.
DIM_ORDER_OPS = {
    "dim_order_ops._to_dim_order_copy.default": torch.ops.aten._to_copy.default,
    "dim_order_ops._clone_dim_order.default": torch.ops.aten.clone.default,
}


# Ops that OpenVINO's converter turns into nothing when the result has its
# source's shape and dtype (a clone, a full slice, a same-dtype ``.to()``...):
# a partition returning such a copy would return its source's tensor.
COPY_OPS = frozenset({
    "aten.clone.default", "aten.alias_copy.default", "aten.lift_fresh_copy.default", "aten.detach_copy.default",
    "aten._to_copy.default", "aten.slice_copy.Tensor", "aten.view_copy.default", "aten.expand_copy.default",
    "aten.squeeze_copy.dims", "aten.squeeze_copy.dim", "aten.unsqueeze_copy.default",
})


def is_bare_copy(node) -> bool:
    """A copy op whose result has its source's dtype and shape (a cast or reshape is not bare)."""
    if not (isinstance(node, torch.fx.Node) and node.op == "call_function" and node.args
            and isinstance(node.args[0], torch.fx.Node)):
        return False
    name = op_name(node.target)
    if name not in COPY_OPS and name not in DIM_ORDER_OPS:
        return False
    if name == "aten.copy.default":  # copy(self, src): src's values, in self's shape and dtype
        return False
    value, source = node.meta.get("val"), node.args[0].meta.get("val")
    return (isinstance(value, torch.Tensor) and isinstance(source, torch.Tensor)
            and value.dtype == source.dtype and value.shape == source.shape)


# Ops whose result is a view of their input (strided, not copied).
VIEW_OPS = frozenset({
    "aten.transpose.int", "aten.permute.default", "aten.view.default", "aten.reshape.default",
    "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.expand.default",
    "aten.slice.Tensor", "aten.select.int", "aten.t.default", "aten.alias.default", "aten.unflatten.int",
    "aten.flatten.using_ints", "aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default",
    "aten.unbind.int", "aten.narrow.default", "aten.view_as.default", "aten.expand_as.default", "getitem",
})


def result_read(node: torch.fx.Node, index: int) -> bool:
    """Some node reads result `index` of the multi-result `node` (through its ``getitem``)."""
    return any(u.target is operator.getitem and u.args[1] == index and u.users for u in node.users)


def tensors_of(value):
    """The tensors in a node value (a tensor, or nested lists/tuples of them), in order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_of(v)


aten = torch.ops.aten


def _fake_value(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _fake_mode(nodes):
    for node in nodes:
        mode = getattr(_fake_value(node), "fake_mode", None)
        if mode is not None:
            return mode
    return None


class NodeBuilder:
    """Adds aten nodes after `anchor`, each with its fake value, in order (the rewriting passes' tool)."""

    def __init__(self, graph: torch.fx.Graph, anchor: torch.fx.Node):
        self.graph, self.anchor = graph, anchor
        self.mode = _fake_mode([anchor, *anchor.all_input_nodes])

    def __call__(self, target, *args, **kwargs) -> torch.fx.Node:
        with self.graph.inserting_after(self.anchor):
            node = self.graph.call_function(target, args, kwargs)
        fake = torch.fx.node.map_arg(args, _fake_value)  # nodes in lists too (cat's tensors)
        if self.mode is not None and not node.all_input_nodes:
            with self.mode:  # a constant: made under the graph's fake mode, like every other value
                node.meta["val"] = target(*fake, **kwargs)
        else:
            node.meta["val"] = target(*fake, **kwargs)
        self.anchor = node
        return node

    def scalar(self, value: float, like: torch.fx.Node) -> torch.fx.Node:
        """A 0-d tensor holding `value` in `like`'s dtype (broadcasts like a Python number)."""
        return self(aten.scalar_tensor.default, value, dtype=_fake_value(like).dtype)

    def either(self, a: torch.fx.Node, b: torch.fx.Node) -> torch.fx.Node:
        """a or b, for bool masks, counted in float32: openvino 2025.4.1 converts neither
        logical_or nor a select between bool tensors."""
        count = self(aten.add.Tensor, self(aten._to_copy.default, a, dtype=torch.float32),
                     self(aten._to_copy.default, b, dtype=torch.float32))
        return self(aten.gt.Scalar, count, 0)  # counts hold no NaN: Greater is right here

    def ones(self, condition: torch.fx.Node, like: torch.fx.Node) -> torch.fx.Node:
        """1 where the bool `condition` holds, else 0, in `like`'s dtype (to be reduced or pooled)."""
        return self(aten._to_copy.default, condition, dtype=_fake_value(like).dtype)

    def nan_where(self, mask: torch.fx.Node, like: torch.fx.Node) -> torch.fx.Node:
        """NaN where `mask` holds, else `like`."""
        return self(aten.where.self, mask, self.scalar(math.nan, like), like)

    def any_nan(self, x: torch.fx.Node, dims: list, keepdim: bool) -> torch.fx.Node:
        """True where a reduction of `x` over `dims` meets a NaN (as a 0/1 mask reduced with amax)."""
        nans = self.ones(self(aten.isnan.default, x), x)
        return self(aten.gt.Scalar, self(aten.amax.default, nans, dims, keepdim), 0)

    def less(self, a, b) -> torch.fx.Node:
        """a < b for a node and a node or number; false where either is NaN."""
        if isinstance(b, torch.fx.Node):
            return self(aten.lt.Tensor, a if isinstance(a, torch.fx.Node) else self.scalar(a, b), b)
        return self(aten.lt.Scalar, a, b)
