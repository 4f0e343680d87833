"""The inputs of a loaded method: made safe to pass, and explained when refused.

ExecuTorch 1.5.1's ``Method.execute`` (a) copies a channels_last or otherwise
strided tensor into the method's contiguous input as raw memory, so the method
computes on scrambled values (measured: max abs error 5.4 on ``relu(x) * 2 + 1``
with ExecuTorch's own kernels, 4.8 delegated), (b) refuses an input of the
wrong dtype, rank or size with only an error code (``0x12``, ``0x10``), its
reason going to the log, and (c) refuses a value of another type (a numpy
array) with a ``RuntimeError`` ("Unsupported python type"). :func:`as_method_inputs`
fixes (a) and turns (c) into a ``TypeError`` naming the input and what to pass;
:func:`explain_refused_inputs` turns (b) into a message that names the input,
what the method takes and what to pass instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch

# ExecuTorch's ScalarType codes (runtime/core/portable_type/scalar_type.h,
# the same numbering as c10::ScalarType) as MethodMeta reports them.
SCALAR_TYPES = {
    0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64,
    5: torch.float16, 6: torch.float32, 7: torch.float64, 8: torch.complex32,
    9: torch.complex64, 10: torch.complex128, 11: torch.bool, 15: torch.bfloat16,
}


# What executorch 1.5.1's Method.execute takes besides tensors (for inputs exported as Python numbers).
_NUMBERS = (bool, int, float, type(None))


def as_method_inputs(inputs) -> list:
    """Returns ``inputs`` as a list with every tensor in the contiguous layout (``inputs`` itself when it is
    already such a list of plain tensors).

    A tensor that is already contiguous is passed as is (no copy); others
    (channels_last, transposed, sliced) are copied once, so the method sees the
    values eager PyTorch would. A lone tensor stands for ``[tensor]``, as
    ``executorch.runtime`` takes it.

    Raises ``TypeError`` naming the input for a value that is neither a tensor
    nor a Python number (a numpy array: pass ``torch.from_numpy(array)``), for a
    sparse tensor (pass ``x.to_dense()``), and for ``inputs`` that are a numpy
    array rather than a list.
    """
    if type(inputs) is list:  # the common case, nothing to change: 0.9 us less per call of a two-input method
        for x in inputs:
            if (type(x) is not torch.Tensor or x.layout is not torch.strided or not x.is_contiguous()
                    or not x.numel() or x.is_neg()):
                break
        else:
            return inputs
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
    elif _from_numpy(inputs):
        raise TypeError(f"the inputs are a numpy.{type(inputs).__name__}, not a list: the method takes a list of "
                        "torch.Tensor, e.g. [torch.from_numpy(array)]")
    inputs = list(inputs)
    for index, value in enumerate(inputs):
        if not isinstance(value, (torch.Tensor, *_NUMBERS)):
            raise TypeError(_not_an_input(index, value))
        if isinstance(value, torch.Tensor) and value.layout is not torch.strided:
            # torch's sparse layouts: "unsupported memory format option Contiguous" otherwise (found by a tester)
            raise TypeError(f"input {index} is a {value.layout} tensor: the method takes dense tensors; "
                            "pass x.to_dense()")
    return [contiguous(x) for x in inputs]


def _from_numpy(value) -> bool:
    return type(value).__module__ == "numpy"  # numpy itself is not imported for this


def _not_an_input(index: int, value) -> str:
    kind = f"numpy.{type(value).__name__}" if _from_numpy(value) else type(value).__name__
    if _from_numpy(value) and type(value).__name__ == "ndarray":
        fix = "pass torch.from_numpy(array) (no copy), or torch.tensor(array)"
    elif _from_numpy(value):
        fix = "pass torch.tensor(value) for a tensor input, or value.item() for an input exported as a number"
    elif isinstance(value, (list, tuple)):
        fix = "pass one flat list of the method's inputs, each a torch.Tensor (torch.tensor(values) for numbers)"
    else:
        fix = "pass a torch.Tensor (or an int, float or bool for an input exported as one)"
    return f"input {index} is a {kind}: the method takes torch.Tensor inputs; {fix}"


def contiguous(value):
    """``value`` in the contiguous layout when it is a tensor (no copy if it is already), else as is.

    A tensor subclass (``torch.nn.Parameter``) is passed as a plain tensor of the same memory, which
    executorch 1.5.1's pybindings take ("Unsupported python type" otherwise); a negated view as its values.
    An empty tensor counts as contiguous in PyTorch whatever its strides, and ExecuTorch 1.5.1's
    pybindings abort the process on such strides (``make_tensor_ptr``: "invalid strides", an empty
    slice ``x[:, :0]`` of a (2, 16) tensor, found by a tester): it is replaced by a fresh empty one.
    """
    if not isinstance(value, torch.Tensor):
        return value
    if type(value) is not torch.Tensor:  # a Parameter or another subclass: the pybindings take only Tensor
        value = value.as_subclass(torch.Tensor)
    if value.numel() == 0:
        return torch.empty(value.shape, dtype=value.dtype)
    # A negated view (torch's neg bit, e.g. torch._neg_view) keeps the unnegated values in memory, which
    # ExecuTorch would read as they are (found by a tester: x * 2 + 1 computed for -x): made real here.
    return value.resolve_neg().contiguous()


def _shape(sizes) -> str:
    return "(" + ", ".join(str(int(s)) for s in sizes) + ("," if len(sizes) == 1 else "") + ")"


# ExecuTorch 1.5.1's line when a number input differs from the value the method was exported with (first the
# exported value, then the given one).
_FIXED_NUMBER = re.compile(r"^\[method\.cpp:\d+\] The (\d+)-th input of method should have the same value as the "
                           r"input_evalue, but got (\S+) and (\S+)$", re.MULTILINE)


def explain_fixed_number(method_name: str, logged: str) -> str | None:
    """Names the number input whose value differs from the exported one, from the lines ExecuTorch ``logged``
    while it refused the inputs (``None`` when they say nothing of it). ExecuTorch keeps a number input
    (an ``int``, ``float`` or ``bool`` argument) at its exported value: a tester's ``x * k`` exported with
    ``k=2`` refused ``k=3``, and the shape check below would blame a valid dynamic tensor instead."""
    found = _FIXED_NUMBER.search(logged)
    if found is None:
        return None
    index, exported, given = found.groups()
    return (f"input {index} of method '{method_name}' is {given}, the method was exported with {exported}: "
            f"ExecuTorch keeps a number input at its exported value; pass {exported}, or pass a tensor for values "
            "that change (torch.tensor(value)) when exporting")


def explain_refused_inputs(meta, inputs: Sequence) -> str | None:
    """Names an input that ``meta`` (an ExecuTorch ``MethodMeta``) does not take.

    Checks the count, then every input's kind, dtype and rank, then sizes:
    first a size above the recorded one, then one below it. ``meta`` records
    a dynamic dimension by its upper bound, so a smaller size may be valid:
    it is named only when nothing else explains the refusal (a tester found
    a valid smaller dynamic input 0 blamed for input 1's wrong dtype). Call
    this only once ExecuTorch has refused the inputs. Returns ``None`` when
    every input fits, so the caller keeps ExecuTorch's own error.
    """
    name = meta.name()
    count = meta.num_inputs()
    if len(inputs) != count:
        return (f"method '{name}' takes {count} input{'s' if count != 1 else ''}, "
                f"{len(inputs)} {'were' if len(inputs) != 1 else 'was'} given; pass exactly {count}, in one list")
    tensors = []  # (index, value, expected sizes) of tensor inputs whose kind, dtype and rank fit
    for i, value in enumerate(inputs):
        try:
            info = meta.input_tensor_meta(i)
        except (RuntimeError, IndexError):  # not a tensor input (an int or other value)
            problem = _number_kind_problem(meta, name, i, value)
            if problem:
                return problem
            continue
        code = int(info.dtype())
        expected_dtype = SCALAR_TYPES.get(code, f"ExecuTorch ScalarType {code}")
        expected = tuple(info.sizes())
        if not isinstance(value, torch.Tensor):
            return (f"input {i} of method '{name}' is of type {type(value).__name__}, the method takes a "
                    f"{expected_dtype} tensor of shape {_shape(expected)}")
        if value.dtype != expected_dtype:
            fix = ("complex values have no OpenVINO type: export the model for torch.view_as_real(x)"
                   if value.is_complex() else f"pass x.to({expected_dtype}) for it")
            return (f"input {i} of method '{name}' has dtype {value.dtype}, the method was exported for "
                    f"{expected_dtype}; {fix}")
        if value.dim() != len(expected):
            return (f"input {i} of method '{name}' has {value.dim()} dimension{'s' if value.dim() != 1 else ''} "
                    f"(shape {_shape(value.shape)}), the method was exported for {len(expected)} "
                    f"(shape {_shape(expected)})")
        tensors.append((i, value, expected))
    for too_large in (True, False):
        for i, value, expected in tensors:
            if any((got > want) if too_large else (got < want) for got, want in zip(value.shape, expected)):
                return (f"input {i} of method '{name}' has shape {_shape(value.shape)}, the method was exported "
                        f"for {_shape(expected)} (for dimensions exported as dynamic: their upper bounds); pass "
                        f"that shape, or export with dynamic_shapes that cover this one")
    return None


# ExecuTorch's tags of number inputs (MethodMetadata.input_tag) and the Python type each takes.
_NUMBER_TAGS = {"Int": int, "Double": float, "Bool": bool}


def _number_kind_problem(meta, name: str, index: int, value) -> str | None:
    """Names a number input given a value of another kind (a float where the method was exported with an
    int: ExecuTorch refuses it with error 0x12 only), or None. Needs ``meta.input_tag`` (this package's
    :class:`~.method_metadata.MethodMetadata`; ExecuTorch's ``MethodMeta`` has none)."""
    tag = getattr(meta, "input_tag", None)
    wanted = _NUMBER_TAGS.get(tag(index)) if tag is not None else None
    if wanted is None or type(value) is wanted:  # ExecuTorch takes no int for a float, nor a bool for an int
        return None

    def kind(t: type) -> str:
        return ("an " if t.__name__[0] in "aeiou" else "a ") + t.__name__

    return (f"input {index} of method '{name}' is {kind(type(value))} ({value!r}), the method was exported with "
            f"{kind(wanted)} there: pass {wanted.__name__}(value)")
