"""Decoder-only architectures besides Llama through ``export_llm``: tiny random-weight models of each
(``exov_testing.llm_models.ARCHITECTURES``), greedy tokens and logits equal to eager from a new sequence, a
continuation and a rewind, with each OpenVINO release; and whether each got OpenVINO's fused stateful
attention (``lowering/cached_attention.py``) or kept the static cache, which is also right, only slower."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.llm_models import ARCHITECTURES, eager_greedy, tiny_decoder

pytestmark = [pytest.mark.older_openvino]

transformers = pytest.importorskip("transformers")
LOGITS_TOLERANCE = dict(rtol=1e-4, atol=1e-4)
# Gemma-2's and a windowed Mistral's sliding-window layers mask differently from the static cache's causal
# mask (Gemma-2's attention is not scaled_dot_product_attention either): the cache stays static there.
FUSED = {name: name not in ("gemma2", "mistral-window") for name in ARCHITECTURES}


def _greedy(method, tokens: list, start: int, count: int) -> tuple[list, list]:
    out = method.execute([torch.tensor([tokens]), torch.arange(start, start + len(tokens))])[0]
    got, logits, position = [], [], start + len(tokens)
    for _ in range(count):
        logits.append(out[0, -1])
        got.append(int(out[0, -1].argmax()))
        out = method.execute([torch.tensor([[got[-1]]]), torch.tensor([position])])[0]
        position += 1
    return got, logits


@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
def test_architecture_generates_as_eager(architecture):
    model = tiny_decoder(architecture)
    program = exov.export_llm(model, max_context_len=48)
    assert exov.delegation_summary(program.program).partitions == 1
    assert (b"executorch_openvino_restart_state" in program.buffer) == FUSED[architecture]
    method = exov.load_method(program.buffer)
    prompt = [5, 17, 42, 9, 3]
    expected, expected_logits = eager_greedy(model, prompt, 12)
    got, logits = _greedy(method, prompt, 0, 12)
    assert got == expected
    torch.testing.assert_close(torch.stack(logits), torch.stack(expected_logits), **LOGITS_TOLERANCE)
    # Rewind to position 3 with other tokens, then a new sequence.
    expected, _ = eager_greedy(model, prompt[:3] + [77, 78], 6)
    assert _greedy(method, [77, 78], 3, 6)[0] == expected
    assert _greedy(method, [9, 9], 0, 6)[0] == eager_greedy(model, [9, 9], 6)[0]

