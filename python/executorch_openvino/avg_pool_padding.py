"""Average pools that count padding with ``ceil_mode``: rewritten so OpenVINO divides like PyTorch.

PyTorch divides each window of ``avg_poolNd(..., ceil_mode=True,
count_include_pad=True)`` by the part of it that lies inside the padded input.
When the last window runs past the padded end, OpenVINO divides it by the whole
kernel instead: ``AvgPool1d(3, 2, padding=1, ceil_mode=True)`` over 100
elements gives ``x[99]/3`` for the last output against PyTorch's ``x[99]/2``
(measured with openvino 2025.4.1 and 2026.4.1). Without padding both divide by
the part inside.

So before conversion such a pool becomes three ops with PyTorch's meaning:
the zero padding made explicit (``constant_pad_nd``), the same pool without
padding, and a slice back to PyTorch's output size (PyTorch drops a last
window that starts inside the right padding; over the explicitly padded input
it would be kept).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

AVG_POOLS = {
    "aten.avg_pool1d.default": torch.ops.aten.avg_pool1d.default,
    "aten.avg_pool2d.default": torch.ops.aten.avg_pool2d.default,
    "aten.avg_pool3d.default": torch.ops.aten.avg_pool3d.default,
}


@dataclass(frozen=True)
class _Pool:
    source: torch.fx.Node
    kernel: list
    stride: list
    padding: list
    ceil_mode: bool
    count_include_pad: bool
    divisor_override: object

    @classmethod
    def of(cls, node: torch.fx.Node) -> "_Pool":
        # avg_poolNd(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True,
        #            divisor_override=None); avg_pool1d has no divisor_override.
        def arg(i, name, default):
            return node.kwargs.get(name, node.args[i] if len(node.args) > i else default)

        kernel = list(arg(1, "kernel_size", []))
        rank = len(kernel)

        def per_dim(value):
            value = [value] if isinstance(value, int) else list(value)
            return value * rank if len(value) == 1 else value

        return cls(node.args[0], per_dim(kernel), per_dim(arg(2, "stride", []) or kernel),
                   per_dim(arg(3, "padding", 0)), bool(arg(4, "ceil_mode", False)),
                   bool(arg(5, "count_include_pad", True)), arg(6, "divisor_override", None))


def _static_shape(value) -> list | None:
    if isinstance(value, torch.Tensor) and all(isinstance(d, int) for d in value.shape):
        return list(value.shape)
    return None


def divisor_override(node: torch.fx.Node):
    """The pool's ``divisor_override`` (None when not given)."""
    return _Pool.of(node).divisor_override


def divides_like_pytorch(node: torch.fx.Node) -> bool | None:
    """Whether OpenVINO divides every window of this average pool as PyTorch does.

    ``None`` when that depends on dynamic (symbolic) sizes.
    """
    pool = _Pool.of(node)
    if not (pool.ceil_mode and pool.count_include_pad) or pool.divisor_override or not any(pool.padding):
        return True
    source, out = _static_shape(pool.source.meta.get("val")), _static_shape(node.meta.get("val"))
    if source is None or out is None:
        return None
    rank = len(pool.kernel)
    for d in range(rank):
        last_end = (out[d - rank] - 1) * pool.stride[d] - pool.padding[d] + pool.kernel[d]
        if last_end > source[d - rank] + pool.padding[d]:
            return False  # the last window overflows the padded input
    return True


def pad_explicitly(program: torch.export.ExportedProgram) -> None:
    """Rewrites, in place, each average pool of `program` that OpenVINO would divide differently."""
    from .conversion import op_name

    graph = program.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) not in AVG_POOLS:
            continue
        if divides_like_pytorch(node) is not False:
            continue  # None (dynamic sizes) is refused by the partitioner
        pool = _Pool.of(node)
        rank = len(pool.kernel)
        pads = [p for d in reversed(range(rank)) for p in (pool.padding[d], pool.padding[d])]
        target = node.meta["val"].shape
        with graph.inserting_before(node):
            padded = _call(graph, torch.ops.aten.constant_pad_nd.default, pool.source, pads, 0.0)
            result = _call(graph, AVG_POOLS[op_name(node.target)], padded, pool.kernel, pool.stride,
                           [0] * rank, True, True)
            for d in range(rank):
                dim = d - rank + len(target)
                if result.meta["val"].shape[dim] != target[dim]:
                    result = _call(graph, torch.ops.aten.slice_copy.Tensor, result, dim, 0, target[dim])
        node.replace_all_uses_with(result)
        graph.erase_node(node)
    program.graph_module.recompile()


def _call(graph: torch.fx.Graph, op, *args) -> torch.fx.Node:
    """A new node computing op(*args), its ``val`` metadata computed on the fake inputs."""
    node = graph.call_function(op, args)
    node.meta["val"] = op(*(a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args))
    return node
