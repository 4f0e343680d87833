"""Language models: export a Hugging Face decoder-only model with a static KV cache, and generate text.

    import executorch_openvino as exov
    program = exov.export_llm("SmolLM2-135M-Instruct.Q4_1.gguf", max_seq_len=512, weights="int4")
    program.save("smollm2.pte")                             # also written: smollm2.pte's tokenizer folder
    result = exov.generate("smollm2.pte", "What is the capital of France?", max_new_tokens=64)
    print(result.text, result.decode_tokens_per_second)

The program follows ExecuTorch's LLM conventions (``forward(tokens, input_pos)``, metadata methods such as
``get_max_seq_len`` and ``get_eos_ids``), so ExecuTorch's own LLM runners drive it too
(docs/user-guide/llm.md).
"""

from .export import LlmProgram, export_llm
from .generation import GenerationResult, generate
from .hf_models import load_model

__all__ = ["export_llm", "LlmProgram", "generate", "GenerationResult", "load_model"]
