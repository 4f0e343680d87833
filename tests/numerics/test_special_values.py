"""NaN, infinities, -0.0, overflow and 0/0 come out of delegated programs as eager PyTorch's (numerics="exact").

A grid of the float ops the partitioner delegates (elementwise, binary over every pair of special values,
reductions, normalisations, pools, sort) x special inputs, compared with eager PyTorch: NaN in the same
places, the same infinities, the sign of every zero where that op's sign is listed as exact, integers and
bools exactly with their dtype. Several ops share one lowered program (the suite runs three times in CI).

What OpenVINO computes differently is rewritten at lowering (nan_propagation.py) or kept on ExecuTorch's
kernels (operator_support.SPECIAL_VALUE_OPS); the controls at the end show that numerics="fast" keeps
OpenVINO's own answers, so the grid does exercise the rewrites. Left as documented (docs/user-guide/numerics.md):
subnormal results (OpenVINO flushes some to 0: erf(1e-40)), the sign of zero of sums, means, max/min of
+-0 and normalisations, and float16/bfloat16 arithmetic, which OpenVINO computes in float32.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import executorch_openvino as exov
from exov_testing.programs import run
from executorch_openvino.lowering.ops import op_name
from executorch_openvino.lowering.operator_support import openvino_supported_ops

NAN, INF = math.nan, math.inf
# Subnormal results may differ by up to the smallest normal float32 (documented).
ATOL = torch.finfo(torch.float32).tiny
RTOL = 1e-5

SPECIALS = torch.tensor([NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3e38, -3e38, 1e-40, -1e-40, 88.8, -104.0,
                         1e30, 2.0, -0.4, 1.5, 2.5, 1e-8, -1e-8])
# Every ordered pair of special values, for binary ops.
PAIRS = (SPECIALS.repeat_interleave(len(SPECIALS)), SPECIALS.repeat(len(SPECIALS)))
# Rows for reductions: a NaN among numbers, infinities of both signs, only -inf, only NaN, only -0.0,
# a sum that overflows, +-0 mixed, only +inf, everything at once, subnormals, plain numbers.
ROWS = torch.tensor([
    [1.0, NAN, 3.0, -2.0],
    [INF, 1.0, 2.0, 3.0],
    [-INF, -INF, -INF, -INF],
    [INF, -INF, 1.0, 2.0],
    [NAN, NAN, NAN, NAN],
    [-0.0, -0.0, -0.0, -0.0],
    [3e38, 3e38, 1.0, 1.0],
    [-0.0, 0.0, -0.0, 0.0],
    [INF, INF, INF, INF],
    [NAN, INF, -INF, 1.0],
    [1e-40, -1e-40, 0.0, 1e-40],
    [0.5, -1.5, 2.0, 0.25],
])

# name -> (fn, whether the sign of a zero result is compared[, absolute tolerance])
UNARY = {
    "abs": (torch.abs, True), "neg": (torch.neg, True), "exp": (torch.exp, True), "log": (torch.log, True),
    "log2": (torch.log2, True), "log10": (torch.log10, True), "log1p": (torch.log1p, True),
    "sqrt": (torch.sqrt, True), "rsqrt": (torch.rsqrt, True), "reciprocal": (torch.reciprocal, True),
    "sin": (torch.sin, True), "cos": (torch.cos, True), "tan": (torch.tan, True), "tanh": (torch.tanh, True),
    "sigmoid": (torch.sigmoid, True), "asin": (torch.asin, True), "acos": (torch.acos, True),
    "asinh": (torch.asinh, True), "acosh": (torch.acosh, True), "atanh": (torch.atanh, True),
    "sinh": (torch.sinh, True), "cosh": (torch.cosh, True), "erf": (torch.erf, True),
    "floor": (torch.floor, True), "ceil": (torch.ceil, True), "round": (torch.round, True),
    "sign": (torch.sign, True), "relu": (torch.relu, True), "relu6": (F.relu6, True),
    "hardtanh": (F.hardtanh, True), "hardtanh_swapped": (lambda x: torch.ops.aten.hardtanh.default(x, 2.0, 1.0), True),
    "clamp": (lambda x: torch.clamp(x, -1.0, 1.0), True), "clamp_min": (lambda x: torch.clamp(x, min=0.0), True),
    "clamp_max": (lambda x: torch.clamp(x, max=0.0), True), "clamp_int_bounds": (lambda x: torch.clamp(x, 0, 6), True),
    # OpenVINO's elu is alpha * (exp(x) - 1): off by ~6e-8 absolutely where PyTorch's expm1 is exact.
    "elu": (F.elu, True, 1.2e-7), "selu": (F.selu, True, 2.4e-7), "gelu": (F.gelu, True),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), True), "silu": (F.silu, True),
    "leaky_relu": (F.leaky_relu, True), "hardswish": (F.hardswish, True), "hardsigmoid": (F.hardsigmoid, True),
    "softplus": (F.softplus, True), "mish": (F.mish, True), "logsigmoid": (F.logsigmoid, False),
    "softsign": (F.softsign, True), "threshold": (lambda x: F.threshold(x, 0.5, -3.0), True),
    "square": (torch.square, True), "cube": (lambda x: x**3, True), "pow_half": (lambda x: x**0.5, True),
    "pow_minus_one": (lambda x: x**-1, True), "pow_zero": (lambda x: x**0, True),
    "two_to_the_x": (lambda x: 2**x, True), "isnan": (torch.isnan, True), "isinf": (torch.isinf, True),
    "isfinite": (torch.isfinite, True), "isposinf": (torch.isposinf, True), "logical_not": (torch.logical_not, True),
    "to_bool": (lambda x: x.to(torch.bool), True), "nan_to_num": (torch.nan_to_num, True),
    "times_two": (lambda x: x * 2, True), "plus_itself": (lambda x: x + x, True),
    "minus_itself": (lambda x: x - x, True), "times_zero": (lambda x: x * 0, True),
    "over_zero": (lambda x: x / 0, True), "over_itself": (lambda x: x / x, True),
    "over_three": (lambda x: x / 3, True), "times_minus_one": (lambda x: x * -1, True),
    "one_minus": (lambda x: 1 - x, True), "sinc": (torch.sinc, True),
    "greater_than_zero": (lambda x: x > 0, True), "at_least_one": (lambda x: x >= 1, True),
    "less_than_one": (lambda x: x < 1, True), "at_most_one": (lambda x: x <= 1, True),
    "equals_zero": (lambda x: x == 0, True), "not_itself": (lambda x: x != x, True),
    "where_positive": (lambda x: torch.where(x > 0, x, torch.zeros_like(x)), True),
    "masked_fill_inf": (lambda x: x.masked_fill(x > 1, -INF), True),
    "masked_fill_nan": (lambda x: x.masked_fill(x < 0, NAN), True),
    "plus_inf": (lambda x: x + INF, True), "any_row": (lambda x: torch.any(x.reshape(2, -1), 1), True),
    "all_row": (lambda x: torch.all(x.reshape(2, -1), 1), True),
    "softmax": (lambda x: torch.softmax(x.reshape(2, -1), -1), True),
}
BINARY = {
    "add": (torch.add, True), "sub": (torch.sub, True), "mul": (torch.mul, True), "div": (torch.div, True),
    "pow": (torch.pow, True), "maximum": (torch.maximum, False), "minimum": (torch.minimum, False),
    "eq": (torch.eq, True), "ne": (torch.ne, True), "lt": (torch.lt, True), "le": (torch.le, True),
    "gt": (torch.gt, True), "ge": (torch.ge, True), "where_greater": (lambda a, b: torch.where(a > b, a, b), True),
    "addcmul": (lambda a, b: torch.addcmul(a, a, b), True), "lerp": (lambda a, b: torch.lerp(a, b, 0.5), True),
    "squared_difference": (lambda a, b: (a - b) ** 2, True), "xlogy": (torch.xlogy, True),
}
# The sign of zero of these follows the order OpenVINO sums (or compares +-0) in: not compared.
REDUCTIONS = {
    "sum": (lambda m: m.sum(1), False), "sum_all": (lambda m: m.sum(), False), "mean": (lambda m: m.mean(1), False),
    "prod": (lambda m: m.prod(1), False), "amax": (lambda m: m.amax(1), False), "amin": (lambda m: m.amin(0), False),
    "max_all": (lambda m: m.max(), False), "min_all": (lambda m: m.min(), False),
    "max_of_rows": (lambda m: m[2:3].max(), False), "var": (lambda m: m.var(1), False),
    "std": (lambda m: m.std(1), False), "logsumexp": (lambda m: m.logsumexp(1), False),
    "norm": (lambda m: torch.linalg.vector_norm(m, dim=1), False),
    "norm_inf": (lambda m: torch.linalg.vector_norm(m, ord=INF, dim=1), False),
    "softmax": (lambda m: torch.softmax(m, 1), False), "log_softmax": (lambda m: torch.log_softmax(m, 1), False),
    "softmax_dim0": (lambda m: torch.softmax(m, 0), False), "cumsum": (lambda m: m.cumsum(1), False),
    "any_positive": (lambda m: (m > 0).any(1), True), "all_positive": (lambda m: (m > 0).all(1), True),
    "layer_norm": (lambda m: F.layer_norm(m, (4,)), False), "rms_norm": (lambda m: F.rms_norm(m, (4,)), False),
    "group_norm": (lambda m: F.group_norm(m.reshape(1, 12, 4), 3), False),
    "normalize": (lambda m: F.normalize(m, dim=1), False), "matmul": (lambda m: m @ torch.ones(4, 3), False),
    "avg_pool": (lambda m: F.avg_pool2d(m.reshape(1, 1, 12, 4), 2), False),
    "interpolate": (lambda m: F.interpolate(m.reshape(1, 1, 12, 4), scale_factor=2, mode="nearest"), False),
    "sdpa": (lambda m: F.scaled_dot_product_attention(*[m.reshape(1, 3, 4, 4)] * 3), False),
}
# Large finite values: results that overflow to inf in eager PyTorch, or must not.
LARGE = torch.tensor([[1e20, -1e20, 3e19, 0.0], [3e38, -3e38, 1.0, 2.0], [2e19, 2e19, 2e19, 2.0001e19],
                      [1e-20, 2e-20, 3e-20, 1e-20], [3e38, 3e38, 3e38, 3e38], [89.0, 88.0, -1e30, 1e30]])
OVERFLOW = {
    "std": lambda m: m.std(1), "std_all": lambda m: m[:4].std(), "std_keepdim": lambda m: m.std(1, keepdim=True),
    "times_two": lambda m: m * 2, "exp": lambda m: m.exp(), "sum": lambda m: m.sum(1), "mean": lambda m: m.mean(1),
    "square": lambda m: m * m, "softmax": lambda m: m.softmax(1), "sigmoid": lambda m: m.sigmoid(),
    "tanh": lambda m: m.tanh(), "logsumexp": lambda m: m.logsumexp(1), "cosh": lambda m: m.cosh(),
}


class Many(torch.nn.Module):
    """Every op of a table on the same inputs, one output each."""

    def __init__(self, table: dict):
        super().__init__()
        self.fns = [entry[0] if isinstance(entry, tuple) else entry for entry in table.values()]

    def forward(self, *args):
        return tuple(_plain(fn(*args)) for fn in self.fns)


class OneInput(Many):
    def forward(self, x):
        return super().forward(x)


def _plain(out):
    """torch.return_types (sort, topk) as plain tuples, which torch.export can return."""
    return tuple(out) if isinstance(out, tuple) else out


def _lower(module, inputs, numerics="exact"):
    """(.pte bytes, names of the ops left outside OpenVINO's partitions)."""
    from executorch.exir import to_edge_transform_and_lower

    edge = to_edge_transform_and_lower(torch.export.export(module.eval(), inputs),
                                       partitioner=[exov.OpenvinoPartitioner(numerics=numerics)])
    outside = [op_name(n.target) for n in edge.exported_program().graph.nodes if n.op == "call_function"
               and getattr(n.target, "__name__", "") not in ("executorch_call_delegate", "getitem")]
    return edge.to_executorch().buffer, outside


def _assert_delegated(outside: list) -> None:
    """Every op outside OpenVINO's partitions is one this OpenVINO's frontend does not convert
    (openvino 2025.4.1 has no aten.round)."""
    convertible = [op for op in outside if f"torch.ops.{op}" in openvino_supported_ops()]
    assert not convertible, f"left outside OpenVINO: {convertible}"


def _differences(name: str, actual: torch.Tensor, expected: torch.Tensor, zero_sign: bool, atol=ATOL) -> list:
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return [f"{name}: {actual.dtype} {tuple(actual.shape)}, eager {expected.dtype} {tuple(expected.shape)}"]
    if not expected.is_floating_point():
        return [] if torch.equal(actual, expected) else [f"{name}: {actual.tolist()}, eager {expected.tolist()}"]
    try:
        torch.testing.assert_close(actual, expected, rtol=RTOL, atol=atol, equal_nan=True)
    except AssertionError:
        bad = ~torch.isclose(actual, expected, rtol=RTOL, atol=atol, equal_nan=True)
        return [f"{name}: got {actual[bad].tolist()[:6]}, eager {expected[bad].tolist()[:6]}"]
    if zero_sign:
        zeros = (actual == 0) & (expected == 0)
        if not torch.equal(torch.signbit(actual[zeros]), torch.signbit(expected[zeros])):
            return [f"{name}: zeros {actual[zeros].tolist()}, eager {expected[zeros].tolist()}"]
    return []


def _check_table(table: dict, inputs: tuple, numerics="exact"):
    """Lowers all ops of `table` as one program; returns (differences from eager, ops left outside)."""
    module = Many(table)
    pte, outside = _lower(module, inputs, numerics)
    with torch.no_grad():
        expected = module(*[x.clone() for x in inputs])
    actual = run(pte, inputs)
    differences = []
    for (name, entry), a, e in zip(table.items(), actual, expected):
        entry = entry if isinstance(entry, tuple) else (entry, True)
        differences += _differences(name, a, e, *entry[1:])
    return differences, outside


@pytest.mark.parametrize("table, inputs", [
    pytest.param(UNARY, (SPECIALS,), id="elementwise"),
    pytest.param(BINARY, PAIRS, id="binary-pairs"),
    pytest.param(REDUCTIONS, (ROWS,), id="reductions"),
    pytest.param(OVERFLOW, (LARGE,), id="large-values"),
])
def test_special_values_as_in_eager(table, inputs):
    differences, outside = _check_table(table, inputs)
    assert not differences, "\n".join(differences)
    _assert_delegated(outside)  # the grid tests OpenVINO, not ExecuTorch


SORTS = {
    "sort": lambda m: m.sort(1), "sort_descending": lambda m: m.sort(1, descending=True),
    "sort_dim0": lambda m: m.sort(0), "argsort": lambda m: m.argsort(1),
    "msort": lambda m: m.msort(),
}
# No two equal values in a row (ties may come in any order; PyTorch leaves it open), NaN and +inf together.
UNTIED = torch.tensor([[3.0, NAN, -1.0, INF, 0.5], [INF, 2.0, NAN, -INF, 1.0], [NAN, 1.0, 2.0, 3.0, 4.0],
                       [5.0, 4.0, INF, 3.0, -INF], [-0.5, 0.25, 8.0, -3e38, 3e38], [NAN, -INF, 0.0, INF, 7.0]])


def test_sort_orders_nan_as_eager():
    module = Many(SORTS)
    pte, outside = _lower(module, (UNTIED,))
    _assert_delegated(outside)
    actual = run(pte, (UNTIED,))
    expected = torch.utils._pytree.tree_leaves(module(UNTIED))
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        torch.testing.assert_close(a, e, equal_nan=True, rtol=0, atol=0, msg=lambda m: f"output {i}: {m}")


def test_sort_with_ties_and_several_nans():
    # Values exactly; indices point at them (their order among equal values is PyTorch's to choose).
    x = torch.tensor([[NAN, 1.0, NAN, INF, 1.0, INF, -INF, NAN], [2.0, 2.0, 2.0, 2.0, NAN, 2.0, 2.0, 2.0]])
    table = {"ascending": lambda t: t.sort(-1), "descending": lambda t: t.sort(-1, descending=True)}
    pte, outside = _lower(Many(table), (x,))
    _assert_delegated(outside)
    actual = run(pte, (x,))
    for (name, fn), values, indices in zip(table.items(), actual[0::2], actual[1::2]):
        torch.testing.assert_close(values, fn(x).values, equal_nan=True, rtol=0, atol=0, msg=lambda m: f"{name}: {m}")
        torch.testing.assert_close(x.gather(1, indices), values, equal_nan=True, rtol=0, atol=0)
        assert all(sorted(row) == list(range(8)) for row in indices.tolist()), name


POOLS = {
    "max_pool2d": lambda x: F.max_pool2d(x, 2, return_indices=True),
    "max_pool2d_padded": lambda x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True),
    "max_pool1d": lambda x: F.max_pool1d(x.flatten(1, 2), 4, return_indices=True),
    "max_pool3d": lambda x: F.max_pool3d(x.reshape(1, 1, 2, 3, 4), 2, ceil_mode=True, return_indices=True),
    "values_only": lambda x: F.max_pool2d(x, 2),
}


def test_max_pool_indices_as_eager():
    # Windows with one NaN, several NaN (PyTorch: the last one's index), only -inf (the first
    # one's), ties (the first), -inf beside numbers.
    x = torch.tensor([[[[NAN, 1.0, NAN, NAN, -INF, -INF],
                        [2.0, NAN, 3.0, NAN, -INF, -INF],
                        [1.0, 1.0, -INF, 4.0, 0.0, -0.0],
                        [1.0, 1.0, 5.0, -INF, 0.5, INF]]]])
    module = Many(POOLS)
    pte, outside = _lower(module, (x,))
    _assert_delegated(outside)
    actual = run(pte, (x,))
    expected = torch.utils._pytree.tree_leaves(module(x))
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype
        torch.testing.assert_close(a, e, equal_nan=True, rtol=0, atol=0, msg=lambda m: f"output {i}: {m}")


# Ops OpenVINO computes differently that stay on ExecuTorch's kernels with numerics="exact".
KEPT = {
    "argmax": lambda m: m.argmax(1), "argmin": lambda m: m.argmin(0), "argmax_all": lambda m: m.argmax(),
    "argmin_keepdim": lambda m: m.argmin(1, keepdim=True), "topk": lambda m: m.topk(2, 1),
    "topk_smallest": lambda m: m.topk(2, 1, largest=False),
    "floor_divide": lambda m: torch.floor_divide(m, 2),
    "div_floor": lambda m: torch.div(m, -0.5, rounding_mode="floor"),
    "div_trunc": lambda m: torch.div(m, 3, rounding_mode="trunc"), "remainder": lambda m: torch.remainder(m, 2.5),
    "fmod": lambda m: torch.fmod(m, -2.5), "floor_divide_tensor": lambda m: m // m.flip(0).abs().clamp(min=0.5),
}


def test_ops_kept_on_executorch_match_eager():
    inputs = (torch.cat([ROWS, LARGE]),)
    module = Many(KEPT)
    pte, outside = _lower(module, inputs)
    kept = " ".join(outside)
    for op in ("argmax", "argmin", "topk", "div.Tensor_mode", "remainder", "fmod"):  # floor_divide: Tensor_mode
        assert op in kept, f"{op} was delegated: {outside}"
    actual = run(pte, inputs)
    expected = torch.utils._pytree.tree_leaves(module(*inputs))
    differences = []
    for i, (a, e) in enumerate(zip(actual, expected)):
        differences += _differences(f"output {i}", a, e, zero_sign=False)
    assert not differences, "\n".join(differences)


def test_conformance_edge_cases():
    # ExecuTorch's conformance suite's four that differed (tests/conformance: "NaN and Inf are not
    # enforced for backends"; this delegate enforces them). One program.
    x = torch.tensor([[1.0, NAN, 3.0], [4.0, 5.0, NAN]])
    inputs = (x, torch.tensor([NAN, INF, -INF, 0.0]), torch.tensor([INF, -INF, 10.0, -10.0, NAN]))

    class Cases(torch.nn.Module):
        def forward(self, x, e, f):
            return x.argmax(), x.argmin(1), torch.exp(e), torch.floor_divide(f, 2)

    pte, _ = _lower(Cases(), inputs)
    for name, actual, expected in zip(("argmax", "argmin", "exp", "floor_divide"), run(pte, inputs),
                                      Cases()(*inputs)):
        assert not _differences(name, actual, expected, True), f"{name}: {actual}, eager {expected}"


def test_dynamic_shapes():
    # The rewrites read no static size where a dimension is dynamic.
    from torch.export import Dim

    table = {"sort": lambda t: t.sort(1)[0], "sort_indices": lambda t: t.sort(1, descending=True)[1],
             "std": lambda t: t.std(1), "pool": lambda t: F.max_pool1d(t.unsqueeze(1), 2),
             "relu": torch.relu, "greater": lambda t: t > 0, "exp": torch.exp, "amax": lambda t: t.amax(0)}
    module = OneInput(table)
    n = Dim("n", max=64)
    exported = torch.export.export(module, (UNTIED,), dynamic_shapes=({0: n},))
    from executorch.exir import to_edge_transform_and_lower

    pte = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner()]).to_executorch().buffer
    for rows in (UNTIED, UNTIED[:2], torch.cat([UNTIED, UNTIED * 2 + 1, -UNTIED])):
        actual = run(pte, (rows,))
        expected = module(rows)
        differences = []
        for (name, _), a, e in zip(table.items(), actual, expected):
            differences += _differences(name, a, e, zero_sign=name != "amax")
        assert not differences, "\n".join(differences)


# OpenVINO's own answers, which numerics="fast" keeps (docs/user-guide/numerics.md lists them): the grid above would
# fail without the rewrites. One program per release and table.
FAST = {
    "exp_nan": (lambda x: torch.exp(x), torch.tensor([NAN]), torch.tensor([INF])),
    "greater_nan": (lambda x: x > 0, torch.tensor([NAN]), torch.tensor([True])),
    "bool_nan": (lambda x: x.bool(), torch.tensor([NAN]), torch.tensor([False])),
    "relu_minus_zero": (lambda x: torch.relu(x), torch.tensor([-0.0]), torch.tensor([0.0])),
    "sign_nan": (lambda x: torch.sign(x), torch.tensor([NAN]), torch.tensor([NAN])),
    "over_subnormal": (lambda x: x / x, torch.tensor([1e-40]), torch.tensor([INF])),
    "log1p_small": (lambda x: torch.log1p(x), torch.tensor([1e-8]), torch.tensor([0.0])),
    "argmax_nan": (lambda x: x.argmax(), torch.tensor([1.0, NAN, 3.0]), torch.tensor(2)),
    "floor_divide_inf": (lambda x: torch.floor_divide(x, 2), torch.tensor([INF]), torch.tensor([INF])),
    "std_large": (lambda x: x.std(), torch.tensor([1e20, -1e20]), torch.tensor(INF)),
}


def test_numerics_fast_keeps_openvinos_answers():
    names = list(FAST)
    inputs = tuple(FAST[n][1] for n in names)

    class Each(torch.nn.Module):
        def forward(self, *xs):
            return tuple(FAST[n][0](x) for n, x in zip(names, xs))

    pte, outside = _lower(Each(), inputs, numerics="fast")
    _assert_delegated(outside)
    for name, actual in zip(names, run(pte, inputs)):
        assert not _differences(name, actual, FAST[name][2], zero_sign=True), f"{name}: {actual}"
