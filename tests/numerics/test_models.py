"""Whole programs: loaded from memory and from a file, run repeatedly, and the real MiniLM model."""

from __future__ import annotations

import warnings

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, lower

pytestmark = [pytest.mark.older_openvino, pytest.mark.aarch64]


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3), torch.nn.GELU(),
        )
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        y = self.features(x).mean(dim=(2, 3))
        return torch.softmax(self.head(y), dim=-1), y


@pytest.mark.parametrize("source", ["memory", "file"])
def test_program_loaded_from_memory_and_file_runs_repeatedly(source, tmp_path):
    torch.manual_seed(0)
    model = ConvNet().eval()
    x = torch.randn(2, 3, 16, 16)
    pte, summary = lower(model, (x,))
    assert summary.delegated == summary.total
    if source == "file":  # memory-mapped by ExecuTorch's file loader
        (tmp_path / "convnet.pte").write_bytes(pte)
        pte = tmp_path / "convnet.pte"
    method = exov.load_method(pte)
    for seed in range(3):  # new inputs each time: nothing stale from the previous call
        x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(seed))
        assert_matches_eager(list(method.execute([x])), eager(model, (x,)))


def test_outputs_are_not_aliased_between_calls():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    x1, x2 = torch.randn(2, 4), torch.randn(2, 4)
    method = exov.load_method(lower(model, (x1,))[0])
    first = method.execute([x1])[0].clone()
    method.execute([x2])
    assert_matches_eager([first], eager(model, (x1,)))


def test_static_outputs_are_written_in_place_by_openvino():
    from executorch_openvino.runtime import _native

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    x = torch.randn(2, 4)
    method = exov.load_method(lower(model, (x,))[0])
    before = _native.output_counters()
    for _ in range(3):
        method.execute([x])
    after = _native.output_counters()
    assert after["in_place"] - before["in_place"] == 3
    assert after["copied"] == before["copied"]


@pytest.mark.own_runtime  # imports, the same with every release: newest release only
def test_importing_the_package_needs_no_optional_dependency():
    import subprocess
    import sys

    code = ("import sys, executorch_openvino as exov; exov.OpenvinoPartitioner(); "
            "bad = [m for m in ('nncf', 'executorch.backends.openvino') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_wrong_input_shape_and_dtype_are_refused_and_the_method_still_works():
    model = torch.nn.Linear(4, 2)
    x = torch.randn(3, 4)
    method = exov.load_method(lower(model, (x,))[0])
    with pytest.raises(ValueError, match=r"input 0 of method 'forward' has shape \(5, 4\), the method was exported for \(3, 4\)"):
        method.execute([torch.randn(5, 4)])
    with pytest.raises(ValueError, match="has dtype torch.float64, the method was exported for torch.float32"):
        method.execute([torch.randn(3, 4, dtype=torch.float64)])
    assert_matches_eager(list(method.execute([x])), eager(model, (x,)))


def test_minilm_sentence_embeddings_match_eager():
    pytest.importorskip("transformers")
    from executorch_openvino.examples.minilm import load_model_and_inputs

    model, inputs = load_model_and_inputs(seq_len=16)
    with warnings.catch_warnings(record=True) as caught:  # the demo's model: prepared, so no flushed-values warning
        warnings.simplefilter("always")
        pte, summary = lower(model, inputs)
    assert not [w for w in caught if "flushes subnormal" in str(w.message)]
    assert summary.fraction > 0.95, summary
    actual = exov.load_method(pte).execute(list(inputs))[0]
    expected = eager(model, inputs)[0]
    assert (actual - expected).abs().max().item() <= 1e-4
    assert torch.nn.functional.cosine_similarity(actual, expected, dim=1).min().item() >= 0.99999


def test_a_buffer_the_program_mutates_starts_from_the_modules_values():
    # ExecuTorch 1.5.1 writes only the shape of a mutated buffer unless asked: the program then
    # started from zeroed memory (measured: outputs [0, 2, 4, 6] instead of [10, 0, 5, 10]).
    class Accumulator(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("total", torch.tensor([5.0, -1.0, 0.5, 2.0]))

        def forward(self, x):
            self.total.add_(x)
            return self.total * 2

    x = torch.arange(4, dtype=torch.float32)
    reference = Accumulator()
    method = exov.load_method(exov.lower(Accumulator(), (x,)).buffer)
    for _ in range(3):
        assert torch.equal(method.execute([x])[0], reference(x))
