"""Folds integer ``cumsum`` nodes that read only constants into constants, at lowering.

Position ids are often built as ``torch.ones_like(ids).cumsum(-1)``: with a
static shape that is a constant, yet it would run on every call (integer
cumsum stays on ExecuTorch's kernels, see operator_support.py). Each such
cumsum is evaluated once, with the program's real parameters, buffers and
constants, and replaced by a lifted constant; nothing else is folded. One
that reads only constants but cannot be evaluated is named in a warning.
"""

from __future__ import annotations

import warnings

import torch

_aten = torch.ops.aten
# Ops whose result depends only on the shape and dtype of their tensor argument.
_SHAPE_ONLY = {
    _aten.ones_like.default, _aten.zeros_like.default, _aten.full_like.default, _aten.empty_like.default,
    _aten.new_ones.default, _aten.new_zeros.default, _aten.new_full.default,
}
_INTEGERS = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}


class _NotConstant(Exception):
    pass


def _constant_tensors(program) -> dict:
    """Placeholder name -> real value, for the parameters, buffers and constants the program never changes."""
    signature = program.graph_signature
    named = {**program.state_dict, **program.constants}
    sources = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
               **signature.inputs_to_lifted_tensor_constants}
    changed = _changed_placeholders(program)
    return {placeholder: named[name] for placeholder, name in sources.items()
            if name in named and placeholder not in changed}


def _changed_placeholders(program) -> set:
    """Placeholders the program may write: mutated buffers (after functionalization), and before it, every
    placeholder a tensor written in place (``add_``, ``copy_``...) is computed from, views included.

    A cumsum of a buffer that ``forward`` later changes in place is not a constant (it was folded to the
    first call's value before this check)."""
    signature = program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    changed = {p for p, name in signature.inputs_to_buffers.items() if name in mutated}
    written = []
    for node in program.graph.nodes:
        schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
        if schema is None:
            continue
        for index, argument in enumerate(schema.arguments):
            if argument.alias_info is not None and argument.alias_info.is_write:
                value = node.args[index] if index < len(node.args) else node.kwargs.get(argument.name)
                written.extend(v for v in torch.utils._pytree.tree_leaves(value) if isinstance(v, torch.fx.Node))
    seen = set()
    while written:
        node = written.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.op == "placeholder":
            changed.add(node.name)
        written.extend(node.all_input_nodes)
    return changed


def _evaluate(node, constants: dict, cache: dict):
    """The real value of `node` when it depends only on constants and static shapes; else _NotConstant."""
    if not isinstance(node, torch.fx.Node):
        return node
    if node in cache:
        return cache[node]
    if node.op == "placeholder" and node.name in constants:
        value = constants[node.name]
    elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and not node.is_impure():
        args = list(node.args)
        if node.target in _SHAPE_ONLY and isinstance(args[0], torch.fx.Node):
            template = args[0].meta.get("val")
            if not isinstance(template, torch.Tensor) or not all(isinstance(d, int) for d in template.shape):
                raise _NotConstant(node)
            args[0] = torch.zeros(tuple(template.shape), dtype=template.dtype)
        args, kwargs = torch.utils._pytree.tree_map(lambda a: _evaluate(a, constants, cache), (args, node.kwargs))
        with torch.no_grad():
            value = node.target(*args, **kwargs)
    else:
        raise _NotConstant(node)
    cache[node] = value
    return value


def fold_constant_integer_cumsums(program: torch.export.ExportedProgram) -> list[str]:
    """Replaces each integer cumsum of constants by its value (in place); returns the folded node names."""
    from executorch.exir.passes.constant_prop_pass import (
        get_fake_mode, get_first_user_input, replace_with_constant_node)
    from torch.export.graph_signature import InputKind, InputSpec, TensorArgument

    cumsums = [n for n in program.graph.nodes if n.op == "call_function" and n.target == _aten.cumsum.default
               and isinstance(n.args[0], torch.fx.Node)
               and getattr(n.args[0].meta.get("val"), "dtype", None) in _INTEGERS]
    if not cumsums:
        return []
    constants, cache, folded = _constant_tensors(program), {}, []
    first_input = get_first_user_input(program)
    for node in cumsums:
        try:
            value = _evaluate(node, constants, cache)
        except _NotConstant:
            continue  # reads a run-time value: computed on every call, as it must be
        except Exception as exc:  # noqa: BLE001 - any failure to evaluate is reported, not fatal
            warnings.warn(f"the integer cumsum {node.name!r} reads only constants but could not be folded "
                          f"({type(exc).__name__}: {exc}); it is computed on every call", stacklevel=2)
            continue
        if first_input is None:
            break  # no user input to insert the constant before
        name = node.name
        placeholder, fqn = replace_with_constant_node(node, value.contiguous(), first_input,
                                                      get_fake_mode(program), program)
        program.graph_signature.input_specs.insert(
            [n.name for n in program.graph.nodes if n.op == "placeholder"].index(placeholder.name),
            InputSpec(kind=InputKind.CONSTANT_TENSOR, arg=TensorArgument(name=placeholder.name), target=fqn))
        folded.append(name)
    if folded:
        program.graph.eliminate_dead_code()
        program.graph_module.recompile()
    return folded
