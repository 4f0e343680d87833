"""The tiny language model and tokenizer of the LLM tests, and eager greedy decoding."""

from __future__ import annotations

import torch


def tiny_llama(seed: int = 0, vocab_size: int = 128):
    """A random-weight LlamaForCausalLM (2 layers, 128-token vocabulary, bos 1, eos 2) from a fixed seed: the
    language model of the CI tests (test_llm*.py); SmolLM2 runs by hand (nox -s llm_bench)."""
    import transformers

    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                      bos_token_id=1, eos_token_id=2)
    return transformers.LlamaForCausalLM(config).eval()


# Architecture -> (config class, model class, settings besides the tiny shape below): the decoder-only
# families export_llm is tested with (docs/user-guide/llm.md lists them).
ARCHITECTURES = {
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", {}),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", {"head_dim": 16}),
    "phi3": ("Phi3Config", "Phi3ForCausalLM", {"pad_token_id": 0}),
    "mistral": ("MistralConfig", "MistralForCausalLM", {"sliding_window": None}),
    # A sliding window shorter than the context: the static cache's mask is not causal there.
    "mistral-window": ("MistralConfig", "MistralForCausalLM", {"sliding_window": 8}),
    # Sliding-window layers and attention logit soft-capping (not scaled_dot_product_attention).
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", {"head_dim": 16, "sliding_window": 8, "pad_token_id": 0}),
}


def tiny_decoder(architecture: str, seed: int = 0):
    """A random-weight model of `architecture` (a key of ARCHITECTURES) shaped like tiny_llama: 2 layers,
    4 query and 2 key/value heads of 16, a 128-token vocabulary, bos 1, eos 2."""
    import transformers

    config_class, model_class, settings = ARCHITECTURES[architecture]
    torch.manual_seed(seed)
    config = getattr(transformers, config_class)(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, bos_token_id=1, eos_token_id=2, **settings)
    return getattr(transformers, model_class)(config).eval()


def eager_greedy(model, prompt: list, new_tokens: int) -> tuple[list, list]:
    """Greedy tokens and each step's last logits, recomputing from all tokens (no cache)."""
    tokens, logits = list(prompt), []
    with torch.no_grad():
        for _ in range(new_tokens):
            last = model(input_ids=torch.tensor([tokens])).logits[0, -1]
            logits.append(last)
            tokens.append(int(last.argmax()))
    return tokens[len(prompt):], logits


def method_greedy(method, tokens: list, new_tokens: int, start: int = 0) -> tuple[list, list]:
    """Greedy tokens and each step's last logits through a loaded LLM program: `tokens` in one call at
    positions ``start..`` (the cache holding what came before), then one generated token per call."""
    out = method.execute([torch.tensor([tokens]), torch.arange(start, start + len(tokens))])[0]
    got, logits, position = [], [], start + len(tokens)
    for _ in range(new_tokens):
        logits.append(out[0, -1])
        got.append(int(out[0, -1].argmax()))
        out = method.execute([torch.tensor([[got[-1]]]), torch.tensor([position])])[0]
        position += 1
    return got, logits


def tiny_tokenizer():
    """A byte-level BPE tokenizer trained here on a fixed ASCII text (every token decodes to whole characters),
    of the kind ExecuTorch's LLM runner reads (tokenizer.json), with <unk> 0, <s> 1 and </s> 2."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=128, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    backend.train_from_iterator(["the quick brown fox jumps over the lazy dog " * 20, "hello world " * 10], trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                                unk_token="<unk>")
