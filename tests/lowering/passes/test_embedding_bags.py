"""passes/embedding_bags.py and the embedding bag's checks (passes/index_checks.py): embedding bags, which ExecuTorch has
no kernel for, run on OpenVINO as eager computes them, and refuse what eager refuses with a message naming it."""

from __future__ import annotations

import pytest
import torch
from torch._export.verifier import SpecViolationError

import executorch_openvino as exov
from exov_testing.programs import Fn, assert_matches_eager, eager, lower, run

F = torch.nn.functional
INDICES = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
OFFSETS = torch.tensor([0, 4, 4])  # the second bag is empty


def _bags(weight, indices, offsets, per_sample, square, last_offsets):
    return (F.embedding_bag(indices, weight, offsets, mode="sum"),
            F.embedding_bag(indices, weight, offsets, mode="mean"),
            F.embedding_bag(indices, weight, offsets, mode="sum", per_sample_weights=per_sample),
            F.embedding_bag(square, weight, mode="mean"),  # 2-D indices: bags of equal size, no offsets
            F.embedding_bag(indices.int(), weight, offsets.int(), mode="sum"),
            # CSR offsets: 3 bags, the last offset is the number of indices
            F.embedding_bag(indices, weight, last_offsets, mode="mean", include_last_offset=True))


class Module(torch.nn.Module):
    """nn.EmbeddingBag: a parameter as weight (ExecuTorch's decomposition then gives _embedding_bag itself)."""

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(10, 4, mode="mean")

    def forward(self, indices, offsets):
        return self.bag(indices, offsets) * 2


@pytest.mark.older_openvino
def test_embedding_bags_match_eager_in_every_supported_form(tmp_path):
    inputs = (torch.randn(10, 3), INDICES, OFFSETS, torch.rand(8), INDICES.view(2, 4), torch.tensor([0, 4, 6, 8]))
    pte, summary = lower(Fn(_bags), inputs)
    assert summary.delegated == summary.total, summary
    assert_matches_eager(run(pte, inputs), eager(Fn(_bags), inputs))
    module = Module().eval()
    pte, summary = lower(module, (INDICES, OFFSETS))
    assert summary.delegated == summary.total, summary
    path = tmp_path / "bag.pte"
    path.write_bytes(pte)
    method = exov.load_method(path)
    for offsets in (OFFSETS, torch.tensor([0, 1, 7]), torch.tensor([0, 8, 8])):  # several calls, other bags
        assert_matches_eager(list(method.execute([INDICES, offsets])), eager(module, (INDICES, offsets)))


def _sum_bag(weight, indices, offsets):
    return F.embedding_bag(indices, weight, offsets, mode="sum")


@pytest.fixture(scope="module")
def sum_bag_method():
    pte, _ = lower(Fn(_sum_bag), (torch.randn(10, 3), INDICES, OFFSETS))
    return exov.load_method(pte)


@pytest.mark.parametrize("indices,offsets,message", [
    ([1, 2, 4, 5, 4, 3, 2, 12], [0, 4, 4], "an index outside 0..9"),
    ([1, 2, 4, 5, 4, 3, 2, -1], [0, 4, 4], "an index outside 0..9"),
    ([1] * 8, [0, 4, 9], "an offset outside 0..8"),
    ([1] * 8, [1, 4, 4], "a first offset other than 0"),  # OpenVINO alone computed bags from it
    ([1] * 8, [0, 5, 3], "offsets that decrease"),
])
def test_what_eager_refuses_fails_the_call_with_a_message_naming_it(sum_bag_method, indices, offsets, message):
    weight = torch.randn(10, 3)
    with pytest.raises((RuntimeError, IndexError)):  # eager refuses each
        _sum_bag(weight, torch.tensor(indices), torch.tensor(offsets))
    advice = "give offsets that start at 0" if "offset" in message else "pass indices within the size"
    with pytest.raises(RuntimeError, match=f"{message}.*{advice}"):
        sum_bag_method.execute([weight, torch.tensor(indices), torch.tensor(offsets)])
    # The method still works afterwards.
    assert_matches_eager(list(sum_bag_method.execute([weight, INDICES, OFFSETS])),
                         eager(Fn(_sum_bag), (weight, INDICES, OFFSETS)))


class _Dynamic(torch.nn.Module):
    def forward(self, weight, indices, offsets):
        return F.embedding_bag(indices, weight, offsets, mode="sum")


@pytest.mark.parametrize("kwargs", [{"mode": "sum", "padding_idx": 2}, "dynamic count"])
def test_forms_openvino_does_not_compute_still_fail_to_lower(kwargs):
    # As without this package: to_edge refuses _embedding_bag_forward_only, which ExecuTorch cannot run.
    # A dynamic number of indices: the offsets could not be checked (a first offset of 1 gave numbers).
    inputs = (torch.randn(10, 3), INDICES, OFFSETS)
    with pytest.raises(SpecViolationError, match="(?s)embedding_bag.*this package delegates an embedding bag without padding_idx"):
        if kwargs == "dynamic count":
            exov.lower(_Dynamic(), inputs, dynamic_shapes=(None, {0: torch.export.Dim("n", min=1, max=64)}, None))
        else:
            exov.lower(Fn(lambda w, i, o: F.embedding_bag(i, w, o, **kwargs)), inputs)


def test_include_last_offset_in_mean_mode_gives_eagers_last_bag_whatever_the_last_offset():
    # Eager divides the sum of [4, 6) by 4 for offsets [0, 4, 6] over 8 indices in mean mode (CSR's last offset is
    # the number of indices, PyTorch's documentation, but eager takes any): the delegate computes the same, over
    # several calls of one method, an empty last bag and one bag only (ExecuTorch's operator suite: [0, 4]).
    # In sum mode a shorter last offset only ends the last bag, as in eager.
    def bags(w, i, o):
        return (F.embedding_bag(i, w, o, mode="mean", include_last_offset=True),
                F.embedding_bag(i, w, o * 0 + torch.tensor([0, 4, 6]), mode="sum", include_last_offset=True))

    module, weight = Fn(bags), torch.randn(10, 3)
    pte, _ = lower(module, (weight, INDICES, torch.tensor([0, 4, 8])))
    method = exov.load_method(pte)
    for offsets in ([0, 4, 6], [0, 3, 8], [0, 8, 8], [0, 0, 5], [0, 6, 6]):
        offsets = torch.tensor(offsets)
        assert_matches_eager(list(method.execute([weight, INDICES, offsets])),
                             eager(module, (weight, INDICES, offsets)), rtol=1e-5, atol=1e-6)
    # A transposed weight is off eager's fast path, which then ends the last bag with the indices (a tester
    # found the delegate 0.45 off there): both modes, the same offsets.
    transposed = Fn(lambda w, i, o: (F.embedding_bag(i, w.t(), o, mode="mean", include_last_offset=True),
                                     F.embedding_bag(i, w.t(), o, mode="sum", include_last_offset=True)))
    method = exov.load_method(lower(transposed, (weight.t().contiguous(), INDICES, torch.tensor([0, 4, 8])))[0])
    for offsets in ([0, 4, 6], [0, 3, 8], [0, 0, 5]):
        inputs = (weight.t().contiguous(), INDICES, torch.tensor(offsets))
        assert_matches_eager(list(method.execute(list(inputs))), eager(transposed, inputs), rtol=1e-5, atol=1e-6)
    one_bag = Fn(lambda w, i, o: F.embedding_bag(i, w, o, mode="mean", include_last_offset=True))
    offsets = torch.tensor([0, 4])
    pte, _ = lower(one_bag, (weight, INDICES, offsets))
    assert_matches_eager(run(pte, (weight, INDICES, offsets)), eager(one_bag, (weight, INDICES, offsets)),
                         rtol=1e-5, atol=1e-6)
