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

import warnings
from dataclasses import dataclass

import torch

from ..ops import op_name

AVG_POOLS = {
    "aten.avg_pool1d.default": torch.ops.aten.avg_pool1d.default,
    "aten.avg_pool2d.default": torch.ops.aten.avg_pool2d.default,
    "aten.avg_pool3d.default": torch.ops.aten.avg_pool3d.default,
}


# avg_poolNd's spatial rank, from its name: a kernel_size of one element applies to every dim.
_RANK = {"aten.avg_pool1d.default": 1, "aten.avg_pool2d.default": 2, "aten.avg_pool3d.default": 3}


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
    def of(cls, node: torch.fx.Node) -> _Pool:
        # avg_poolNd(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True,
        #            divisor_override=None); avg_pool1d has no divisor_override.
        def arg(i, name, default):
            return node.kwargs.get(name, node.args[i] if len(node.args) > i else default)

        rank = _RANK[op_name(node.target)]

        def per_dim(value):
            value = [value] if isinstance(value, int) else list(value)
            return value * rank if len(value) == 1 else value

        kernel = per_dim(arg(1, "kernel_size", []))
        return cls(node.args[0], kernel, per_dim(arg(2, "stride", []) or kernel),
                   per_dim(arg(3, "padding", 0)), bool(arg(4, "ceil_mode", False)),
                   bool(arg(5, "count_include_pad", True)), arg(6, "divisor_override", None))


def _shape(value) -> list | None:
    return list(value.shape) if isinstance(value, torch.Tensor) else None


def _is_static(shape) -> bool:
    return shape is not None and all(isinstance(d, int) for d in shape)


def divisor_override(node: torch.fx.Node):
    """The pool's ``divisor_override`` (None when not given)."""
    return _Pool.of(node).divisor_override


def divides_like_pytorch(node: torch.fx.Node) -> bool | None:
    """Whether OpenVINO divides every window of this average pool as PyTorch does.

    ``None`` when that depends on dynamic (symbolic) spatial sizes.
    """
    pool = _Pool.of(node)
    if not (pool.ceil_mode and pool.count_include_pad) or pool.divisor_override or not any(pool.padding):
        return True
    rank = len(pool.kernel)
    source, out = _shape(pool.source.meta.get("val")), _shape(node.meta.get("val"))
    if source is None or out is None or not (_is_static(source[-rank:]) and _is_static(out[-rank:])):
        return None
    for d in range(rank):
        last_end = (out[d - rank] - 1) * pool.stride[d] - pool.padding[d] + pool.kernel[d]
        if last_end > source[d - rank] + pool.padding[d]:
            return False  # the last window overflows the padded input
    return True


def can_delegate(node: torch.fx.Node) -> bool:
    """OpenVINO computes this pool as PyTorch does, as it is or after :func:`pad_explicitly`.

    Refused: ``divisor_override`` (OpenVINO's converter rejects it), and pools
    that need the rewrite but have a dynamic size (the metadata of the new ops
    would pin it).
    """
    if divisor_override(node):
        return _refused(node, "divisor_override, which OpenVINO's converter rejects")
    divides = divides_like_pytorch(node)
    if divides is True or (divides is False and _is_static(_shape(node.args[0].meta.get("val")))
                           and _is_static(_shape(node.meta.get("val")))):
        return True
    return _refused(node, "ceil_mode with padding counted and dynamic sizes, where OpenVINO may divide "
                          "the last window by the whole kernel")


def _refused(node: torch.fx.Node, why: str) -> bool:

    if op_name(node.target) == "aten.avg_pool3d.default":
        warnings.warn(f"{node.name} (avg_pool3d) stays on ExecuTorch because of {why}; ExecuTorch's portable "
                      "kernels have no avg_pool3d, so the program will fail to load ('operator missing'). "
                      "Drop divisor_override, or export with static sizes.", stacklevel=2)
    return False


def spell_out_arguments(node: torch.fx.Node) -> None:
    """Gives an average pool's kernel_size, stride and padding one value per spatial dim.

    OpenVINO's converter reads ``avg_pool2d(x, [3])`` as a 1-D kernel and fails
    ("Expected kernel size to be equal to input size - 2. Got: 1").
    """
    pool = _Pool.of(node)
    args = list(node.args) + [None] * max(0, 4 - len(node.args))
    args[1:4] = [pool.kernel, pool.stride, pool.padding]
    node.args = tuple(args)
    node.kwargs = {k: v for k, v in node.kwargs.items() if k not in ("kernel_size", "stride", "padding")}


def pad_explicitly(program: torch.export.ExportedProgram) -> None:
    """Rewrites, in place, each average pool of `program` that OpenVINO would divide differently."""

    graph = program.graph
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) not in AVG_POOLS:
            continue
        if divides_like_pytorch(node) is not False:
            continue  # nothing to rewrite (the partitioner took only static sizes when there is)
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
