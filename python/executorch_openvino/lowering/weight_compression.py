"""Weight-only compression of a partition's OpenVINO model with NNCF (compile spec ``weight_compression``).

NNCF's ``compress_weights`` on the OpenVINO model is what optimum-intel runs for OpenVINO GenAI's
models, so a compressed partition holds the constants and decompression subgraphs OpenVINO's CPU
plugin fuses into its matmul and gather kernels (u4/u8 constants, a scale per group or channel).
Modes follow executorch 1.5.1's ``openvino_8wo`` and ``openvino_4wo``: ``int8`` is ``INT8_ASYM`` per
output channel; ``int4`` is ``INT4_SYM`` with ``group_size`` values per scale and ``ratio`` of the
weights in 4 bits, NNCF keeping the embedding and the output layer in ``INT8_ASYM``. Data-free: no
calibration inputs.
"""

from __future__ import annotations


def compress_weights(model, mode: str, group_size: int = 128, ratio: float = 1.0):
    """Returns the OpenVINO model `model` with its matmul and embedding weights compressed by NNCF.

    `mode`: ``"int8"`` or ``"int4"`` (``""`` returns `model` unchanged). Raises ``ImportError`` naming the
    pip command when NNCF is missing or does not import beside this OpenVINO, and ``ValueError`` when a
    weight's row length is not a multiple of `group_size` (NNCF's message, with the fix).
    """
    if not mode:
        return model
    from ..quantization import _nncf

    nncf = _nncf()
    if mode == "int8":
        return nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT8_ASYM)
    try:
        return nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT4_SYM, group_size=group_size,
                                     ratio=ratio)
    except Exception as exc:  # NNCF raises its own exception types
        if "group" in str(exc).lower():
            raise ValueError(f"int4 weight compression with weight_group_size={group_size} failed: {exc}. "
                             f"Give a group size that divides the weights' rows (64, 32), or -1") from exc
        raise
