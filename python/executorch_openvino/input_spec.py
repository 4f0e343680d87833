"""The inputs a built program takes: recorded from ``torch.export`` at build, checked at every call.

:func:`record_inputs` turns an ``ExportedProgram`` and the module's
``forward`` signature into plain JSON-ready data (it goes into checkpoints);
:func:`arrange_inputs` checks a call's ``*args, **kwargs`` against it and
returns the flat list ExecuTorch's ``Method.execute`` takes, or raises an error
naming the argument, what the program takes and what to do.
"""

from __future__ import annotations

import inspect

import torch
from torch.utils import _pytree as pytree

_JSON_SCALARS = (type(None), bool, int, float, str)


def record_inputs(exported, forward) -> dict:
    """What ``exported`` (a ``torch.export.ExportedProgram`` of ``forward``) takes, as JSON-ready data.

    Keys: ``parameters`` (``forward``'s, with defaults that are plain
    scalars), ``positional`` and ``keywords`` (the arguments export saw,
    by position and by name), ``structure`` (the input pytree spec,
    ``torch.utils._pytree.treespec_dumps``) and ``leaves``: per flat input,
    ``{"name", "kind": "tensor", "dtype", "shape"}`` with each dimension an int
    or ``{"symbol", "min", "max"}`` (``max`` ``None`` when unbounded) or
    ``{"expression"}`` for a derived one; or ``{"name", "kind": "constant",
    "value"}`` for a non-tensor argument, which export made a constant.
    """
    in_spec = exported.call_spec.in_spec
    args_spec, kwargs_spec = in_spec.children()
    parameters = []
    for parameter in inspect.signature(forward).parameters.values():
        entry = {"name": parameter.name, "kind": parameter.kind.name}
        if parameter.default is not inspect.Parameter.empty and isinstance(parameter.default, _JSON_SCALARS):
            entry["default"] = parameter.default
        parameters.append(entry)
    positional_names = [p["name"] for p in parameters if p["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    n_args = args_spec.num_children
    positional = [positional_names[i] if i < len(positional_names) else f"args[{i}]" for i in range(n_args)]
    keywords = list(kwargs_spec.context or [])

    nodes = {node.name: node for node in exported.graph.nodes if node.op == "placeholder"}
    user_inputs = exported.graph_signature.user_inputs
    names = _leaf_names(in_spec, positional)
    if len(names) != len(user_inputs):
        raise RuntimeError(f"torch.export gave {len(user_inputs)} user inputs for {len(names)} input leaves; "
                           "please report this model")
    leaves = []
    for name, user_input in zip(names, user_inputs):
        node = nodes.get(user_input) if isinstance(user_input, str) else None
        value = node.meta.get("val") if node is not None else user_input
        if isinstance(value, torch.Tensor):
            leaves.append({"name": name, "kind": "tensor", "dtype": str(value.dtype).removeprefix("torch."),
                           "shape": [_dimension(size, exported.range_constraints) for size in value.shape]})
        elif isinstance(value, _JSON_SCALARS):
            leaves.append({"name": name, "kind": "constant", "value": value})
        else:
            raise TypeError(f"argument {name!r} is a {type(value).__name__}; OpenVINOBackend takes tensors and "
                            "int, float, bool, str or None arguments")
    return {"parameters": parameters, "positional": positional, "keywords": keywords,
            "structure": pytree.treespec_dumps(in_spec), "leaves": leaves}


def _leaf_names(in_spec, positional) -> list:
    """``x``, ``pair[0]``, ``config['scale']``: each flat input named by its argument and its path inside it."""
    indices = pytree.tree_unflatten(list(range(in_spec.num_leaves)), in_spec)
    names = []
    for path, _ in pytree.tree_flatten_with_path(indices)[0]:
        group, key, rest = path[0].idx, path[1], path[2:]
        argument = positional[key.idx] if group == 0 else key.key
        names.append(argument + pytree.keystr(rest))
    return names


def _dimension(size, ranges):
    if isinstance(size, int):
        return size
    expression = size.node.expr
    if expression.is_Symbol:
        bounds = ranges.get(expression)
        lower = int(bounds.lower) if bounds is not None else 0
        upper = bounds.upper if bounds is not None else None
        upper = int(upper) if upper is not None and upper.is_finite else None
        return {"symbol": str(expression), "min": lower, "max": upper}
    return {"expression": str(expression)}


def _describe(leaf) -> str:
    dims = []
    for d in leaf["shape"]:
        if isinstance(d, int):
            dims.append(str(d))
        elif "symbol" in d:
            dims.append(f"{d['min']}..{d['max'] if d['max'] is not None else 'inf'}")
        else:
            dims.append(d["expression"])
    return f"a {leaf['dtype']} tensor of shape ({', '.join(dims)}{',' if len(dims) == 1 else ''})"


def _kind(spec) -> str:
    if spec.is_leaf():
        return "a single value"
    if spec.type is dict:
        return f"a dict with keys {list(spec.context)}"
    return f"a {spec.type.__name__} of {spec.num_children}"


def _first_difference(actual, expected, path: str) -> str | None:
    """``"argument 'pair[1]' is a tuple of 1, the program was built for a single value"``, or None when equal."""
    if actual == expected:
        return None
    if (actual.is_leaf() or expected.is_leaf() or actual.type is not expected.type
            or actual.num_children != expected.num_children or actual.context != expected.context):
        return f"argument {path!r} is {_kind(actual)}, the program was built for {_kind(expected)}"
    keys = list(expected.context) if expected.type is dict else range(expected.num_children)
    for key, a, e in zip(keys, actual.children(), expected.children()):
        found = _first_difference(a, e, f"{path}[{key!r}]" if isinstance(key, str) else f"{path}[{key}]")
        if found:
            return found
    return f"argument {path!r} differs in structure from the build's ({_kind(expected)})"


def arrange_inputs(spec: dict, args: tuple, kwargs: dict) -> list:
    """The flat input list for ExecuTorch, from a call's ``args``/``kwargs`` checked against ``spec``.

    Arguments bind as in a Python call of the module's ``forward``
    (positionally or by name; a default recorded at build fills an argument
    left out). Tensors in any memory layout are passed contiguous.

    Raises ``TypeError`` for too many, missing, unknown or repeated arguments
    and for a non-tensor where a tensor belongs, and ``ValueError`` for a
    different structure (tuple length, dict keys), dtype, rank, static size, a
    dynamic size outside its range or unequal to another of the same
    dimension, or a constant argument with another value than at build. Each
    names the argument (``pair[0]``) and what the program takes.
    """
    positional, keywords = spec["positional"], spec["keywords"]
    taken = positional + [k for k in keywords if k not in positional]
    parameters = {p["name"]: p for p in spec["parameters"]}
    if len(args) > len(positional):
        raise TypeError(f"the program takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''}"
                        f" ({', '.join(positional) or 'none'}), {len(args)} were given")
    values = dict(zip(positional, args))
    for name, value in kwargs.items():
        if name in values:
            raise TypeError(f"argument {name!r} was given twice, by position and by name")
        if name not in taken:
            default = parameters.get(name, {}).get("default", inspect.Parameter.empty)
            if type(value) is type(default) and value == default:
                continue  # what the program was built with
            if name in parameters:
                raise TypeError(f"argument {name!r} was not given when the program was built, so the program uses "
                                f"forward's default for it ({default!r}); build again passing {name!r} to change it"
                                if default is not inspect.Parameter.empty else
                                f"argument {name!r} was not given when the program was built; build again passing it")
            raise TypeError(f"unknown argument {name!r}; the program takes {', '.join(taken)}")
        values[name] = value
    for name in taken:
        if name not in values:
            if "default" not in parameters.get(name, {}):
                raise TypeError(f"missing argument {name!r}; the program takes {', '.join(taken)}")
            values[name] = parameters[name]["default"]

    structure = pytree.treespec_loads(spec["structure"])
    leaves, given = pytree.tree_flatten((tuple(values[n] for n in positional), {k: values[k] for k in keywords}))
    if given != structure:
        for name, expected in zip(positional + keywords,
                                  structure.child(0).children() + structure.child(1).children()):
            difference = _first_difference(pytree.tree_flatten(values[name])[1], expected, name)
            if difference:
                raise ValueError(f"{difference}; pass the same nesting (tuple and list lengths, dict keys) as at build")
        raise ValueError("the arguments' nesting differs from the build's; pass them as at build")

    symbols = {}
    flat = []
    for leaf, value in zip(spec["leaves"], leaves):
        name = leaf["name"]
        if leaf["kind"] == "constant":
            if type(value) is not type(leaf["value"]) or value != leaf["value"]:
                raise ValueError(f"argument {name!r} is {value!r}; the program was built with {leaf['value']!r}, "
                                 "and torch.export made it a constant: build again for another value")
            flat.append(value)
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"argument {name!r} is a {type(value).__name__}; the program takes {_describe(leaf)}")
        if str(value.dtype).removeprefix("torch.") != leaf["dtype"]:
            raise ValueError(f"argument {name!r} has dtype {value.dtype}; the program takes {_describe(leaf)}: "
                             f"pass {name}.to(torch.{leaf['dtype']})")
        if value.dim() != len(leaf["shape"]):
            raise ValueError(f"argument {name!r} has {value.dim()} dimensions (shape {tuple(value.shape)}); "
                             f"the program takes {_describe(leaf)}")
        for axis, (size, expected) in enumerate(zip(value.shape, leaf["shape"])):
            if isinstance(expected, int):
                if size != expected:
                    raise ValueError(f"argument {name!r} has size {size} in dimension {axis} (shape "
                                     f"{tuple(value.shape)}); the program takes {_describe(leaf)}. Build with "
                                     "dynamic_shapes to make that dimension dynamic")
            elif "symbol" in expected:
                low, high = expected["min"], expected["max"]
                if size < low or (high is not None and size > high):
                    raise ValueError(f"argument {name!r} has size {size} in dimension {axis}, outside the dynamic "
                                     f"range {low}..{high if high is not None else 'inf'} it was built with")
                seen = symbols.setdefault(expected["symbol"], (size, name, axis))
                if seen[0] != size:
                    raise ValueError(f"argument {name!r} has size {size} in dimension {axis}, but {seen[1]!r} has "
                                     f"{seen[0]} in dimension {seen[2]}: the program was built with these equal")
        flat.append(value.contiguous())
    return flat
