"""Operations the partitioner keeps out of ExecuTorch's edge decomposition (``Partitioner.ops_to_not_decompose``).

ExecuTorch decomposes a program into core ATen before partitioning, which
turns ``scaled_dot_product_attention`` into ~10 operations (two matmuls, a
softmax, the masking) that OpenVINO's CPU plugin runs separately, where its
PyTorch frontend converts the whole call to one ``ScaledDotProductAttention``
that runs as a fused attention kernel. An operation listed here reaches the
partition whole, but only where the partitioner delegates it (the filter is
the partitioner's own node check, :class:`~executorch_openvino.lowering.operator_support.
OpenVINOOperatorSupport`): a node left to ExecuTorch's CPU kernels is
decomposed for them as before.

Each entry was measured against its decomposition (``benchmarks/kept_ops.py``
prints the table: IR operations, latency, and the difference from eager PyTorch
on ordinary and special values); an operation that was not faster whole, or
that OpenVINO computes differently from eager PyTorch where the decomposition
did not, is not listed.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .ops import VIEW_OPS, op_name, tensors_of

aten = torch.ops.aten


def float32_only(node: torch.fx.Node, exact: bool = True) -> bool:
    """Every floating-point tensor the node reads or returns is float32 (the precision these were measured in)."""
    values = [a.meta.get("val") for a in node.all_input_nodes] + [node.meta.get("val")]
    return all(t.dtype == torch.float32 for t in tensors_of(values) if t.is_floating_point())


def _float32_attention(node: torch.fx.Node, exact: bool) -> bool:
    """SDPA on float32 without dropout (dropout_p is 0 in eval; training programs keep the decomposition)
    and without grouped-query attention (``enable_gqa=True`` with fewer key heads failed to compile,
    "key_input_correctness", OpenVINO 2026.4.1).

    The rows whose mask allows no key are set to 0 as PyTorch does
    (``nan_propagation.zero_rows_without_keys``; OpenVINO gives NaN).
    """
    dropout = node.kwargs.get("dropout_p", node.args[4] if len(node.args) > 4 else 0.0)
    qkv = [a.meta.get("val") if isinstance(a, torch.fx.Node) else None for a in node.args[:3]]
    # OpenVINO wants rank 3 or more ("Query input rank length must be at least 3"), and a mask
    # reduced over zero keys has no identity: such calls keep the decomposition.
    shaped = all(isinstance(t, torch.Tensor) and t.dim() >= 3 and _sizes_positive(t) for t in qkv)
    return (dropout == 0.0 and not node.kwargs.get("enable_gqa", False) and shaped and float32_only(node))


def _sizes_positive(value: torch.Tensor) -> bool:
    """Every size is at least 1 (a dynamic one by its lower bound)."""
    for size in value.shape:
        if isinstance(size, int):
            if size < 1:
                return False
        else:
            try:
                if int(size.node.shape_env.bound_sympy(size.node.expr).lower) < 1:
                    return False
            except (TypeError, ValueError, AttributeError):
                return False
    return True


def _fast_float32(node: torch.fx.Node, exact: bool) -> bool:
    """Only with ``numerics="fast"``: OpenVINO's SoftPlus computes ln(1 + e^x), which rounds to 0 where
    PyTorch's log1p keeps e^x (``softplus(-20)`` is 2.1e-9 in PyTorch; ``softplus(x, beta=2,
    threshold=5)`` of 0.00124 was 2.2e-5 off relatively, measured with 2026.4.1); the decomposition is
    exact there (``nan_propagation``'s log1p)."""
    return not exact and float32_only(node)


def _reflect_or_replicate(node: torch.fx.Node, exact: bool) -> bool:
    """``F.pad`` in reflect or replicate mode on float32 (constant padding is a core op already), of a
    tensor without empty dimensions (OpenVINO's Pad refused a batch of 0)."""
    mode = node.kwargs.get("mode", node.args[2] if len(node.args) > 2 else "constant")
    source = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    return (mode in ("reflect", "replicate") and isinstance(source, torch.Tensor) and _sizes_positive(source)
            and float32_only(node))


# op -> condition(node, exact) on the node besides the partitioner's node check. Each was faster
# whole than decomposed in benchmarks/kept_ops.py (its table, with the CPU it ran on, is in
# docs/benchmarks.md); the other candidates there were not.
KEPT: dict = {
    aten.scaled_dot_product_attention.default: _float32_attention,
    aten.mish.default: _fast_float32,
    aten.softplus.default: _fast_float32,
    aten.pad.default: _reflect_or_replicate,
}


def kept_names() -> frozenset:
    """``aten.x.overload`` names of the kept operations."""
    return frozenset(str(op) for op in KEPT)


def ops_to_not_decompose(support, program) -> tuple[list, Callable[[torch.fx.Node], bool]]:
    """``(ops, filter)`` for ``Partitioner.ops_to_not_decompose`` of `program`: `support` is the
    partitioner's :class:`~executorch_openvino.lowering.operator_support.OpenVINOOperatorSupport` for it."""

    conditions = {str(op): condition for op, condition in KEPT.items()}

    def keep(node: torch.fx.Node) -> bool:
        # Only the program's own graph: the partitioner delegates nothing inside control flow (torch.cond,
        # map), where ExecuTorch would apply the filter too and then fail "was not decomposed or delegated".
        if node.op != "call_function" or node.graph is not graph:
            return False
        condition = conditions.get(op_name(node.target))
        return (condition is not None and condition(node, support.exact) and _layouts_from_views(node)
                and support.supported_before_decomposition(node))

    graph = program.graph
    return list(KEPT), keep


def _layouts_from_views(node: torch.fx.Node) -> bool:
    """Each input is contiguous, or strided only by views and by elementwise operations on them, which
    the edge dialect makes contiguous (a view becomes a contiguous copy, ``view_copy``, ``permute_copy``...,
    and an elementwise result then follows its inputs); a layout an op chose
    (``x.contiguous(memory_format=torch.channels_last)``) stays, and the partitioner would refuse the kept
    node after decomposition. An LLM's query after rotary embedding is such a case: ``q * cos +
    rotate_half(q) * sin`` of a transposed view has the view's strides."""

    pending = list(node.all_input_nodes)
    while pending:
        source = pending.pop()
        value = source.meta.get("val")
        if source.op == "call_function" and (op_name(source.target) in VIEW_OPS or _elementwise(source)):
            pending.extend(source.all_input_nodes)
        elif isinstance(value, torch.Tensor) and not value.is_contiguous():
            return False
    return True


def _elementwise(node: torch.fx.Node) -> bool:
    """An ATen operation tagged pointwise, without a memory_format argument: its result's layout is its
    inputs' (torch's TensorIterator), so it chose none."""
    tags = getattr(node.target, "tags", ())
    return torch.Tag.pointwise in tags and "memory_format" not in node.kwargs
