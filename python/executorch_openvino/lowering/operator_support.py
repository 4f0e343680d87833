"""Which edge-dialect nodes the OpenVINO delegate takes.

The operator list is OpenVINO's own (``openvino.frontend.pytorch.torchdynamo.
op_support.OperatorSupport``, shipped with each OpenVINO release), so the
partitioner follows the installed frontend. On top of it, a node stays on
ExecuTorch's CPU kernels when OpenVINO would compute it differently from
PyTorch. Measured with OpenVINO 2025.4.1 and 2026.4.1 on CPU:

- int64 is computed in int32: ``i + 2**40`` and ``x.long()`` of 1e10 wrap;
- int8/uint8 arithmetic saturates where PyTorch wraps (``uint8 250 + 200``
  gives 255, PyTorch 194);
- integer floor division truncates (``-7 // 2`` gives -3, PyTorch -4);
- float64 is computed in float32 (``1e300 * 1.0000001`` overflows);
- integer comparisons, relu, clamp, amax, sum, matmul, pow, floor and int64
  arange go through float32 (wrong above 2**24: 16777217 == 16777216).
- float argmax/argmin/topk misplace NaN, and float floor and trunc division,
  remainder and fmod are wrong for infinities and large quotients
  (SPECIAL_VALUE_OPS; the other special values are rewritten at lowering,
  nan_propagation.py).
- a lookup (embedding, index_select, indexing) into a tensor of 2**31 bytes
  or more crashes the process (see GATHERS); it stays on ExecuTorch's kernels.

So a node reading or writing integers is taken only when it moves or selects
values without computing new ones (view, slice, cat, gather, casts that
widen...), produces positions (argmax, topk, pooling indices), reads indices
(embedding), or is an int32 bitwise op; float64 not at all. int32
add/sub/mul need a proven range like int64: ARM computes them in float32
(see INT32_EXACT). The runtime also
refuses int64 inputs outside the int32 range. A node is further taken only when
all its tensors are contiguous. Symbolic integers (sizes of dynamic
dimensions) are computed on ExecuTorch's side and reach a partition as int
inputs, which the delegate binds as 0-d int64 tensors; only views and expands
take them (see SYMINT_ARGUMENT_OPS).
"""

from __future__ import annotations

import functools

import torch
from torch.fx.passes.operator_support import OperatorSupportBase

from ..contract.compile_specs import KEYWORD_DEFAULTS
from ..contract.input_spec import finite_bound
from .integer_ranges import FLOAT32_EXACT, within
from .kept_operations import kept_names
from .ops import CASTS, DIM_ORDER_OPS, TORCH_TO_OPENVINO, is_bare_copy, op_name, result_read, tensors_of
from .passes import embedding_bags
from .passes.avg_pool_padding import AVG_POOLS
from .passes.index_checks import cannot_check
from .passes.avg_pool_padding import can_delegate as can_delegate_avg_pool

# Ops whose integer results are values of their integer inputs (or of constant
# arguments checked separately): OpenVINO's narrowing cannot change them when
# the inputs are in range.
VALUE_PRESERVING = frozenset({
    "getitem",
    "aten.alias_copy.default", "aten.clone.default", "aten.lift_fresh_copy.default",
    "aten.view.default", "aten.view_copy.default", "aten._unsafe_view.default", "aten.reshape.default",
    "aten.permute.default", "aten.permute_copy.default", "aten.transpose.int", "aten.transpose_copy.int",
    "aten.t.default", "aten.t_copy.default",
    "aten.expand.default", "aten.expand_copy.default", "aten.repeat.default",
    "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze_copy.dim", "aten.squeeze_copy.dims",
    "aten.squeeze_copy.default", "aten.unsqueeze.default", "aten.unsqueeze_copy.default",
    "aten.slice.Tensor", "aten.slice_copy.Tensor", "aten.select.int", "aten.select_copy.int",
    "aten.split_with_sizes_copy.default", "aten.split_copy.Tensor", "aten.unbind_copy.int",
    "aten.cat.default", "aten.stack.default", "aten.flip.default", "aten.roll.default",
    "aten.index.Tensor", "aten.index_select.default", "aten.gather.default", "aten.where.self",
    "aten.full.default", "aten.full_like.default", "aten.zeros.default", "aten.zeros_like.default",
    "aten.ones.default", "aten.ones_like.default", "aten.scalar_tensor.default",
    "aten._to_copy.default", "dim_order_ops._clone_dim_order.default",
    "dim_order_ops._to_dim_order_copy.default",
})
# Ops whose integer results are positions inside a tensor: bounded by its
# element count, so int32 arithmetic cannot change them.
INDEX_RESULTS = frozenset({
    "aten.argmax.default", "aten.argmin.default", "aten.topk.default", "aten.sort.default", "aten.sort.stable",
    "aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default",
    "aten.adaptive_max_pool2d.default", "aten.adaptive_max_pool1d.default", "aten.adaptive_max_pool3d.default",
})
# Ops that turn constant arguments into values: their arguments must fit int32 too.
CONSTANT_MAKERS = frozenset({"aten.full.default", "aten.full_like.default", "aten.scalar_tensor.default"})
# int32 ops taken whatever their values: bitwise ops, which have no float32 form.
# int32 add/sub/mul/maximum are exact on x86_64 but computed in float32 on ARM
# (OpenVINO 2026.4.1 under emulation: [2**24+1] + [2] gave 16777218), and a
# program lowered here may run there: they are range-proven like the rest.
# Everything else reading integers (comparisons, relu, clamp, amax, sum,
# matmul, pow, floor...) is computed through float32 and wrong above 2**24.
INT32_EXACT = frozenset({
    "aten.bitwise_and.Tensor", "aten.bitwise_or.Tensor", "aten.bitwise_xor.Tensor", "aten.bitwise_not.default",
})
# Ops OpenVINO computes through float32 or int32 when their inputs are
# integers: exact when every integer they read or return is proven to lie
# within float32's exact range (integer_ranges.py), and every number argument
# is an int there too. int64 add/sub/mul wrap at int32 in OpenVINO: exact there as well.
RANGE_EXACT = INT32_EXACT | frozenset({
    "aten.bitwise_and.Scalar", "aten.bitwise_right_shift.Tensor_Scalar",  # unpacking 4-bit weights (NNCF)
    "aten.copy.default",  # copy(self, src) of integers: src's values, cast to self's dtype
    "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor", "aten.abs.default", "aten.neg.default",
    "aten.minimum.default", "aten.maximum.default",
    "aten.eq.Tensor", "aten.eq.Scalar", "aten.ne.Tensor", "aten.ne.Scalar", "aten.lt.Tensor", "aten.lt.Scalar",
    "aten.le.Tensor", "aten.le.Scalar", "aten.gt.Tensor", "aten.gt.Scalar", "aten.ge.Tensor", "aten.ge.Scalar",
    "aten.arange.default", "aten.arange.start", "aten.arange.start_step", "aten.relu.default",
    "aten.clamp.default", "aten.add.Scalar", "aten.sub.Scalar", "aten.mul.Scalar",
})
# Ops that read integer indices to pick floats.
INDEX_CONSUMERS = frozenset({"aten.embedding.default", "aten._embedding_bag.default"})
# ExecuTorch 1.5.1 has no kernel for embedding bags. OpenVINO's frontend converts the sum and mean modes
# (EmbeddingBagOffsets, EmbeddingBagPacked) and returns only the bags, not the int64 side results; it ignores
# padding_idx, which changes the bags in PyTorch (passes/embedding_bags.refusal). Max mode becomes a scan before
# conversion (passes/max_embedding_bags.py). Indices and offsets are checked (passes/index_checks.py).
EMBEDDING_BAG = "aten._embedding_bag.default"
# Writes at integer indices (a static KV cache's update): values are moved, the indices checked like a
# lookup's (passes/index_checks.py). Summing writes (accumulate=True) and bool masks stay on ExecuTorch.
INDEX_WRITES = frozenset({"aten.index_put.default"})
# The quantize/dequantize ops of a quantized program (NNCF's, torch's PT2E).
# Taken under both numerics policies: ExecuTorch 1.5.1's runtime has no
# kernels for them ("Missing out variants" at to_executorch), and what they
# mark is OpenVINO's integer kernels, whose results are the quantized model's
# (measured: a delegated 3-layer MLP within 1e-7 of the fake-quantized module,
# tests/lowering/test_quantization.py), not the float model's.
QUANTIZATION = frozenset({
    "quantized_decomposed.quantize_per_tensor.default", "quantized_decomposed.dequantize_per_tensor.default",
    "quantized_decomposed.quantize_per_tensor.tensor", "quantized_decomposed.dequantize_per_tensor.tensor",
    "quantized_decomposed.quantize_per_channel.default", "quantized_decomposed.dequantize_per_channel.default",
})
# Float arithmetic reading small integers (an int8 weight times its float
# scale, NNCF's weight decompression): PyTorch converts the integers to the
# float type first, as OpenVINO's Convert does, and every int8/uint8 value is
# exact in float16, bfloat16 and float32 alike (int16 is not in the first two).
FLOAT_RESULT_ARITHMETIC = frozenset({"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor"})
_SMALL_INTEGERS = (torch.int8, torch.uint8)


def _quantization_pattern(node: torch.fx.Node, name: str, constant_names: frozenset) -> bool:
    """A quantize read only by dequantizes, or a dequantize of a quantize or of a constant (a weight).

    OpenVINO's PyTorch frontend converts the pair, not a quantized tensor on its own: a partition
    returning a quantize's int8 result failed to convert ("Tensor name is not a number", 2026.4.1).
    """
    if name.startswith("quantized_decomposed.quantize_"):
        return bool(node.users) and all(
            user.op == "call_function" and op_name(user.target).startswith("quantized_decomposed.dequantize_")
            for user in node.users)
    source = node.args[0] if node.args else None
    return isinstance(source, torch.fx.Node) and (
        source.name in constant_names
        or (source.op == "call_function" and op_name(source.target).startswith("quantized_decomposed.quantize_")))
# Ops OpenVINO's converter turns into a Gather. With static shapes, the CPU
# plugin's Gather crashes the process (SIGSEGV) once a row it reads starts
# 2**31 bytes or more into its data, whatever the index type (measured,
# 2025.4.1 and 2026.4.1: row 2**25 of a (2**25 + 1, 16) float32 table);
# ExecuTorch's kernels take such tables.
GATHERS = frozenset({
    "aten.embedding.default", "aten.index_select.default", "aten.index.Tensor",
    "aten.select_copy.int", "aten.select.int",
})
GATHER_DATA_LIMIT = 2**31  # bytes


def _gather_data_too_large(name: str, node: torch.fx.Node) -> bool:
    """A Gather whose data may reach GATHER_DATA_LIMIT bytes (a dynamic size counts at its upper bound)."""
    source = node.args[0].meta.get("val") if node.args and isinstance(node.args[0], torch.fx.Node) else None
    if name not in GATHERS or not isinstance(source, torch.Tensor):
        return False
    count = source.element_size()
    for size in source.shape:
        if not isinstance(size, int):
            size = finite_bound(size.node.shape_env.bound_sympy(size.node.expr).upper)
            if size is None:
                return True  # no upper bound: it may be larger than the limit
        count *= size
    return count >= GATHER_DATA_LIMIT


def _gather_index_narrower(name: str, node: torch.fx.Node) -> bool:
    """A ``gather`` whose index is smaller than its input along another dimension than the gathered one:
    PyTorch takes it, OpenVINO 2026.4.1's converter fails (GatherElements: "Shapes [10,3] and [3,1] are not
    consistent")."""
    if name != "aten.gather.default":
        return False
    source, index = (a.meta.get("val") if isinstance(a, torch.fx.Node) else None for a in (node.args[0], node.args[2]))
    if not isinstance(source, torch.Tensor) or not isinstance(index, torch.Tensor) or source.dim() != index.dim():
        return True
    axis = node.args[1] % max(source.dim(), 1)
    return any(d != axis and not (isinstance(a, int) and isinstance(b, int) and a == b)
               for d, (a, b) in enumerate(zip(source.shape, index.shape)))


# With bool values, OpenVINO's converter makes a 0-d or scalar value u8 and the
# Select then fails to compile ("Argument 1 and 2 element types must match",
# torch.where(c, bool_x, True), 2025.4.1 and 2026.4.1); ExecuTorch's kernels take them.
BOOL_SELECTS = frozenset({"aten.where.self", "aten.masked_fill.Scalar", "aten.masked_fill.Tensor"})
# OpenVINO's converter rejects these when every tensor input is bool
# (measured, 2025.4.1 and 2026.4.1: "aten.maximum.default ... wasn't fully
# converted"); ExecuTorch's kernels take bool.
BOOL_REJECTED = frozenset({
    "aten.max.default", "aten.min.default", "aten.max.dim", "aten.min.dim", "aten.amax.default",
    "aten.amin.default", "aten.maximum.default", "aten.minimum.default", "aten.clamp.default",
    "aten.clamp.Tensor", "aten.sign.default",
})
# PyTorch accumulates bool and integer inputs of these in int64; OpenVINO keeps
# the input's type (measured: cumsum of 300 True gives True, of int32 an int32), and int64 ones wrap at int32
# (OpenVINO 2026.4.1: cumsum of three int64 2**30 gave 2**30, -2**31, -2**30),
# so they stay on ExecuTorch's kernels whatever the numerics setting.
ACCUMULATORS = frozenset({
    "aten.cumsum.default", "aten.prod.default", "aten.prod.dim_int", "aten.sum.default", "aten.sum.dim_IntList",
})
# Float ops whose special values or rounding OpenVINO computes differently and
# no cheap rewrite makes exact (nan_propagation.py does the others); with
# numerics="exact" they stay on ExecuTorch's kernels, which give eager's
# results here (measured, 2025.4.1 and 2026.4.1, tests/numerics/test_special_values.py):
# argmax/argmin skip NaN (PyTorch: NaN is the maximum and the minimum), topk
# puts NaN among the numbers and orders ties otherwise; floor division is
# floor(a / b) (inf // 2 is inf, 1 // -inf is -0.0, 1 // 0.1 is 10: PyTorch
# nan, -1, 9), trunc division goes through int32 (1e30 // 2 is -2**31),
# remainder and fmod are a - trunc(a / b) * b (fmod(1, 0.1) and 3e38 % 88.8 are
# 0, PyTorch 0.1 and 12.9; 1 % -inf is NaN, PyTorch -inf).
SPECIAL_VALUE_OPS = frozenset({
    "aten.argmax.default", "aten.argmin.default", "aten.topk.default",
    "aten.floor_divide.default", "aten.div.Tensor_mode", "aten.div.Scalar_mode",
    "aten.remainder.Tensor", "aten.remainder.Scalar", "aten.remainder.default",
    "aten.fmod.Tensor", "aten.fmod.Scalar",
})
# What SPECIAL_VALUE_OPS' nodes would get wrong, for the reasons delegation_summary gives.
_SPECIAL_VALUE_REASONS = {
    **dict.fromkeys(("aten.argmax.default", "aten.argmin.default"),
                    "NaN, which OpenVINO's argmax and argmin skip (PyTorch: NaN is the extreme)"),
    "aten.topk.default": "NaN and ties, which OpenVINO's topk orders otherwise",
    **dict.fromkeys(("aten.floor_divide.default", "aten.div.Tensor_mode", "aten.div.Scalar_mode"),
                    "infinities and large quotients, which OpenVINO's floor and trunc division get wrong"),
    **dict.fromkeys(("aten.remainder.Tensor", "aten.remainder.Scalar", "aten.remainder.default", "aten.fmod.Tensor",
                     "aten.fmod.Scalar"), "infinities and large quotients, which OpenVINO's remainder gets wrong"),
}
# A float division whose quotient is rounded, truncated, cast to an integer or
# compared: OpenVINO's CPU plugin divides by multiplying with the reciprocal
# once the model has gone through IR (its PyTorch frontend's mark against that
# is not written to IR), so 41 / 41 gives 0.99999994, and floor(41 / 41) 0
# (OpenVINO 2026.4.1; eager 1). Such a division stays on ExecuTorch's kernels,
# which divide correctly rounded; other quotients are within 1 ulp.
DIVISIONS = frozenset({"aten.div.Tensor", "aten.div.Scalar"})
QUOTIENT_ROUNDERS = frozenset({
    "aten.floor.default", "aten.ceil.default", "aten.trunc.default", "aten.round.default",
    "aten.round.decimals", "aten.frac.default",
    "aten.eq.Tensor", "aten.eq.Scalar", "aten.ne.Tensor", "aten.ne.Scalar", "aten.lt.Tensor", "aten.lt.Scalar",
    "aten.le.Tensor", "aten.le.Scalar", "aten.gt.Tensor", "aten.gt.Scalar", "aten.ge.Tensor", "aten.ge.Scalar",
    "aten.argmax.default", "aten.argmin.default", "aten.max.dim", "aten.min.dim", "aten.floor_divide.default",
    "aten.div.Tensor_mode", "aten.div.Scalar_mode", "aten.remainder.Tensor", "aten.remainder.Scalar",
    "aten.fmod.Tensor", "aten.fmod.Scalar",
})
# Ops a quotient is followed through to its rounding: they keep an exact
# integer quotient's error (0.99999994 clamped at 1 stays below 1).
QUOTIENT_KEEPERS = frozenset({
    "aten.relu.default", "aten.clamp.default", "aten.clamp.Tensor", "aten.hardtanh.default", "aten.abs.default",
    "aten.neg.default", "aten.minimum.default", "aten.maximum.default", "aten.amax.default", "aten.amin.default",
    "aten.max.default", "aten.min.default",
})
# Ops that may take an int (SymInt) argument: OpenVINO's converter reads the
# sizes lists of these as scalars, which is how the delegate binds ints. It
# wants 1-element tensors elsewhere (slice bounds: "shape_rank.compatible(1)"
# fails), so other ops with int arguments stay on ExecuTorch's kernels.
SYMINT_ARGUMENT_OPS = frozenset({
    "aten.view_copy.default", "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
    "aten.expand_copy.default", "aten.expand.default",
    # Positions over a dynamic length (an LLM's prompt): its range proven as arange's (integer_ranges.py).
    "aten.arange.default", "aten.arange.start", "aten.arange.start_step",
})
# An expand with two different int sizes converts to a Broadcast of unknown
# rank ("Accessing out-of-range dimension"), measured with 2026.4.1.
_EXPANDS = frozenset({"aten.expand_copy.default", "aten.expand.default"})
# Integer dtypes ordered by range, for casts that widen.
_INTEGER_RANK = {torch.bool: 0, torch.uint8: 1, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4}
_INT32 = (-(2**31), 2**31 - 1)


def refuse_quantization_left_for_executorch(program, supported) -> None:
    """Raises ``ValueError`` for a quantize or dequantize that `supported` (the node check) leaves out: ExecuTorch
    1.5.1's runtime has no kernels for them, and to_executorch would fail with "Missing out variants"."""
    for node in program.graph.nodes:
        if node.op != "call_function" or op_name(node.target) not in QUANTIZATION or supported(node):
            continue
        if op_name(node.target).startswith("quantized_decomposed.quantize_"):
            why = ("its quantized result is returned or read by something other than a dequantize, and OpenVINO "
                   "converts a quantize only together with the dequantize that reads it: return the dequantized "
                   "float value")
        else:
            why = ("it reads a program input or a computed integer tensor, where OpenVINO takes dequantizes of "
                   "quantizes and of constant weights only: pass the float input and quantize it in the program")
        raise ValueError(f"'{node.name}' ({op_name(node.target)}) cannot be delegated and ExecuTorch's runtime has "
                         f"no kernel for it: {why} (or it was named in op_types_to_skip/op_names_to_skip, which "
                         "cannot hold quantization ops)")


@functools.lru_cache(maxsize=1)
def openvino_supported_ops() -> frozenset:
    """Qualified names (``torch.ops.aten.add.Tensor``) of the ops OpenVINO converts."""
    from openvino.frontend.pytorch.torchdynamo.op_support import OperatorSupport

    return frozenset(OperatorSupport({})._support_dict)


_MAX_POOLS_WITH_INDICES = frozenset({"aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default"})


def _bfloat16_indices_used(node: torch.fx.Node) -> bool:
    """A bfloat16 max pool whose second result (the indices) is read."""
    source = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    return isinstance(source, torch.Tensor) and source.dtype == torch.bfloat16 and result_read(node, 1)


def _plain_index_write(node: torch.fx.Node) -> bool:
    """``index_put`` without accumulation, with integer index tensors only (no bool mask), writing values
    of the destination's dtype: OpenVINO's scatter then moves them as PyTorch does."""
    accumulate = node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False)
    destination, values = (a.meta.get("val") if isinstance(a, torch.fx.Node) else None
                            for a in (node.args[0], node.args[2]))
    indices = [i.meta.get("val") if isinstance(i, torch.fx.Node) else i for i in node.args[1]]
    tensors = [k for k, i in enumerate(indices) if i is not None]
    # OpenVINO 2026.4.1's converter takes leading slices before one index tensor (x[:, :, i]) or index
    # tensors alone (x[i, j]); a slice between or before several ("SequenceMark" errors) stays on ExecuTorch.
    if len(tensors) > 1 and tensors != list(range(len(tensors))):
        return False
    return (not accumulate and isinstance(destination, torch.Tensor) and isinstance(values, torch.Tensor)
            and values.dtype == destination.dtype and any(i is not None for i in indices)
            and all(i is None or (isinstance(i, torch.Tensor) and i.dtype in (torch.int32, torch.int64))
                    for i in indices))


def _is_symbolic(value) -> bool:
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return True
    return isinstance(value, (list, tuple)) and any(_is_symbolic(v) for v in value)


def _int_arguments_allowed(node: torch.fx.Node, name: str, inputs: list) -> bool:
    """Int arguments computed by other nodes: SymInts, to views and (one distinct) to expands only.

    A SymInt that is a plain number there is a size ExecuTorch specialised in
    its metadata but computes at run time; OpenVINO would bake the example value in (a dynamic
    batch came back with the batch of the example).
    """
    computed = [v for v in inputs if isinstance(v, (int, float, torch.SymInt, torch.SymFloat, torch.SymBool))]
    if not computed:
        return True
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    if name not in SYMINT_ARGUMENT_OPS or not all(
            isinstance(v, torch.SymInt) and not is_concrete_int(v) for v in computed):
        return False
    return name not in _EXPANDS or len({a for a in node.all_input_nodes
                                        if isinstance(a.meta.get("val"), torch.SymInt)}) <= 1


def _quotient_is_rounded(division: torch.fx.Node) -> bool:
    """A float quotient reaches, through value-preserving ops and QUOTIENT_KEEPERS only, a rounding, an
    integer cast or a comparison (DIVISIONS)."""
    if not any(t.is_floating_point() for t in tensors_of(division.meta.get("val"))):
        return False
    pending, seen = list(division.users), set()
    while pending:
        user = pending.pop()
        if user in seen or user.op != "call_function":
            continue
        seen.add(user)
        name = op_name(user.target)
        if name in QUOTIENT_ROUNDERS:
            return True
        if name in CASTS and any(not t.is_floating_point() for t in tensors_of(user.meta.get("val"))):
            return True
        if name in VALUE_PRESERVING or name in QUOTIENT_KEEPERS or name == "getitem":
            pending.extend(user.users)
    return False


def _is_contiguous_dim_order(node: torch.fx.Node) -> bool:
    dim_order = node.kwargs.get("dim_order")
    val = node.meta.get("val")
    return dim_order is None or (isinstance(val, torch.Tensor) and list(dim_order) == list(range(val.dim())))


def _widening_integer_cast(node: torch.fx.Node, out_dtype) -> bool:
    source = node.args[0].meta.get("val") if node.args and isinstance(node.args[0], torch.fx.Node) else None
    if not isinstance(source, torch.Tensor) or source.dtype not in _INTEGER_RANK:
        return False  # float -> int: OpenVINO may narrow where PyTorch keeps int64
    if source.dtype == torch.uint8 and out_dtype == torch.int8:
        return False
    # int64 -> int32 is what OpenVINO does to every int64 anyway, and int64
    # values outside int32 never reach a delegated node (see above).
    if source.dtype == torch.int64 and out_dtype == torch.int32:
        return True
    return _INTEGER_RANK[source.dtype] <= _INTEGER_RANK[out_dtype]


def has_flushed_values(value: torch.Tensor) -> bool:
    """True for a float tensor holding subnormal values or -0.0, which OpenVINO's CPU plugin
    turns into 0.0 when they are constants (measured, 2025.4.1 and 2026.4.1)."""
    if not value.dtype.is_floating_point or value.numel() == 0:
        return False
    tiny = torch.finfo(value.dtype).tiny
    return bool(((value != 0) & (value.abs() < tiny)).any() or ((value == 0) & torch.signbit(value)).any())


def flushed_constant_names(program) -> set:
    """Placeholders of the lifted tensor constants holding subnormal values or -0.0.

    Only those constants have real values while ExecuTorch partitions
    (parameters and buffers are fake then; preprocess warns about those).
    """
    signature = program.graph_signature
    return {placeholder for placeholder, name in signature.inputs_to_lifted_tensor_constants.items()
            if isinstance(program.constants.get(name), torch.Tensor)
            and not isinstance(program.constants[name], torch._subclasses.FakeTensor)
            and has_flushed_values(program.constants[name])}


def _literals_fit_int32(node: torch.fx.Node) -> bool:
    """Integer literals within int32, and no float literal (3e9 would be narrowed too)."""
    values = list(node.args) + list(node.kwargs.values())
    return all(isinstance(v, bool) or not isinstance(v, (int, float))
               or (isinstance(v, int) and _INT32[0] <= v <= _INT32[1]) for v in values)


class OpenVINOOperatorSupport(OperatorSupportBase):
    """``is_node_supported`` for :class:`torch.fx.passes.infra.partitioner.CapabilityBasedPartitioner`.

    `constant_names` are the placeholders holding parameters, buffers and
    constants: a bare copy of one stays on ExecuTorch's kernels, which copy
    from the program's own data instead of a second copy in the delegate.
    """

    def __init__(self, constant_names=frozenset(), numerics: str = KEYWORD_DEFAULTS["numerics"],
                 flushed_constants=frozenset(), integer_ranges=None, op_types_to_skip=frozenset(),
                 op_names_to_skip=frozenset()):
        super().__init__()
        self.op_types_to_skip, self.op_names_to_skip = frozenset(op_types_to_skip), frozenset(op_names_to_skip)
        self.constant_names = frozenset(constant_names)
        self.integer_ranges = dict(integer_ranges or {})
        self.exact = numerics == "exact"
        self.flushed_constants = frozenset(flushed_constants)
        # Declared input ranges not assumed, each with a reader left on ExecuTorch and its reason (the partitioner's).
        self.unused_ranges: dict = {}

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return self.refusal(node) is None

    def supported_before_decomposition(self, node: torch.fx.Node) -> bool:
        """``is_node_supported`` for a node of the ATen program that ExecuTorch has not yet decomposed
        (``kept_operations``): there, a view's result has the view's strides, where the edge dialect
        will make it a contiguous copy (``view_copy``, ``permute_copy``...), so only the program's
        own inputs must be contiguous."""
        return self.refusal(node, before_decomposition=True) is None

    def refusal(self, node: torch.fx.Node, before_decomposition: bool = False) -> str | None:  # noqa: C901
        """Why `node` stays on ExecuTorch's kernels, in a few words (the rule's constant or helper says more);
        None when OpenVINO takes it. ``delegation_summary`` reports these per operator."""
        if node.op != "call_function":
            return "not an operator call"
        name = op_name(node.target)
        if name in self.op_types_to_skip or node.name in self.op_names_to_skip:
            return "skipped by op_types_to_skip or op_names_to_skip"
        if before_decomposition and any(n.startswith(name.replace(".", "_")) for n in self.op_names_to_skip):
            return "op_names_to_skip may name its decomposed nodes"
        if is_bare_copy(node) and node.args[0].name in self.constant_names:
            return "a copy of a constant: ExecuTorch copies from the program's own data"
        if self.exact and any(a.name in self.flushed_constants for a in node.all_input_nodes):
            return "reads a constant with subnormal values, which OpenVINO's CPU flushes to zero"
        if _is_symbolic(node.meta.get("val")):  # sym_size, or arithmetic on sizes (executorch_prim.mul.Scalar)
            return "computes a size of a dynamic dimension, which ExecuTorch does; the partitions read it as an input"
        if name in DIM_ORDER_OPS:
            if not _is_contiguous_dim_order(node):
                return "a non-contiguous dim order"
        elif name != "getitem" and f"torch.ops.{name}" not in openvino_supported_ops() and name not in kept_names():
            return "OpenVINO's PyTorch frontend does not convert it"

        if name in _MAX_POOLS_WITH_INDICES and _bfloat16_indices_used(node):
            return ("a bfloat16 max pool whose indices are used, which OpenVINO's CPU plugin cannot compile "
                    "(2026.4.1: 'evaluate() is not implemented' at load)")
        if name in AVG_POOLS and not can_delegate_avg_pool(node):
            return "divisor_override, or padding to rewrite with a dynamic size"
        if name in BOOL_SELECTS and any(t.dtype == torch.bool for t in tensors_of(node.meta.get("val"))) and any(
                not isinstance(v, torch.fx.Node) or not isinstance(v.meta.get("val"), torch.Tensor)
                or v.meta["val"].dim() == 0 for v in node.args[1:]):
            return "selects a scalar or 0-d bool value, which OpenVINO's converter cannot compile"
        if _gather_data_too_large(name, node):
            return "a lookup into 2**31 bytes or more, which crashes OpenVINO's CPU plugin"
        if _gather_index_narrower(name, node):
            return "an index narrower than its input along another dimension, which OpenVINO cannot convert"
        if cannot_check(node):
            return "indexes a dimension of symbolic size, or with no indices: the index check cannot be made"
        if name == EMBEDDING_BAG and (reason := embedding_bags.refusal(node)):
            return f"an embedding bag {reason}"
        if name in INDEX_WRITES and not _plain_index_write(node):
            return "accumulates, takes a bool mask, other slices or another dtype than its destination"

        output = node.meta.get("val")
        if not list(tensors_of(output)):  # (a symbolic size was refused above)
            return "returns a symbolic size or no tensor"
        inputs = [a.meta.get("val") for a in node.all_input_nodes]
        if not _int_arguments_allowed(node, name, inputs):
            return "takes a computed int argument, which OpenVINO would fix at the example's value"
        input_tensors = [t for v in inputs for t in tensors_of(v)]
        tensors = list(tensors_of(output)) + input_tensors
        if unsupported := sorted({str(t.dtype) for t in tensors if t.dtype not in TORCH_TO_OPENVINO}):
            return f"a dtype OpenVINO does not have ({', '.join(unsupported)})"
        if name in BOOL_REJECTED and input_tensors and all(t.dtype == torch.bool for t in input_tensors):
            return "bool inputs, which OpenVINO's converter rejects"
        if name in ACCUMULATORS and any(t.dtype in _INTEGER_RANK for t in input_tensors):
            if all(t.dtype == torch.int64 for t in input_tensors if t.dtype in _INTEGER_RANK):
                return "accumulates int64, which OpenVINO computes in int32 (wrong past 2**31)"
            return "accumulates bool or small integers, which OpenVINO keeps in their type (PyTorch: int64)"
        if self._holds_values_past_int32(node):
            return "int64 values outside int32, which OpenVINO computes in int32"
        layouts = ([a.meta.get("val") for a in node.all_input_nodes if a.op == "placeholder"]
                   if before_decomposition else tensors)
        if any(not t.is_contiguous() for t in tensors_of(layouts)):
            return "a non-contiguous tensor"
        if name in QUANTIZATION:
            return None if _quantization_pattern(node, name, self.constant_names) else (
                "a quantize or dequantize outside the patterns OpenVINO runs in 8 bits")
        if not self.exact:
            return None  # numerics="fast": OpenVINO's arithmetic accepted
        if any(t.dtype == torch.float64 for t in tensors):
            return "float64, which OpenVINO computes in float32 (numerics='exact')"
        if name in SPECIAL_VALUE_OPS and any(t.is_floating_point() for t in input_tensors):
            return _SPECIAL_VALUE_REASONS.get(name, "special values OpenVINO computes differently") + (
                " (numerics='exact')")
        if name in DIVISIONS and _quotient_is_rounded(node):
            return "a quotient that is rounded or compared, which OpenVINO computes 1 ulp off (numerics='exact')"

        integer = [t for t in tensors if t.dtype in _INTEGER_RANK and t.dtype != torch.bool]
        if integer:
            # Index results are exact, but the values they are taken from are
            # compared in float32 when integer (wrong above 2**24).
            if name in INDEX_RESULTS and any(t.dtype in _INTEGER_RANK and t.dtype != torch.bool
                                             for t in input_tensors):
                return "positions in integer values, which OpenVINO compares in float32"
            if (name in FLOAT_RESULT_ARITHMETIC and all(t.is_floating_point() for t in tensors_of(output))
                    and all(t.dtype in _SMALL_INTEGERS for t in integer)):
                return None
            all_int32 = all(t.dtype == torch.int32 for t in integer)
            proven = name in RANGE_EXACT and self._proven_in_range(node)
            if name not in VALUE_PRESERVING | INDEX_RESULTS | INDEX_CONSUMERS | INDEX_WRITES and not (
                    all_int32 and name in INT32_EXACT) and not proven:
                return "integer arithmetic not proven within float32's exact integers (2**24)"
            for out in tensors_of(output):
                # To bool: conversion compares with 0 instead (bool_casts.py), right for every integer.
                if (name in CASTS and out.dtype in _INTEGER_RANK and out.dtype != torch.bool
                        and not _widening_integer_cast(node, out.dtype)
                        and not within(self.integer_ranges, node.args[0], limit=torch.iinfo(out.dtype).max // 2)):
                    return "a narrowing integer cast not proven in range"
                if name in CASTS and out.dtype == torch.bool and not self._int64_constant_fits(node.args[0]):
                    return "an int64 constant outside int32"
            if name in CONSTANT_MAKERS and not _literals_fit_int32(node):
                return "an integer literal outside int32"
        return None

    def _holds_values_past_int32(self, node: torch.fx.Node) -> bool:
        """An int64 tensor the node reads or returns is proven to hold a value outside int32."""
        for value_node in [node, *node.all_input_nodes]:
            found = self.integer_ranges.get(value_node.name)
            value = value_node.meta.get("val")
            if found is not None and isinstance(value, torch.Tensor) and value.dtype == torch.int64 and (
                    found[0] < _INT32[0] or found[1] > _INT32[1]):
                return True
        return False

    def _int64_constant_fits(self, source) -> bool:
        """Not an int64 parameter, buffer or constant, or one proven within int32: the partition would hold
        the constant, and conversion refuses int64 constants past int32 (OpenVINO would narrow them)."""
        if not isinstance(source, torch.fx.Node) or source.name not in self.constant_names:
            return True
        value = source.meta.get("val")
        if not isinstance(value, torch.Tensor) or value.dtype != torch.int64:
            return True
        return within(self.integer_ranges, source, limit=_INT32[1])

    def _proven_in_range(self, node: torch.fx.Node) -> bool:
        """The node and every integer node it reads lie within float32's exact integers, and its
        number arguments are ints there (integer_ranges.py)."""
        if not within(self.integer_ranges, node):
            return False
        # copy(self, src) takes only self's shape and dtype: its values are never read.
        read = node.args[1:] if op_name(node.target) == "aten.copy.default" else node.args
        for argument in [*read, *node.kwargs.values()]:
            if isinstance(argument, torch.fx.Node):
                value = argument.meta.get("val")
                integer = isinstance(value, torch.SymInt) or (
                    isinstance(value, torch.Tensor) and value.dtype in _INTEGER_RANK)
                if integer and not within(self.integer_ranges, argument):
                    return False
            elif isinstance(argument, float):
                return False
            elif isinstance(argument, int) and not isinstance(argument, bool) and abs(argument) > FLOAT32_EXACT:
                return False
        return True
