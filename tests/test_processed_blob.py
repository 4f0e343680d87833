"""A damaged, foreign or future processed blob fails init with a clear error; the process survives."""

from __future__ import annotations

import struct

import pytest
import torch

import executorch_openvino as exov
from conftest import assert_matches_eager, eager, lower, run
from executorch_openvino import processed_blob


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.sigmoid(self.linear(x))


INPUT = (torch.randn(2, 16),)


@pytest.fixture(scope="module")
def good_pte() -> bytes:
    torch.manual_seed(0)
    pte, _ = lower(Model(), INPUT)
    return pte


def _blob_offset(pte: bytes) -> int:
    at = pte.find(processed_blob.MAGIC)
    assert at >= 0 and pte.find(processed_blob.MAGIC, at + 1) == -1, "expected exactly one blob"
    return at


def _patched(pte: bytes, offset_in_blob: int, data: bytes) -> bytes:
    at = _blob_offset(pte) + offset_in_blob
    return pte[:at] + data + pte[at + len(data):]


def test_round_trip_of_the_python_writer(good_pte):
    at = _blob_offset(good_pte)
    header = struct.unpack_from("<8sIIQQQQ", good_pte, at)
    assert header[:3] == (b"EXOVBLOB", 1, 1)
    ir = processed_blob.unpack(good_pte[at:])
    assert ir.xml.startswith(b"<?xml") and len(ir.weights) == (16 * 4 + 4) * 4


BAD_BLOBS = {
    "wrong magic": (0, b"NOTOURS!", "does not start with the magic 'EXOVBLOB'"),
    "future format version": (8, struct.pack("<I", 2), "format version 2, this delegate reads version 1. Upgrade executorch-openvino"),
    "old format version": (8, struct.pack("<I", 0), "format version 0, this delegate reads version 1"),
    "unknown payload kind": (12, struct.pack("<I", 9), "payload kind is 9"),
    "xml length past the end": (24, struct.pack("<Q", 1 << 40), "model XML section"),
    "xml offset inside the header": (16, struct.pack("<Q", 8), "model XML section (offset 8"),
    "weights length past the end": (40, struct.pack("<Q", 1 << 62), "weights section"),
    "weights offset overflowing": (32, struct.pack("<Q", (1 << 64) - 8), "weights section"),
    "zero-length xml": (24, struct.pack("<Q", 0), "model XML section"),
    "corrupt model xml": (64, b"<garbage", "OpenVINO could not read the model in the processed blob"),
}


@pytest.mark.parametrize("case", list(BAD_BLOBS))
def test_bad_blob_fails_init_clearly(good_pte, case):
    offset, data, message = BAD_BLOBS[case]
    with pytest.raises(RuntimeError) as info:
        exov.load_method(_patched(good_pte, offset, data))
    assert message in str(info.value)
    # The process survives and a good program still runs.
    assert_matches_eager(run(good_pte, INPUT), eager(_model_with_same_weights(), INPUT))


def _model_with_same_weights():
    torch.manual_seed(0)
    return Model()
