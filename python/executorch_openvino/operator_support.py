"""Which edge-dialect nodes the OpenVINO delegate takes.

The operator list is OpenVINO's own (``openvino.frontend.pytorch.torchdynamo.
op_support.OperatorSupport``, shipped with each OpenVINO release), so the
partitioner follows the installed frontend. On top of it, a node is taken only
when every tensor it reads and writes has a dtype the delegate's runtime binds
(float32/16, bfloat16, float64, int8/16/32/64, uint8, bool).

ExecuTorch's edge dialect spells two aten ops as dim-order ops; they are taken
when they keep the contiguous layout, and :mod:`conversion` maps them back to
the aten ops OpenVINO's frontend knows.
"""

from __future__ import annotations

import functools

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

from .conversion import DIM_ORDER_OPS, TORCH_TO_OPENVINO, op_name


@functools.lru_cache(maxsize=1)
def openvino_supported_ops() -> frozenset:
    """Qualified names (``torch.ops.aten.add.Tensor``) of the ops OpenVINO converts."""
    from openvino.frontend.pytorch.torchdynamo.op_support import OperatorSupport

    return frozenset(OperatorSupport({})._support_dict)


def _tensor_values(node: torch.fx.Node):
    values = [node.meta.get("val")]
    for arg in node.all_input_nodes:
        values.append(arg.meta.get("val"))
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from (x for x in v if isinstance(x, torch.Tensor))
        elif isinstance(v, torch.Tensor):
            yield v


def _is_contiguous_dim_order(node: torch.fx.Node) -> bool:
    dim_order = node.kwargs.get("dim_order")
    val = node.meta.get("val")
    return dim_order is None or (isinstance(val, torch.Tensor) and list(dim_order) == list(range(val.dim())))


class OpenvinoOperatorSupport(OperatorSupportBase):
    """``is_node_supported`` for :class:`torch.fx.passes.infra.partitioner.CapabilityBasedPartitioner`."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        if node.op != "call_function":
            return False
        name = op_name(node.target)
        if name in DIM_ORDER_OPS:
            if not _is_contiguous_dim_order(node):
                return False
        elif name == "getitem":
            pass
        elif f"torch.ops.{name}" not in openvino_supported_ops():
            return False
        return all(v.dtype in TORCH_TO_OPENVINO for v in _tensor_values(node))
