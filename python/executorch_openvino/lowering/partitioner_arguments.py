"""How :class:`~executorch_openvino.lowering.partitioner.OpenVINOPartitioner` reads its arguments: its own
option keywords, the forms of executorch's own ``OpenvinoPartitioner``, and what it refuses, in its own words.

Each option keyword defaults to a :class:`NotGiven`, which shows as the default's value (``help()`` reads
``device='CPU'``) and tells a default apart from the same value given: next to compile specs every option
given is refused, ``device="CPU"`` too, since the list's value would silently win over it.
"""

from __future__ import annotations

import difflib
import numbers
import os
from collections.abc import Mapping
from typing import TypeVar, cast

import torch

from ..contract.compile_specs import allowed_values

T = TypeVar("T")

# OpenVINOPartitioner's positional parameters, in order. After a list of compile specs the second and third
# are executorch's op_types_to_skip and op_names_to_skip, as in its own OpenvinoPartitioner.
POSITIONAL = ("device", "inference_precision", "compile_specs", "numerics", "performance_hint")
# The option parameters, in the signature's order: compile_specs.json's keys a user gives but input_ranges (a
# parameter of its own); tests/lowering/test_compile_specs.py checks the two agree.
OPTIONS = ("device", "inference_precision", "numerics", "performance_hint", "weight_compression",
           "weight_group_size", "weight_ratio", "gguf_weights")


class NotGiven:
    """An option keyword's default: ``value`` applies; its ``repr`` is the value's."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def default(value: T) -> T:
    """An option keyword's default: a :class:`NotGiven` standing for ``value`` (typed as ``value``)."""
    return cast(T, NotGiven(value))


def given_value(value):
    """``value`` itself, or the default a :class:`NotGiven` stands for."""
    return value.value if isinstance(value, NotGiven) else value


def refuse_repeated(args: tuple, keywords: dict) -> None:
    """Raises ``TypeError`` for an option given both positionally and by keyword, where Python's own error
    ("got multiple values for argument") would not say what to do."""
    for index, (name, value) in enumerate(zip(POSITIONAL, args)):
        if name not in keywords:
            continue
        if isinstance(args[0], (list, tuple)):
            if name == "compile_specs":
                raise TypeError("compile specs were given twice (a list as the first argument and "
                                "compile_specs=): give them once")
            raise TypeError(compile_specs_and([name]))
        raise TypeError(f"OpenVINOPartitioner got {name} twice: {value!r} as argument {index + 1} and "
                        f"{name}={keywords[name]!r}; give it once, by position or by keyword")


def refuse_unknown(keywords: dict, known: list[str], name: str = "OpenVINOPartitioner") -> None:
    """Raises ``TypeError`` for a keyword OpenVINOPartitioner does not take, naming the closest one it does
    (``op_types_to_skp``: ``op_types_to_skip``) and all of them, where Python's own error names neither."""
    for keyword in keywords:
        if keyword not in known:
            close = difflib.get_close_matches(keyword, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{name} got an unknown keyword argument {keyword!r}{hint}; it takes "
                            f"{', '.join(known)}")


def compile_specs_and(names: list[str]) -> str:
    return (f"OpenVINOPartitioner got compile specs and {', '.join(names)}: give each option once, either as a "
            f"CompileSpec in the list (e.g. CompileSpec('numerics', b'fast')) or as a keyword without compile "
            f"specs")


def options_given(values: dict) -> list[str]:
    """The option keywords in ``values`` (name -> argument) that were given, in :data:`OPTIONS` order."""
    return [name for name in OPTIONS if name in values and not isinstance(values[name], NotGiven)]


def upstream_skip_sets(second, third, op_types_to_skip, op_names_to_skip) -> tuple:
    """``(op_types_to_skip, op_names_to_skip)`` after a list of compile specs: the second and third arguments
    (by position, or as inference_precision= and compile_specs=) are upstream's skip sets."""
    if isinstance(second, str):
        fix = (f"give a set: {{{second!r}}}" if "." in second else
               f"give a precision as CompileSpec('inference_precision', {second.encode()!r}) in the list"
               if second else "leave it out: the list's inference_precision applies")
        raise TypeError(f"after a list of compile specs the next argument is op_types_to_skip, a set of "
                        f"operator names, as in executorch's own OpenvinoPartitioner, and options go in the "
                        f"list; got the str {second!r} (as the second argument or inference_precision=): {fix}")
    second = None if isinstance(second, NotGiven) else second
    return given_once("op_types_to_skip", op_types_to_skip, second), given_once("op_names_to_skip",
                                                                               op_names_to_skip, third)


def check_option_types(options: dict, input_ranges) -> None:
    """Raises ``TypeError`` naming the option keyword whose value is not of its type, before anything uses it.
    `options`: the option keywords' arguments by name (:data:`OPTIONS`)."""
    for name in ("inference_precision", "numerics", "performance_hint", "weight_compression"):
        value = options[name]
        if not isinstance(given_value(value), str):
            listed = [repr(v) for v in allowed_values(name)]
            examples = ", ".join(listed[:-1]) + " or " + listed[-1]
            raise TypeError(f"{name} is a {type(value).__name__}: it is a str ({examples}); skip sets go by "
                            f"keyword, op_types_to_skip=..., or after a list of compile specs")
    group_size, ratio, gguf = (given_value(options[name]) for name in ("weight_group_size", "weight_ratio",
                                                                         "gguf_weights"))
    if not isinstance(group_size, numbers.Integral) or isinstance(group_size, bool):
        raise TypeError(f"weight_group_size is a {type(group_size).__name__} ({group_size!r}): give an int, "
                        "e.g. 128, or -1 for one group per row")
    if not isinstance(ratio, numbers.Real) or isinstance(ratio, bool):
        raise TypeError(f"weight_ratio is a {type(ratio).__name__} ({ratio!r}): give a number from 0 to 1")
    if not isinstance(gguf, (str, os.PathLike)) or isinstance(os.fspath(gguf), bytes):
        raise TypeError(f"gguf_weights is a {type(gguf).__name__} ({gguf!r}): give the .gguf file's path as a str")
    if input_ranges is not None and not isinstance(input_ranges, Mapping):
        raise TypeError(f"input_ranges is a {type(input_ranges).__name__}: give a dict of input name to "
                        "(low, high), e.g. {'input_ids': (0, 30521)}")


def given_once(what: str, keyword, positional):
    if keyword is not None and positional is not None:
        raise TypeError(f"{what} were given twice (two arguments of OpenVINOPartitioner name them): give them once")
    return positional if keyword is None else keyword


def skip_set(what: str, given) -> frozenset:
    """The skip set ``given`` (None: empty) as a frozenset of str; ``TypeError``/``ValueError`` naming the entry."""
    if given is None:
        return frozenset()
    if isinstance(given, (str, bytes)):
        raise TypeError(f"{what} is a {type(given).__name__} {given!r}: give a set of names, e.g. {{{given!r}}}")
    given = list(given)
    if any(type(n).__name__ == "CompileSpec" for n in given):
        raise TypeError(f"{what} holds CompileSpec objects: compile specs were given twice; give them once, "
                        f"first")
    wrong = [n for n in given if not isinstance(n, str)]
    if wrong:
        raise TypeError(f"{what} holds a {type(wrong[0]).__name__} {wrong[0]!r}: its entries are names (str)")
    unknown = [n for n in given if what == "op_types_to_skip" and not _is_operator(n)]
    if unknown:
        raise ValueError(f"op_types_to_skip names {unknown[0]!r}, which is no operator overload: names are "
                         f"namespace.operator.overload, e.g. 'aten.relu.default' or 'aten.add.Tensor'")
    return frozenset(given)


def _is_operator(name: str) -> bool:
    parts = name.split(".")
    if len(parts) != 3:
        return False
    try:
        return isinstance(getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2]), torch._ops.OpOverload)
    except (AttributeError, RuntimeError):
        return False


def checked_specs(specs) -> list:
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    specs = list(specs)
    for spec in specs:
        if not isinstance(spec, CompileSpec):
            raise TypeError(f"compile specs must be executorch CompileSpec objects, e.g. CompileSpec('device', "
                            f"b'CPU'); got a {type(spec).__name__}: {spec!r}")
    return specs
