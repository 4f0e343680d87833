"""Weight-only compression of a partition's OpenVINO model with NNCF (compile spec ``weight_compression``).

NNCF's ``compress_weights`` on the OpenVINO model is what optimum-intel runs for OpenVINO GenAI's
models, so a compressed partition holds the constants and decompression subgraphs OpenVINO's CPU
plugin fuses into its matmul and gather kernels (u4/u8 constants, a scale per group or channel).
Modes follow executorch 1.5.1's ``openvino_8wo`` and ``openvino_4wo``: ``int8`` is ``INT8_ASYM`` per
output channel; ``int4`` is ``INT4_SYM`` with ``group_size`` values per scale and ``ratio`` of the
weights in 4 bits, NNCF keeping the embedding and the output layer in ``INT8_ASYM``. Data-free: no
calibration inputs.

A row whose length is not a multiple of the group size (SmolLM2's 576) gets the largest power of two
below the group size that divides it (NNCF's ``GroupSizeFallbackMode.ADJUST``: 64 for 576 with 128).

With a GGUF file (compile spec ``gguf_weights``) the weights it holds in a block form come from it first
(``gguf_weights.py``); NNCF then compresses only the others (it leaves compressed constants alone,
NNCF 3.4).
"""

from __future__ import annotations

from pathlib import Path

from ..contract.compile_specs import KEYWORD_DEFAULTS
from ..support import progress


def keep_float_activations(model) -> None:
    """Writes ``DYNAMIC_QUANTIZATION_GROUP_SIZE = 0`` into `model`'s ``runtime_options`` (OpenVINO applies it
    when it compiles the IR): compressed matmuls then multiply float32 activations. By default OpenVINO's
    CPU plugin quantizes activations to 8 bits in groups of 32 inside them (2026.4.1), which moved
    SmolLM2's first logits from its Q4_1 file by 1.73 and turned the README's "The capital of France is
    Paris." into "L'Étoile, la Marseillaise, ..."; with float32 activations the same blocks' perplexity was
    +0.09% over float32 weights, against +0.75%."""
    model.set_rt_info("0", ["runtime_options", "DYNAMIC_QUANTIZATION_GROUP_SIZE"])


def compress_weights(model, mode: str, group_size: int = KEYWORD_DEFAULTS["weight_group_size"],
                     ratio: float = KEYWORD_DEFAULTS["weight_ratio"], gguf_file: str = "",
                     float_activations: bool = False):
    """Returns the OpenVINO model `model` with its matmul and embedding weights compressed: those equal to a
    tensor of `gguf_file` (a path, ``""`` for none) in its blocks, the others by NNCF.

    `mode`: ``"int8"`` or ``"int4"`` (``""``: no NNCF). `float_activations`: :func:`keep_float_activations`
    (compile spec ``numerics="exact"``). Raises ``ImportError`` naming the pip command when
    NNCF or ``gguf`` is missing or NNCF does not import beside this OpenVINO, ``ValueError`` when a weight's
    row length is not a multiple of `group_size` (NNCF's message, with the fix) and for an unreadable GGUF
    file, ``FileNotFoundError`` for a missing one. Warns when weights of `model` stay float32 because
    `gguf_file` has no block form of them and `mode` is ``""``.
    """
    model = _compress(model, mode, group_size, ratio, gguf_file)
    if float_activations:
        keep_float_activations(model)
    return model


def _compress(model, mode: str, group_size: int, ratio: float, gguf_file: str):
    kept: list[str] = []  # matmuls NNCF must leave alone
    if gguf_file:
        from .gguf_weights import gguf_blocks, use_gguf_blocks

        progress.stage(f"taking the weights' blocks from {Path(gguf_file).name}")

        replacement = use_gguf_blocks(model, gguf_blocks(gguf_file))
        if replacement.unmatched:
            import warnings

            rest = (f"NNCF compresses them ({mode})" if mode else
                    "they stay float32: give weight_compression='int8' or 'int4' to compress them")
            warnings.warn(f"{replacement.describe()}; {rest}", stacklevel=2)
        else:
            return model
        # Q4_1 minimums' float32 matmuls: NNCF (3.1 with OpenVINO 2025.4.1) compressed them to 8 bits too,
        # moving a small model's outputs by 13% of their scale.
        kept = replacement.minimum_matmuls
    if not mode:
        return model
    from ..support.nncf_library import import_nncf

    nncf = import_nncf("weight_compression (int8/int4 weights)")
    progress.stage(f"compressing weights to {mode} with NNCF")
    options = {"ignored_scope": nncf.IgnoredScope(names=kept, validate=False)} if kept else {}
    if mode == "int8":
        return nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT8_ASYM, **options)
    fallback = getattr(nncf.quantization.advanced_parameters, "GroupSizeFallbackMode", None)
    if fallback is not None:  # rows not divisible by the group: the largest power of two below it that divides
        options["advanced_parameters"] = nncf.AdvancedCompressionParameters(group_size_fallback_mode=fallback.ADJUST)
    try:
        return nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT4_SYM, group_size=group_size,
                                     ratio=ratio, **options)
    except Exception as exc:  # NNCF raises its own exception types
        if "group" in str(exc).lower():
            raise ValueError(f"int4 weight compression with weight_group_size={group_size} failed: {exc}. "
                             f"Give a group size that divides the weights' rows (64, 32), or -1") from exc
        raise
