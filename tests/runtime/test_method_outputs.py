"""``exov.load_method``'s outputs and inputs as ``_native.Method`` (native/python/python_method.h) handles them.

Each output tensor is a copy of the method's memory into a tensor torch made (``empty_like`` of the previous
output of that shape, else ``empty_strided``): it must keep values bit for bit, dtype, sizes and strides, and
own its memory, so that a later call (which rewrites the method's memory) leaves an earlier result unchanged,
also when a dynamic output changes shape from call to call. Inputs are read in place when they are plain
contiguous CPU tensors; anything else goes through runtime/method_inputs.py first.
"""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov

from exov_testing.programs import Fn, assert_matches_eager, eager

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]

SMALL, LARGE = (4, 8), (300, 200)

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int32, torch.int64,
          torch.bool]


def _values(shape, dtype):
    raw = torch.randn(shape, dtype=torch.float64) * 100
    if dtype == torch.bool:
        return raw > 0
    if dtype.is_floating_point:
        values = raw.to(dtype)
        values.view(-1)[:3] = torch.tensor([float("nan"), -0.0, float("-inf")], dtype=dtype)
        return values
    info = torch.iinfo(dtype)
    return raw.clamp(info.min, info.max).to(dtype)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_outputs_keep_bits_dtype_and_shape(shape):
    # One method with an input and an output of each dtype (one lowering: the sanitizers' CI minutes).
    model = Fn(lambda *xs: tuple(torch.flip(x, [0]) for x in xs))
    xs = tuple(_values(shape, dtype) for dtype in DTYPES)
    outputs = exov.load_method(exov.lower(model, xs).buffer).execute(list(xs))
    for dtype, x, out in zip(DTYPES, xs, outputs, strict=True):
        expected = torch.flip(x, [0])
        assert out.dtype == dtype and out.shape == x.shape and out.is_contiguous(), dtype
        assert torch.equal(out.view(torch.uint8), expected.view(torch.uint8)), dtype  # NaN and -0.0 as they are


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_a_result_stays_unchanged_after_later_calls(shape):
    # Three outputs of three dtypes, planned in the method's memory, which every call rewrites.
    model = Fn(lambda x: (x * 2 - 1, x > 0.25, torch.round(x * 50).to(torch.int32)))
    first = torch.randn(shape)
    method = exov.load_method(exov.lower(model, (first,)).buffer)
    results = []
    for x in [first, torch.randn(shape), -first]:
        results.append((x, method.execute([x])))
    for x, outputs in results:
        assert_matches_eager(list(outputs), eager(model, (x,)))
    assert [o.dtype for o in results[0][1]] == [torch.float32, torch.bool, torch.int32]
    assert len({o.data_ptr() for _, outputs in results for o in outputs}) == 9  # each its own memory


class _SmallAndLarge(torch.nn.Module):
    def forward(self, x, y):
        return x + 1, y * 2


def test_dynamic_outputs_take_each_calls_shape():
    # The tensor made for an output is made like the previous one only when the shape is the same.
    rows = torch.export.Dim("rows", max=300)
    small = torch.randn(SMALL)
    dynamic = exov.lower(_SmallAndLarge(), (small, torch.randn(4, 200)), dynamic_shapes=(None, {0: rows}))
    method = exov.load_method(dynamic.buffer)
    kept = []
    for y in [torch.randn(4, 200), torch.randn(*LARGE), torch.randn(4, 200), torch.randn(1, 200)]:
        outputs = method.execute([small, y])
        assert outputs[1].shape == y.shape
        kept.append((y, outputs))
        method.execute([small * 3, torch.randn(2, 200)])
    for y, outputs in kept:
        assert_matches_eager(outputs, eager(_SmallAndLarge(), (small, y)))


@pytest.fixture(scope="module")
def doubled():
    x = torch.randn(2, 8)
    return exov.load_method(exov.lower(Fn(lambda x: x * 2 + 1), (x,)).buffer), x


@pytest.mark.parametrize("make", [
    lambda x: torch.nn.Parameter(x.clone(), requires_grad=False),  # a Tensor subclass
    lambda x: x.t().contiguous().t(),  # the same values, strides of a transpose
    lambda x: torch._neg_view(-x),  # the neg bit: memory holds -x
    lambda x: torch.stack([x, -x], 2)[:, :, 0],  # a strided slice
], ids=["parameter", "transposed", "neg_view", "strided"])
def test_inputs_that_are_not_plain_are_made_so_first(doubled, make):
    method, x = doubled
    given = make(x)
    assert torch.equal(given, x)
    assert_matches_eager(method.execute([given]), [x * 2 + 1])


def test_an_input_outside_cpu_memory_is_refused_by_name(doubled):
    method, x = doubled
    with pytest.raises(TypeError, match="input 0 is not in CPU memory: pass x.cpu()"):
        method.execute([torch.empty(2, 8, device="meta")])
    assert_matches_eager(method.execute([x]), [x * 2 + 1])  # the method still runs


@pytest.fixture(scope="module")
def affine_programs():
    """``rows -> .pte`` of x * 2 + 1 over (rows, 64), each lowered once for the module."""
    lowered = {}

    def program(rows: int) -> bytes:
        if rows not in lowered:
            lowered[rows] = exov.lower(Fn(lambda x: x * 2 + 1), (torch.randn(rows, 64),)).buffer
        return lowered[rows]

    return program


@pytest.mark.parametrize("change", [
    lambda out: out.squeeze_(0),
    lambda out: out.t_(),
    lambda out: out.resize_(0),
    lambda out: out.set_(),
], ids=["squeeze_", "t_", "resize_", "set_"])
@pytest.mark.parametrize("rows", [1, 512], ids=["small", "large"])  # below and above the kept-tensor size
@pytest.mark.sampled(every=2)
def test_a_result_changed_in_place_does_not_change_later_results(change, rows, affine_programs):
    # Found by a tester: the next output was made like the changed result (wrong shape, or a copy past its end).
    model = Fn(lambda x: x * 2 + 1)
    x = torch.randn(rows, 64)
    method = exov.load_method(affine_programs(rows))  # a new load of the program: its own output tensors
    change(method.execute([x])[0])
    for _ in range(3):
        assert_matches_eager(method.execute([x]), eager(model, (x,)))


@pytest.mark.parametrize("rows", [1, 512], ids=["small", "large"])
def test_the_method_keeps_no_result_alive(rows):
    import gc
    import weakref

    x = torch.randn(rows, 64)
    method = exov.load_method(exov.lower(Fn(lambda x: x + 1), (x,)).buffer)
    results = [weakref.ref(method.execute([x])[0]) for _ in range(3)]
    gc.collect()
    assert all(r() is None for r in results)


def test_results_stay_on_cpu_inside_a_default_device_block(doubled):
    # Found by a tester: torch.empty_strided without a device made a meta tensor there, and the copy crashed.
    method, x = doubled
    with torch.device("meta"):
        outputs = method.execute([x])
    assert outputs[0].device.type == "cpu"
    assert_matches_eager(outputs, [x * 2 + 1])


class _Scaled(torch.nn.Module):
    def forward(self, x, n: int):
        return torch.relu(x) * n


def test_none_or_an_int_beyond_int64_for_an_int_input_is_an_error_not_an_abort():
    # executorch 1.5.1 aborts the process for None where a method takes a number (found by a tester).
    x = torch.randn(2, 8)
    method = exov.load_method(exov.lower(_Scaled(), (x, 2)).buffer)
    with pytest.raises((RuntimeError, ValueError), match="input 1"):
        method.execute([x, None])
    with pytest.raises(ValueError, match="input 1 is an int outside int64"):
        method.execute([x, 2**70])
    assert_matches_eager(method.execute([x, 2]), eager(_Scaled(), (x, 2)))


def test_a_wrapper_subclass_is_refused_by_name(doubled):
    from torch.testing._internal.two_tensor import TwoTensor

    method, x = doubled
    with pytest.raises(TypeError, match="input 0 is a .*TwoTensor, a tensor subclass"):
        method.execute([TwoTensor(x, x.clone())])
