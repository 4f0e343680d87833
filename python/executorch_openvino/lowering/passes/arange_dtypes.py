"""Writes each floating-point ``arange`` of a partition so that OpenVINO gives PyTorch's length and values.

``torch.arange(0, 3, 0.5)`` is a float32 tensor (PyTorch infers the dtype from
all three numbers), but its edge node carries no ``dtype``, and OpenVINO
2026.4.1's PyTorch frontend then takes the type of ``start``: the delegate
returned ``[0, 0, 1, 1, 2, 2]`` for ``[0, 0.5, 1, 1.5, 2, 2.5]``, and
``arange(0, 1, 0.1)`` as zeros. Given the dtype, OpenVINO computes the length
in float32, where PyTorch uses float64: ``arange(0, 0.3, 0.1)`` has 3 values in
PyTorch and came out with 4. So a float ``arange`` of a static length ``n`` is
written ``start + step * arange(n)``, the length taken from the program; one of
a symbolic length gets its ``dtype`` only. The values are computed in float32
(PyTorch: in float64, then rounded), so some are 1 ulp away (tests/numerics/test_semantics.py).
"""

from __future__ import annotations

import torch

from ..ops import add_call, op_name

_ARANGES = frozenset({"aten.arange.default", "aten.arange.start", "aten.arange.start_step"})


def _start_and_step(node: torch.fx.Node) -> tuple:
    args = list(node.args)
    if op_name(node.target) == "aten.arange.default":
        return 0, 1
    return args[0], (args[2] if len(args) > 2 else node.kwargs.get("step", 1))


def state_float_arange_dtypes(program) -> int:
    """Rewrites each floating-point ``arange`` node of the partition ``program`` (an edge
    ``ExportedProgram``) as the module's docstring says, in place; returns how many."""
    graph, changed = program.graph, 0
    for node in list(graph.nodes):
        value = node.meta.get("val")
        if not (node.op == "call_function" and op_name(node.target) in _ARANGES and isinstance(value, torch.Tensor)
                and value.dtype.is_floating_point):
            continue
        start, step = _start_and_step(node)
        length = value.shape[0]
        if not (isinstance(length, int) and all(isinstance(v, (int, float)) for v in (start, step))):
            if node.kwargs.get("dtype") is None:
                node.kwargs = {**node.kwargs, "dtype": value.dtype}
                changed += 1
            continue
        with graph.inserting_before(node):
            counted = graph.call_function(torch.ops.aten.arange.default, (length,), {"dtype": value.dtype})
            counted.meta["val"] = value
            result = counted
            if step != 1:
                result = add_call(graph, torch.ops.aten.mul.Scalar, result, step)
            if start != 0:
                result = add_call(graph, torch.ops.aten.add.Scalar, result, start)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed
