"""The processed blob: a versioned header followed by an OpenVINO IR model.

Written by preprocess, read by ``native/delegate/processed_blob.cpp``. Its layout has one definition,
``processed_blob_layout.json`` beside this module, which this module reads and from which the build writes
the delegate's ``processed_blob_layout.h``: an 88-byte little-endian header (magic ``EXOVBLOB``, format
version 3, payload kind 1 = OpenVINO IR XML + weights, the XML's and the weights' offsets and sizes, zlib's
CRC-32 of the whole blob without the checksum field, and the SHA-256 of the payload: the bytes from the XML
offset to the end), and the names inside the IR that both sides use. The XML starts at byte 128 and the
weights on a 64-byte boundary of the blob, so that the delegate can hand OpenVINO the weights where the
``.pte`` file lies (ExecuTorch places delegate segments on 64-byte boundaries or coarser).
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from typing import NamedTuple

from .compile_specs import definition  # reads this folder's JSON files

_LAYOUT = definition("processed_blob_layout.json")
MAGIC = _LAYOUT["magic"].encode("ascii")
FORMAT_VERSION = _LAYOUT["format_version"]
PAYLOAD_OPENVINO_IR = _LAYOUT["payload_kind_openvino_ir"]
_CODES = {("uint", 4): "I", ("uint", 8): "Q"}  # struct's codes; "bytes" of n: "ns"
_HEADER = struct.Struct("<" + "".join(f"{f['size']}s" if f["type"] == "bytes" else _CODES[f["type"], f["size"]]
                                      for f in _LAYOUT["header"]))
HEADER_SIZE = _HEADER.size  # 88
_ALIGN = _LAYOUT["section_alignment"]


class Header(NamedTuple):
    """The header's fields, in the layout's order (offsets in :data:`FIELD_OFFSETS`, in bytes; sizes and offsets
    in bytes)."""

    magic: bytes
    format_version: int
    payload_kind: int
    xml_offset: int
    xml_size: int
    weights_offset: int
    weights_size: int
    checksum: int
    reserved: int
    digest: bytes  # SHA-256 of blob[xml_offset:]


def _field_offsets() -> dict[str, int]:
    offsets, at = {}, 0
    for field in _LAYOUT["header"]:
        offsets[field["name"]] = at
        at += field["size"]
    if at != HEADER_SIZE or tuple(offsets) != Header._fields:  # raised under python -O too
        raise RuntimeError(f"processed_blob_layout.json's header fields {tuple(offsets)} are not Header's "
                           f"{Header._fields}: a field added there needs its Header field and the value pack writes")
    return offsets


FIELD_OFFSETS = _field_offsets()  # magic 0, format_version 8, ..., checksum 48, reserved 52, digest 56
CHECKSUM_OFFSET = FIELD_OFFSETS["checksum"]
_CHECKSUM_END = CHECKSUM_OFFSET + next(f["size"] for f in _LAYOUT["header"] if f["name"] == "checksum")
_NAMES = _LAYOUT["ir_names"]
# The IR's rt_info entry naming the OpenVINO release that lowered it
# (``ov.get_version()``), which the runtime names when it cannot read the IR.
LOWERED_WITH_KEY = _NAMES["lowered_with_key"]
# The tensor name prefix of an IR output that is an index check, not a partition
# output: a 0-d bool, true when a lookup read an index outside its table; the rest
# of the name is the message (lowering/passes/index_checks.py). The runtime
# (native/delegate/partition_executor.cpp, kIndexCheckPrefix) keeps such outputs, which
# follow the partition's own, from ExecuTorch and fails the call when one is true.
INDEX_CHECK_PREFIX = _NAMES["index_check_prefix"]
# Follows the prefix in the checks of a model that keeps state (lowering/model_state.py): after
# a failed check, the runtime (kStateCheckMark) fails that method's later calls as well.
STATE_CHECK_MARK = _NAMES["state_check_mark"]
# Follows the prefix (and the state mark) in a check that two input sizes are equal, as ``sizes:A,a,B,b:``
# (input A's dimension a equals input B's dimension b, the compiled model's input indices) before the message:
# the runtime (kSizesCheckMark) compares them before inference, where OpenVINO would fail unexplained or
# broadcast a size of 1 (lowering/conversion.py, shared_size_checks).
SIZES_CHECK_MARK = _NAMES["sizes_check_mark"]
# Names the input of a model with a growing KV cache (lowering/cached_attention.py) whose first value is
# the call's start position: at 0 the runtime (kRestartStatePrefix) gives the method a new infer request,
# and so an empty cache, before the call.
RESTART_STATE_PREFIX = _NAMES["restart_state_prefix"]


class OpenVINOIr(NamedTuple):
    xml: bytes
    weights: bytes


def read_header(buffer, offset: int = 0) -> Header:
    """The header of the blob that starts at `offset` of `buffer` (bytes-like); no check of its values."""
    return Header(*_HEADER.unpack_from(buffer, offset))


def checksum(blob) -> int:
    """zlib's CRC-32 of `blob` without its 4-byte checksum field (an unsigned 32-bit int)."""
    view = memoryview(blob)
    return zlib.crc32(view[_CHECKSUM_END:], zlib.crc32(view[:CHECKSUM_OFFSET]))


def seal(blob: bytearray) -> None:
    """Writes `blob`'s checksum into its header (after any change to its bytes)."""
    struct.pack_into("<I", blob, CHECKSUM_OFFSET, checksum(blob))


def pack(ir: OpenVINOIr) -> bytes:
    """Returns header + XML + padding + weights, with the payload's digest, sealed with the checksum."""
    xml_offset = (HEADER_SIZE + _ALIGN - 1) // _ALIGN * _ALIGN  # 128
    bin_offset = (xml_offset + len(ir.xml) + _ALIGN - 1) // _ALIGN * _ALIGN
    out = bytearray(bin_offset + len(ir.weights))
    out[xml_offset : xml_offset + len(ir.xml)] = ir.xml
    out[bin_offset:] = ir.weights
    digest = hashlib.sha256(memoryview(out)[xml_offset:]).digest()
    header = Header(magic=MAGIC, format_version=FORMAT_VERSION, payload_kind=PAYLOAD_OPENVINO_IR,
                    xml_offset=xml_offset, xml_size=len(ir.xml), weights_offset=bin_offset,
                    weights_size=len(ir.weights), checksum=0, reserved=0, digest=digest)  # checksum: seal()
    out[:HEADER_SIZE] = _HEADER.pack(*header)
    seal(out)
    return bytes(out)


def unpack(blob: bytes) -> OpenVINOIr:
    """Inverse of :func:`pack`; raises ``ValueError`` on a foreign, truncated or changed blob.

    The runtime does its own checks (native/delegate/processed_blob.cpp); this one serves
    tools and tests.
    """
    if len(blob) < HEADER_SIZE or blob[: len(MAGIC)] != MAGIC:
        raise ValueError("not an executorch-openvino processed blob (bad magic or too short)")
    h = read_header(blob)
    if h.format_version != FORMAT_VERSION or h.payload_kind != PAYLOAD_OPENVINO_IR:
        raise ValueError(f"unsupported blob format version {h.format_version} / payload kind {h.payload_kind}")
    if h.xml_offset + h.xml_size > len(blob) or h.weights_offset + h.weights_size > len(blob):
        raise ValueError("truncated processed blob")
    if h.checksum != checksum(blob):
        raise ValueError("the processed blob's checksum does not match: its bytes changed after lowering")
    return OpenVINOIr(blob[h.xml_offset : h.xml_offset + h.xml_size],
                      blob[h.weights_offset : h.weights_offset + h.weights_size])
