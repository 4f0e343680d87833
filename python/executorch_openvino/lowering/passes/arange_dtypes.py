"""Gives each floating-point ``arange`` of a partition its dtype explicitly, so OpenVINO computes it in floats.

``torch.arange(0, 3, 0.5)`` is a float32 tensor (PyTorch infers the dtype from
all three numbers), but its edge node carries no ``dtype``, and OpenVINO
2026.4.1's PyTorch frontend then takes the type of ``start``: the delegate
returned ``[0, 0, 1, 1, 2, 2]`` for ``[0, 0.5, 1, 1.5, 2, 2.5]``, and
``arange(0, 1, 0.1)`` as zeros (tests/test_semantics.py). With ``dtype`` given,
the frontend converts the three numbers to that type first.
"""

from __future__ import annotations

import torch

from ..ops import op_name

_ARANGES = frozenset({"aten.arange.default", "aten.arange.start", "aten.arange.start_step"})


def state_float_arange_dtypes(program) -> int:
    """Sets ``dtype`` on each floating-point ``arange`` node of the partition ``program`` (an edge
    ``ExportedProgram``) that lacks one, in place; returns how many."""
    changed = 0
    for node in program.graph.nodes:
        value = node.meta.get("val")
        if (node.op == "call_function" and op_name(node.target) in _ARANGES and isinstance(value, torch.Tensor)
                and value.dtype.is_floating_point and node.kwargs.get("dtype") is None):
            node.kwargs = {**node.kwargs, "dtype": value.dtype}
            changed += 1
    if changed:
        program.graph_module.recompile()
    return changed
