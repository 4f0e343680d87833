"""Special values (NaN, infinities, -0.0) through OpenVINO as PyTorch computes them (``numerics="exact"``).

OpenVINO's CPU plugin computes these differently from eager PyTorch (measured
with openvino 2025.4.1 and 2026.4.1 on CPU, f32; tests/numerics/test_special_values.py
and tests/lowering/passes/test_nan_propagation.py run on both):

- it drops a NaN where it compares: ``relu(nan)`` is 0, ``clamp(nan, -1, 1)``
  is -1, ``maximum(nan, 0)`` is 0, ``amax([1, nan, 3])`` and ``max()`` are 3,
  a max-pool window holding a NaN gives its largest number, and a softmax row
  holding a NaN or an infinity gives numbers where PyTorch gives NaN; its
  amax, amin, max and max pools also start from the largest finite numbers,
  so ``amax`` of only ``-inf`` is -3.4e38;
- ``Greater`` and ``GreaterEqual`` are true when an operand is NaN
  (``nan > 0``), ``Less`` and ``LessEqual`` are right; a float cast to bool
  and ``logical_not`` read NaN as 0 (``bool(nan)`` is False, PyTorch True);
- ``exp(nan)`` is ``inf``; ``sign(nan)`` is NaN (PyTorch: 0);
- ``relu``, ``clamp`` and ``hardtanh`` give 0.0 for -0.0, ``elu`` too
  (PyTorch keeps -0.0);
- division multiplies by the reciprocal, so a subnormal divisor gives
  ``inf`` or NaN (``1e-40 / 1e-40`` is inf, PyTorch 1);
- ``log1p`` is ``log(1 + x)``: 0 for every ``|x| < 6e-8`` and for -0.0;
- ``erf`` is off by up to ~5e-8 absolutely, all of it for small arguments
  (``erf(1e-4)`` is 1.12889e-4, PyTorch 1.12838e-4; ``erf(1e-7)`` is 0);
- max pools return the index of the largest number in a window holding NaN
  (PyTorch: the last NaN's);
- ``std`` reaches the delegate as ``sqrt(var(x))`` (torch.export's
  decomposition), whose variance overflows float32 for ``|x| > 1.8e19``
  (``std([1e20, -1e20])`` is inf; eager PyTorch accumulates in float64 and
  gives 1.4e20; ExecuTorch's kernels give inf too);
- ``sort`` puts NaN among the numbers (PyTorch: last, or first descending).

:func:`propagate_nans` rewrites a partition's graph before conversion so that
each such result is eager PyTorch's, with ops OpenVINO computes correctly
(``isnan``, ``where``, ``Less``, ``amax`` over a 0/1 mask...). Integer and bool
tensors hold no NaN and are left alone. What no cheap rewrite makes exact stays
on ExecuTorch's kernels instead (``operator_support.SPECIAL_VALUE_OPS``).
"""

from __future__ import annotations

import math
import operator

import torch

from ..ops import NodeBuilder, op_name

aten = torch.ops.aten

# name -> how the op's special values are restored
_CLAMPS = {"aten.relu.default", "aten.clamp.default", "aten.hardtanh.default"}
_BINARY = {"aten.maximum.default", "aten.minimum.default"}
_REDUCTIONS = {"aten.amax.default", "aten.amin.default", "aten.max.default", "aten.min.default"}
# spatial rank of each max pool (adaptive_max_pool2d: ExecuTorch has no kernel for it, kernel_gaps.py)
_POOLS = {"aten.max_pool2d_with_indices.default": 2, "aten.max_pool3d_with_indices.default": 3,
          "aten.adaptive_max_pool2d.default": 2}
_SOFTMAXES = {"aten._softmax.default", "aten._log_softmax.default"}
_ATTENTION = "aten.scaled_dot_product_attention.default"
# a > b as b < a: OpenVINO's Less is right about NaN, its Greater is not.
_GREATER = {"aten.gt.Tensor": aten.lt.Tensor, "aten.ge.Tensor": aten.le.Tensor,
            "aten.gt.Scalar": aten.lt.Tensor, "aten.ge.Scalar": aten.le.Tensor}
_CAST = "aten._to_copy.default"
_OTHERS = {"aten.erf.default", "aten.exp.default", "aten.sign.default", "aten.elu.default", "aten.logical_not.default",
           "aten.log1p.default", "aten.div.Tensor", "aten.sort.default", "aten.sqrt.default", _CAST}
TARGETS = _CLAMPS | _BINARY | _REDUCTIONS | set(_POOLS) | _SOFTMAXES | set(_GREATER) | _OTHERS
# The rewrites that only restore NaN, infinities and -0.0: not needed where every float the op reads
# is a dequantized value (an integer times a positive finite scale: finite, and never -0.0). In a
# quantized program this keeps the dequantize, pool, quantize chain that OpenVINO runs in 8 bits.
_SPECIAL_VALUES_ONLY = (_CLAMPS | _BINARY | _REDUCTIONS | set(_POOLS) | _SOFTMAXES | set(_GREATER)
                        | {"aten.exp.default", "aten.sign.default", "aten.elu.default", "aten.logical_not.default",
                           "aten.sort.default", _CAST})
_DEQUANTIZE = "quantized_decomposed.dequantize_per_tensor.default"
_QUANTIZE = "quantized_decomposed.quantize_per_tensor.default"

# |b| below this is subnormal in float32 and bfloat16; 2**64 makes it normal without overflow.
_WIDE_FLOATS = (torch.float32, torch.bfloat16)
_SMALLEST_NORMAL = 2.0**-126
_DIVISOR_SCALE = 2.0**64


def _value(node):
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _floating(node) -> bool:
    value = _value(node)
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _clamped(build: NodeBuilder, x, low, high):
    """clamp as PyTorch computes it: max with `low` first, then min with `high`; NaN and -0.0 pass."""
    if any(isinstance(b, (int, float)) and math.isnan(b) for b in (low, high)):
        return build(aten.where.self, build(aten.isnan.default, x), x, build.scalar(math.nan, x))
    result = x
    if low is not None:
        result = build(aten.where.self, build.less(result, low), build.scalar(low, x), result)
    if high is not None:
        result = build(aten.where.self, build.less(high, result), build.scalar(high, x), result)
    return result


# What gives +0.0, never -0.0, where its exact result is zero: a sum of products that OpenVINO's CPU plugin
# and eager PyTorch both start from +0.0 (a convolution or matrix product of zeros, or of -0.0, is +0.0 in
# both; measured with openvino 2025.4.1 and 2026.4.1 and torch 2.13, tests/lowering/passes/test_nan_propagation.py).
_SUMS_OF_PRODUCTS = frozenset({"aten.convolution.default", "aten.addmm.default", "aten.mm.default",
                               "aten.bmm.default", "aten.linear.default", "aten.matmul.default"})
_BATCH_NORM = "aten._native_batch_norm_legit_no_training.default"


def _never_minus_zero(program: torch.export.ExportedProgram) -> frozenset:
    """The float32 nodes of `program` that never give -0.0: sums of products, and batch norms (in inference)
    whose bias holds no -0.0. A batch norm's x * scale + shift, however it is grouped, is -0.0 only where
    both terms are, and its shift is -0.0 only where the bias is (IEEE 754: x + y is -0.0 only for -0.0 + -0.0)."""
    signature = program.graph_signature
    names = {**signature.inputs_to_parameters, **signature.inputs_to_buffers}
    found = set()
    for node in program.graph.nodes:
        value = _value(node)
        if not (node.op == "call_function" and isinstance(value, torch.Tensor) and value.dtype == torch.float32):
            continue
        if op_name(node.target) in _SUMS_OF_PRODUCTS:
            found.add(node)
        elif node.target is operator.getitem and node.args[1] == 0 and op_name(node.args[0].target) == _BATCH_NORM:
            bias = node.args[0].args[2] if len(node.args[0].args) > 2 else None
            tensor = program.state_dict.get(names.get(getattr(bias, "name", None)))
            if isinstance(tensor, torch.Tensor) and not bool((torch.signbit(tensor) & (tensor == 0)).any()):
                found.add(node)
    return frozenset(found)


# What may read a fused relu's result: OpenVINO fuses none of these into the relu's product, and each gives
# the same result for +0.0 and -0.0 (a sum of products or of values starts from +0.0). A negation or a
# scaling after the relu would be fused too, as alpha * x + beta, which turns -(+0.0) into +0.0 (found by a
# tester, both releases): there the where() form stays, which OpenVINO does not fuse.
_FUSED_RELU_READERS = _SUMS_OF_PRODUCTS | {"aten.mean.dim", "aten.sum.dim_IntList", "aten.avg_pool2d.default",
                                           "aten._adaptive_avg_pool2d.default",
                                           _QUANTIZE}


def _fuses(relu: torch.fx.Node, x, never_minus_zero: frozenset) -> bool:
    """Whether ``_fusable_relu(x)`` can stand for `relu` and OpenVINO fuses it into the product before it: `x`
    never -0.0 and read by the relu only, and the relu's result read once, by a program output or one of
    ``_FUSED_RELU_READERS``. Where a max pool's NaN rewrite reads it twice (the bench's CNN, 2026.4.1) the Elu
    stays a separate node that computes exp everywhere: 18% slower than fast mode against 9% with the where()
    form."""
    users = list(relu.users)
    if not (x in never_minus_zero and len(x.users) == 1 and len(users) == 1):
        return False
    return users[0].op == "output" or (users[0].op == "call_function"
                                       and op_name(users[0].target) in _FUSED_RELU_READERS)


def _quantized_from_code_zero(relu: torch.fx.Node) -> bool:
    """Every reader of `relu` is a quantize with zero point 0 and quant_min 0 (NNCF's uint8 after a relu).

    Then eager PyTorch's codes come out of OpenVINO's plain Relu: eager quantizes NaN to code 0, and
    OpenVINO's quantize gives code 0 both for the 0 its Relu makes of NaN and for a NaN (quant_min, found by a
    tester); negatives, -inf and -0.0 are code 0 in both. The fused ``abs(elu(x))`` form would cost an ``exp`` on
    every element of the 8-bit convolution's result (the bench's INT8 CNN: 1.27x fast mode's time)."""
    users = list(relu.users)
    return bool(users) and all(
        u.op == "call_function" and op_name(u.target) == _QUANTIZE and u.args[0] is relu
        and len(u.args) > 3 and u.args[2] == 0 and u.args[3] == 0 for u in users)


def _fusable_relu(build: NodeBuilder, x):
    """relu(x) as abs(elu(x, alpha=-0.0)), for an `x` that is never -0.0 (``_never_minus_zero``).

    OpenVINO's Elu is x where x > 0, else alpha * (exp(x) - 1): with alpha -0.0 that is NaN for NaN, +0.0
    for negatives and -inf, and -0.0 for 0.0, which abs makes +0.0; only a -0.0 input would come out
    wrong (+0.0). Unlike the where(x < 0, 0, x) of other clamps, OpenVINO's CPU plugin fuses both into the
    convolution or matrix product before them, as it fuses its own Relu (measured, both releases)."""
    return build(aten.abs.default, build(aten.elu.default, x, -0.0))


def _clamp_bounds(node, name):
    if name == "aten.relu.default":
        return 0.0, None
    if name == "aten.hardtanh.default":
        args = list(node.args) + [None] * 3
        low = args[1] if args[1] is not None else node.kwargs.get("min_val", -1.0)
        high = args[2] if args[2] is not None else node.kwargs.get("max_val", 1.0)
        return low, high
    args = list(node.args) + [None] * 3
    return (args[1] if len(node.args) > 1 else node.kwargs.get("min"),
            args[2] if len(node.args) > 2 else node.kwargs.get("max"))


def _reduction(build: NodeBuilder, node, name, x):
    if name in ("aten.max.default", "aten.min.default"):
        dims, keepdim = list(range(_value(x).dim())), False
    else:
        dims = list(node.args[1]) if len(node.args) > 1 else list(range(_value(x).dim()))
        keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
    if _value(x).dim() == 0:
        return None  # one element: nothing is compared
    # OpenVINO also starts ReduceMax at the lowest finite number: amax of only -inf is -3.4e38.
    infinity = -math.inf if name in ("aten.amax.default", "aten.max.default") else math.inf
    only = build.ones(build(aten.eq.Scalar, x, infinity), x)
    all_infinite = build(aten.gt.Scalar, build(aten.amin.default, only, dims, keepdim), 0)
    fixed = build(aten.where.self, all_infinite, build.scalar(infinity, node), node)
    return build.nan_where(build.any_nan(x, dims, keepdim), fixed)


def _divided(build: NodeBuilder, target, x, divisor):
    """x / divisor with a subnormal divisor made normal first (scaled by 2**64, the quotient too).

    OpenVINO multiplies by the reciprocal, and 1 / 1e-40 overflows. Scaling by a
    power of two is exact, so the quotient is the one PyTorch rounds. The extra
    work is on the divisor's shape but for one multiplication.
    """
    tiny = build(aten.lt.Scalar, build(aten.abs.default, divisor), _SMALLEST_NORMAL)
    scale = build(aten.where.self, tiny, build.scalar(_DIVISOR_SCALE, divisor), build.scalar(1.0, divisor))
    quotient = build(target, x, build(aten.mul.Tensor, divisor, scale))
    return build(aten.mul.Tensor, quotient, scale)


def _std(build: NodeBuilder, variance, x):
    """sqrt(var(x)) = 2**k * sqrt(var(x * 2**-k)), 2**k near the largest |x| reduced (1 where that
    is 0, inf or NaN): scaling by a power of two is exact, and the squares of x * 2**-k cannot
    overflow. OpenVINO's pow(2, k) is exact for integer k in [-126, 126] (measured, both releases)."""
    rank = _value(x).dim()
    dims = variance.args[1] if len(variance.args) > 1 else variance.kwargs.get("dim")
    dims = list(range(rank)) if dims is None or len(dims) == 0 else [d % rank for d in dims]
    largest = build(aten.amax.default, build(aten.abs.default, x), dims, True)
    usable = build(aten.where.self, build(aten.isfinite.default, largest), largest, build.scalar(1.0, largest))
    usable = build(aten.where.self, build.less(0.0, usable), usable, build.scalar(1.0, usable))
    exponent = build(aten.clamp.default, build(aten.floor.default, build(aten.log2.default, usable)), -126.0, 126.0)
    down = build(aten.pow.Scalar, 2.0, build(aten.neg.default, exponent))
    scaled = build(variance.target, build(aten.mul.Tensor, x, down), *variance.args[1:], **variance.kwargs)
    scale = build(aten.pow.Scalar, 2.0, exponent)
    keepdim = variance.kwargs.get("keepdim", variance.args[3] if len(variance.args) > 3 else False)
    if not keepdim:
        scale = build(aten.squeeze_copy.dims, scale, dims)
    return build(aten.mul.Tensor, build(aten.sqrt.default, scaled), scale)


def _erf(build: NodeBuilder, node, x):
    """erf(x), below |x| = 0.1 from its series 2/sqrt(pi) (x - x**3/3 + x**5/10): the next
    term, x**7/42, is 2.4e-9 of it there; -0.0 and subnormals pass."""
    square = build(aten.mul.Tensor, x, x)
    inner = build(aten.add.Tensor, build(aten.mul.Tensor, square, build.scalar(0.1, x)), build.scalar(-1.0 / 3.0, x))
    series = build(aten.mul.Tensor, build(aten.add.Tensor, build(aten.mul.Tensor, inner, square), build.scalar(1.0, x)),
                   build(aten.mul.Tensor, x, build.scalar(2.0 / math.sqrt(math.pi), x)))
    small = build(aten.lt.Scalar, build(aten.abs.default, x), 0.1)
    return build(aten.where.self, small, series, node)


def _log1p(build: NodeBuilder, x):
    """log1p(x) = log(u) * x / (u - 1) with u = 1 + x, and x itself where u is 1 (Goldberg's
    formula: exact to a few ulps, -0.0 and tiny x kept); inf stays inf."""
    u = build(aten.add.Tensor, x, build.scalar(1.0, x))
    ratio = build(aten.div.Tensor, x, build(aten.sub.Tensor, u, build.scalar(1.0, x)))
    general = build(aten.mul.Tensor, build(aten.log.default, u), ratio)
    small = build(aten.eq.Scalar, u, 1.0)
    result = build(aten.where.self, small, x, general)
    return build(aten.where.self, build(aten.eq.Scalar, x, math.inf), x, result)


def _pool_weights(build: NodeBuilder, condition, x, spatial: int, negate: bool = False):
    """1 + p / (P + 1) (P elements per channel, p the element's flat index) where `condition`
    holds, else 0, in float32: distinct values whose max in a window is the last such element
    (with `negate`: minus those, whose max is the first).

    With a dynamic spatial size, or P >= 2**23 (the values would tie), the weights are all 1:
    OpenVINO then returns the first of the window's elements meeting `condition`.
    """
    rank = _value(x).dim()
    sizes = list(_value(x).shape)[rank - spatial:]
    mask = build(aten._to_copy.default, condition, dtype=torch.float32)
    if not all(isinstance(s, int) for s in sizes) or math.prod(sizes) >= 2**23:
        return build(aten.neg.default, mask) if negate else mask
    count = math.prod(sizes)
    flat = build(aten.arange.default, count, dtype=torch.float32)
    weights = build(aten.add.Tensor, build(aten.mul.Tensor, flat, build.scalar(1.0 / (count + 1), flat)),
                    build.scalar(1.0, flat))
    weights = build(aten.view_copy.default, weights, sizes)
    if negate:
        weights = build(aten.neg.default, weights)
    return build(aten.mul.Tensor, mask, weights)


# Ops whose float results are never negative (whatever their input, NaN aside), so never -inf.
_NO_MINUS_INF = frozenset({"aten.sigmoid.default", "aten.exp.default", "aten.abs.default", "aten._softmax.default",
                           "aten.sqrt.default", "aten.hardsigmoid.default"})
# Set on a rewritten clamp's result whose lower bound is finite, to that bound: no -inf can come out of it.
_BOUNDED_BELOW = "exov_bounded_below"


# x * sigmoid(x) (SiLU, as ExecuTorch decomposes it) is never below -0.2785 (its minimum, near x = -1.28);
# -inf * sigmoid(-inf) is -inf * 0, NaN. -1 leaves room for rounding at any inference precision.
_SILU_LOWER_BOUND = -1.0


def _is_silu(x: torch.fx.Node) -> bool:
    if not (x.op == "call_function" and op_name(x.target) == "aten.mul.Tensor" and len(x.args) == 2):
        return False
    a, b = x.args
    return any(isinstance(s, torch.fx.Node) and s.op == "call_function" and op_name(s.target) == "aten.sigmoid.default"
               and s.args[0] is other for s, other in ((a, b), (b, a)))


def _lower_bound(x: torch.fx.Node) -> float | None:
    """A finite number that no value of `x` is below (NaN aside), or None when none is known."""
    if _BOUNDED_BELOW in x.meta:
        return x.meta[_BOUNDED_BELOW]
    if _is_silu(x):
        return _SILU_LOWER_BOUND
    return 0.0 if x.op == "call_function" and op_name(x.target) in _NO_MINUS_INF else None


def _may_hold_minus_inf(x: torch.fx.Node) -> bool:
    return _lower_bound(x) is None


# The average pool with a max pool's windows (same kernel, stride, padding and ceil_mode; no dilation).
_AVERAGE_OF = {"aten.max_pool2d_with_indices.default": aten.avg_pool2d.default,
               "aten.max_pool3d_with_indices.default": aten.avg_pool3d.default}


_MAX_POOL_DEFAULTS = {"kernel_size": None, "stride": [], "padding": 0, "dilation": 1, "ceil_mode": False}


def _max_pool_arguments(pool: torch.fx.Node) -> tuple:
    """(kernel_size, stride, padding, dilation, ceil_mode) of a ``max_poolNd_with_indices`` node, as given
    (a size may be one number or one element for every spatial dimension), ATen's defaults filled in."""
    given = {**_MAX_POOL_DEFAULTS, **dict(zip(_MAX_POOL_DEFAULTS, pool.args[1:])), **pool.kwargs}
    return tuple(given[name] for name in _MAX_POOL_DEFAULTS)


def _listed(size) -> list:
    return list(size) if isinstance(size, (list, tuple)) else [size]


def _found_by_average(pool: torch.fx.Node, x: torch.fx.Node) -> bool:
    """Whether the windows of max pool `pool` of `x` that hold NaN are those whose sum is NaN, found by an
    average pool of the same windows (see :func:`_max_pool`).

    A sum is NaN where a NaN is, or where +inf meets -inf. So `x` must have a lower bound L that even
    the window's element count n of them cannot take past -max (n * L > -max, max the largest bfloat16:
    a bfloat16 inference precision sums in it; found by a tester, clamp(min=-3e38) gave NaN for eager's
    +inf). And the pool must be 2-d or 3-d, without dilation, its indices unread, over static sizes each
    at least the kernel's (avg_pool3d refuses smaller ones, which max_pool3d pads, found by a tester)."""
    name = op_name(pool.target)
    low = _lower_bound(x)
    if name not in _AVERAGE_OF or low is None:
        return False
    spatial = _POOLS[name]
    kernel, _, _, dilation, _ = _max_pool_arguments(pool)
    kernel = _listed(kernel)
    kernel = kernel * spatial if len(kernel) == 1 else kernel
    if any(d != 1 for d in _listed(dilation)):
        return False
    value = _value(x)
    sizes = list(value.shape)[value.dim() - spatial:]
    if not all(isinstance(s, int) and s >= k for s, k in zip(sizes, kernel)):
        return False
    largest = min(torch.finfo(value.dtype).max, torch.finfo(torch.bfloat16).max)
    if math.prod(kernel) * min(low, 0.0) <= -largest:
        return False
    indices = _getitems(pool)[1]
    return indices is None or not indices.users


def _max_pool(build: NodeBuilder, node, name, x, values, indices):
    """Values and indices of a max pool as PyTorch's: NaN (the last one's index) in a window
    holding NaN, -inf (the first one's index) in a window of only -inf.

    Without indices, and where the input cannot hold -inf (after a ReLU or a clamp from below, the
    common conv, ReLU, pool), an average pool of the same windows finds those holding NaN
    (:func:`_found_by_average`). Otherwise a 0/1 NaN mask is pooled as is without indices (the weights
    only choose the index), and the windows of only -inf are looked for only where the input may hold -inf.
    """
    spatial = _POOLS[name]
    if indices is None and _found_by_average(node, x):
        # Without -inf in x or its sums, a window's sum is NaN only where it holds NaN (+inf alone sums
        # to +inf): an average pool reads x once more and writes only pooled values, where an IsNaN mask
        # would be written and pooled at x's size. Its divisor does not matter here.
        kernel, stride, padding, _, ceil_mode = _max_pool_arguments(node)
        sums = build(_AVERAGE_OF[name], x, kernel, stride, padding, bool(ceil_mode))
        return build.nan_where(build(aten.isnan.default, sums), values), None
    if indices is None:
        nan_mask = build(aten._to_copy.default, build(aten.isnan.default, x), dtype=torch.float32)
    else:
        nan_mask = _pool_weights(build, build(aten.isnan.default, x), x, spatial)
    pooled_nan = build(node.target, nan_mask, *node.args[1:], **node.kwargs)
    hit = build(aten.gt.Scalar, build(operator.getitem, pooled_nan, 0), 0)
    if indices is None and not _may_hold_minus_inf(x):
        return build.nan_where(hit, values), None
    # A window of only -inf gives -3.4e38 in OpenVINO; the max of minus weights finds such
    # windows (padding never counts, as in PyTorch) and their first element.
    pooled_minus = build(node.target, _pool_weights(build, build(aten.eq.Scalar, x, -math.inf), x, spatial, True),
                         *node.args[1:], **node.kwargs)
    only_minus_inf = build(aten.lt.Scalar, build(operator.getitem, pooled_minus, 0), 0)
    new_values = new_indices = None
    if values is not None:
        fixed = build(aten.where.self, only_minus_inf, build.scalar(-math.inf, values), values)
        new_values = build.nan_where(hit, fixed)
    if indices is not None:
        fixed = build(aten.where.self, only_minus_inf, build(operator.getitem, pooled_minus, 1), indices)
        new_indices = build(aten.where.self, hit, build(operator.getitem, pooled_nan, 1), fixed)
    return new_values, new_indices


def _sort(build: NodeBuilder, node, x, values, indices):
    """sort with NaN as PyTorch orders it: after +inf (before it descending).

    OpenVINO sorts ``where(isnan, inf, x)`` right; NaN and +inf then tie, so the
    NaN count decides which of the trailing (leading) positions hold NaN, and a
    second sort of 0 (numbers), 1 (+inf), 2 (NaN) gives those positions' indices.
    """
    args = list(node.args) + [None] * 3
    dim = args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
    descending = args[2] if len(node.args) > 2 else node.kwargs.get("descending", False)
    dim %= _value(x).dim()
    nan = build(aten.isnan.default, x)
    positive_inf = build(aten.eq.Scalar, x, math.inf)
    key = build(aten.where.self, nan, build.scalar(math.inf, x), x)
    by_key = build(node.target, key, dim, descending)
    rank_key = build(aten.where.self, nan, build(aten.scalar_tensor.default, 2.0, dtype=torch.float32),
                     build(aten._to_copy.default, positive_inf, dtype=torch.float32))
    by_rank = build(node.target, rank_key, dim, descending)
    nans = build(aten.sum.dim_IntList, build(aten._to_copy.default, nan, dtype=torch.float32), [dim], True)
    group = build(aten.add.Tensor, nans,
                  build(aten.sum.dim_IntList, build(aten._to_copy.default, positive_inf, dtype=torch.float32),
                        [dim], True))
    # Positions 0, 1, ... from the end (from the start descending), from a cumsum of ones so
    # that a dynamic size needs no constant.
    ones = build(aten.ones_like.default, x, dtype=torch.float32)
    counted = build(aten.cumsum.default, ones, dim)
    if descending:
        position = build(aten.sub.Tensor, counted, build.scalar(1.0, counted))
    else:
        position = build(aten.sub.Tensor, build(aten.sum.dim_IntList, ones, [dim], True), counted)
    new_values = new_indices = None
    if values is not None:
        new_values = build.nan_where(build.less(position, nans), build(operator.getitem, by_key, 0))
    if indices is not None:
        new_indices = build(aten.where.self, build.less(position, group), build(operator.getitem, by_rank, 1),
                            build(operator.getitem, by_key, 1))
    return new_values, new_indices


def _getitems(node):
    found = {}
    for user in node.users:
        if user.target is operator.getitem:
            found.setdefault(user.args[1], user)
    return found.get(0), found.get(1)


def _dequantized(x) -> bool:
    """`x` is a per-tensor dequantize's result with a positive finite scale (its second argument)."""
    if not (isinstance(x, torch.fx.Node) and x.op == "call_function" and op_name(x.target) == _DEQUANTIZE):
        return False
    scale = x.args[1] if len(x.args) > 1 else x.kwargs.get("scale")
    return isinstance(scale, (int, float)) and 0 < scale < math.inf


def _reads_only_dequantized(node: torch.fx.Node) -> bool:
    """Every float tensor `node` reads is dequantized, and every number argument is finite (x > nan)."""
    floats = [a for a in node.all_input_nodes if _floating(a)]
    numbers = [a for a in [*node.args, *node.kwargs.values()] if isinstance(a, float)]
    return bool(floats) and all(_dequantized(a) for a in floats) and all(math.isfinite(a) for a in numbers)


def _rewrite(graph: torch.fx.Graph, node: torch.fx.Node, name: str, constants: frozenset,  # noqa: C901
             never_minus_zero: frozenset) -> bool:
    """Rewrites one node; True when it did. `constants`: the names of parameter, buffer and constant inputs;
    `never_minus_zero`: the nodes that never give -0.0 (``_never_minus_zero``)."""

    if name in _SPECIAL_VALUES_ONLY and _reads_only_dequantized(node):
        return False

    x = node.args[0]
    users = list(node.users)
    build = NodeBuilder(graph, node)
    erase = False
    if name in _GREATER:
        other = node.args[1]
        if not (_floating(x) or _floating(other)):
            return False
        result = build(_GREATER[name], other if isinstance(other, torch.fx.Node) else build.scalar(other, x), x)
        erase = True
    elif name == _CAST:
        if not (_floating(x) and node.kwargs.get("dtype") == torch.bool):
            return False
        result = build(aten.ne.Scalar, x, 0)
        erase = True
    elif not _floating(x):
        return False
    elif name == "aten.logical_not.default":
        result = build(aten.eq.Scalar, x, 0)
        erase = True
    elif name in _CLAMPS:
        low, high = _clamp_bounds(node, name)
        # clamp(min=-0.0) gives -0.0 for negatives: only a +0.0 bound is relu
        relu = low == 0 and math.copysign(1.0, low) > 0 and high is None
        if relu and _quantized_from_code_zero(node):
            return False  # OpenVINO's own Relu, fused into the 8-bit layer before it, gives eager's codes
        if relu and _fuses(node, x, never_minus_zero):
            result = _fusable_relu(build, x)
        else:
            result = _clamped(build, x, low, high)
        if (isinstance(low, (int, float)) and math.isfinite(low)
                and not (isinstance(high, (int, float)) and high == -math.inf)):  # clamp(max=-inf) is -inf
            result.meta[_BOUNDED_BELOW] = float(low)
        erase = True
    elif name == "aten.exp.default":
        result = build(aten.where.self, build(aten.isnan.default, x), x, node)
    elif name == "aten.erf.default":
        result = _erf(build, node, x)
    elif name == "aten.sign.default":
        result = build(aten.where.self, build(aten.isnan.default, x), build.scalar(0.0, x), node)
    elif name == "aten.elu.default":
        result = build(aten.where.self, build(aten.eq.Scalar, x, 0), x, node)
    elif name == "aten.sqrt.default":  # std, as torch.export writes it
        variance = x
        if not (variance.op == "call_function" and op_name(variance.target) == "aten.var.correction"
                and len(variance.users) == 1 and _value(variance.args[0]).dim() > 0
                and _value(variance.args[0]).dtype in _WIDE_FLOATS):  # 2**-126 is 0 in float16
            return False
        result = _std(build, variance, variance.args[0])
        erase = True
    elif name == "aten.log1p.default":
        result = _log1p(build, x)
        erase = True
    elif name == "aten.div.Tensor":
        divisor = node.args[1]
        # A parameter, buffer or constant divisor reaches OpenVINO as a constant, which it
        # flushes to 0 when subnormal anyway (operator_support.has_flushed_values).
        # float16 has no subnormal that is one in float32, and 2**64 overflows it.
        if (not (isinstance(divisor, torch.fx.Node) and _value(divisor).dtype in _WIDE_FLOATS)
                or divisor.name in constants):
            return False
        result = _divided(build, node.target, x, divisor)
        erase = True
    elif name in _BINARY:
        other = node.args[1]
        either = build.either(build(aten.isnan.default, x), build(aten.isnan.default, other))
        result = build(aten.where.self, either, build(aten.add.Tensor, x, other), node)
    elif name in _REDUCTIONS:
        result = _reduction(build, node, name, x)
        if result is None:
            return False
    elif name in _SOFTMAXES:
        dim = node.args[1] % max(_value(x).dim(), 1)
        # PyTorch's row is NaN when it holds a NaN, or its max is infinite (inf - inf).
        infinite_max = build(aten.isinf.default, build(aten.amax.default, x, [dim], True))
        bad = build.either(build.any_nan(x, [dim], True), infinite_max)
        result = build.nan_where(bad, node)
    else:  # max pools and sort: (values, indices) read through getitem
        getitems = _getitems(node)
        if all(g is None for g in getitems) or (name == "aten.sort.default" and _value(x).dim() == 0):
            return False
        old_users = [list(g.users) if g is not None else [] for g in getitems]
        build = NodeBuilder(graph, max((g for g in getitems if g is not None), key=_order(graph)))
        fixed = (_max_pool(build, node, name, x, *getitems) if name in _POOLS
                 else _sort(build, node, x, *getitems))
        for getitem, new, getitem_users in zip(getitems, fixed, old_users):
            for user in getitem_users:
                user.replace_input_with(getitem, new)
        if name not in _POOLS:  # the original sort is unused now
            for getitem in getitems:
                if getitem is not None and not getitem.users:
                    graph.erase_node(getitem)
            if not node.users:
                graph.erase_node(node)
        return True
    for user in users:
        user.replace_input_with(node, result)
    if erase and not node.users:
        graph.erase_node(node)
        if name == "aten.sqrt.default":
            graph.erase_node(x)
    return True


def _order(graph):
    position = {n: i for i, n in enumerate(graph.nodes)}
    return lambda n: position[n]


def propagate_nans(program: torch.export.ExportedProgram) -> int:
    """Rewrites `program`'s graph in place so that special values come out as eager PyTorch's;
    returns how many ops were rewritten."""

    graph = program.graph
    signature = program.graph_signature
    constants = frozenset({**signature.inputs_to_parameters, **signature.inputs_to_buffers,
                           **signature.inputs_to_lifted_tensor_constants})
    never_minus_zero = _never_minus_zero(program)
    rewritten = 0
    for node in list(graph.nodes):
        name = op_name(node.target) if node.op == "call_function" else ""
        if name not in TARGETS or not node.args:
            continue
        rewritten += _rewrite(graph, node, name, constants, never_minus_zero)
    if rewritten:
        graph.lint()
        program.graph_module.recompile()
    return rewritten


def zero_rows_without_keys(program: torch.export.ExportedProgram) -> int:
    """Sets to 0 the rows of each ``scaled_dot_product_attention`` whose mask allows no key, as PyTorch
    gives them; OpenVINO's fused kernel gives NaN (2025.4.1 and 2026.4.1). Run whatever the numerics
    setting: before the operation was kept whole, both settings gave PyTorch's 0 (a left-padded
    GPT-2 then NaN at the padding, which a masked mean pooling spreads). Returns how many it changed."""

    changed = 0
    for node in list(program.graph.nodes):
        if node.op != "call_function" or op_name(node.target) != _ATTENTION:
            continue
        mask = node.args[3] if len(node.args) > 3 else node.kwargs.get("attn_mask")
        if not isinstance(mask, torch.fx.Node):
            continue
        users = list(node.users)
        build = NodeBuilder(program.graph, node)
        allowed = mask if _value(mask).dtype == torch.bool else build(aten.ne.Scalar, mask, -math.inf)
        any_allowed = build(aten.gt.Scalar, build(aten.amax.default, build.ones(allowed, node), [-1], True), 0)
        result = build(aten.where.self, any_allowed, node, build.scalar(0.0, node))
        for user in users:
            user.replace_input_with(node, result)
        changed += 1
    if changed:
        program.graph.lint()
        program.graph_module.recompile()
    return changed

