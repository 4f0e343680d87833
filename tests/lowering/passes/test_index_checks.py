"""A delegated lookup given an index outside its table fails the call, as eager PyTorch raises IndexError.

OpenVINO's Gather returns zeros past the end and wraps negative indices, so
without the checks (lowering/passes/index_checks.py) these calls returned rows
that eager PyTorch never gives. Every case is fully delegated, runs several
calls on one loaded method (a failed call must not spoil the next), and
compares the good calls exactly with eager.
"""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager


class Lookups(torch.nn.Module):
    def __init__(self, kind: str):
        super().__init__()
        torch.manual_seed(0)
        self.kind = kind
        self.table = torch.nn.Embedding(10, 4)
        self.register_buffer("weights", torch.randn(10, 3))

    def forward(self, i, j):
        if self.kind == "embedding":
            return self.table(i) * 2 + self.table(j)
        if self.kind == "index_select":
            return torch.index_select(self.weights, 0, i) + torch.index_select(self.weights, 0, j)
        if self.kind == "index":
            return self.weights[i] + self.weights[j]
        return self.weights[i, j] * 2  # two index tensors: OpenVINO reads one flattened index


GOOD = (torch.tensor([1, 2, 9]), torch.tensor([0, 1, 2]))
# kind -> (inputs eager accepts, (inputs eager refuses, the message's "outside" range))
CASES = {
    "embedding": ([(torch.tensor([0, 9, 5]), GOOD[1])],
                  [((torch.tensor([1, 12, 3]), GOOD[1]), "0..9"), ((torch.tensor([-1, 0, 0]), GOOD[1]), "0..9")]),
    "index_select": ([GOOD], [((torch.tensor([10, 0, 0]), GOOD[1]), "0..9"),
                              ((torch.tensor([0, -1, 0]), GOOD[1]), "0..9")]),
    "index": ([(torch.tensor([-1, -10, 3]), GOOD[1])],
              [((torch.tensor([0, 10, 0]), GOOD[1]), "-10..9"), ((torch.tensor([-11, 0, 0]), GOOD[1]), "-10..9")]),
    # Column 3 of row 0 is the flat element 3, inside the table: only a per-dimension check sees it.
    "two index tensors": ([(GOOD[0], torch.tensor([-3, 2, -1]))],
                          [((torch.tensor([0, 1, 2]), torch.tensor([3, 0, 0])), "-3..2"),
                           ((torch.tensor([0, 1, 10]), GOOD[1]), "-10..9")]),
}


@pytest.fixture(params=["memory", "file"])
def source(request, tmp_path):
    return request.param, tmp_path


@pytest.mark.parametrize("numerics", ["exact", "fast"])
@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.sampled(every=2)
def test_an_index_outside_the_table_fails_the_call(kind, numerics, source):
    where, tmp_path = source
    model = Lookups(kind).eval()
    program = exov.lower(model, GOOD, numerics=numerics)
    summary = exov.delegation_summary(program)
    assert summary.delegated == summary.total, summary
    pte = program.buffer
    if where == "file":
        pte = tmp_path / "lookups.pte"
        pte.write_bytes(program.buffer)
    method = exov.load_method(pte)
    accepted, refused = CASES[kind]
    for inputs in [GOOD, *accepted]:
        assert_matches_eager(list(method.execute(list(inputs))), eager(model, inputs))
    for inputs, allowed in refused:
        with pytest.raises(IndexError):
            eager(model, inputs)
        with pytest.raises(RuntimeError, match=rf"was given an index outside {allowed} \(eager PyTorch raises an error"):
            method.execute(list(inputs))
        assert_matches_eager(list(method.execute(list(GOOD))), eager(model, GOOD))  # the next call still runs


def test_the_check_holds_for_dynamic_index_counts_and_executorch_runtime():
    from executorch.runtime import Runtime

    model = torch.nn.Embedding(10, 4).eval()
    ids = torch.tensor([1, 2, 3])
    program = exov.lower(model, (ids,), dynamic_shapes=({0: torch.export.Dim("count", min=1, max=64)},))
    method = Runtime.get().load_program(program.buffer).load_method("forward")  # upstream's API, no wrapper
    for n in (1, 7, 64):
        ids = torch.arange(n) % 10
        assert_matches_eager(list(method.execute([ids])), eager(model, (ids,)))
    with pytest.raises(RuntimeError):
        method.execute([torch.tensor([3] * 20 + [10])])


class TwoIndices(torch.nn.Module):
    def forward(self, x, i, j):
        return x[i, j] * 2


def test_lookups_along_a_dynamic_dimension_stay_on_executorch():
    # x[1, -1] of a (5, n) input: the flattened index 1 * n - 1 read x[0, n - 1] on OpenVINO.
    x, i, j = torch.arange(30.0).reshape(5, 6), torch.tensor([1, 2]), torch.tensor([0, 1])
    n = torch.export.Dim("n", min=2, max=20)
    program = exov.lower(TwoIndices(), (x, i, j), dynamic_shapes={"x": {1: n}, "i": None, "j": None})
    method = exov.load_method(program.buffer)
    for columns, jj in ((6, torch.tensor([-1, -6])), (10, torch.tensor([-1, 9]))):
        inputs = (torch.arange(5.0 * columns).reshape(5, columns), i, jj)
        assert_matches_eager(list(method.execute(list(inputs))), eager(TwoIndices(), inputs))


@pytest.mark.parametrize("lookup", [
    lambda w, i: torch.nn.functional.embedding(i, w), lambda w, i: torch.index_select(w, 0, i), lambda w, i: w[i, i],
])
def test_an_empty_index_tensor_does_not_end_the_process(lookup):
    # OpenVINO 2026.4.1's CPU plugin died of SIGFPE compiling a Gather of 0 indices: kept on ExecuTorch.
    w, i = torch.randn(5, 3), torch.zeros(0, dtype=torch.long)

    class Lookup(torch.nn.Module):
        def forward(self, w, i):
            return lookup(w, i) + 1

    method = exov.load_method(exov.lower(Lookup(), (w, i)).buffer)
    assert_matches_eager(list(method.execute([w, i])), eager(Lookup(), (w, i)))


def test_a_gather_with_a_narrower_index_lowers_and_matches_eager():
    # OpenVINO's converter refused it (GatherElements shapes [10,3] and [3,1]): kept on ExecuTorch.
    module, inputs = torch.nn.Module(), (torch.randn(10, 3), torch.tensor([[1], [9], [0]]))
    module.forward = lambda w, i: torch.gather(w, 0, i) * 2
    method = exov.load_method(exov.lower(module, inputs).buffer)
    assert_matches_eager(list(method.execute(list(inputs))), eager(module, inputs))


class SharedIndices(torch.nn.Module):
    """Three lookups of one index tensor: two tables of 10 rows (one check), one of 12 (its own)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b, self.c = torch.nn.Embedding(10, 4), torch.nn.Embedding(10, 4), torch.nn.Embedding(12, 4)

    def forward(self, i):
        return self.a(i) + 2 * self.b(i) + self.c(i)


def _check_outputs(pte: bytes, folder) -> list:
    import numpy as np
    import openvino as ov

    from exov_testing.compile_harness import write_first_blob
    from executorch_openvino.contract import processed_blob

    ir = processed_blob.unpack(write_first_blob(pte, folder / "first.blob").read_bytes())
    model = ov.Core().read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy()))
    return [o.get_any_name() for o in model.outputs if o.get_any_name().startswith(processed_blob.INDEX_CHECK_PREFIX)]


@pytest.mark.parametrize("declared", [False, True])
def test_lookups_of_the_same_indices_share_one_check(declared, tmp_path):
    """One check per index tensor and table range (a KV cache written in every layer had 60 identical ones,
    each an OpenVINO node per step), none where the input's declared range lies inside the tables."""
    from executorch_openvino.api import lower_exported

    model, good = SharedIndices().eval(), (torch.tensor([0, 9, 4]),)
    ranges = {"i": (0, 9)} if declared else {}
    pte = lower_exported(torch.export.export(model, good), exov.OpenvinoPartitioner(input_ranges=ranges)).buffer
    checks = _check_outputs(pte, tmp_path)
    # declared 0..9: only the range's own check (0..9 lies inside 10 and 12 rows); else 0..9 once, 0..11 once.
    assert len(checks) == (1 if declared else 2), checks
    method = exov.load_method(pte)
    assert_matches_eager(list(method.execute(list(good))), eager(model, good))
    message = (r"input 'i' was given a value outside 0\.\.9" if declared
               else r"outside 0\.\.9 \(as did 1 more lookups of the same indices\)")
    for bad in (torch.tensor([0, 10, 1]), torch.tensor([-1, 0, 0])):
        with pytest.raises(RuntimeError, match=message):
            method.execute([bad])
        assert_matches_eager(list(method.execute(list(good))), eager(model, good))
    if not declared:
        with pytest.raises(IndexError):
            eager(model, (torch.tensor([11, 0, 0]),))
        with pytest.raises(RuntimeError, match=r"outside 0\.\.9"):  # 11 is inside c's 12 rows, not a's or b's
            method.execute([torch.tensor([11, 0, 0])])


class ComputedTwice(torch.nn.Module):
    """Each layer of a decoder computes its cache positions itself: equal computations share one check."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a, self.b = torch.nn.Embedding(10, 4), torch.nn.Embedding(10, 4)

    def forward(self, i, j):
        return self.a(i + 1) + self.b(i + 1) + self.a(j + 1)


def test_lookups_of_equal_computations_share_one_check(tmp_path):
    from executorch_openvino.api import lower_exported

    # Declared ranges delegate the index arithmetic (integer_ranges), as a decoder's cache_position does.
    model, good = ComputedTwice().eval(), (torch.tensor([0, 8, 4]), torch.tensor([1, 2, 3]))
    partitioner = exov.OpenvinoPartitioner(input_ranges={"i": (-5, 8), "j": (-5, 8)})
    pte = lower_exported(torch.export.export(model, good), partitioner).buffer
    checks = _check_outputs(pte, tmp_path)
    assert len(checks) == 4, checks  # the ranges of i and j, i + 1 once (two lookups), j + 1 once
    method = exov.load_method(pte)
    assert_matches_eager(list(method.execute(list(good))), eager(model, good))
    bad_i = (torch.tensor([0, -3, 1]), good[1])  # inside i's declared range, i + 1 outside the tables
    with pytest.raises(IndexError):
        eager(model, bad_i)
    with pytest.raises(RuntimeError, match=r"outside 0\.\.9 \(as did 1 more lookups of the same indices\)"):
        method.execute(list(bad_i))
    with pytest.raises(RuntimeError, match=r"'aten_embedding_default_\d' was given an index outside 0\.\.9 \(eager"):
        method.execute([good[0], torch.tensor([-2, 0, 0])])  # j's own check
    assert_matches_eager(list(method.execute(list(good))), eager(model, good))
