"""Number bounds of a half-precision clamp, rounded to the input's dtype the way eager PyTorch rounds them.

Eager converts a clamp's number bounds to the tensor's dtype, to nearest: ``clamp(x, min=0.1)`` of a bfloat16
``x`` gives 0.10009765625. OpenVINO's conversion of a one-sided bfloat16 clamp gave 0.099609375 instead, one
bfloat16 step toward zero (found by a tester; 2026.4.1, ``clamp(min=0.1)``, ``clamp(max=2.7)``, both numerics
settings; tests/lowering/passes/test_clamp_bounds.py). A bound that the dtype holds exactly is the same in both.
"""

from __future__ import annotations

import torch

from ..ops import op_name

_HALF = (torch.bfloat16, torch.float16)
# operator: positions of its number bounds among the arguments, and their keyword names
_BOUNDS = {"aten.clamp.default": ((1, "min"), (2, "max")), "aten.clamp_min.default": ((1, "min"),),
           "aten.clamp_max.default": ((1, "max"),), "aten.hardtanh.default": ((1, "min_val"), (2, "max_val"))}


def _rounded(value, dtype):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value  # a tensor bound or None: nothing to round
    return torch.tensor(float(value), dtype=dtype).item()


def round_half_clamp_bounds(program: torch.export.ExportedProgram) -> None:
    """Rounds the number bounds of each bfloat16 or float16 clamp, clamp_min, clamp_max and hardtanh of the
    partition ``program`` (an edge ``ExportedProgram``) to the input's dtype, in place."""
    for node in program.graph.nodes:
        bounds = _BOUNDS.get(op_name(node.target)) if node.op == "call_function" else None
        source = node.args[0].meta.get("val") if bounds and isinstance(node.args[0], torch.fx.Node) else None
        if not (isinstance(source, torch.Tensor) and source.dtype in _HALF):
            continue
        args, kwargs = list(node.args), dict(node.kwargs)
        for position, keyword in bounds:
            if position < len(args):
                args[position] = _rounded(args[position], source.dtype)
            elif keyword in kwargs:
                kwargs[keyword] = _rounded(kwargs[keyword], source.dtype)
        node.args, node.kwargs = tuple(args), kwargs
    program.graph_module.recompile()
