"""The inputs a built program takes: recorded from ``torch.export`` at build, checked at every call.

:func:`record_inputs` turns an ``ExportedProgram`` and the module's
``forward`` signature into plain JSON-ready data (it goes into checkpoints);
:func:`arrange_inputs` checks a call's ``*args, **kwargs`` against it and
returns the flat list ExecuTorch's ``Method.execute`` takes, or raises an error
naming the argument, what the program takes and what to do.
"""

from __future__ import annotations

import inspect
import math
import numbers

import sympy
import torch
from torch.utils import _pytree as pytree

_JSON_SCALARS = (type(None), bool, int, float, str)
_NO_DEFAULT = object()


def record_inputs(exported, forward) -> dict:
    """What ``exported`` (a ``torch.export.ExportedProgram`` of ``forward``) takes, as JSON-ready data.

    Keys: ``parameters`` (``forward``'s: name, kind, ``default`` when it is a
    plain scalar, ``has_default``), ``positional`` and ``keywords`` (the
    arguments export saw, by position and by name), ``structure`` (the input
    pytree spec, ``torch.utils._pytree.treespec_dumps``), ``symbols`` (each
    dynamic size's ``[min, max]``, ``max`` ``None`` when unbounded) and
    ``leaves``: per flat input, ``{"name", "kind": "tensor", "dtype",
    "shape"}`` with each dimension an int, ``{"symbol"}`` or, for a derived
    one, ``{"expression"}`` (``"2*s0"``); or ``{"name", "kind": "constant",
    "value"}`` for a non-tensor argument, which export made a constant.

    Raises ``ValueError`` when the input structure cannot be written (a
    dataclass or namedtuple registered without a serialised type name).
    """
    in_spec = exported.call_spec.in_spec
    args_spec, kwargs_spec = in_spec.children()
    parameters = []
    for parameter in inspect.signature(forward).parameters.values():
        entry = {"name": parameter.name, "kind": parameter.kind.name,
                 "has_default": parameter.default is not inspect.Parameter.empty}
        if entry["has_default"] and isinstance(parameter.default, _JSON_SCALARS):
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
    leaves, symbols = [], {}
    for name, user_input in zip(names, user_inputs):
        node = nodes.get(user_input) if isinstance(user_input, str) else None
        value = node.meta.get("val") if node is not None else user_input
        if isinstance(value, torch.Tensor):
            shape = [_dimension(size, exported.range_constraints, symbols) for size in value.shape]
            leaves.append({"name": name, "kind": "tensor", "dtype": str(value.dtype).removeprefix("torch."),
                           "shape": shape})
        elif isinstance(value, _JSON_SCALARS):
            leaves.append({"name": name, "kind": "constant", "value": value})
        else:
            raise TypeError(f"argument {name!r} is a {type(value).__name__}; OpenVINOBackend takes tensors and "
                            "int, float, bool, str or None arguments")
    unbounded = sorted(symbol for symbol, (_, high) in symbols.items() if high is None)
    if unbounded:
        users = [leaf["name"] for leaf in leaves if leaf["kind"] == "tensor"
                 and any(isinstance(d, dict) and set(unbounded) & set(_symbols_of(d)) for d in leaf["shape"])]
        raise ValueError(f"the dynamic size {', '.join(unbounded)} of {', '.join(map(repr, users))} has no upper "
                         "bound; ExecuTorch plans memory for the largest size and, without a bound, takes the "
                         "example's, so larger inputs would be refused: give torch.export.Dim(name, max=...)")
    return {"parameters": parameters, "positional": positional, "keywords": keywords,
            "structure": dumps_structure(in_spec, "input"), "symbols": symbols, "leaves": leaves}


def _symbols_of(dimension: dict) -> list:
    if "symbol" in dimension:
        return [dimension["symbol"]]
    return [str(s) for s in sympy.sympify(dimension["expression"]).free_symbols]


_KINDS = {"POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD"}


def check_recorded_inputs(spec) -> None:
    """Raises ``ValueError`` naming what is malformed in a :func:`record_inputs` result read from a checkpoint."""
    def fail(what):
        raise ValueError(f"the checkpoint's input specification is malformed ({what}); write it again with to_dict()")

    if not isinstance(spec, dict):
        fail("not a dict")
    for key, kind in (("parameters", list), ("positional", list), ("keywords", list), ("structure", str),
                      ("leaves", list), ("symbols", dict)):
        if not isinstance(spec.get(key), kind):
            fail(f"{key!r} is not a {kind.__name__}")
    for p in spec["parameters"]:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or p.get("kind") not in _KINDS:
            fail(f"parameter {p!r}")
    for leaf in spec["leaves"]:
        if not isinstance(leaf, dict) or not isinstance(leaf.get("name"), str):
            fail(f"leaf {leaf!r}")
        if leaf.get("kind") == "tensor":
            if not isinstance(leaf.get("dtype"), str) or not hasattr(torch, leaf["dtype"]) \
                    or not isinstance(leaf.get("shape"), list):
                fail(f"leaf {leaf['name']!r}")
            for d in leaf["shape"]:
                if not (isinstance(d, int) or (isinstance(d, dict) and (d.get("symbol") in spec["symbols"]
                                                                         or isinstance(d.get("expression"), str)))):
                    fail(f"dimension {d!r} of leaf {leaf['name']!r}")
        elif leaf.get("kind") != "constant":
            fail(f"leaf {leaf['name']!r} of kind {leaf.get('kind')!r}")


def dumps_structure(spec, what: str) -> str:
    """``treespec_dumps(spec)``, or ``ValueError`` saying how to make a custom type writable."""
    try:
        return pytree.treespec_dumps(spec)
    except Exception as exc:  # NotImplementedError for a type without a serialised name
        raise ValueError(f"the module's {what} structure cannot be written to a checkpoint ({exc}). Register "
                         "dataclasses with torch.export.register_dataclass(cls, serialized_type_name="
                         "'package.module.Class'), or pass and return tuples, lists and dicts") from exc


def loads_structure(text: str, what: str):
    """``treespec_loads(text)``, or ``ValueError`` saying which registration this process lacks."""
    try:
        return pytree.treespec_loads(text)
    except Exception as exc:
        raise ValueError(f"the checkpoint's {what}s use a type this process does not know ({exc}); import the "
                         "module that registers it with torch.export.register_dataclass first") from exc


def _leaf_names(in_spec, positional) -> list:
    """``x``, ``pair[0]``, ``config['scale']``: each flat input named by its argument and its path inside it."""
    indices = pytree.tree_unflatten(list(range(in_spec.num_leaves)), in_spec)
    names = []
    for path, _ in pytree.tree_flatten_with_path(indices)[0]:
        group, key, rest = path[0].idx, path[1], path[2:]
        argument = positional[key.idx] if group == 0 else key.key
        names.append(argument + pytree.keystr(rest))
    return names


def finite_bound(value):
    """An int, or None for an infinite bound (torch's int_oo reports itself finite)."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None


def _dimension(size, ranges, symbols: dict):
    if isinstance(size, int):
        return size
    expression = size.node.expr
    for symbol in expression.free_symbols:
        bounds = ranges.get(symbol)
        symbols[str(symbol)] = [finite_bound(bounds.lower) or 0 if bounds is not None else 0,
                                finite_bound(bounds.upper) if bounds is not None else None]
    if expression.is_Symbol:
        return {"symbol": str(expression)}
    # A derived size has its own range (s0 + 1: 2..6 where s0 is 1..5, although
    # torch raises the root's minimum to 2): that range is what the program takes.
    bounds = ranges.get(expression)
    return {"expression": str(expression), "min": finite_bound(bounds.lower) if bounds is not None else None,
            "max": finite_bound(bounds.upper) if bounds is not None else None}


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _describe(leaf, symbols: dict) -> str:
    dims = []
    for d in leaf["shape"]:
        if isinstance(d, int):
            dims.append(str(d))
        elif "symbol" in d:
            low, high = symbols[d["symbol"]]
            dims.append(f"{low}..{high if high is not None else 'inf'}")
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


def _in_build_order(value, spec):
    """``value`` with every dict's keys in the order ``spec`` (the build's) has them, when the key sets match:
    a dict's key order does not change what a Python function receives, but it changes its pytree."""
    if spec.is_leaf():
        return value
    if spec.type is dict and isinstance(value, dict) and set(value) == set(spec.context):
        return {k: _in_build_order(value[k], child) for k, child in zip(spec.context, spec.children())}
    if spec.type in (tuple, list) and type(value) is spec.type and len(value) == spec.num_children:
        return spec.type(_in_build_order(v, child) for v, child in zip(value, spec.children()))
    return value


def _bind(spec: dict, args: tuple, kwargs: dict) -> dict:
    """Binds a call's arguments to the recorded ``forward`` parameters, as Python would; returns name -> value
    for the arguments the program takes (``positional`` + ``keywords``)."""
    positional, keywords = spec["positional"], spec["keywords"]
    taken = positional + [k for k in keywords if k not in positional]
    parameters = {p["name"]: p for p in spec["parameters"]}
    variadic = any(p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD") for p in spec["parameters"])
    if variadic:  # forward(*args, **kwargs): by position as export saw them, then by name
        if len(args) > len(positional):
            raise TypeError(f"the program takes {len(positional)} positional arguments, {len(args)} were given")
        values = dict(zip(positional, args))
    else:
        signature = inspect.Signature([
            inspect.Parameter(p["name"], getattr(inspect.Parameter, p["kind"]),
                              default=p.get("default", _NO_DEFAULT) if p.get("has_default", "default" in p)
                              else inspect.Parameter.empty)
            for p in spec["parameters"]])
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            by_position = [p["name"] for p in spec["parameters"]
                           if p["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
            if len(args) > len(by_position):
                raise TypeError(f"the program takes at most {len(by_position)} positional arguments "
                                f"({', '.join(by_position)}), {len(args)} were given") from None
            raise TypeError(f"{exc}; the program takes {', '.join(taken)}") from None
        values = dict(bound.arguments)
        kwargs = {}
    for name, value in kwargs.items():
        if name in values:
            raise TypeError(f"argument {name!r} was given twice, by position and by name")
        values[name] = value
    for name in list(values):
        if name in taken:
            continue
        default = parameters.get(name, {}).get("default", _NO_DEFAULT)
        if name not in parameters:
            raise TypeError(f"unknown argument {name!r}; the program takes {', '.join(taken)}")
        if not _same_constant(values[name], default):
            raise TypeError(f"argument {name!r} was not given when the program was built, so the program uses "
                            f"forward's default for it ({default!r}); build again passing {name!r} to change it"
                            if default is not _NO_DEFAULT else
                            f"argument {name!r} was not given when the program was built; build again passing it")
        del values[name]  # what the program was built with
    for name in taken:
        if name not in values:
            default = parameters.get(name, {}).get("default", _NO_DEFAULT)
            if default is _NO_DEFAULT:
                raise TypeError(f"missing argument {name!r}; the program takes {', '.join(taken)}")
            values[name] = default
    return values


def _same_constant(value, built) -> bool:
    """Equal as export would treat them: NaN equals NaN, NumPy's and Python's numbers of one kind agree,
    and a bool is never an int."""
    if built is _NO_DEFAULT:
        return False
    # NumPy's bool (numpy.bool_, named numpy.bool in NumPy 2), without importing NumPy.
    is_bool = isinstance(value, bool) or (type(value).__module__ == "numpy"
                                          and getattr(value, "dtype", None) is not None
                                          and value.dtype.kind == "b")
    if isinstance(built, bool):
        return is_bool and bool(value) == built
    if is_bool:
        return False
    if isinstance(built, int):
        return isinstance(value, numbers.Integral) and int(value) == built
    if isinstance(built, float):
        return isinstance(value, numbers.Real) and (float(value) == built or (math.isnan(value) and math.isnan(built)))
    return type(value) is type(built) and value == built


def arrange_inputs(spec: dict, args: tuple, kwargs: dict, structure=None, originals: list | None = None) -> list:
    """The flat input list for ExecuTorch, from a call's ``args``/``kwargs`` checked against ``spec``.

    Arguments bind as in a Python call of the module's ``forward``
    (positionally or by name; a default recorded at build fills an argument
    left out); dicts may list their keys in any order. Tensors in any memory
    layout are passed contiguous. ``structure``: ``spec["structure"]`` already
    parsed (it is parsed here otherwise). ``originals``, when given, receives
    the flat inputs as passed (before the contiguous copies).

    Raises ``TypeError`` for too many, missing, unknown or repeated arguments
    and for a non-tensor where a tensor belongs, and ``ValueError`` for a
    different structure (tuple length, dict keys), dtype, rank, static size, a
    dynamic size outside its range or inconsistent with another of the same
    symbol (``s0`` and ``2*s0`` included), or a constant argument with another
    value than at build. Each names the argument (``pair[0]``) and what the
    program takes.
    """
    positional, keywords = spec["positional"], spec["keywords"]
    values = _bind(spec, args, kwargs)
    structure = structure if structure is not None else loads_structure(spec["structure"], "input")
    call = (tuple(values[n] for n in positional), {k: values[k] for k in keywords})
    leaves, given = pytree.tree_flatten(_in_build_order(call, structure))
    if given != structure:
        for name, expected in zip(positional + keywords,
                                  structure.child(0).children() + structure.child(1).children()):
            difference = _first_difference(pytree.tree_flatten(values[name])[1], expected, name)
            if difference:
                raise ValueError(f"{difference}; pass the same nesting (tuple and list lengths, dict keys) as at build")
        raise ValueError("the arguments' nesting differs from the build's; pass them as at build")

    if originals is not None:
        originals.extend(leaves)
    symbols = spec.get("symbols", {})
    bound = {}  # symbol -> (size, argument, dimension)
    derived = []
    flat = []
    for leaf, value in zip(spec["leaves"], leaves):
        name = leaf["name"]
        if leaf["kind"] == "constant":
            if not _same_constant(value, leaf["value"]):
                raise ValueError(f"argument {name!r} is {value!r} ({type(value).__name__}); the program was built "
                                 f"with {leaf['value']!r} ({type(leaf['value']).__name__}), and torch.export made "
                                 "it a constant: build again for another value")
            flat.append(leaf["value"])
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"argument {name!r} is a {type(value).__name__}; the program takes "
                            f"{_describe(leaf, symbols)}")
        if str(value.dtype).removeprefix("torch.") != leaf["dtype"]:
            raise ValueError(f"argument {name!r} has dtype {value.dtype}; the program takes "
                             f"{_describe(leaf, symbols)}: pass {name}.to(torch.{leaf['dtype']})")
        if value.dim() != len(leaf["shape"]):
            raise ValueError(f"argument {name!r} has {value.dim()} dimensions (shape {tuple(value.shape)}); "
                             f"the program takes {_describe(leaf, symbols)}")
        for axis, (size, expected) in enumerate(zip(value.shape, leaf["shape"])):
            if isinstance(expected, int):
                if size != expected:
                    raise ValueError(f"argument {name!r} has size {size} in dimension {axis} (shape "
                                     f"{tuple(value.shape)}); the program takes {_describe(leaf, symbols)}. Build "
                                     "with dynamic_shapes to make that dimension dynamic")
            elif "symbol" in expected:
                _bind_symbol(expected["symbol"], size, name, axis, symbols, bound)
            else:
                derived.append((expected["expression"], expected.get("min"), expected.get("max"), size, name, axis))
        flat.append(value.contiguous())
    _check_derived(derived, symbols, bound)
    return flat


def _bind_symbol(symbol: str, size: int, name: str, axis: int, symbols: dict, bound: dict,
                 expression: str | None = None, given: int | None = None) -> None:
    low, high = symbols.get(symbol, [0, None])
    if size < low or (high is not None and size > high):
        which = (f"size {given} in dimension {axis} ({expression} with {symbol} = {size})" if expression
                 else f"size {size} in dimension {axis}")
        upper = high if high is not None else "inf"
        raise ValueError(f"argument {name!r} has {which}, outside the dynamic range {low}..{upper}"
                         f"{f' of {symbol}' if expression else ''} it was built with")
    seen = bound.setdefault(symbol, (size, name, axis))
    if seen[0] != size:
        raise ValueError(f"argument {name!r} has size {size} in dimension {axis}, but {seen[1]!r} has {seen[0]} "
                         f"in dimension {seen[2]}: the program was built with these equal")


def _check_derived(derived: list, symbols: dict, bound: dict) -> None:
    """Derived sizes (``2*s0``, ``s0 + 1``): each must equal its expression of the sizes bound so far; a
    symbol seen only in derived sizes is solved for (an integer in its range, or the size is refused)."""
    for expression_text, low, high, size, name, axis in derived:
        expression = sympy.sympify(expression_text)
        if (low is not None and size < low) or (high is not None and size > high):
            raise ValueError(f"argument {name!r} has size {size} in dimension {axis}, outside the dynamic range "
                             f"{low}..{high if high is not None else 'inf'} of {expression_text} it was built with")
        unknown = [s for s in expression.free_symbols if str(s) not in bound]
        if len(unknown) == 1:
            solutions = [v for v in sympy.solve(sympy.Eq(expression, size), unknown[0]) if v.is_integer]
            if not solutions:
                raise ValueError(f"argument {name!r} has size {size} in dimension {axis}; the program was built "
                                 f"for sizes {expression_text} there, which no whole {unknown[0]} gives")
            if low is None:  # no range of its own: the symbol's
                _bind_symbol(str(unknown[0]), int(solutions[0]), name, axis, symbols, bound, expression_text, size)
            else:
                bound.setdefault(str(unknown[0]), (int(solutions[0]), name, axis))
        if all(str(s) in bound for s in expression.free_symbols):
            wanted = int(expression.subs({s: bound[str(s)][0] for s in expression.free_symbols}))
            if size != wanted:
                given = ", ".join(f"{s} = {bound[str(s)][0]} (from {bound[str(s)][1]!r})"
                                  for s in sorted(expression.free_symbols, key=str))
                raise ValueError(f"argument {name!r} has size {size} in dimension {axis}; the program was built "
                                 f"for {expression_text} there, which is {wanted} with {given}")
