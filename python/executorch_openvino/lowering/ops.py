"""Names and tables of graph operations that the lowering's modules share (a leaf: imports only torch)."""

from __future__ import annotations

import torch


def add_call(graph: torch.fx.Graph, target, *args) -> torch.fx.Node:
    """A new node ``target(*args)`` at the graph's insertion point, with its fake value as ``meta["val"]``."""
    created = graph.call_function(target, args)
    values = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
    with next(v for v in values if isinstance(v, torch.Tensor)).fake_mode:
        created.meta["val"] = target(*values)
    return created


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


def tensors_of(value):
    """The tensors in a node value (a tensor, or nested lists/tuples of them), in order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_of(v)
