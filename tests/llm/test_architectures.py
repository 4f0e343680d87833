"""Decoder-only architectures besides Llama through ``export_llm``: tiny random-weight models of each
(``exov_testing.llm_models.ARCHITECTURES``), greedy tokens and logits equal to eager from a new sequence, a
continuation and a rewind, with each OpenVINO release; and whether each got OpenVINO's fused stateful
attention (``lowering/cached_attention.py``) or kept the static cache, which is also right, only slower."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.llm_models import ARCHITECTURES, eager_greedy, method_greedy, tiny_decoder

transformers = pytest.importorskip("transformers")
LOGITS_TOLERANCE = dict(rtol=1e-4, atol=1e-4)
# Gemma-2's and a windowed Mistral's sliding-window layers mask differently from the static cache's causal
# mask (Gemma-2's attention is not scaled_dot_product_attention either): the cache stays static there.
FUSED = {name: name not in ("gemma2", "mistral-window") for name in ARCHITECTURES}
# About 25 s each, so CI (25 minutes) runs two with the newest OpenVINO release: the fused attention and the
# other kind (the static cache); the others by hand (slow_tests). The older release's decoder in CI is
# tests/llm/test_llm.py's; all architectures with EXOV_OLDER_RELEASE_FULL=1.
IN_CI = ("qwen3", "gemma2")


@pytest.mark.parametrize("architecture", [pytest.param(name, marks=[] if name in IN_CI else [pytest.mark.slow])
                                          for name in sorted(ARCHITECTURES)])
def test_architecture_generates_as_eager(architecture):
    model = tiny_decoder(architecture)
    program = exov.export_llm(model, max_context_len=48)
    assert exov.delegation_summary(program.program).partitions == 1
    assert (b"executorch_openvino_restart_state" in program.buffer) == FUSED[architecture]
    method = exov.load_method(program.buffer)
    prompt = [5, 17, 42, 9, 3]
    expected, expected_logits = eager_greedy(model, prompt, 12)
    got, logits = method_greedy(method, prompt, 12)
    assert got == expected
    torch.testing.assert_close(torch.stack(logits), torch.stack(expected_logits), **LOGITS_TOLERANCE)
    # Rewind to position 3 with other tokens, then a new sequence.
    expected, _ = eager_greedy(model, prompt[:3] + [77, 78], 6)
    assert method_greedy(method, [77, 78], 6, start=3)[0] == expected
    assert method_greedy(method, [9, 9], 6)[0] == eager_greedy(model, [9, 9], 6)[0]

