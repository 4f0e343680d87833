"""Integer-to-bool casts as ``x != 0``, which OpenVINO computes right for every int32 and int64 value.

OpenVINO's ``Convert`` to boolean gives False for -2**31 (PyTorch: True); its
``NotEqual`` with 0 is right for every value (measured, 2025.4.1 and 2026.4.1,
i32 and i64 inputs: -2**31, -2**31 + 1, ±2**24 + 1, 2**31 - 1, tests/lowering/test_integer_ranges.py).
"""

from __future__ import annotations

import torch

from ..ops import CASTS, op_name


def _is_integer_to_bool(node: torch.fx.Node) -> bool:
    if node.op != "call_function" or op_name(node.target) not in CASTS or not node.args:
        return False
    source, result = node.args[0], node.meta.get("val")
    source = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
    return (isinstance(source, torch.Tensor) and isinstance(result, torch.Tensor) and result.dtype == torch.bool
            and source.dtype not in (torch.bool,) and not source.is_floating_point() and not source.is_complex())


def compare_instead_of_casting(program) -> None:
    """Rewrites each integer-to-bool cast of the partition ``program`` (an edge ``ExportedProgram``) as
    ``aten.ne.Scalar(x, 0)``, in place."""
    graph = program.graph
    for node in list(graph.nodes):
        if not _is_integer_to_bool(node):
            continue
        with graph.inserting_after(node):
            compared = graph.call_function(torch.ops.aten.ne.Scalar, (node.args[0], 0))
        compared.meta["val"] = node.meta["val"]
        node.replace_all_uses_with(compared)
        graph.erase_node(node)
    graph.lint()
    program.graph_module.recompile()
