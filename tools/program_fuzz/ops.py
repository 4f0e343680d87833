"""The operator catalog: what each fuzzed op computes, when it applies, and what rounding it may add.

Each :class:`OpDef` has

- ``code(args, attrs)``: the Python expression of the op (one line of the
  generated ``forward``); the only definition of what it computes;
- ``pick(p)``: chooses operands and attributes from a
  :class:`generator.Picker`, or returns None when nothing in the program fits;
- ``error(ins, errs, out, attrs)``: how far a correct float32 implementation may
  be from eager PyTorch (see below);
- ``int_range(ranges, attrs, ins)``: bounds of an integer result, from the
  bounds of the operands (embedding indices and int32 overflow need them).

The error model. Every float value carries ``(s32, s16)``: sums of magnitudes
(max |value|) of the roundings on its way from the inputs, in float32 and in
float16, each propagated through later ops by their derivative bound. An
output is compared with ``atol = 1e-5 * (1 + s32) + 1e-3 * s16`` and
``rtol = 1e-5`` (1e-3 for float16 outputs): some hundred float32 ulps per
rounding, so summation order and fused multiply-adds pass, while bf16
(0.4% per rounding) fails. A value with ``(0, 0)`` is *exact*: computed only
by ops that are exact in IEEE arithmetic (moves, neg, abs, relu, max,
casts that widen, ...). Ops that are discontinuous in their operand
(comparisons, argmax, floor, float-to-int casts) are only applied to exact
values, because a one-ulp difference upstream may legitimately flip them.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import torch

FLOATS = ("float32", "float16", "float64")
INTS = ("int32", "int64")
INT32_RANGE = (-(2**31), 2**31 - 1)


@dataclass
class ValueInfo:
    """What the generator knows about a value of the program.

    ``shape`` is its shape in the example sample, ``shape_max`` with every
    dynamic size at its maximum (a dimension differing between the two is
    dynamic). ``bound`` bounds |value| (exactly for exact values, an estimate
    otherwise), ``range`` an int value's (low, high). ``root`` names the input
    or buffer this value is the current version of (in-place ops write only
    to roots); ``kind`` is input, parameter, buffer, constant or value.
    """

    name: str
    dtype: str
    shape: tuple
    shape_max: tuple
    exact: bool = True
    bound: float = 0.0
    range: tuple | None = None
    root: str | None = None
    kind: str = "value"

    @property
    def rank(self) -> int:
        return len(self.shape)

    def static(self, axis: int) -> bool:
        return self.shape[axis] == self.shape_max[axis]

    @property
    def all_static(self) -> bool:
        return self.shape == self.shape_max

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOATS

    @property
    def is_int(self) -> bool:
        return self.dtype in INTS

    @property
    def is_bool(self) -> bool:
        return self.dtype == "bool"

    @property
    def numeric(self) -> bool:
        return self.dtype != "bool"


# ---------------------------------------------------------------- the error model

Err = tuple  # (s32, s16)
EXACT: Err = (0.0, 0.0)
# A weight or magnitude of zero must not make an inexact value exact: exactness
# is a property of the program, not of one sample's data (relu of negative
# samples is all zeros, yet its sum with anything rounds).
TINY = 1e-30


def magnitude(t: torch.Tensor) -> float:
    """max |t| as a Python float (0 for an empty tensor, 1 for bools)."""
    if t.numel() == 0:
        return 0.0
    if t.dtype == torch.bool:
        return 1.0
    return float(t.detach().abs().max().double())


def rounding(out: torch.Tensor, size: float | None = None) -> Err:
    """One rounding of a result of magnitude `size` (default max |out|) in out's dtype."""
    m = max(magnitude(out) if size is None else size, TINY)
    if out.dtype == torch.float32:
        return (m, 0.0)
    if out.dtype == torch.float16:
        return (0.0, m)
    if out.dtype == torch.float64:
        return (m * 1e-8, 0.0)  # not exact (comparisons would be), but negligible
    return EXACT


def add_errs(*terms) -> Err:
    """sum of weight * err over (weight, err) pairs (a zero weight counts as TINY)."""
    return (sum(max(w, TINY) * e[0] for w, e in terms), sum(max(w, TINY) * e[1] for w, e in terms))


def max_err(errs) -> Err:
    errs = list(errs) or [EXACT]
    return (max(e[0] for e in errs), max(e[1] for e in errs))


def is_exact(err: Err) -> bool:
    return err[0] == 0.0 and err[1] == 0.0


def err_moves(ins, errs, out, attrs) -> Err:
    """Moves and selects values (views, cat, where, max): as exact as the operands."""
    return max_err(errs)


def err_lipschitz(factor: float, roundings: float = 1.0):
    """An elementwise op whose derivative is at most `factor`, rounded `roundings` times."""
    def error(ins, errs, out, attrs):
        return add_errs((factor, max_err(errs)), (roundings, rounding(out)))
    return error


def err_add(ins, errs, out, attrs):
    return add_errs(*[(1.0, e) for e in errs], (1.0, rounding(out)))


def err_mul(ins, errs, out, attrs):
    if len(ins) == 1:
        return add_errs((abs(attrs.get("scalar", 1)), errs[0]), (1.0, rounding(out)))
    a, b = ins
    return add_errs((magnitude(b), errs[0]), (magnitude(a), errs[1]), (1.0, rounding(out)))


def err_div_safe(ins, errs, out, attrs):
    """a / (|b| + 1): derivative 1 in a, at most |a| in b; two roundings."""
    if len(ins) == 1:
        return add_errs((1.0 / abs(attrs["scalar"]), errs[0]), (1.0, rounding(out)))
    a, b = ins
    return add_errs((1.0, errs[0]), (magnitude(a), errs[1]), (2.0, rounding(out, magnitude(a) + magnitude(b) + 1)))


def err_exp(ins, errs, out, attrs):
    return add_errs((magnitude(out), errs[0]), (2.0, rounding(out)))


def err_square(ins, errs, out, attrs):
    return add_errs((2 * magnitude(ins[0]), errs[0]), (1.0, rounding(out)))


def err_pow3(ins, errs, out, attrs):
    return add_errs((3 * magnitude(ins[0]) ** 2, errs[0]), (2.0, rounding(out)))


def err_shifted(factor: float):
    """f(|x| + 1) with derivative at most `factor`: the shift rounds too."""
    def error(ins, errs, out, attrs):
        return add_errs((factor, errs[0]), (2.0, rounding(out, magnitude(ins[0]) + 1 + magnitude(out))))
    return error


def _reduced(ins, attrs) -> int:
    """Elements summed into each result (the largest size the reduced dims can have)."""
    x = ins[0]
    dims = attrs.get("dims")
    if dims is None:
        return max(1, x.numel())
    n = 1
    for d in dims:
        n *= x.shape[d]
    return max(1, n)


def err_sum(ins, errs, out, attrs):
    n = _reduced(ins, attrs)
    return add_errs((n, errs[0]), (n, rounding(out, magnitude(ins[0]))))


def err_mean(ins, errs, out, attrs):
    return add_errs((1.0, errs[0]), (2.0, rounding(out, magnitude(ins[0]))))


def err_var(ins, errs, out, attrs):
    m = magnitude(ins[0])
    return add_errs((4 * m, errs[0]), (8.0, rounding(out, m * m + m)))


def err_softmax(ins, errs, out, attrs):
    return add_errs((2.0, errs[0]), (4.0, rounding(out, 1.0)))


def err_log_softmax(ins, errs, out, attrs):
    return add_errs((2.0, errs[0]), (4.0, rounding(out, magnitude(ins[0]) + magnitude(out) + 1)))


def err_matmul(ins, errs, out, attrs):
    """Sum of k products, each operand's error weighted by the other's size."""
    a, b = ins[0], ins[1] if len(ins) > 1 else ins[0]
    ea, eb = errs[0], errs[1] if len(errs) > 1 else errs[0]
    k = a.shape[-1] if a.dim() else 1
    ma, mb = magnitude(a), magnitude(b)
    terms = [(k * mb, ea), (k * ma, eb), (k, rounding(out, ma * mb))]
    if len(ins) > 2:  # bias
        terms += [(1.0, errs[2]), (1.0, rounding(out))]
    return add_errs(*terms)


def err_cast(ins, errs, out, attrs):
    """Widening casts are exact; narrowing float casts round once."""
    source, target = ins[0].dtype, out.dtype
    if not target.is_floating_point:
        return EXACT
    if not source.is_floating_point:
        return EXACT  # int ranges are checked to fit the mantissa when the cast is picked
    narrows = torch.finfo(target).eps > torch.finfo(source).eps
    return add_errs((1.0, errs[0]), (1.0 if narrows else 0.0, rounding(out)))


def err_scaled(factor: float):
    """A constant multiple (leaky_relu's 0.1, ...): rounds once."""
    return err_lipschitz(factor, 1.0)


# ---------------------------------------------------------------- integer ranges

def r_same(ranges, attrs, ins):
    """Moves and selections: within the hull of the operands' ranges."""
    return _hull(list(ranges))


def _hull(ranges):
    if not ranges or any(r is None for r in ranges):
        return None
    return (min(r[0] for r in ranges), max(r[1] for r in ranges))


def _scalar_range(attrs):
    s = attrs.get("scalar")
    return None if s is None else (int(s), int(s))


def _operand_ranges(ranges, attrs):
    rs = list(ranges)
    if len(rs) == 1 and "scalar" in attrs:
        rs.append(_scalar_range(attrs))
    return rs


def r_add(ranges, attrs, ins):
    a, b = _operand_ranges(ranges, attrs)
    return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])


def r_sub(ranges, attrs, ins):
    a, b = _operand_ranges(ranges, attrs)
    return None if a is None or b is None else (a[0] - b[1], a[1] - b[0])


def r_mul(ranges, attrs, ins):
    a, b = _operand_ranges(ranges, attrs)
    if a is None or b is None:
        return None
    products = [x * y for x in a for y in b]
    return (min(products), max(products))


def r_neg(ranges, attrs, ins):
    a = ranges[0]
    return None if a is None else (-a[1], -a[0])


def r_abs(ranges, attrs, ins):
    a = ranges[0]
    if a is None:
        return None
    high = max(abs(a[0]), abs(a[1]))
    return (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])), high)


def r_relu(ranges, attrs, ins):
    a = ranges[0]
    return None if a is None else (max(a[0], 0), max(a[1], 0))


def r_square(ranges, attrs, ins):
    a = r_abs(ranges, attrs, ins)
    return None if a is None else (a[0] ** 2, a[1] ** 2)


def r_maximum(ranges, attrs, ins):
    a, b = _operand_ranges(ranges, attrs)
    return None if a is None or b is None else (max(a[0], b[0]), max(a[1], b[1]))


def r_minimum(ranges, attrs, ins):
    a, b = _operand_ranges(ranges, attrs)
    return None if a is None or b is None else (min(a[0], b[0]), min(a[1], b[1]))


def r_clamp(ranges, attrs, ins):
    a = ranges[0]
    lo, hi = attrs["low"], attrs["high"]
    return None if a is None else (min(max(a[0], lo), hi), max(min(a[1], hi), lo))


def r_bitwise(ranges, attrs, ins):
    rs = _operand_ranges(ranges, attrs)
    if any(r is None for r in rs):
        return None
    bits = max(max(abs(r[0]), abs(r[1])).bit_length() for r in rs)
    if all(r[0] >= 0 for r in rs):
        return (0, 2**bits - 1)
    return (-(2**bits), 2**bits - 1)


def r_bitwise_not(ranges, attrs, ins):
    a = ranges[0]
    return None if a is None else (-a[1] - 1, -a[0] - 1)


def r_floordiv(ranges, attrs, ins):
    a, s = ranges[0], attrs["scalar"]
    return None if a is None else (a[0] // s, a[1] // s)


def r_remainder(ranges, attrs, ins):
    return (0, attrs["scalar"] - 1)


def r_sum(ranges, attrs, ins):
    a = ranges[0]
    n = attrs.get("_n", 1)
    return None if a is None else (min(a[0] * n, a[0]), max(a[1] * n, a[1]))


def r_index(ranges, attrs, ins):
    return (0, max(0, attrs.get("_n", 1) - 1))


def r_bool(ranges, attrs, ins):
    return (0, 1)


def r_const(ranges, attrs, ins):
    s = attrs.get("scalar", 0)
    return (int(s), int(s))


def r_literal(ranges, attrs, ins):
    flat = _flatten(attrs["values"])
    return (int(min(flat)), int(max(flat))) if flat else (0, 0)


def r_cast(ranges, attrs, ins):
    """Casts to an integer type: the operand's range (a bool's is 0..1, a float's its bound)."""
    a = ranges[0]
    if a is None and "_bound" in attrs:
        b = int(attrs["_bound"]) + 1
        return (-b, b)
    return a if a is not None else (0, 1)


def _flatten(values):
    if isinstance(values, list):
        return [v for x in values for v in _flatten(x)]
    return [values]


# ---------------------------------------------------------------- picking helpers

def is_float(v):
    return v.is_float


def is_numeric(v):
    return v.numeric


def is_int(v):
    return v.is_int


def is_bool(v):
    return v.is_bool


def is_f32(v):
    return v.dtype == "float32"


def exact_or_int(v):
    return v.is_int or v.is_bool or (v.is_float and v.exact)


def scalar_for(p, v):
    """A Python scalar of v's kind: a float for floats, an int for ints, True/False for bools."""
    return p.scalar(v.dtype)


def pick_unary(pred, extra=None):
    def pick(p):
        v = p.choose(lambda v: pred(v) and (extra is None or extra(v)))
        return None if v is None else ([v.name], {})
    return pick


def pick_binary(pred, scalar=True, needs_exact=False):
    """Two operands of one dtype and shape (or the second a suffix of the first), or one and a scalar."""
    def pick(p):
        def ok(v):
            return pred(v) and (not needs_exact or exact_or_int(v))
        a = p.choose(ok)
        if a is None:
            return None
        if scalar and p.rng.random() < 0.3:
            return [a.name], {"scalar": scalar_for(p, a)}
        partners = [b for b in p.same(a) if ok(b)] + [b for b in p.broadcastable(a) if ok(b)]
        b = p.rng.choice(partners) if partners else a
        order = [a.name, b.name] if p.rng.random() < 0.7 else [b.name, a.name]
        return order, {}
    return pick


def pick_dim(p, v, static=False, min_size=1):
    """A dimension of v (static only when asked), or None."""
    dims = [d for d in range(v.rank) if (not static or v.static(d)) and v.shape[d] >= min_size]
    return p.rng.choice(dims) if dims else None


def pick_reduction(pred, keepdim=True, min_size=1, needs_exact=False, static=False):
    def pick(p):
        v = p.choose(lambda v: pred(v) and v.rank >= 1 and (not needs_exact or exact_or_int(v)))
        if v is None:
            return None
        d = pick_dim(p, v, static=static, min_size=min_size)
        if d is None:
            return None
        attrs = {"dim": d if p.rng.random() < 0.8 else d - v.rank, "_n": v.shape_max[d]}
        if keepdim:
            attrs["keepdim"] = p.rng.random() < 0.3
        return [v.name], attrs
    return pick


def code_call(template: str) -> Callable:
    """``template`` with {0}, {1}, ... for the operands and {name} for attributes."""
    def code(args, attrs):
        return template.format(*args, **attrs)
    return code


def code_binary(function: str) -> Callable:
    def code(args, attrs):
        if "scalar" in attrs:
            return f"{function}({args[0]}, {attrs['scalar']!r})"
        return f"{function}({args[0]}, {args[1]})"
    return code


# ---------------------------------------------------------------- the catalog

@dataclass(frozen=True)
class OpDef:
    name: str
    group: str
    code: Callable
    pick: Callable
    error: Callable = err_moves
    int_range: Callable = r_same
    inplace: bool = False
    weight: float = 1.0
    # A result whose int range goes past int32 is refused when the op computes new values.
    computes: bool = True
    notes: str = ""


OPS: dict = {}


def op(name, group, code, pick, **kw):
    OPS[name] = OpDef(name, group, code, pick, **kw)


# -- elementwise, one operand
op("neg", "elementwise", code_call("torch.neg({0})"), pick_unary(is_numeric), int_range=r_neg)
op("abs", "elementwise", code_call("torch.abs({0})"), pick_unary(is_numeric), int_range=r_abs)
op("relu", "activation", code_call("torch.relu({0})"), pick_unary(is_numeric), int_range=r_relu)
op("sigmoid", "activation", code_call("torch.sigmoid({0})"), pick_unary(is_float), error=err_lipschitz(0.25, 2))
op("tanh", "activation", code_call("torch.tanh({0})"), pick_unary(is_float), error=err_lipschitz(1, 2))
op("gelu", "activation", code_call("F.gelu({0})"), pick_unary(is_float), error=err_lipschitz(1.13, 3))
op("gelu_tanh", "activation", code_call("F.gelu({0}, approximate='tanh')"), pick_unary(is_float),
   error=err_lipschitz(1.13, 3))
op("silu", "activation", code_call("F.silu({0})"), pick_unary(is_float), error=err_lipschitz(1.1, 3))
op("elu", "activation", code_call("F.elu({0})"), pick_unary(is_float), error=err_lipschitz(1, 2))
op("leaky_relu", "activation", code_call("F.leaky_relu({0}, 0.1)"), pick_unary(is_float), error=err_scaled(1))
op("hardtanh", "activation", code_call("F.hardtanh({0})"), pick_unary(is_float))
op("hardswish", "activation", code_call("F.hardswish({0})"), pick_unary(is_float), error=err_lipschitz(1.5, 3))
op("hardsigmoid", "activation", code_call("F.hardsigmoid({0})"), pick_unary(is_float), error=err_lipschitz(0.2, 2))
op("sin", "elementwise", code_call("torch.sin({0})"), pick_unary(is_float), error=err_lipschitz(1, 2))
op("cos", "elementwise", code_call("torch.cos({0})"), pick_unary(is_float), error=err_lipschitz(1, 2))
op("erf", "elementwise", code_call("torch.erf({0})"), pick_unary(is_float), error=err_lipschitz(1.13, 2))
op("exp", "elementwise", code_call("torch.exp({0})"), pick_unary(is_float, lambda v: v.bound <= 8), error=err_exp)
op("log1p_abs", "elementwise", code_call("torch.log1p(torch.abs({0}))"), pick_unary(is_float),
   error=err_shifted(1))
op("sqrt_abs1", "elementwise", code_call("torch.sqrt(torch.abs({0}) + 1)"), pick_unary(is_float),
   error=err_shifted(0.5))
op("rsqrt_abs1", "elementwise", code_call("torch.rsqrt(torch.abs({0}) + 1)"), pick_unary(is_float),
   error=err_shifted(0.5))
op("reciprocal_abs1", "elementwise", code_call("torch.reciprocal(torch.abs({0}) + 1)"), pick_unary(is_float),
   error=err_shifted(1))
op("square", "elementwise", code_call("torch.square({0})"),
   pick_unary(is_numeric, lambda v: v.bound <= 100 or not v.is_float), error=err_square, int_range=r_square)
op("pow3", "elementwise", code_call("torch.pow({0}, 3)"), pick_unary(is_float, lambda v: v.bound <= 20),
   error=err_pow3)
for _name in ("floor", "ceil", "round", "trunc"):
    op(_name, "rounding", code_call(f"torch.{_name}({{0}})"), pick_unary(is_float, exact_or_int),
       notes="operand exact: a one-ulp difference may move the result by 1")
op("sign", "rounding", code_call("torch.sign({0})"), pick_unary(is_numeric, exact_or_int),
   int_range=lambda r, a, i: (-1, 1))


def _pick_clamp(p):
    v = p.choose(is_numeric)
    if v is None:
        return None
    if v.is_float:
        r = p.rng.choice([0.5, 1.0, 2.0])
        return [v.name], {"low": -r, "high": r * p.rng.choice([0.5, 1.0])}
    low = p.rng.randint(-5, 0)
    return [v.name], {"low": low, "high": low + p.rng.randint(1, 10)}


op("clamp", "elementwise", code_call("torch.clamp({0}, {low!r}, {high!r})"), _pick_clamp, int_range=r_clamp)
op("logical_not", "logical", code_call("torch.logical_not({0})"), pick_unary(is_bool), int_range=r_bool)
op("bitwise_not", "logical", code_call("torch.bitwise_not({0})"), pick_unary(lambda v: v.is_int or v.is_bool),
   int_range=r_bitwise_not)

# -- elementwise, two operands
op("add", "arithmetic", code_binary("torch.add"), pick_binary(is_numeric), error=err_add, int_range=r_add,
   weight=2)
op("sub", "arithmetic", code_binary("torch.sub"), pick_binary(is_numeric), error=err_add, int_range=r_sub,
   weight=1.5)
op("mul", "arithmetic", code_binary("torch.mul"), pick_binary(is_numeric), error=err_mul, int_range=r_mul,
   weight=2)


def _code_div_safe(args, attrs):
    if "scalar" in attrs:
        return f"torch.div({args[0]}, {attrs['scalar']!r})"
    return f"torch.div({args[0]}, torch.abs({args[1]}) + 1)"


def _pick_div_safe(p):
    picked = pick_binary(is_float)(p)
    if picked and "scalar" in picked[1]:
        picked[1]["scalar"] = p.rng.choice([2.0, 0.5, -4.0, 3.0])
    return picked


op("div_safe", "arithmetic", _code_div_safe, _pick_div_safe, error=err_div_safe)
op("maximum", "elementwise", code_binary("torch.maximum"), pick_binary(is_numeric, scalar=False),
   int_range=r_maximum)
op("minimum", "elementwise", code_binary("torch.minimum"), pick_binary(is_numeric, scalar=False),
   int_range=r_minimum)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    op(_name, "logical", code_binary(f"torch.{_name}"), pick_binary(lambda v: v.is_int or v.is_bool, scalar=False),
       int_range=r_bitwise)
for _name in ("logical_and", "logical_or", "logical_xor"):
    op(_name, "logical", code_binary(f"torch.{_name}"), pick_binary(is_bool, scalar=False), int_range=r_bool)


def _pick_int_scalar(p):
    v = p.choose(is_int)
    return None if v is None else ([v.name], {"scalar": p.rng.randint(2, 5)})


op("floordiv_scalar", "arithmetic", code_binary("torch.floor_divide"), _pick_int_scalar, int_range=r_floordiv,
   notes="integer floor division stays on ExecuTorch (OpenVINO truncates)")
op("remainder_scalar", "arithmetic", code_binary("torch.remainder"), _pick_int_scalar, int_range=r_remainder)
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    op(_name, "comparison", code_binary(f"torch.{_name}"), pick_binary(is_numeric, needs_exact=True),
       int_range=r_bool, weight=0.5, notes="operands exact: a one-ulp difference may flip a comparison")


# -- where, masked_fill
def _pick_where(p):
    cond = p.choose(is_bool)
    if cond is None:
        return None
    values = [v for v in p.with_shape(cond) if v.name != cond.name or p.rng.random() < 0.2]
    if not values:
        return None
    a = p.rng.choice(values)
    if p.rng.random() < 0.3:
        return [cond.name, a.name], {"scalar": scalar_for(p, a)}
    partners = [b for b in p.same(a)] + p.broadcastable(a)
    b = p.rng.choice(partners) if partners else a
    return [cond.name, a.name, b.name], {}


def _code_where(args, attrs):
    if "scalar" in attrs:
        return f"torch.where({args[0]}, {args[1]}, {attrs['scalar']!r})"
    return f"torch.where({args[0]}, {args[1]}, {args[2]})"


def _where_range(ranges, attrs, ins):
    rs = ranges[1:] + ([_scalar_range(attrs)] if "scalar" in attrs else [])
    return _hull(rs)


op("where", "selection", _code_where, _pick_where, int_range=_where_range, weight=1.5)


def _pick_masked_fill(p):
    mask = p.choose(is_bool)
    if mask is None:
        return None
    values = p.with_shape(mask)
    if not values:
        return None
    v = p.rng.choice(values)
    return [v.name, mask.name], {"scalar": scalar_for(p, v)}


op("masked_fill", "selection", code_call("torch.masked_fill({0}, {1}, {scalar!r})"), _pick_masked_fill,
   int_range=lambda r, a, i: _hull([r[0], _scalar_range(a)]))


# -- casts and aliases
CAST_TARGETS = ("float32", "float16", "float64", "int32", "int64", "bool")
MANTISSA_RANGE = {"float32": 2**24, "float16": 2**11, "float64": 2**53}


def cast_allowed(v: ValueInfo, target: str) -> bool:
    """Casts whose result is defined the same everywhere for every value v can take."""
    if target == v.dtype:
        return False
    if v.is_float and target in INTS + ("bool",):
        return v.exact and v.bound < 2**30
    if v.is_int and target in FLOATS:
        return v.range is not None and max(abs(v.range[0]), abs(v.range[1])) <= MANTISSA_RANGE[target]
    if v.is_int and target == "int32":
        return v.range is not None and INT32_RANGE[0] <= v.range[0] and v.range[1] <= INT32_RANGE[1]
    return True


def _pick_cast(p):
    v = p.choose(lambda v: any(cast_allowed(v, t) for t in CAST_TARGETS))
    if v is None:
        return None
    target = p.rng.choice([t for t in CAST_TARGETS if cast_allowed(v, t)])
    attrs = {"dtype": target}
    if v.is_float and target in INTS:
        attrs["_bound"] = v.bound
    return [v.name], attrs


op("cast", "cast", code_call("{0}.to(torch.{dtype})"), _pick_cast, error=err_cast, int_range=r_cast,
   computes=False, weight=2)
op("to_same", "alias", code_call("{0}.to({0}.dtype)"), pick_unary(lambda v: True), computes=False, weight=0.3,
   notes="returns its operand itself")
op("contiguous", "alias", code_call("{0}.contiguous()"), pick_unary(lambda v: True), computes=False, weight=0.3)
op("alias_view", "alias", code_call("{0}.view({0}.shape)"), pick_unary(lambda v: True), computes=False,
   weight=0.3)
op("detach", "alias", code_call("{0}.detach()"), pick_unary(lambda v: True), computes=False, weight=0.2)
op("clone", "alias", code_call("{0}.clone()"), pick_unary(lambda v: True), computes=False, weight=0.3)


# -- views and moves
def _pick_flatten(p):
    v = p.choose(lambda v: v.rank >= 2)
    if v is None:
        return None
    d = p.rng.randrange(v.rank - 1)
    return [v.name], {"start": d, "end": d + 1}


def _pick_unflatten(p):
    v = p.choose(lambda v: any(v.static(d) and _divisors(v.shape[d]) for d in range(v.rank)) and v.rank <= 3)
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d) and _divisors(v.shape[d])])
    a = p.rng.choice(_divisors(v.shape[d]))
    return [v.name], {"dim": d, "sizes": (a, v.shape[d] // a)}


def _divisors(n):
    return [a for a in range(2, n) if n % a == 0]


def _pick_reshape_static(p):
    v = p.choose(lambda v: v.all_static and 1 < _numel(v.shape) and v.rank <= 3)
    if v is None:
        return None
    n = _numel(v.shape)
    options = [(n,), (1, n), (n, 1)] + [(a, n // a) for a in _divisors(n)]
    return [v.name], {"shape": p.rng.choice(options)}


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _pick_unsqueeze(p):
    v = p.choose(lambda v: v.rank <= 3)
    return None if v is None else ([v.name], {"dim": p.rng.randint(-v.rank - 1, v.rank)})


def _pick_squeeze(p):
    v = p.choose(lambda v: any(v.shape[d] == 1 and v.static(d) for d in range(v.rank)))
    if v is None:
        return None
    return [v.name], {"dim": p.rng.choice([d for d in range(v.rank) if v.shape[d] == 1 and v.static(d)])}


def _pick_transpose(p):
    v = p.choose(lambda v: v.rank >= 2)
    if v is None:
        return None
    a, b = p.rng.sample(range(v.rank), 2)
    return [v.name], {"a": a, "b": b}


def _pick_permute(p):
    v = p.choose(lambda v: v.rank >= 2)
    if v is None:
        return None
    perm = list(range(v.rank))
    p.rng.shuffle(perm)
    return [v.name], {"perm": tuple(perm)}


def _pick_slice(p):
    v = p.choose(lambda v: v.rank >= 1 and any(v.shape[d] >= 2 for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.shape[d] >= 2])
    if v.static(d):
        s = v.shape[d]
        start = p.rng.randrange(s)
        stop = p.rng.randint(start + 1, s)
        step = p.rng.choice([1, 1, 2])
        part = f"{start or ''}:{stop if stop < s else ''}{':2' if step == 2 else ''}"
        if part == ":":
            part = ":" if p.rng.random() < 0.5 else "0:"  # a full slice: a view of everything
    else:
        part = p.rng.choice(["1:", ":-1"])
    index = ", ".join([":"] * d + [part])
    return [v.name], {"index": index}


def _pick_narrow(p):
    v = p.choose(lambda v: any(v.static(d) and v.shape[d] >= 2 for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d) and v.shape[d] >= 2])
    start = p.rng.randrange(v.shape[d] - 1)
    return [v.name], {"dim": d, "start": start, "length": p.rng.randint(1, v.shape[d] - start)}


def _pick_select(p):
    v = p.choose(lambda v: any(v.static(d) for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d)])
    return [v.name], {"dim": d, "index": p.rng.randint(-v.shape[d], v.shape[d] - 1)}


def _pick_expand(p):
    v = p.choose(lambda v: v.rank <= 3)
    if v is None:
        return None
    ones = [d for d in range(v.rank) if v.shape[d] == 1 and v.static(d)]
    sizes = [-1] * v.rank
    if ones and p.rng.random() < 0.7:
        for d in ones:
            sizes[d] = p.rng.randint(2, 4)
    else:
        sizes = [p.rng.randint(2, 3)] + sizes
    return [v.name], {"sizes": tuple(sizes)}


def _pick_flip(p):
    v = p.choose(lambda v: v.rank >= 1)
    if v is None:
        return None
    return [v.name], {"dims": tuple(sorted(p.rng.sample(range(v.rank), p.rng.randint(1, v.rank))))}


def _pick_roll(p):
    v = p.choose(lambda v: any(v.static(d) for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d)])
    return [v.name], {"shift": p.rng.randint(1, 3), "dim": d}


def _pick_repeat(p):
    v = p.choose(lambda v: v.all_static and 1 <= v.rank <= 3 and _numel(v.shape) <= 256)
    if v is None:
        return None
    return [v.name], {"repeats": tuple(p.rng.choice([1, 2]) for _ in range(v.rank))}


def _pick_cat(p, stack=False):
    v = p.choose(lambda v: v.rank >= 1 or stack)
    if v is None:
        return None
    d = p.rng.randrange(v.rank + 1 if stack else v.rank)
    if stack:
        partners = p.same(v)
    else:
        partners = [w for w in p.values() if w.dtype == v.dtype and w.rank == v.rank
                    and all(w.shape[i] == v.shape[i] and w.shape_max[i] == v.shape_max[i]
                            for i in range(v.rank) if i != d)]
    chosen = [v] + [p.rng.choice(partners) for _ in range(p.rng.randint(1, 2))]
    p.rng.shuffle(chosen)
    return [w.name for w in chosen], {"dim": d}


def _code_list(function):
    def code(args, attrs):
        return f"{function}([{', '.join(args)}], {attrs['dim']})"
    return code


def _pick_index_select(p):
    v = p.choose(lambda v: any(v.static(d) for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d)])
    index = [p.rng.randrange(v.shape[d]) for _ in range(p.rng.randint(1, 4))]
    return [v.name], {"dim": d, "index": index}


def _pick_split(p, unbind=False):
    v = p.choose(lambda v: any(v.static(d) and v.shape[d] >= 2 for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d) and v.shape[d] >= 2])
    if unbind:
        return [v.name], {"dim": d, "item": p.rng.randrange(v.shape[d])}
    size = p.rng.randint(1, v.shape[d] - 1)
    pieces = -(-v.shape[d] // size)
    return [v.name], {"dim": d, "size": size, "item": p.rng.randrange(pieces)}


def _pick_pad(p):
    v = p.choose(lambda v: v.is_float and v.rank >= 1)
    if v is None:
        return None
    return [v.name], {"pad": (p.rng.randint(0, 2), p.rng.randint(0, 2)), "value": p.rng.choice([0.0, 1.5])}


def _pick_tril(p):
    v = p.choose(lambda v: v.rank >= 2 and v.numeric)
    return None if v is None else ([v.name], {"diagonal": p.rng.randint(-1, 1)})


op("flatten", "view", code_call("torch.flatten({0}, {start}, {end})"), _pick_flatten, computes=False)
op("unflatten", "view", code_call("torch.unflatten({0}, {dim}, {sizes})"), _pick_unflatten, computes=False)
op("reshape_flat", "view", code_call("{0}.reshape(-1)"), pick_unary(lambda v: True), computes=False)
op("reshape_static", "view", code_call("{0}.reshape({shape})"), _pick_reshape_static, computes=False)
op("unsqueeze", "view", code_call("torch.unsqueeze({0}, {dim})"), _pick_unsqueeze, computes=False)
op("squeeze", "view", code_call("torch.squeeze({0}, {dim})"), _pick_squeeze, computes=False)
op("transpose", "view", code_call("torch.transpose({0}, {a}, {b})"), _pick_transpose, computes=False)
op("permute", "view", code_call("torch.permute({0}, {perm})"), _pick_permute, computes=False)
op("slice", "view", code_call("{0}[{index}]"), _pick_slice, computes=False, weight=1.5)
op("narrow", "view", code_call("torch.narrow({0}, {dim}, {start}, {length})"), _pick_narrow, computes=False)
op("select", "view", code_call("torch.select({0}, {dim}, {index})"), _pick_select, computes=False)
op("expand", "view", code_call("{0}.expand({sizes})"), _pick_expand, computes=False)
op("flip", "view", code_call("torch.flip({0}, {dims})"), _pick_flip, computes=False, weight=0.5)
op("roll", "view", code_call("torch.roll({0}, {shift}, {dim})"), _pick_roll, computes=False, weight=0.5)
op("repeat", "view", code_call("{0}.repeat({repeats})"), _pick_repeat, computes=False, weight=0.5)
op("cat", "view", _code_list("torch.cat"), _pick_cat, computes=False, weight=1.5)
op("stack", "view", _code_list("torch.stack"), lambda p: _pick_cat(p, stack=True), computes=False, weight=0.7)
op("index_select", "selection", code_call("torch.index_select({0}, {dim}, torch.tensor({index}))"),
   _pick_index_select, computes=False, weight=0.7)
op("split_item", "view", code_call("torch.split({0}, {size}, {dim})[{item}]"), _pick_split, computes=False,
   weight=0.5)
op("unbind_item", "view", code_call("torch.unbind({0}, {dim})[{item}]"), lambda p: _pick_split(p, unbind=True),
   computes=False, weight=0.5)
op("pad", "view", code_call("F.pad({0}, {pad}, value={value!r})"), _pick_pad, weight=0.5,
   error=lambda i, e, o, a: max_err(e))
op("tril", "selection", code_call("torch.tril({0}, {diagonal})"), _pick_tril, computes=False, weight=0.5)


# -- reductions
def _reduce_code(function):
    def code(args, attrs):
        keep = f", keepdim={attrs['keepdim']}" if "keepdim" in attrs else ""
        return f"{function}({args[0]}, {attrs['dim']}{keep})"
    return code


def _with_dims(error):
    """Reduction errors see the reduced dims as attrs['dims']."""
    def wrapped(ins, errs, out, attrs):
        dim = attrs.get("dim")
        dims = None if dim is None else [dim % max(1, ins[0].dim())]
        return error(ins, errs, out, {**attrs, "dims": dims})
    return wrapped


op("sum_dim", "reduction", _reduce_code("torch.sum"), pick_reduction(is_numeric), error=_with_dims(err_sum),
   int_range=r_sum, weight=1.5)
op("mean_dim", "reduction", _reduce_code("torch.mean"), pick_reduction(is_float), error=err_mean)
op("amax_dim", "reduction", _reduce_code("torch.amax"), pick_reduction(is_numeric), computes=False)
op("amin_dim", "reduction", _reduce_code("torch.amin"), pick_reduction(is_numeric), computes=False)
op("argmax_dim", "reduction", _reduce_code("torch.argmax"), pick_reduction(is_numeric, needs_exact=True),
   int_range=r_index, notes="operand exact: argmax of values that differ in the last ulp may move")
op("argmin_dim", "reduction", _reduce_code("torch.argmin"), pick_reduction(is_numeric, needs_exact=True),
   int_range=r_index)
op("max_dim_values", "reduction", lambda a, t: _reduce_code("torch.max")(a, t) + ".values",
   pick_reduction(is_numeric), computes=False, weight=0.5)
op("max_dim_indices", "reduction", lambda a, t: _reduce_code("torch.max")(a, t) + ".indices",
   pick_reduction(is_numeric, needs_exact=True), int_range=r_index, weight=0.5)
op("var_dim", "reduction", _reduce_code("torch.var"), pick_reduction(is_float, min_size=2, static=False),
   error=err_var, weight=0.5)
op("softmax", "reduction", _reduce_code("torch.softmax"), pick_reduction(is_float, keepdim=False),
   error=err_softmax)
op("log_softmax", "reduction", _reduce_code("torch.log_softmax"), pick_reduction(is_float, keepdim=False),
   error=err_log_softmax)
op("logsumexp", "reduction", _reduce_code("torch.logsumexp"), pick_reduction(is_float), error=err_log_softmax,
   weight=0.5)
op("cumsum", "reduction", lambda a, t: f"torch.cumsum({a[0]}, {t['dim']})", pick_reduction(is_numeric, keepdim=False),
   error=_with_dims(err_sum), int_range=r_sum, weight=0.5)
op("any_dim", "reduction", _reduce_code("torch.any"), pick_reduction(is_bool), int_range=r_bool, weight=0.5)


def _pick_all(pred):
    def pick(p):
        v = p.choose(pred)
        return None if v is None else ([v.name], {"_n": max(1, _numel(v.shape_max))})
    return pick


op("sum_all", "reduction", code_call("torch.sum({0})"), _pick_all(is_numeric), error=err_sum, int_range=r_sum)
op("mean_all", "reduction", code_call("torch.mean({0})"), _pick_all(is_float), error=err_mean, weight=0.5)
op("amax_all", "reduction", code_call("torch.amax({0})"), _pick_all(is_numeric), computes=False, weight=0.5)


def _pick_topk(p, sort=False):
    # ExecuTorch has no sort kernel: only what the delegate takes (exact float32) is sorted.
    v = p.choose(lambda v: (v.dtype == "float32" and v.exact if sort else v.numeric and exact_or_int(v))
                 and any(v.static(d) for d in range(v.rank)))
    if v is None:
        return None
    d = p.rng.choice([d for d in range(v.rank) if v.static(d)])
    if sort:
        return [v.name], {"dim": d, "descending": p.rng.random() < 0.5}
    return [v.name], {"k": p.rng.randint(1, v.shape[d]), "dim": d}


op("topk_values", "reduction", code_call("torch.topk({0}, {k}, {dim}).values"), _pick_topk, computes=False,
   weight=0.5, notes="values only: the order of tied indices is not specified")
op("sort_values", "reduction", code_call("torch.sort({0}, {dim}, descending={descending}).values"),
   lambda p: _pick_topk(p, sort=True), computes=False, weight=0.5)


# -- matrix products and embedding
def _pick_linear(p):
    a = p.choose(lambda v: is_f32(v) and 1 <= v.rank <= 3 and v.static(v.rank - 1) and v.shape[-1] >= 1)
    if a is None:
        return None
    k, n = a.shape[-1], p.rng.choice([1, 3, 4, 8])
    weight = p.new_tensor("parameter", "float32", (n, k))
    args = [a.name, weight.name]
    if p.rng.random() < 0.6:
        args.append(p.new_tensor("parameter", "float32", (n,)).name)
    return args, {}


def _code_linear(args, attrs):
    return f"F.linear({', '.join(args)})"


def _pick_matmul(p):
    a = p.choose(lambda v: is_f32(v) and 1 <= v.rank <= 3 and v.static(v.rank - 1))
    if a is None:
        return None
    k = a.shape[-1]
    existing = [w for w in p.values() if is_f32(w) and w.rank == 2 and w.all_static and w.shape[0] == k]
    if existing and p.rng.random() < 0.5:
        return [a.name, p.rng.choice(existing).name], {}
    kind = p.rng.choice(["parameter", "parameter", "buffer", "constant"])
    return [a.name, p.new_tensor(kind, "float32", (k, p.rng.choice([1, 2, 5]))).name], {}


def _pick_gram(p):
    a = p.choose(lambda v: is_f32(v) and 2 <= v.rank <= 3)
    return None if a is None else ([a.name], {})


def _pick_bmm(p):
    a = p.choose(lambda v: is_f32(v) and v.rank == 3 and v.all_static)
    if a is None:
        return None
    b = p.new_tensor("parameter", "float32", (a.shape[0], a.shape[2], p.rng.choice([2, 3])))
    return [a.name, b.name], {}


op("linear", "matmul", _code_linear, _pick_linear, error=err_matmul, weight=1.5)
op("matmul", "matmul", code_call("torch.matmul({0}, {1})"), _pick_matmul, error=err_matmul, weight=1.5)
op("gram", "matmul", code_call("torch.matmul({0}, {0}.transpose(-1, -2))"), _pick_gram, error=err_matmul,
   weight=0.7)
op("bmm", "matmul", code_call("torch.bmm({0}, {1})"), _pick_bmm, error=err_matmul, weight=0.5)


def _pick_embedding(p):
    indices = p.choose(lambda v: v.is_int and v.range is not None and v.range[0] >= 0 and v.range[1] < 64
                       and v.rank <= 2)
    if indices is None or p.rng.random() < 0.3:
        rows = p.rng.choice([4, 10, 33])
        shape = p.random_shape(max_rank=2, min_rank=1)
        indices = p.new_input(p.rng.choice(INTS), shape, 0, rows - 1)
        high = rows - 1
    else:
        high = indices.range[1]
    weight = p.new_tensor("parameter", "float32", (high + 1 + p.rng.randint(0, 2), p.rng.choice([2, 4, 8])))
    return [indices.name, weight.name], {}


op("embedding", "embedding", code_call("F.embedding({0}, {1})"), _pick_embedding, weight=1.0)


def _pick_index_tensor(p):
    """x[i] with an int tensor i whose values are rows of x (known to be in range)."""
    x = p.choose(lambda v: v.rank >= 1 and v.static(0) and v.shape[0] >= 1 and v.rank <= 3)
    if x is None:
        return None
    rows = x.shape[0]
    index = p.choose(lambda v: v.is_int and v.range is not None and v.range[0] >= -rows and v.range[1] < rows
                     and v.rank <= 2 and v.name != x.name)
    if index is None or p.rng.random() < 0.4:
        index = p.new_input(p.rng.choice(INTS), p.random_shape(max_rank=2, min_rank=1), -rows, rows - 1)
    return [x.name, index.name], {}


def err_layer_norm(ins, errs, out, attrs):
    """(x - mean) / sqrt(var + eps): errors scale with 1 / std; the variance rounds with |x|**2."""
    x = ins[0].double()
    std = float((x.var(-1, unbiased=False) + 1e-5).sqrt().min()) if x.numel() else 1.0
    n, m = x.shape[-1], magnitude(ins[0])
    return add_errs((2 / std, errs[0]), (4.0, rounding(out, magnitude(out) + (n ** 0.5) * (m * m + m) / std ** 2)))


def _pick_layer_norm(p):
    v = p.choose(lambda v: v.dtype == "float32" and v.rank >= 1 and v.static(v.rank - 1) and v.shape[-1] >= 2)
    return None if v is None else ([v.name], {"n": v.shape[-1]})


op("index_tensor", "selection", code_call("{0}[{1}]"), _pick_index_tensor, computes=False, weight=0.7)
op("layer_norm", "reduction", code_call("F.layer_norm({0}, [{n}])"), _pick_layer_norm, error=err_layer_norm,
   weight=0.6)


# -- constants made in forward
def _pick_literal(p):
    v = p.choose(lambda v: v.all_static and _numel(v.shape) <= 16)
    shape = v.shape if v is not None and p.rng.random() < 0.8 else p.random_shape(max_rank=2, static=True)
    dtype = v.dtype if v is not None else p.rng.choice(["float32", "int32", "int64", "bool"])
    n = _numel(shape)
    if dtype in FLOATS:
        flat = [round(p.rng.uniform(-2, 2), 2) for _ in range(n)]
    elif dtype == "bool":
        flat = [p.rng.random() < 0.5 for _ in range(n)]
    else:
        flat = [p.rng.randint(-10, 10) for _ in range(n)]
    return [], {"values": _nest(flat, shape), "dtype": dtype}


def _nest(flat, shape):
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _pick_like(p, fill=False):
    v = p.choose(lambda v: True)
    if v is None:
        return None
    return [v.name], ({"scalar": scalar_for(p, v)} if fill else {})


def _pick_arange(p):
    v = p.choose(lambda v: v.rank >= 1)
    if v is None:
        return None
    d = p.rng.randrange(v.rank)
    return [v.name], {"dim": d, "dtype": p.rng.choice(["int64", "int32", "float32"]), "_n": v.shape_max[d]}


def _pick_full(p):
    v = p.choose(lambda v: True)
    if v is None:
        return None
    dtype = p.rng.choice(["float32", "int64", "int32", "bool"])
    return [v.name], {"dtype": dtype, "scalar": p.scalar(dtype)}


op("literal", "constant", lambda a, t: f"torch.tensor({t['values']!r}, dtype=torch.{t['dtype']})", _pick_literal,
   int_range=lambda r, a, i: r_literal(r, a, i), computes=False)
op("ones_like", "constant", code_call("torch.ones_like({0})"), _pick_like, int_range=lambda r, a, i: (1, 1),
   computes=False, weight=0.5)
op("zeros_like", "constant", code_call("torch.zeros_like({0})"), _pick_like, int_range=lambda r, a, i: (0, 0),
   computes=False, weight=0.5)
op("full_like", "constant", code_call("torch.full_like({0}, {scalar!r})"), lambda p: _pick_like(p, fill=True),
   int_range=r_const, computes=False, weight=0.5)
op("arange_dim", "constant", code_call("torch.arange({0}.shape[{dim}], dtype=torch.{dtype})"), _pick_arange,
   int_range=r_index, computes=False, weight=0.7)
op("full_shape", "constant", code_call("torch.full({0}.shape, {scalar!r}, dtype=torch.{dtype})"), _pick_full,
   int_range=r_const, computes=False, weight=0.5)


# -- in place, on an input or a buffer
def _pick_inplace(p, with_value=False, scalar=True, pred=is_numeric):
    target = p.choose(lambda v: v.root is not None and pred(v))
    if target is None:
        return None
    if with_value:
        sources = [v for v in p.same(target) if v.name != target.name] + p.broadcastable(target)
        if sources and (not scalar or p.rng.random() < 0.6):
            return [target.name, p.rng.choice(sources).name], {}
        if not scalar:
            return None
    return [target.name], {"scalar": scalar_for(p, target)}


def _code_inplace(method):
    def code(args, attrs):
        if len(args) == 2:
            return f"{args[0]}.{method}({args[1]})"
        return f"{args[0]}.{method}({attrs['scalar']!r})"
    return code


def _pick_fill_slice(p):
    target = p.choose(lambda v: v.root is not None and any(v.static(d) and v.shape[d] >= 2 for d in range(v.rank)))
    if target is None:
        return None
    d = p.rng.choice([d for d in range(target.rank) if target.static(d) and target.shape[d] >= 2])
    start = p.rng.randrange(target.shape[d])
    index = ", ".join([":"] * d + [f"{start}:{start + 1}"])
    return [target.name], {"index": index, "scalar": scalar_for(p, target)}


def _fill_range(ranges, attrs, ins):
    return _hull([ranges[0], _scalar_range(attrs)])


op("add_", "inplace", _code_inplace("add_"), lambda p: _pick_inplace(p, with_value=True), inplace=True,
   error=err_add, int_range=r_add, weight=1.0)
op("mul_", "inplace", _code_inplace("mul_"), _pick_inplace, inplace=True, error=err_mul, int_range=r_mul,
   weight=0.5)
op("copy_", "inplace", _code_inplace("copy_"), lambda p: _pick_inplace(p, with_value=True, scalar=False,
                                                                       pred=lambda v: True),
   inplace=True, int_range=lambda r, a, i: r[1], computes=False, weight=0.7)
op("fill_", "inplace", _code_inplace("fill_"), lambda p: _pick_inplace(p, pred=lambda v: True), inplace=True,
   int_range=r_const, computes=False, weight=0.3)
op("relu_", "inplace", code_call("{0}.relu_()"), pick_unary(lambda v: v.root is not None and v.numeric), inplace=True,
   int_range=r_relu, computes=False, weight=0.3)
op("fill_slice_", "inplace", code_call("({0}[{index}].fill_({scalar!r}), {0})[1]"), _pick_fill_slice,
   inplace=True, int_range=_fill_range, computes=False, weight=0.5)

GROUPS = sorted({d.group for d in OPS.values()})


def result_error(opdef: OpDef, ins: list, errs: list, out: torch.Tensor, attrs: dict) -> Err:
    """The error bound of an op's result: ints and bools are exact, floats follow the op's model."""
    if not out.dtype.is_floating_point:
        return EXACT
    float_errs = [e if t.dtype.is_floating_point else EXACT for t, e in zip(ins, errs)]
    return opdef.error(ins, float_errs, out, attrs)
