"""Exporting a decoder-only language model to a ``.pte`` with a static KV cache, for this delegate.

The model code is transformers' own: ``transformers.integrations.executorch.
TorchExportableModuleForDecoderOnlyLM`` wraps the model with a ``StaticCache`` whose key and value
tensors are buffers, and exports ``forward(input_ids, cache_position)``: token ids ``(1, n)`` int64 and
their positions ``(n,)`` int64, returning the last position's logits ``(1, 1, vocab)`` float32; ``n`` is
dynamic, from 1 to :attr:`LlmProgram.max_seq_len`. The partitioner hands OpenVINO the cache buffers with the layers that
update them, so the cache lives in OpenVINO as state (``lowering/model_state.py``).

The program carries ExecuTorch's LLM metadata methods (the names ExecuTorch 1.5.1's
``extension/llm/runner`` reads): ``get_max_seq_len``, ``get_max_context_len``, ``get_vocab_size``,
``get_bos_id``, ``get_eos_ids``, ``use_kv_cache``, ``enable_dynamic_shape``, ``use_sdpa_with_kv_cache``.
Because the second input holds one position per token, ExecuTorch's runner passes positions
``start..start+n-1``, as it does for such programs.

Tested with Llama-architecture models (SmolLM2, and random-weight Llama configurations in the tests);
other architectures transformers exports with a static cache may work and are not tested here.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch

from ..contract.compile_specs import KEYWORD_DEFAULTS as _DEFAULTS  # compile_specs.json's defaults
from ..support import progress as progress_lines

WEIGHTS = ("f32", "int8", "int4", "gguf")


@dataclasses.dataclass
class LlmProgram:
    """An exported language model: the ``.pte`` (:attr:`program`, an ``ExecutorchProgramManager``), its
    tokenizer, and the metadata written into it (:attr:`metadata`: method name -> value)."""

    program: object
    tokenizer: object
    metadata: dict
    weights: str

    @property
    def buffer(self) -> bytes:
        return self.program.buffer

    @property
    def max_seq_len(self) -> int:
        """Most tokens one call takes (a prompt longer than this is fed in pieces)."""
        return self.metadata["get_max_seq_len"]

    @property
    def max_context_len(self) -> int:
        """Positions the KV cache holds: prompt and generated tokens together."""
        return self.metadata["get_max_context_len"]

    def save(self, path) -> Path:
        """Writes the ``.pte`` to `path` and the tokenizer (``tokenizer.json`` and its config, what
        ExecuTorch's runner and :func:`~executorch_openvino.generate` read) to the folder
        :func:`tokenizer_folder` names, with the metadata (``exov_llm.json``); returns that folder. Without a
        tokenizer only the metadata is written there."""
        path = Path(path)
        path.write_bytes(self.buffer)
        folder = tokenizer_folder(path)
        folder.mkdir(exist_ok=True)
        if self.tokenizer is not None:
            self.tokenizer.save_pretrained(str(folder))
        (folder / "exov_llm.json").write_text(json.dumps({"metadata": self.metadata, "weights": self.weights},
                                                         indent=1))
        return folder


def tokenizer_folder(pte_path) -> Path:
    """Where :meth:`LlmProgram.save` puts the tokenizer of `pte_path`: ``model.pte`` -> ``model.tokenizer/``."""
    path = Path(pte_path)
    return path.with_name(path.stem + ".tokenizer")


class _LastLogits(torch.nn.Module):
    """transformers' static-cache module returning the last position's logits only, ``(1, 1, vocab)``, as
    ExecuTorch's own LLM exports do: all positions' logits at the longest prompt would be planned at load
    (512 x 49152 float32 = 96 MiB for SmolLM2), and generation reads the last one. The output layer runs on
    the last position only (transformers' ``logits_to_keep=1``): on a 480-token SmolLM2 prompt it would
    otherwise compute and hold 480 x 49152 logits (90 MiB, 13.6 GFLOP) to keep one row."""

    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder

    def forward(self, input_ids, cache_position):
        decoder = self.decoder
        # What transformers 5.25's TorchExportableModuleWithStaticCache.forward (and ...WithHybridCache's, for
        # models with sliding-window layers, whose cache is `cache`) does, with logits_to_keep.
        cache = decoder.static_cache if hasattr(decoder, "static_cache") else decoder.cache
        for layer in cache.layers:
            layer.cumulative_length.copy_(cache_position[0])
        return decoder.model(input_ids=input_ids, attention_mask=None, cache=cache, use_cache=True,
                             logits_to_keep=1).logits


def export_decoder(model, max_context_len: int = 512, *, strict: bool = True, all_logits: bool = False):
    """``(ExportedProgram, metadata)`` of `model` (a transformers ``PreTrainedModel``) with a static KV
    cache of `max_context_len` positions, exported by transformers' ExecuTorch integration. Lowering is
    left to the caller (:func:`export_llm` lowers for OpenVINO; a benchmark may lower it for XNNPACK).
    The program returns the last position's logits ``(1, 1, vocab)``, or with `all_logits` every
    position's ``(1, n, vocab)`` (for perplexity).

    Raises ``ValueError`` for a context length below 2 or above the model's ``max_position_embeddings``.
    """
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    config = model.config.get_text_config()
    limit = getattr(config, "max_position_embeddings", None)
    if max_context_len < 2 or (limit is not None and max_context_len > limit):
        raise ValueError(f"max_context_len is {max_context_len}; give 2 to {limit} (the model's "
                         "max_position_embeddings)")
    generation = model.generation_config
    before = generation.cache_implementation, generation.use_cache
    generation.cache_implementation, generation.use_cache = "static", True  # what the wrapper requires
    try:
        decoder = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=max_context_len).model
    finally:
        generation.cache_implementation, generation.use_cache = before  # the caller's model is left as it was
    module = decoder if all_logits else _LastLogits(decoder)
    tokens = torch.export.Dim("tokens", min=1, max=max_context_len)
    length = min(3, max_context_len)  # an example within the dynamic length's range (2 for a context of 2)
    example = {"input_ids": torch.arange(1, length + 1).unsqueeze(0), "cache_position": torch.arange(length)}
    from ..support.quiet import quiet_dependencies

    with torch.no_grad(), quiet_dependencies():  # strict export's warning about transformers' globals
        exported = torch.export.export(module, (), example, strict=strict,
                                       dynamic_shapes={"input_ids": {1: tokens}, "cache_position": {0: tokens}})
    upper = exported.range_constraints[next(iter(exported.range_constraints))].upper
    return exported, _metadata(model, int(min(upper, max_context_len)), max_context_len)


def _metadata(model, max_seq_len: int, max_context_len: int) -> dict:
    config, generation = model.config.get_text_config(), model.generation_config
    eos = generation.eos_token_id if generation.eos_token_id is not None else config.eos_token_id
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    bos = generation.bos_token_id if generation.bos_token_id is not None else config.bos_token_id
    return {"get_max_seq_len": max_seq_len, "get_max_context_len": max_context_len,
            "get_vocab_size": int(config.vocab_size), "get_bos_id": int(bos if bos is not None else -1),
            "get_eos_ids": [int(e) for e in eos_ids], "use_kv_cache": True, "enable_dynamic_shape": True,
            "use_sdpa_with_kv_cache": False}


def export_llm(model, *, max_context_len: int = 512, weights: str | None = None,
               group_size: int = _DEFAULTS["weight_group_size"], ratio: float = _DEFAULTS["weight_ratio"],
               tokenizer=None, strict: bool = True, device: str = _DEFAULTS["device"],
               inference_precision: str = _DEFAULTS["inference_precision"],
               performance_hint: str = _DEFAULTS["performance_hint"], numerics: str = _DEFAULTS["numerics"],
               all_logits: bool = False, progress: bool | None = None) -> LlmProgram:
    """Exports and lowers a decoder-only language model for this delegate, with a static KV cache.

    `model`: a folder of a Hugging Face model, a ``.gguf`` file (:func:`~executorch_openvino.llm.load_model`),
    or a transformers ``PreTrainedModel`` (then give its `tokenizer` to save one with the program).
    `max_context_len`: positions of the KV cache (prompt and generated tokens together); its memory is
    ``2 * layers * kv_heads * head_dim * max_context_len * 4`` bytes. `weights`: ``"f32"`` (as the model
    has them), ``"int8"`` or ``"int4"``, NNCF weight-only compression of OpenVINO's weights
    (``group_size``, ``ratio``: :mod:`executorch_openvino.contract.compile_specs`, ``weight_compression``), or
    ``"gguf"`` for a ``.gguf`` `model`: its own ``Q4_0``/``Q4_1``/``Q8_0`` blocks (compile spec
    ``gguf_weights``; weights of other types get NNCF's int8, with a warning). Default: ``"gguf"`` for a
    ``.gguf`` file, else ``"f32"``.
    `strict`: export with TorchDynamo, which transformers' static cache needs with torch 2.13.
    `numerics`: ``"exact"`` keeps activations float32 inside compressed matmuls and the KV cache float32;
    ``"fast"`` lets OpenVINO quantize activations to 8 bits there and keep the cache in f16 (faster, less
    accurate: docs/user-guide/llm.md, "Perplexity and accuracy").
    `all_logits`: return every position's logits, not the last one's (perplexity; larger planned memory).
    `progress`: stage lines on stderr (reading, exporting, converting, compressing, writing; SmolLM2 takes
    minutes): ``None`` when stderr is a terminal, ``True`` always, ``False`` never.

    Returns an :class:`LlmProgram`; ``.save(path)`` writes the ``.pte`` and the tokenizer. Raises
    ``ValueError`` for unknown `weights` and for ``"gguf"`` without a ``.gguf`` `model`, ``ImportError`` (with
    the pip command) when compression needs NNCF and it is missing.
    """
    gguf_file = str(model) if isinstance(model, (str, Path)) and str(model).lower().endswith(".gguf") else ""
    weights = weights if weights is not None else "gguf" if gguf_file else "f32"
    if weights not in WEIGHTS:
        raise ValueError(f"weights is {weights!r}; give one of {', '.join(WEIGHTS)}")
    if weights == "gguf" and not gguf_file:
        raise ValueError("weights='gguf' takes the weights' own blocks from the GGUF file the model is read from: "
                         "give model as the path of a .gguf file, or weights 'f32', 'int8' or 'int4'")
    with progress_lines.reporting(progress):
        return _export_llm(model, max_context_len, weights, group_size, ratio, tokenizer, strict, device,
                           inference_precision, performance_hint, numerics, all_logits, gguf_file)


def _export_llm(model, max_context_len, weights, group_size, ratio, tokenizer, strict, device, inference_precision,
                performance_hint, numerics, all_logits, gguf_file) -> LlmProgram:
    from ..api import lower_exported
    from ..lowering.partitioner import OpenVINOPartitioner
    from .hf_models import load_model

    if isinstance(model, (str, Path)):
        progress_lines.stage(f"reading {model}")
        model, loaded_tokenizer = load_model(model)
        tokenizer = tokenizer if tokenizer is not None else loaded_tokenizer
    progress_lines.stage(f"exporting the decoder with torch.export ({max_context_len} positions)")
    exported, metadata = export_decoder(model, max_context_len, strict=strict, all_logits=all_logits)
    partitioner = OpenVINOPartitioner(device=device, inference_precision=inference_precision,
                                      performance_hint=performance_hint, numerics=numerics,
                                      weight_compression={"f32": "", "gguf": "int8"}.get(weights, weights),
                                      weight_group_size=group_size if weights == "int4" else -1, weight_ratio=ratio,
                                      gguf_weights=gguf_file if weights == "gguf" else "",
                                      # Positions: integer arithmetic on them delegated, checked per call.
                                      input_ranges={"cache_position": (0, max_context_len - 1)})
    # Outputs planned (one row of logits); token ids and positions are read where the caller holds them.
    program = lower_exported(exported, partitioner, constant_methods=metadata)
    progress_lines.stage("lowered")  # (no size: program.buffer would serialize the program and keep the bytes)
    return LlmProgram(program=program, tokenizer=tokenizer, metadata=metadata, weights=weights)
