"""Where OpenVINO's CPU plugin computes differently from PyTorch (tests/scripts/numerics_table.py measures it),
the default lowering keeps the result exact; ``numerics="fast"`` delegates anyway."""

from __future__ import annotations

import warnings

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_exactly_eager, eager, Fn, lower

pytestmark = [pytest.mark.aarch64]

I32, U8, I8, I16 = torch.int32, torch.uint8, torch.int8, torch.int16
B = 2**24 + 1


# The rows of the table in docs/user-guide/numerics.md that OpenVINO gets wrong (both releases).
DIFFERING = {
    "int64 add": (lambda i: i + 1, (torch.tensor([2**31 - 1]),)),
    "int64 mul": (lambda i: i * 100000, (torch.tensor([70000]),)),
    "int32 sum": (lambda i: i.sum(), (torch.tensor([2**24, 1], dtype=I32),)),
    "int32 amax": (lambda i: i.amax(), (torch.tensor([B, 0], dtype=I32),)),
    "int32 amin": (lambda i: i.amin(), (torch.tensor([-B, 0], dtype=I32),)),
    "int32 max": (lambda i: i.max(), (torch.tensor([B, 3], dtype=I32),)),
    "int32 min(dim)": (lambda i: i.min(1)[0], (torch.tensor([[B, B + 2]], dtype=I32),)),
    "int32 prod": (lambda i: i.prod(), (torch.tensor([1000, 1000, 1000], dtype=I32),)),
    "uint8 add": (lambda u: u + 200, (torch.tensor([250], dtype=U8),)),
    "int32 floor divide": (lambda i: i // 2, (torch.tensor([-7], dtype=I32),)),
    "float64 mul": (lambda x, y: x * y, (torch.tensor([1e300], dtype=torch.float64),
                                         torch.tensor([1.0000001], dtype=torch.float64))),
    "subnormal constant": (lambda x: x + torch.tensor([1e-40, 2e-39]), (torch.zeros(2),)),
    "-0.0 constant": (lambda x: x * torch.tensor([-0.0, 1.0]), (torch.ones(2),)),
}


@pytest.mark.parametrize("case", list(DIFFERING))
@pytest.mark.sampled(every=2)
def test_default_lowering_is_exact(case):
    fn, inputs = DIFFERING[case]
    model = Fn(lambda *a: (fn(*a), a[0].float() * 0.5))  # something for OpenVINO beside it
    pte, summary = lower(model, inputs)
    assert summary.delegated >= 1
    method = exov.load_method(pte)
    for _ in range(2):
        assert_exactly_eager(list(method.execute(list(inputs))), eager(model, inputs))


@pytest.mark.parametrize("case", ["int32 amax", "int64 add", "float64 mul", "uint8 add"])
@pytest.mark.sampled(every=2)
def test_fast_numerics_delegates_them(case):
    fn, inputs = DIFFERING[case]
    _, exact = lower(Fn(fn), inputs)
    _, fast = lower(Fn(fn), inputs, partitioner=exov.OpenvinoPartitioner(numerics="fast"))
    assert fast.delegated == fast.total > exact.delegated


def test_unknown_numerics_is_refused_before_lowering():
    with pytest.raises(ValueError, match="compile spec 'numerics' is 'approximate'; allowed values are 'exact' and 'fast'"):
        exov.OpenvinoPartitioner(numerics="approximate")


class SubnormalBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([1.0, 1e-40]))

    def forward(self, x):
        return x * self.scale


def test_a_buffer_with_subnormal_values_is_named_in_a_warning_that_says_what_helps():
    with pytest.warns(UserWarning, match="flushes subnormal and -0.0 constant values to 0.0.*scale") as caught:
        pte, _ = lower(SubnormalBuffer(), (torch.ones(2),))
    message = next(str(w.message) for w in caught if "flushes subnormal" in str(w.message))
    assert "numerics='fast'" not in message  # it only skipped this check: OpenVINO flushes the values all the same
    assert eager(SubnormalBuffer(), (torch.ones(2),))[0][1] != 0 and exov.load_method(pte).execute([torch.ones(2)])[0][1] == 0
    # What the warning suggests removes the difference, and the warning with it.
    assert "t.data = torch.where(t.abs() < torch.finfo(t.dtype).tiny, 0.0, t)" in message
    model = SubnormalBuffer()
    t = model.scale
    t.data = torch.where(t.abs() < torch.finfo(t.dtype).tiny, 0.0, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        pte, _ = lower(model, (torch.ones(2),))
    assert_exactly_eager(exov.load_method(pte).execute([torch.ones(2)]), eager(model, (torch.ones(2),)))


MASK = (torch.arange(600) % 3 != 0)  # 400 True: counts past 255


@pytest.mark.parametrize("dtype", [torch.bool, U8, I8, I16, I32])
@pytest.mark.parametrize("op", ["cumsum", "prod", "sum"])
@pytest.mark.sampled(every=3)
def test_integer_accumulation_is_int64_as_in_pytorch(op, dtype):
    values = MASK.to(dtype) if op != "prod" else (MASK.to(dtype) + (dtype != torch.bool)).view(60, 10)[:, :4].contiguous()
    fn = {
        "cumsum": lambda v: (v.cumsum(0), v.float() * 2),
        "prod": lambda v: (v.prod(1), v.float() * 2),
        "sum": lambda v: (v.sum(), v.float() * 2),
    }[op]
    pte, _ = lower(Fn(fn), (values,))
    method = exov.load_method(pte)
    expected = eager(Fn(fn), (values,))
    assert expected[0].dtype == torch.int64
    for _ in range(3):
        assert_exactly_eager(list(method.execute([values])), expected)




















# int32 element-wise ops on odd values above 2**24, which float32 cannot hold: OpenVINO 2026.4.1 computes them
# exactly on x86_64 and through float32 on ARM (the aarch64 column of numerics.md), so the default lowering
# keeps them on ExecuTorch unless their range is proven; numerics="fast" delegates them.
INT32_ELEMENTWISE = {
    "add": (lambda a, b: a + b, (torch.tensor([B, -B, 7], dtype=I32), torch.tensor([2, -2, 2**30], dtype=I32))),
    "sub": (lambda a, b: a - b, (torch.tensor([2**25 + 1, -B], dtype=I32), torch.tensor([2, 2], dtype=I32))),
    "mul": (lambda a, b: a * b, (torch.tensor([4097, -4097], dtype=I32), torch.tensor([4097, 4097], dtype=I32))),
    "maximum": (torch.maximum, (torch.tensor([B, -B], dtype=I32), torch.tensor([0, -B - 2], dtype=I32))),
}


@pytest.mark.parametrize("case", list(INT32_ELEMENTWISE))
@pytest.mark.sampled(every=3)
def test_int32_elementwise_ops_past_2_24_are_exact_on_every_cpu(case):
    fn, inputs = INT32_ELEMENTWISE[case]
    pte, summary = lower(Fn(fn), inputs)
    assert summary.delegated == 0, summary
    assert_exactly_eager(list(exov.load_method(pte).execute(list(inputs))), eager(Fn(fn), inputs))
    _, fast = lower(Fn(fn), inputs, partitioner=exov.OpenvinoPartitioner(numerics="fast"))
    assert fast.delegated == fast.total
