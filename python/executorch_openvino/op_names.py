"""Names of graph operations, shared by the partitioner's checks and the conversion passes (a leaf: imports only torch)."""

from __future__ import annotations

import torch


def op_name(target) -> str:
    """``aten.add.Tensor`` style name of an edge or aten op target (``getitem`` for operator.getitem)."""
    if not isinstance(target, torch._ops.OpOverload):
        target = getattr(target, "_op", target)  # EdgeOpOverload wraps an OpOverload
    return str(target) if isinstance(target, torch._ops.OpOverload) else getattr(target, "__name__", str(target))


# The cast ops of ATen and of ExecuTorch's dim-order dialect.
CASTS = frozenset({"aten._to_copy.default", "dim_order_ops._to_dim_order_copy.default"})
