"""A view's ``-1`` written as the static size it stands for.

OpenVINO's converter turned the ``-1`` of ``view_copy(x, [1, -1, n, 16])`` (n dynamic) into 1 in a Llama
whose KV cache length equalled its head size (16 and 16), after the attention it follows was kept whole,
so every call failed ("the shape of input data (1.4.3.16) conflicts with the reshape pattern (1.1.3.16)",
OpenVINO 2026.4.1; a tester's finding; with a length of 17 the same graph ran). Where the program's own
value gives the size the ``-1`` stands for as a number, that number is written instead: the same view.
"""

from __future__ import annotations

import torch

from ..ops import op_name


def write_static_view_sizes(program: torch.export.ExportedProgram) -> int:
    """Rewrites `program` (an edge partition) in place; returns how many views changed."""
    changed = 0
    for node in program.graph.nodes:
        if node.op != "call_function" or op_name(node.target) not in ("aten.view_copy.default", "aten.view.default"):
            continue
        sizes, value = node.args[1], node.meta.get("val")
        if not isinstance(value, torch.Tensor) or not isinstance(sizes, (list, tuple)) or -1 not in sizes:
            continue
        position = list(sizes).index(-1)
        if position >= value.dim() or not isinstance(value.shape[position], int):
            continue
        node.args = (node.args[0], [*sizes[:position], value.shape[position], *sizes[position + 1:]], *node.args[2:])
        changed += 1
    if changed:
        program.graph_module.recompile()
    return changed
