"""Proven value ranges of a program's integer tensors.

OpenVINO computes int64 in int32 and integer comparisons, ``arange`` and
clamps through float32 (``operator_support``'s docstring has the
measurements), so with ``numerics="exact"`` such nodes stay on ExecuTorch's
kernels unless the values cannot be changed by it. This module proves bounds
where the program itself fixes them: positions from ``arange`` over sizes,
literals, bool masks, the values of constants, parameters and buffers the
program does not change (where their values are known: ExecuTorch hands the
partitioner fake state, which keeps the value of one-element tensors only), and what add, sub, mul,
views and casts make of those. A node whose tensors all lie within
``[-FLOAT32_EXACT, FLOAT32_EXACT]`` is computed exactly both ways (float32
holds every integer up to 2**24; int32 arithmetic cannot wrap there).
Values from the program's inputs are unknown.
"""

from __future__ import annotations

import operator

import torch

from .ops import op_name

FLOAT32_EXACT = 2**24  # float32's 24-bit significand: every integer of at most this magnitude is exact

Range = tuple  # (low, high), inclusive

# Ops whose integer result holds values of the listed arguments only (indices
# and conditions excluded).
_VALUES_OF_FIRST = frozenset({
    "aten.alias_copy.default", "aten.clone.default", "aten.lift_fresh_copy.default",
    "aten.view.default", "aten.view_copy.default", "aten._unsafe_view.default", "aten.reshape.default",
    "aten.permute.default", "aten.permute_copy.default", "aten.transpose.int", "aten.transpose_copy.int",
    "aten.t.default", "aten.t_copy.default", "aten.expand.default", "aten.expand_copy.default",
    "aten.repeat.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze_copy.dim",
    "aten.squeeze_copy.dims", "aten.squeeze_copy.default", "aten.unsqueeze.default", "aten.unsqueeze_copy.default",
    "aten.slice.Tensor", "aten.slice_copy.Tensor", "aten.select.int", "aten.select_copy.int",
    "aten.flip.default", "aten.roll.default", "aten.index.Tensor", "aten.index_select.default",
    "aten.gather.default", "aten._to_copy.default", "dim_order_ops._clone_dim_order.default",
    "dim_order_ops._to_dim_order_copy.default", "aten.split_with_sizes_copy.default", "aten.split_copy.Tensor",
    "aten.unbind_copy.int",
})
_BIT_SELECTIONS = frozenset({"aten.bitwise_and.Scalar", "aten.bitwise_right_shift.Tensor_Scalar"})
_ARANGES = frozenset({"aten.arange.default", "aten.arange.start", "aten.arange.start_step"})
_FILLS = {"aten.zeros.default": 0, "aten.zeros_like.default": 0, "aten.ones.default": 1, "aten.ones_like.default": 1}
_LITERALS = frozenset({"aten.full.default", "aten.full_like.default", "aten.scalar_tensor.default"})
_ARITHMETIC = frozenset({"aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar",
                         "aten.mul.Tensor", "aten.mul.Scalar", "aten.neg.default", "aten.abs.default",
                         "aten.minimum.default", "aten.maximum.default"})


def integer_ranges(program, assumed: dict | None = None) -> dict:
    """``{node name: (low, high)}`` for the nodes of ``program`` (an ``ExportedProgram``) whose values are
    integers (bool, int tensors, SymInts) proven to lie in ``[low, high]``; a node not listed is unknown.
    `assumed`: ``{user input name: (low, high)}``, ranges the user declared (compile spec ``input_ranges``),
    which the delegate checks on every call."""
    constants = {}
    signature = program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    named = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
             **signature.inputs_to_lifted_tensor_constants}
    for placeholder, name in named.items():
        value = program.constants.get(name, program.state_dict.get(name))
        if isinstance(value, torch._subclasses.FakeTensor):
            # While ExecuTorch partitions, state is fake; a fake one-element tensor keeps its value.
            value = value.constant
        if name not in mutated and isinstance(value, torch.Tensor):
            constants[placeholder] = value
    ranges: dict = {}
    # Sizes from 0 to their upper bound: ExecuTorch's edge program (like torch.export's shape environment)
    # assumes sizes 0 and 1 never occur ([2, 3] for a Dim given min=0), but its runtime takes them.
    from torch.utils._sympy.value_ranges import ValueRanges

    symbols = {symbol: ValueRanges(0, bounds.upper) for symbol, bounds in program.range_constraints.items()}
    user_inputs = set(signature.user_inputs)
    for node in program.graph.nodes:
        found = _range_of(node, ranges, constants, symbols)
        if node.op == "placeholder" and node.name in user_inputs and node.name in (assumed or {}):
            found = assumed[node.name]
        if found is not None:
            ranges[node.name] = (int(found[0]), int(found[1]))
    return ranges


def within(ranges: dict, node: torch.fx.Node, limit: int = FLOAT32_EXACT) -> bool:
    """The node's integer values are proven to lie in ``[-limit, limit]``."""
    found = ranges.get(node.name)
    return found is not None and -limit <= found[0] and found[1] <= limit


def _integer_value(value) -> bool:
    if isinstance(value, torch.SymInt):
        return True
    return isinstance(value, torch.Tensor) and not value.is_floating_point() and not value.is_complex()


def _bounds(argument, ranges, symbols=None) -> Range | None:
    """The range of an argument: a node's, an int's, a SymInt's (from `symbols`, the range of each size)."""
    if isinstance(argument, torch.fx.Node):
        return ranges.get(argument.name)
    if isinstance(argument, bool):
        return (int(argument), int(argument))
    if isinstance(argument, int):
        return (argument, argument)
    if isinstance(argument, torch.SymInt):
        from torch.utils._sympy.value_ranges import bound_sympy

        expr = argument.node.expr
        if symbols is None or not all(symbol in symbols for symbol in expr.free_symbols):
            return None
        try:
            found = bound_sympy(expr, {symbol: symbols[symbol] for symbol in expr.free_symbols})
            low, high = int(found.lower), int(found.upper)
        except (TypeError, ValueError, AttributeError, OverflowError):
            return None  # an infinite bound
        return (low, high)
    return None  # floats and anything else: not an integer range


def _range_of(node, ranges, constants, symbols) -> Range | None:  # noqa: C901
    value = node.meta.get("val")
    if node.op == "placeholder":
        if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
            return (0, 1)
        constant = constants.get(node.name)
        if constant is not None and _integer_value(constant) and constant.numel() > 0:
            return (constant.min().item(), constant.max().item())
        if isinstance(value, torch.Tensor) and value.dtype in (torch.uint8, torch.int8, torch.int16):
            info = torch.iinfo(value.dtype)  # packed weights, whose values are fake while partitioning
            return (info.min, info.max)
        return None
    if node.op != "call_function":
        return None
    if isinstance(value, torch.SymInt):
        return _bounds(value, ranges, symbols)
    if node.target is operator.getitem:
        return ranges.get(node.args[0].name) if isinstance(node.args[0], torch.fx.Node) else None
    values = [value] if isinstance(value, torch.Tensor) else list(value) if isinstance(value, (list, tuple)) else []
    if not values or not all(isinstance(v, torch.Tensor) and _integer_value(v) for v in values):
        return None
    if all(v.dtype == torch.bool for v in values):
        return (0, 1)
    name = op_name(node.target)
    if name in _FILLS:
        return (_FILLS[name], _FILLS[name])
    if name in _LITERALS:
        literal = node.args[1] if name != "aten.scalar_tensor.default" else node.args[0]
        return _fits(_bounds(literal, ranges, symbols), values[0].dtype)  # full_like(x, -1, dtype=uint8) is 255
    if name in _ARANGES:
        return _fits(_arange(node, name, ranges, symbols), values[0].dtype)
    if name == "aten.copy.default":  # copy(self, src): src's values in self's shape
        return _fits(_bounds(node.args[1], ranges, symbols), values[0].dtype)
    if name in _VALUES_OF_FIRST:
        found = _bounds(node.args[0], ranges, symbols)
        return _fits(found, values[0].dtype)
    if name in ("aten.cat.default", "aten.stack.default"):
        return _fits(_union([_bounds(a, ranges, symbols) for a in node.args[0]]), values[0].dtype)
    if name == "aten.where.self":
        return _fits(_union([_bounds(a, ranges, symbols) for a in node.args[1:3]]), values[0].dtype)
    if name in _ARITHMETIC:
        return _fits(_arithmetic(node, name, ranges, symbols), values[0].dtype)
    if name in _BIT_SELECTIONS:
        return _fits(_bit_selection(node, name, ranges, symbols), values[0].dtype)
    return None


def _bit_selection(node, name, ranges, symbols) -> Range | None:
    """``x & mask`` and ``x >> shift`` of non-negative values (how 4-bit weights are unpacked)."""
    a, b = _bounds(node.args[0], ranges, symbols), _bounds(node.args[1], ranges, symbols)
    if a is None or b is None or a[0] < 0 or b[0] < 0:
        return None
    if name == "aten.bitwise_and.Scalar":
        return (0, min(a[1], b[1]))
    return (a[0] >> b[1], a[1] >> b[0]) if b[1] < 64 else None


def _arange(node, name, ranges, symbols) -> Range | None:
    args = list(node.args)
    if name == "aten.arange.default":
        args = [0, *args[:1]]
    start, end = _bounds(args[0], ranges, symbols), _bounds(args[1], ranges, symbols)
    step = _bounds(args[2], ranges, symbols) if len(args) > 2 else (1, 1)
    if start is None or end is None or step is None or step[0] != step[1] or step[0] == 0:
        return None
    if step[0] > 0:
        return (start[0], max(start[0], end[1] - 1))
    return (min(start[1], end[0] + 1), start[1])


def _union(found: list) -> Range | None:
    if not found or any(f is None for f in found):
        return None
    return (min(f[0] for f in found), max(f[1] for f in found))


def _arithmetic(node, name, ranges, symbols) -> Range | None:
    a = _bounds(node.args[0], ranges, symbols)
    if name in ("aten.neg.default", "aten.abs.default"):
        if a is None:
            return None
        if name == "aten.neg.default":
            return (-a[1], -a[0])
        return (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])), max(abs(a[0]), abs(a[1])))
    b = _bounds(node.args[1], ranges, symbols) if len(node.args) > 1 else None
    if a is None or b is None:
        return None
    alpha = node.kwargs.get("alpha", 1)
    if name.startswith("aten.add") or name.startswith("aten.sub"):
        if not isinstance(alpha, int) or isinstance(alpha, bool):
            return None
        scaled = sorted((b[0] * alpha, b[1] * alpha))
        if name.startswith("aten.sub"):
            scaled = [-scaled[1], -scaled[0]]
        return (a[0] + scaled[0], a[1] + scaled[1])
    if name.startswith("aten.mul"):
        products = [x * y for x in a for y in b]
        return (min(products), max(products))
    if name == "aten.minimum.default":
        return (min(a[0], b[0]), min(a[1], b[1]))
    return (max(a[0], b[0]), max(a[1], b[1]))


def _fits(found: Range | None, dtype) -> Range | None:
    """The range, unless the dtype could not hold it (PyTorch would wrap: the values are then unknown)."""
    if found is None:
        return None
    if dtype == torch.bool:
        return (0, 1)
    info = torch.iinfo(dtype)
    return found if info.min <= found[0] and found[1] <= info.max else None
