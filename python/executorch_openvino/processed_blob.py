"""The processed blob: a versioned header followed by an OpenVINO IR model.

Written by preprocess, read by ``native/processed_blob.cpp``; the layout is
documented there (56-byte little-endian header, magic ``EXOVBLOB``, format
version 2, payload kind 1 = OpenVINO IR XML + weights, and zlib's CRC-32 of the
whole blob without the checksum field). The weights start on a 64-byte boundary
of the blob.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

MAGIC = b"EXOVBLOB"
FORMAT_VERSION = 2  # 1 had no checksum
PAYLOAD_OPENVINO_IR = 1
_HEADER = struct.Struct("<8sIIQQQQII")
HEADER_SIZE = _HEADER.size  # 56
CHECKSUM_OFFSET = 48
_ALIGN = 64
# The IR's rt_info entry naming the OpenVINO release that lowered it
# (``ov.get_version()``), which the runtime names when it cannot read the IR.
LOWERED_WITH_KEY = "executorch_openvino_lowered_with"


class OpenvinoIr(NamedTuple):
    xml: bytes
    weights: bytes


def checksum(blob) -> int:
    """zlib's CRC-32 of `blob` without its 4-byte checksum field (an unsigned 32-bit int)."""
    view = memoryview(blob)
    return zlib.crc32(view[CHECKSUM_OFFSET + 4 :], zlib.crc32(view[:CHECKSUM_OFFSET]))


def seal(blob: bytearray) -> None:
    """Writes `blob`'s checksum into its header (after any change to its bytes)."""
    struct.pack_into("<I", blob, CHECKSUM_OFFSET, checksum(blob))


def pack(ir: OpenvinoIr) -> bytes:
    """Returns header + XML + padding + weights, sealed with the checksum."""
    xml_offset = _ALIGN
    bin_offset = (xml_offset + len(ir.xml) + _ALIGN - 1) // _ALIGN * _ALIGN
    header = _HEADER.pack(
        MAGIC, FORMAT_VERSION, PAYLOAD_OPENVINO_IR, xml_offset, len(ir.xml), bin_offset, len(ir.weights), 0, 0
    )
    out = bytearray(bin_offset + len(ir.weights))
    out[: len(header)] = header
    out[xml_offset : xml_offset + len(ir.xml)] = ir.xml
    out[bin_offset:] = ir.weights
    seal(out)
    return bytes(out)


def unpack(blob: bytes) -> OpenvinoIr:
    """Inverse of :func:`pack`; raises ``ValueError`` on a foreign, truncated or changed blob.

    The runtime does its own checks (native/processed_blob.cpp); this one serves
    tools and tests.
    """
    if len(blob) < HEADER_SIZE or blob[:8] != MAGIC:
        raise ValueError("not an executorch-openvino processed blob (bad magic or too short)")
    _, version, kind, xo, xs, bo, bs, stored, _ = _HEADER.unpack_from(blob)
    if version != FORMAT_VERSION or kind != PAYLOAD_OPENVINO_IR:
        raise ValueError(f"unsupported blob format version {version} / payload kind {kind}")
    if xo + xs > len(blob) or bo + bs > len(blob):
        raise ValueError("truncated processed blob")
    if stored != checksum(blob):
        raise ValueError("the processed blob's checksum does not match: its bytes changed after lowering")
    return OpenvinoIr(blob[xo : xo + xs], blob[bo : bo + bs])
