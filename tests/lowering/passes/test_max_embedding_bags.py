"""passes/max_embedding_bags.py: embedding bags in max mode, which neither ExecuTorch nor OpenVINO's frontend
computes, run on OpenVINO exactly as eager computes them."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import Fn, assert_matches_eager, eager, lower

F = torch.nn.functional
INDICES = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
OFFSETS = torch.tensor([0, 4, 4])  # the second bag is empty


def _max_bags(w, i, o):
    return (F.embedding_bag(i, w, o, mode="max"),
            F.embedding_bag(i, w, o, mode="max", include_last_offset=True))  # eager's last bag: to the end


@pytest.mark.older_openvino
def test_max_mode_matches_eager_exactly_nan_empty_bags_and_several_calls_included(tmp_path):
    module, weight = Fn(_max_bags), torch.randn(10, 3)
    pte, summary = lower(module, (weight, INDICES, OFFSETS))
    assert summary.delegated == summary.total, summary
    (tmp_path / "max.pte").write_bytes(pte)
    method = exov.load_method(tmp_path / "max.pte")
    with_nan = weight.clone()
    with_nan[2, 0] = with_nan[4, 1] = float("nan")  # eager: NaN where a bag's first row has it, else skipped
    for w, offsets in ((weight, [0, 4, 4]), (weight, [0, 1, 7]), (weight, [0, 8, 8]), (weight, [0, 0, 0]),
                       (with_nan, [0, 2, 4]), (with_nan, [0, 1, 5]), (-weight.abs() - 1, [0, 3, 6])):
        inputs = (w, INDICES, torch.tensor(offsets))
        for actual, expected in zip(method.execute(list(inputs)), eager(module, inputs)):
            torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
    assert torch.isnan(eager(module, (with_nan, INDICES, torch.tensor([0, 1, 5])))[0]).any()  # the case is there
    # 0.0 and -0.0 tie: eager keeps the bag's first, so the sign depends on the order.
    zeros = torch.zeros(10, 3)
    zeros[1], zeros[2, 1] = -0.0, -0.0
    for indices in (INDICES, INDICES.flip(0)):
        actual, expected = method.execute([zeros, indices, OFFSETS])[0], eager(module, (zeros, indices, OFFSETS))[0]
        assert torch.equal(torch.signbit(actual), torch.signbit(expected)), (actual, expected)
    # Many scan steps (37 indices, bags of every size) and a parameter as weight.
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(50, 5, mode="max").eval()
    indices = torch.randint(0, 50, (37,))
    offsets = torch.tensor([0, 1, 1, 9, 20, 36])
    pte, summary = lower(bag, (indices, offsets))
    assert summary.delegated == summary.total, summary
    method = exov.load_method(pte)
    for other in (offsets, torch.tensor([0, 0, 17, 30, 37, 37]), torch.tensor([0, 5, 6, 7, 8, 9])):
        assert_matches_eager(list(method.execute([indices, other])), eager(bag, (indices, other)), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="an index outside 0..49"):
        method.execute([indices * 0 + 50, offsets])
    # Eager's max mode reads decreasing offsets as if sorted (sum and mean raise): refused, and said so.
    decreasing = torch.tensor([0, 9, 1, 20, 30, 36])
    eager(bag, (indices, decreasing))  # no error in eager
    with pytest.raises(RuntimeError, match="offsets that decrease, which eager's max mode reads as if sorted.*"
                                           "give offsets that do not decrease$"):
        method.execute([indices, decreasing])
