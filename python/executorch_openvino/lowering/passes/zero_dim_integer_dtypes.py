"""Keeps PyTorch's dtype for ``tensor_0d <op> python_int`` through ExecuTorch's edge lowering.

ExecuTorch 1.5.1's ``to_edge`` turns the Python int into a 0-d int64 tensor;
two 0-d tensors then promote to int64, so ``x * 2`` of a 0-d int32 ``x``
returns int64 where eager PyTorch returns int32 (measured with and without
any delegate). Computing on a (1,) view of ``x`` gives eager's dtype: a
dimensioned tensor keeps its dtype against a 0-d one of the same category.
"""

from __future__ import annotations

import torch

# Binary ops whose result dtype follows type promotion with a "wrapped number".
_ARITHMETIC = {
    torch.ops.aten.add.Tensor, torch.ops.aten.sub.Tensor, torch.ops.aten.mul.Tensor, torch.ops.aten.rsub.Scalar,
    torch.ops.aten.add.Scalar, torch.ops.aten.sub.Scalar, torch.ops.aten.mul.Scalar,
    torch.ops.aten.remainder.Scalar, torch.ops.aten.bitwise_and.Scalar, torch.ops.aten.bitwise_or.Scalar,
    torch.ops.aten.bitwise_xor.Scalar, torch.ops.aten.floor_divide.default, torch.ops.aten.div.Tensor_mode,
}
_INTEGERS = {torch.uint8, torch.int8, torch.int16, torch.int32}


def _is_zero_dim_integer(node) -> bool:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(value, torch.Tensor) and value.dim() == 0 and value.dtype in _INTEGERS


def keep_zero_dim_integer_dtypes(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """Rewrites ``op(x_0d_int, int)`` as ``op(x.view(1), int).view(())`` in place; returns `program`."""
    graph = program.graph
    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _ARITHMETIC or len(node.args) < 2:
            continue
        tensor, scalar = node.args[0], node.args[1]
        if not (_is_zero_dim_integer(tensor) and isinstance(scalar, int) and not isinstance(scalar, bool)):
            continue
        fake_mode = node.meta["val"].fake_mode
        with graph.inserting_before(node):
            widened = graph.call_function(torch.ops.aten.view.default, (tensor, [1]))
        with fake_mode:
            widened.meta["val"] = tensor.meta["val"].view(1)
            node.args = (widened, *node.args[1:])
            node.meta["val"] = node.target(widened.meta["val"], *node.args[1:], **node.kwargs)
        with graph.inserting_after(node):
            narrowed = graph.call_function(torch.ops.aten.view.default, (node, []))
        node.replace_all_uses_with(narrowed, delete_user_cb=lambda user: user is not narrowed)
        with fake_mode:
            narrowed.meta["val"] = node.meta["val"].view(())
        changed = True
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return program
