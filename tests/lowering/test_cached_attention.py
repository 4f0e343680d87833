"""``lowering/cached_attention.py`` on hand-written static-cache attention: the programs it may rewrite into
OpenVINO's fused stateful form (the causal mask) and those it must leave static (masks that differ from the
causal one only late in the context, another state the program reads), each run call after call from its
``.pte`` against the same module run eagerly; and the KV cache precision of each numerics setting."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import executorch_openvino as exov

pytestmark = [pytest.mark.older_openvino]

CONTEXT = 32
RESTART = b"executorch_openvino_restart_state"


class CachedAttention(torch.nn.Module):
    """One attention layer over a static KV cache written with index_copy_, with a mask of `kind`."""

    def __init__(self, kind: str = "causal", window: int = 8, counter: bool = False):
        super().__init__()
        torch.manual_seed(0)
        self.kind, self.window, self.counter = kind, window, counter
        self.embedding = torch.nn.Embedding(128, 32)
        self.qkv = torch.nn.Linear(32, 96)
        self.out = torch.nn.Linear(32, 128)
        self.register_buffer("keys", torch.zeros(1, 2, CONTEXT, 16))
        self.register_buffer("values", torch.zeros(1, 2, CONTEXT, 16))
        self.register_buffer("seen", torch.zeros(1))

    def forward(self, tokens, positions):
        x = self.embedding(tokens)
        n = x.shape[1]
        q, k, v = self.qkv(x).view(1, n, 3, 2, 16).permute(2, 0, 3, 1, 4)
        self.keys.index_copy_(2, positions, k)
        self.values.index_copy_(2, positions, v)
        slots = torch.arange(CONTEXT)
        mask = slots.unsqueeze(0) <= positions.unsqueeze(1)
        if self.kind == "sliding":  # the last `window` positions (Mistral's, Phi-3's sliding window)
            mask = mask & (slots.unsqueeze(0) > positions.unsqueeze(1) - self.window)
        elif self.kind == "sink":  # the first position and the last `window` (StreamingLLM)
            mask = mask & ((slots.unsqueeze(0) > positions.unsqueeze(1) - self.window) | (slots.unsqueeze(0) == 0))
        attended = F.scaled_dot_product_attention(q, self.keys, self.values, attn_mask=mask[None, None])
        logits = self.out(attended.transpose(1, 2).reshape(1, n, 32))[:, -1:]
        if self.counter:  # another state: tokens seen since the program was loaded
            self.seen.add_(n)
            logits = logits + self.seen
        return logits


def _lower(module, numerics: str = "exact") -> bytes:
    """ExecuTorch's own lowering path, with the positions' range declared (docs/user-guide/llm.md)."""
    from executorch.exir import to_edge_transform_and_lower

    n = torch.export.Dim("n", min=1, max=CONTEXT)
    exported = torch.export.export(copy.deepcopy(module), (torch.arange(1, 4)[None], torch.arange(3)),
                                   dynamic_shapes=({1: n}, {0: n}), strict=True)
    partitioner = exov.OpenvinoPartitioner(numerics=numerics, input_ranges={"positions": (0, CONTEXT - 1)})
    return to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch().buffer


# (tokens, start): a prefill, decode steps to the end of the context, a rewind, a new sequence and more steps.
CALLS = ([([3, 4, 5, 6], 0)] + [([7 + p % 50], p) for p in range(4, CONTEXT)] + [([9, 8], 20), ([1, 2], 0)]
         + [([p % 100], p) for p in range(2, 12)])


def _run_against_eager(module, pte: bytes, tolerance: float = 1e-5) -> None:
    method, eager = exov.load_method(pte), copy.deepcopy(module)
    for tokens, start in CALLS:
        inputs = [torch.tensor([tokens]), torch.arange(start, start + len(tokens))]
        got = method.execute(inputs)[0]
        with torch.no_grad():
            expected = eager(*inputs)
        torch.testing.assert_close(got, expected, rtol=tolerance, atol=tolerance, msg=f"call at {start}")


@pytest.mark.parametrize("kind", ["causal", "sliding", "sink"])
@pytest.mark.sampled(every=3)
def test_only_the_causal_mask_is_rewritten(kind):
    module = CachedAttention(kind).eval()
    pte = _lower(module)
    # A window or sink of 8 differs from the causal mask only from position 8 on: the proof must look there.
    assert (RESTART in pte) == (kind == "causal")
    _run_against_eager(module, pte)


def test_another_state_keeps_the_static_cache():
    # A new sequence gives the method a new infer request, which would start the counter over too.
    module = CachedAttention(counter=True).eval()
    pte = _lower(module)
    assert RESTART not in pte
    _run_against_eager(module, pte)


def test_fast_numerics_keep_the_cache_in_float16():
    module = CachedAttention().eval()
    pte = _lower(module, numerics="fast")
    assert RESTART in pte and b'KV_CACHE_PRECISION value="f16"' in pte
    assert b'KV_CACHE_PRECISION value="f32"' in _lower(module)
    # OpenVINO's 8-bit default moved a tiny Llama's logits by up to 0.41; float16 keeps them close.
    _run_against_eager(module, pte, tolerance=2e-3)
