"""The processed blob: a versioned header followed by an OpenVINO IR model.

Written by preprocess, read by ``native/processed_blob.cpp``; the layout is
documented there (48-byte little-endian header, magic ``EXOVBLOB``, format
version 1, payload kind 1 = OpenVINO IR XML + weights). The weights start on a
64-byte boundary of the blob.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

MAGIC = b"EXOVBLOB"
FORMAT_VERSION = 1
PAYLOAD_OPENVINO_IR = 1
_HEADER = struct.Struct("<8sIIQQQQ")
HEADER_SIZE = _HEADER.size  # 48
_ALIGN = 64


class OpenvinoIr(NamedTuple):
    xml: bytes
    weights: bytes


def pack(ir: OpenvinoIr) -> bytes:
    """Returns header + XML + padding + weights."""
    xml_offset = _ALIGN
    bin_offset = (xml_offset + len(ir.xml) + _ALIGN - 1) // _ALIGN * _ALIGN
    header = _HEADER.pack(
        MAGIC, FORMAT_VERSION, PAYLOAD_OPENVINO_IR, xml_offset, len(ir.xml), bin_offset, len(ir.weights)
    )
    out = bytearray(bin_offset + len(ir.weights))
    out[: len(header)] = header
    out[xml_offset : xml_offset + len(ir.xml)] = ir.xml
    out[bin_offset:] = ir.weights
    return bytes(out)


def unpack(blob: bytes) -> OpenvinoIr:
    """Inverse of :func:`pack`; raises ``ValueError`` on a foreign or truncated blob.

    The runtime does its own checks (native/processed_blob.cpp); this one serves
    tools and tests.
    """
    if len(blob) < HEADER_SIZE or blob[:8] != MAGIC:
        raise ValueError("not an executorch-openvino processed blob (bad magic or too short)")
    _, version, kind, xo, xs, bo, bs = _HEADER.unpack_from(blob)
    if version != FORMAT_VERSION or kind != PAYLOAD_OPENVINO_IR:
        raise ValueError(f"unsupported blob format version {version} / payload kind {kind}")
    if xo + xs > len(blob) or bo + bs > len(blob):
        raise ValueError("truncated processed blob")
    return OpenvinoIr(blob[xo : xo + xs], blob[bo : bo + bs])
