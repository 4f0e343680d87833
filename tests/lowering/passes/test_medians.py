"""passes/medians.py: ``median`` (ExecuTorch has no kernel for it) runs on OpenVINO as eager PyTorch computes it,
special values and both numerics settings included; what the pass does not take still fails to lower, as before."""

from __future__ import annotations

import math

import pytest
import torch
from torch._export.verifier import SpecViolationError

import executorch_openvino as exov
from exov_testing.programs import Fn, OneInput, eager, lower, run

NAN, INF = math.nan, math.inf
# The modules return tuple(torch.median(x, dim)): ExecuTorch cannot write the torch.return_types.median
# namedtuple into a program's output spec ("No registered serialization name"), median or not.


def assert_exactly_eager(actual, expected):
    """Bit for bit, NaN included: a median is one of its inputs."""
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape, (a, e)
        torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True)
        if e.is_floating_point():
            assert torch.equal(torch.signbit(a), torch.signbit(e)), (a, e)


def _check(module, inputs, numerics="exact"):
    pte, summary = lower(module, inputs, partitioner=exov.OpenVINOPartitioner(numerics=numerics))
    assert summary.delegated == summary.total, summary
    actual, expected = run(pte, inputs), eager(module, inputs)
    assert_exactly_eager(actual, expected)
    return actual


@pytest.mark.older_openvino
@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_median_along_a_dimension_and_of_a_whole_tensor_with_nan_and_infinities(numerics):
    x = torch.randn(6, 9)
    x[1, 3] = NAN  # one NaN: the median is NaN, the index the NaN's
    x[2, 2], x[2, 7] = NAN, NAN  # two: the first one's index
    x[3, 0], x[3, 1], x[4, 5] = INF, -INF, -INF  # distinct values: eager's index is defined

    def medians(t, flat, scalar, special, signed):
        along = [v for d, k in [(1, False), (1, True), (0, False), (-1, True)] for v in torch.median(t, d, keepdim=k)]
        # t.t(): a whole-tensor median of a transposed input (it has no flat view)
        return (*along, t.median(), t.t().median(), flat.median(), scalar.median(), special.median(),
                signed.median() * 2)

    _check(Fn(medians), (x, torch.randn(8), torch.tensor(2.5), torch.tensor([1.0, NAN, -INF]),
                         torch.tensor([[-0.0, 3.0], [-INF, INF]])), numerics)


def test_an_even_count_takes_the_lower_middle_value_and_half_precision_keeps_its_dtype():
    x = torch.tensor([[4.0, 1.0, 3.0, 2.0]])
    module = Fn(lambda t, h, b: (*torch.median(t, 1), *torch.median(h, 0), *torch.median(b, 0)))
    inputs = (x, torch.randn(7, 3).half(), torch.randn(7, 3).bfloat16())
    assert _check(module, inputs)[0].item() == 2.0


def test_equal_values_give_an_index_of_one_of_them():
    # PyTorch's index between equal values is unspecified ("not necessarily the first occurrence"):
    # the value is eager's, and the index points at an element equal to it.
    x = torch.tensor([[2.0, 1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 5.0, 5.0, 5.0],
                      [INF, -INF, 1.0, INF, INF], [-INF] * 5])
    pte, _ = lower(Fn(lambda t: tuple(torch.median(t, 1))), (x,))
    values, indices = run(pte, (x,))
    assert torch.equal(values, torch.tensor([2.0, 5.0, INF, -INF])) and indices.dtype == torch.int64
    assert torch.equal(x.gather(1, indices[:, None])[:, 0], values)


def test_several_calls_and_a_program_from_a_file(tmp_path):
    module = Fn(lambda t: tuple(torch.median(t, 1)))
    pte, _ = lower(module, (torch.randn(3, 5),))
    path = tmp_path / "median.pte"
    path.write_bytes(pte)
    method = exov.load_method(path)
    for seed in range(3):
        x = torch.randn(3, 5, generator=torch.Generator().manual_seed(seed))
        assert_exactly_eager(list(method.execute([x])), eager(module, (x,)))


def test_a_median_the_pass_does_not_take_still_fails_to_lower():
    # int64 (sorted in float32 by OpenVINO) and a dynamic size: as without this package, to_edge refuses it.
    with pytest.raises(SpecViolationError, match="this package delegates a median of float32"):
        exov.lower(Fn(lambda t: tuple(torch.median(t, 0))), (torch.arange(6),))
    x = torch.randn(4, 6)
    dynamic = {"x": {1: torch.export.Dim("n", min=2, max=16)}}
    with pytest.raises(SpecViolationError, match="this package delegates a median of float32"):
        exov.lower(OneInput(lambda t: tuple(torch.median(t, 1))), (x,), dynamic_shapes=dynamic)
    # A dynamic size elsewhere is fine.
    dynamic = {"x": {0: torch.export.Dim("n", min=2, max=16)}}
    program = exov.lower(OneInput(lambda t: tuple(torch.median(t, 1))), (x,), dynamic_shapes=dynamic)
    assert exov.delegation_summary(program).delegated == exov.delegation_summary(program).total
