"""A GGUF file's own quantized blocks as the partition's OpenVINO weights (compile spec ``gguf_weights``).

transformers reads a GGUF file's quantized tensors dequantized to float32 (with the ``gguf`` package's
``dequantize``), so the exported program holds ``d * q + m`` values, and NNCF would quantize them a
second time with other groups (a Q4_1 SmolLM2's perplexity +41% at int4). Here each weight constant of
the OpenVINO model that equals a GGUF tensor's dequantized values, row for row (transformers reorders the
rows of some tensors, Llama's query and key), is replaced by that tensor's blocks in the form OpenVINO's
CPU plugin decompresses inside its matmul and gather kernels, as NNCF writes it: an ``i4``/``u4``/``i8``
constant of ``[rows, blocks, 32]`` -> ``Convert`` (f16) -> [``Subtract`` (zero point, f16)] -> ``Multiply``
(scale, f16) -> ``Reshape`` -> ``Convert`` (f32).

Block layouts (ggml's ``ggml-common.h``; 32 values per block, little-endian):

- ``Q4_0``: scale ``d`` (f16), 16 bytes of 4-bit ``q``; value ``d * (q - 8)``: ``u4`` with zero point 8.
- ``Q8_0``: ``d`` (f16), 32 ``int8`` ``q``; value ``d * q``: ``i8``.
- ``Q4_1``: ``d`` (f16), minimum ``m`` (f16), 16 bytes of 4-bit ``q``; value ``d * q + m``. A matmul
  ``x @ W.T`` becomes ``x @ (d * (q - 8)).T`` (``i4``, no zero point: NNCF's ``INT4_SYM`` form) plus each
  block's sum of ``x`` times ``m + 8 * d`` (:func:`_split_matmuls`, one pair for all matmuls of one ``x``):
  the same sum, exactly. Other users of the tensor (an embedding) get ``(q - z) * d`` with ``z = -m / d``
  in f16 (its rounding moves a value by at most ``d / 16``), or in f32 where some ``|z| > 128``. Why not
  that form everywhere (OpenVINO 2026.4.1's CPU plugin, this machine, ``[1536, 576]``, one core): its
  matmuls run on float32 activations, 1.6x the time of an integer zero point at one token and 2x at 32,
  and SmolLM2's first 32-token call took 0.47 s. Nor ``u4`` values without a zero point in the split
  form: with activations quantized dynamically inside the matmuls (OpenVINO's default) a tiny Llama whose
  matrices were all ``Q4_1`` gave logits off by 0.47 (of 0.52); ``i4`` gave 0.004, as ``Q8_0`` does.

Byte ``j`` of a 4-bit block holds value ``j`` in its low nibble and value ``j + 16`` in its high one.
Other tensor types (the K-quants, F16) are left to ``weight_compression``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..support import progress

BLOCK = 32
# GGML type name -> bytes per block of 32 values.
BLOCK_BYTES = {"Q4_0": 18, "Q4_1": 20, "Q8_0": 34}


@dataclass
class Replacement:
    """What :func:`use_gguf_blocks` did: ``used``, GGUF tensors used by type; ``unmatched``, the names of the
    weight constants no tensor matched; ``file_types``, the file's tensors by type; ``path``, the file."""

    used: dict
    unmatched: list
    file_types: dict
    path: str
    # Names of the matmuls of Q4_1 blocks' minimums (float32 constants): NNCF must leave them alone.
    minimum_matmuls: list = field(default_factory=list)

    def describe(self) -> str:
        """One sentence naming how many weights came from which tensor types, and which did not."""
        total = sum(self.used.values()) + len(self.unmatched)
        used = ", ".join(f"{count} {kind}" for kind, count in sorted(self.used.items())) or "none"
        text = f"gguf_weights: of the partition's {total} weight constants, {used} came from {self.path!r}"
        if self.unmatched:
            types = ", ".join(f"{kind} {count}" for kind, count in sorted(self.file_types.items()))
            text += (f"; {len(self.unmatched)} (e.g. {self.unmatched[0]!r}) equal no {', '.join(BLOCK_BYTES)} tensor "
                     f"of the file (its tensors by type: {types})")
        return text


class _RowKeys:
    """A random linear hash of each float32 row (bits as integers): equal rows get equal keys; keys are
    only candidates, every match is checked value for value."""

    def __init__(self, seed: int = 20261206):
        self._rng = np.random.default_rng(seed)
        self._weights: dict[int, np.ndarray] = {}

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        width = rows.shape[1]
        if width not in self._weights:
            self._weights[width] = self._rng.integers(1, 2**63, size=width, dtype=np.uint64) | np.uint64(1)
        keys = np.empty(len(rows), dtype=np.uint64)
        for start in range(0, len(rows), 4096):  # in chunks: the uint64 products are twice the rows' size
            bits = np.ascontiguousarray(rows[start:start + 4096], dtype=np.float32).view(np.uint32)
            with np.errstate(over="ignore"):
                keys[start:start + 4096] = (bits.astype(np.uint64) * self._weights[width]).sum(axis=1,
                                                                                               dtype=np.uint64)
        return keys


class GgufBlocks:
    """The quantized tensors of the GGUF file at `path` whose types have a block form here (:data:`BLOCK_BYTES`).

    Raises ``ImportError`` naming the pip command without the ``gguf`` package, ``FileNotFoundError`` for
    a missing file and ``ValueError`` naming the file when it cannot be read as GGUF.
    """

    def __init__(self, path):
        try:
            from gguf import GGUFReader
        except ImportError as exc:
            raise ImportError("gguf_weights needs the 'gguf' package: pip install gguf") from exc
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"gguf_weights: no GGUF file at {str(path)!r}")
        try:
            reader = GGUFReader(str(path))
        except Exception as exc:  # noqa: BLE001 - numpy and the reader raise several types for a damaged file
            raise ValueError(f"gguf_weights: {str(path)!r} could not be read as a GGUF file ({exc})") from exc
        self.path = path
        self.types: dict[str, int] = {}
        for tensor in reader.tensors:
            self.types[tensor.tensor_type.name] = self.types.get(tensor.tensor_type.name, 0) + 1
        # Matrices only: a weight constant here is 2-D (a 1-D or 3-D tensor of these types is left alone).
        self._tensors = {t.name: t for t in reader.tensors
                         if t.tensor_type.name in BLOCK_BYTES and len(t.shape) == 2}
        self._keys = _RowKeys()
        self._by_fingerprint: dict | None = None

    def kind(self, name: str) -> str:
        """The GGML type name of tensor `name` (``"Q4_1"``)."""
        return self._tensors[name].tensor_type.name

    def _dequantized(self, name: str) -> np.ndarray:
        from gguf.quants import dequantize

        tensor = self._tensors[name]
        return dequantize(tensor.data, tensor.tensor_type).reshape(tensor.data.shape[0], -1)

    def _fingerprint(self, values: np.ndarray) -> tuple:
        return values.shape, np.sort(self._keys(values)).tobytes()

    def find(self, values: np.ndarray):
        """``(tensor name, row order)`` of the GGUF tensor whose dequantized rows are `values`' rows
        (``values[i] == dequantized[order[i]]`` exactly), or ``None``."""
        if self._by_fingerprint is None:  # each tensor dequantized once here, once more when used
            self._by_fingerprint = {self._fingerprint(self._dequantized(name)): name for name in self._tensors}
        name = self._by_fingerprint.get(self._fingerprint(values))
        if name is None:
            return None
        dequantized = self._dequantized(name)
        rows = {key: i for i, key in enumerate(self._keys(dequantized).tolist())}
        order = np.array([rows[key] for key in self._keys(values).tolist()], dtype=np.int64)
        if not np.array_equal(dequantized[order].view(np.uint32), values.view(np.uint32)):
            return None  # a hash collision, or rows equal in keys only
        return name, order

    def decompression(self, name: str, order: np.ndarray):
        """The OpenVINO subgraph (an output, f32 ``[rows, columns]``) of tensor `name`'s blocks, rows in `order`."""
        import openvino as ov
        import openvino.opset13 as ops

        kind = self.kind(name)
        blocks = self._blocks(name, order)
        rows, count = blocks.shape[:2]
        scale = np.ascontiguousarray(blocks[..., 0:2]).view(np.float16)  # [rows, blocks, 1]
        zero_point = None
        if kind == "Q8_0":
            weights = ops.constant(np.ascontiguousarray(blocks[..., 2:]).view(np.int8), dtype=ov.Type.i8)
        else:
            q = _nibbles(blocks[..., 4:] if kind == "Q4_1" else blocks[..., 2:])
            if kind == "Q4_0":
                zero_point = np.full_like(scale, 8.0)
            else:
                low = _minimums(blocks)[..., None].astype(np.float32)
                d = scale.astype(np.float32)
                flat = (d == 0) & (low != 0)  # every value m: written as q = 1, scale m, zero point 0
                q = np.where(flat, np.uint8(1), q)
                scale = np.where(flat, low, d).astype(np.float16)
                with np.errstate(divide="ignore", invalid="ignore"):
                    zero_point = np.where(d == 0, 0.0, -low / d)
            weights = ops.constant(q, dtype=ov.Type.u4)
        # f16 as NNCF writes it while its rounding of a zero point -m/d moves values by at most 1/16 of a
        # block's step d (|z| <= 128); else f32 (a nearly flat block of large values: z overflowed f16 to
        # inf), which OpenVINO's CPU plugin may not fuse but computes right.
        wide = zero_point is not None and np.abs(zero_point).max() > 128
        float_type = np.float32 if wide else np.float16
        values = ops.convert(weights, ov.Type.f32 if wide else ov.Type.f16)
        if zero_point is not None:
            values = ops.subtract(values, ops.constant(zero_point.astype(float_type)))
        values = ops.multiply(values, ops.constant(scale.astype(float_type)))
        values = ops.reshape(values, ops.constant(np.array([rows, count * BLOCK], dtype=np.int64)), False)
        return ops.convert(values, ov.Type.f32).output(0)

    def centred(self, tensors: list):
        """``Q4_1`` tensors ``[(name, row order), ...]`` (one column count), their rows stacked, as
        ``(decompression of d * (q - 8), m + 8 * d)``: the subgraph (an output, f32 ``[rows, columns]``,
        signed 4-bit values) and the offsets, f32 ``[rows, blocks]``."""
        import openvino as ov
        import openvino.opset13 as ops

        blocks = np.concatenate([self._blocks(name, order) for name, order in tensors], axis=0)
        rows, count = blocks.shape[:2]
        scale = np.ascontiguousarray(blocks[..., 0:2]).view(np.float16)
        q = _nibbles(blocks[..., 4:]).astype(np.int8) - 8
        values = ops.multiply(ops.convert(ops.constant(q, dtype=ov.Type.i4), ov.Type.f16), ops.constant(scale))
        values = ops.reshape(values, ops.constant(np.array([rows, count * BLOCK], dtype=np.int64)), False)
        offsets = _minimums(blocks).astype(np.float32) + 8 * scale[..., 0].astype(np.float32)
        return ops.convert(values, ov.Type.f32).output(0), offsets

    def _blocks(self, name: str, order: np.ndarray) -> np.ndarray:
        return np.asarray(self._tensors[name].data)[order].reshape(len(order), -1, BLOCK_BYTES[self.kind(name)])


def _nibbles(packed: np.ndarray) -> np.ndarray:
    """A 4-bit block's 32 values: byte j holds value j in its low nibble and value j + 16 in its high one."""
    return np.concatenate([packed & 0x0F, packed >> 4], axis=-1)


def _minimums(blocks: np.ndarray) -> np.ndarray:
    """``Q4_1`` blocks' minimums ``m``, f16 ``[rows, blocks]``."""
    return np.ascontiguousarray(blocks[..., 2:4]).view(np.float16)[..., 0]


def _splittable(matmul) -> bool:
    """Whether `matmul` is ``x @ W.T`` with ``x`` of static rank 2 or more (the form :func:`_split_matmuls` takes)."""
    attributes = matmul.get_attributes()
    rank = matmul.input_value(0).get_partial_shape().rank
    return (not attributes["transpose_a"] and attributes["transpose_b"] and rank.is_static
            and rank.get_length() >= 2)


def _split_matmuls(matmuls: list, blocks: GgufBlocks, tensors: list) -> str:
    """Rewrites the matmuls ``x @ W_i.T`` of one ``x`` (`matmuls`, each :func:`_splittable`), ``W_i`` the ``Q4_1``
    tensor ``tensors[i] = (name, row order)``, as one ``x @ (d * (q - 8)).T + blocksums(x) @ (m + 8 * d).T`` of
    the tensors' rows stacked, split back along the last axis. One matmul pair for a layer's query, key and
    value instead of three: each OpenVINO node costs time per step beyond its arithmetic (SmolLM2, one core:
    the 210 minimum matmuls took 1.8 ms of a 21 ms step). Returns the name of the minimums' matmul."""
    import openvino.opset13 as ops

    weights, offsets = blocks.centred(tensors)
    x = matmuls[0].input_value(0)
    rank = x.get_partial_shape().rank.get_length()
    grouped = ops.reshape(x, ops.constant(np.array([0] * (rank - 1) + [offsets.shape[1], BLOCK], np.int64)), True)
    sums = ops.reduce_sum(grouped, ops.constant(np.array([-1], np.int64)), False)
    minimums = ops.matmul(sums, ops.constant(offsets), False, True)
    total = ops.add(ops.matmul(x, weights, False, True), minimums)
    # Named so that OpenVINO's per-node counters show what the file's exact minimums cost (llm_profile.py).
    name = matmuls[0].get_friendly_name()
    for node, role in ((grouped, "blocks"), (sums, "blocksums"), (minimums, "minimums"), (total, "plus_minimums")):
        node.set_friendly_name(f"{name}/gguf_{role}")
    if len(matmuls) == 1:
        matmuls[0].output(0).replace(total.output(0))
        return minimums.get_friendly_name()
    widths = np.array([len(order) for _, order in tensors], np.int64)
    pieces = ops.variadic_split(total, ops.constant(np.int64(-1)), ops.constant(widths))
    for matmul, piece in zip(matmuls, pieces.outputs()):
        matmul.output(0).replace(piece)
    return minimums.get_friendly_name()


@functools.lru_cache(maxsize=1)
def _cached_blocks(path: str, modified_ns: int, size: int) -> GgufBlocks:
    return GgufBlocks(path)


def gguf_blocks(path) -> GgufBlocks:
    """:class:`GgufBlocks` of `path`, kept for the next partition of the same unchanged file (each would
    otherwise read and fingerprint the whole file again: 5 s per partition for SmolLM2's)."""
    path = Path(path)
    if not path.is_file():
        return GgufBlocks(path)  # its error
    status = path.stat()
    return _cached_blocks(str(path.resolve()), status.st_mtime_ns, status.st_size)


def use_gguf_blocks(model, blocks: GgufBlocks) -> Replacement:
    """Replaces, in OpenVINO model `model` (in place), each 2-D float32 constant feeding a ``MatMul`` or
    ``Gather`` that equals a tensor of `blocks` by that tensor's blocks (the ``Q4_1`` matmuls of one input
    split together by :func:`_split_matmuls`, other users given the decompression subgraph). Returns a
    :class:`Replacement` naming what was used and which such constants matched no tensor."""
    used: dict[str, int] = {}
    unmatched: list[str] = []
    by_input: dict[tuple, list] = {}  # x's node and output -> [(matmul, (name, row order)), ...]
    ops = model.get_ordered_ops()
    for op in progress.bar(ops, len(ops), "matching the partition's weights to the GGUF's tensors"):
        if (op.get_type_name() != "Constant" or op.get_element_type().get_type_name() != "f32"
                or len(op.get_output_shape(0)) != 2 or op.get_output_shape(0)[1] % BLOCK
                or not any(user.get_node().get_type_name() in ("MatMul", "Gather")
                           for user in op.output(0).get_target_inputs())):
            continue
        found = blocks.find(op.get_data())
        if found is None:
            unmatched.append(op.get_friendly_name())
            continue
        users = list(op.output(0).get_target_inputs())
        if blocks.kind(found[0]) == "Q4_1":
            split = [user for user in users if user.get_node().get_type_name() == "MatMul" and user.get_index() == 1
                     and _splittable(user.get_node())]
            for user in split:
                x = user.get_node().input_value(0)
                by_input.setdefault((x.get_node().get_name(), x.get_index()), []).append((user.get_node(), found))
            users = [user for user in users if user not in split]
        if users:
            decompressed = blocks.decompression(*found)
            for user in users:
                user.replace_source_output(decompressed)
        used[blocks.kind(found[0])] = used.get(blocks.kind(found[0]), 0) + 1
    progress.stage(f"{sum(used.values())} matrices found in the file; one compressed matmul per input "
                   f"({len(by_input)}) for its Q4_1 ones")
    minimum_matmuls = [_split_matmuls([matmul for matmul, _ in group], blocks, [tensor for _, tensor in group])
                       for group in by_input.values()]
    return Replacement(used=used, unmatched=unmatched, file_types=blocks.types, path=str(blocks.path),
                       minimum_matmuls=minimum_matmuls)
