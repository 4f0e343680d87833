"""Every dtype the delegate binds, with several inputs and outputs, against eager (integers exactly)."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, check_fully_delegated, eager, lower, run

pytestmark = [pytest.mark.older_openvino, pytest.mark.native]


class TwoInTwoOut(torch.nn.Module):
    def forward(self, x, y):
        return x + y, x * y


class BoolOps(torch.nn.Module):
    def forward(self, x, y):
        return x & y, x | torch.logical_not(y), torch.where(x, y, x ^ y)


def _values(dtype, shape):
    g = torch.Generator().manual_seed(7)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 15, shape, generator=g, dtype=dtype)
    return torch.randint(-11, 11, shape, generator=g, dtype=dtype)


# dtype -> tolerance (None: exact). Half-precision inputs compute in their own
# precision in eager too, so they are compared at their own resolution.
DTYPES = {
    torch.float32: None,
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.bfloat16: dict(rtol=8e-3, atol=8e-3),
    torch.int8: None,
    torch.int16: None,
    torch.int32: None,
    torch.int64: None,
    torch.uint8: None,
}
# Arithmetic OpenVINO computes like PyTorch on every CPU; for the other dtypes
# it stays on ExecuTorch's kernels (operator_support.py: int64 narrowed to
# int32, 8-bit saturation, float64 computed in float32, int32 computed in
# float32 on ARM; program inputs have no proven range).
DELEGATED_ARITHMETIC = {torch.float32, torch.float16, torch.bfloat16}


class Shuffle(torch.nn.Module):
    """Moves values without computing new ones: delegated for every integer dtype."""

    def forward(self, x, y):
        return torch.cat([x, y]).permute(1, 0), y[1:].flip(0)


@pytest.mark.parametrize("dtype", list(DTYPES), ids=str)
@pytest.mark.sampled(every=2)
def test_arithmetic_matches_eager_in_every_dtype(dtype):
    inputs = (_values(dtype, (3, 4)), _values(dtype, (3, 4)).flip(0))
    pte, summary = lower(TwoInTwoOut(), inputs)
    assert (summary.delegated == summary.total) == (dtype in DELEGATED_ARITHMETIC), summary
    assert_matches_eager(run(pte, inputs), eager(TwoInTwoOut(), inputs), **(DTYPES[dtype] or {}))


class ShuffleEach(torch.nn.Module):
    """:class:`Shuffle` of each pair of inputs: one method binding every dtype at once."""

    def forward(self, *pairs):
        return tuple(out for x, y in zip(pairs[::2], pairs[1::2]) for out in Shuffle()(x, y))


def test_the_runtime_binds_every_dtype():
    # One lowering for every dtype but float64 (which stays on ExecuTorch): the sanitizers' CI minutes.
    dtypes = [d for d in DTYPES if d != torch.float64]
    inputs = tuple(v for d in dtypes for v in (_values(d, (3, 4)), _values(d, (3, 4)).flip(0)))
    pte, summary = lower(ShuffleEach(), inputs)
    assert summary.delegated == summary.total, summary
    outputs, expected = run(pte, inputs), eager(ShuffleEach(), inputs)
    for i, dtype in enumerate(dtypes):
        got, want = outputs[2 * i:2 * i + 2], expected[2 * i:2 * i + 2]
        assert [o.dtype for o in got] == [dtype, dtype], dtype
        assert_matches_eager(got, want, **(DTYPES[dtype] or {}))


def test_bool_tensors():
    g = torch.Generator().manual_seed(3)
    inputs = (torch.rand(5, 6, generator=g) > 0.5, torch.rand(5, 6, generator=g) > 0.5)
    check_fully_delegated(BoolOps(), inputs)


def test_int64_at_the_int32_limits_is_exact():
    x = torch.tensor([[2**31 - 1, -(2**31), 7]], dtype=torch.int64)
    check_fully_delegated(Shuffle(), (x, torch.tensor([[1, 0, -3], [4, 5, 6]])))


def test_int64_input_outside_int32_is_refused_not_wrong():
    # OpenVINO would compute 2^40 + 3 + 1 as 4 (it narrows int64 to int32).
    x = torch.tensor([[2**40 + 3, 5, 7], [1, 2, 3]], dtype=torch.int64)
    y = torch.ones(2, 3, dtype=torch.int64)
    method = exov.load_method(lower(Shuffle(), (y.clone(), y))[0])
    with pytest.raises(ValueError, match=r"^input 0 \('x'\) holds the int64 value 1099511627779 at flat index 0, "
                                         "outside the int32 range"):
        method.execute([x, y])
    # The same loaded method still serves a good call.
    small = torch.tensor([[1, 2, 3], [4, 5, 6]])
    assert_matches_eager(list(method.execute([small, y])), eager(Shuffle(), (small, y)))


def test_mixed_dtypes_in_and_out():
    class Mixed(torch.nn.Module):
        def forward(self, x, idx, mask):
            return x * 2, idx ^ idx.flip(0), torch.logical_not(mask), x.sum()  # int32 xor: delegated on every CPU

    inputs = (torch.randn(4, 3), torch.arange(6, dtype=torch.int32), torch.tensor([True, False, True]))
    check_fully_delegated(Mixed(), inputs)
