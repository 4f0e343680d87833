"""A damaged, foreign or future processed blob fails init with a clear error; the process survives."""

from __future__ import annotations

import hashlib
import random
import re
import struct
import zlib

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, lower, run
from executorch_openvino.contract import processed_blob

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]


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


def _blob(pte: bytes) -> tuple[int, int]:
    """(offset, size) of the processed blob inside the .pte (size from its header: weights end last)."""
    at = _blob_offset(pte)
    header = processed_blob.read_header(pte, at)
    return at, header.weights_offset + header.weights_size


def _patched(pte: bytes, offset_in_blob: int, data: bytes, *, reseal: bool = False) -> bytes:
    """`data` written at `offset_in_blob`; with `reseal`, the checksum recomputed as a writer would."""
    at, size = _blob(pte)
    out = bytearray(pte)
    out[at + offset_in_blob : at + offset_in_blob + len(data)] = data
    if reseal:
        blob = out[at : at + size]
        processed_blob.seal(blob)
        out[at : at + size] = blob
    return bytes(out)


def test_round_trip_of_the_python_writer(good_pte):
    at, size = _blob(good_pte)
    header = processed_blob.read_header(good_pte, at)
    assert header[:3] == (b"EXOVBLOB", 3, 1)
    assert processed_blob.HEADER_SIZE == 88
    assert list(processed_blob.FIELD_OFFSETS.values()) == [0, 8, 12, 16, 24, 32, 40, 48, 52, 56]
    blob = good_pte[at : at + size]
    assert header[7] == processed_blob.checksum(blob) == zlib.crc32(blob[:48] + blob[52:])
    assert header[8] == 0
    assert header.xml_offset == XML_START and header.weights_offset % 64 == 0
    assert header.digest == hashlib.sha256(blob[XML_START:]).digest()
    ir = processed_blob.unpack(blob)
    assert ir.xml.startswith(b"<?xml") and len(ir.weights) == (16 * 4 + 4) * 4


def test_the_python_reader_sees_a_changed_byte_too(good_pte):
    at, size = _blob(good_pte)
    blob = bytearray(good_pte[at : at + size])
    blob[-1] ^= 0x01
    with pytest.raises(ValueError, match="checksum does not match"):
        processed_blob.unpack(bytes(blob))


CHECKSUM = "the processed blob's checksum does not match (stored 0x"
AT = processed_blob.FIELD_OFFSETS  # where each header field starts (the round trip above pins them)
XML_START = 128  # the Python writer puts the XML on the first 64-byte boundary after the header
BAD_BLOBS = {
    "wrong magic": (AT["magic"], b"NOTOURS!", "does not start with the magic 'EXOVBLOB'", False),
    "future format version": (AT["format_version"], struct.pack("<I", 4), "format version 4, this delegate reads version 3. Upgrade executorch-openvino", False),
    "format version 1 (no checksum)": (AT["format_version"], struct.pack("<I", 1), "format version 1, this delegate reads version 3. Lower the model again", False),
    "format version 2 (no digest)": (AT["format_version"], struct.pack("<I", 2), "format version 2, this delegate reads version 3. Lower the model again", False),
    "unknown payload kind": (AT["payload_kind"], struct.pack("<I", 9), "payload kind is 9", False),
    "xml length past the end": (AT["xml_size"], struct.pack("<Q", 1 << 40), "model XML section", False),
    "xml offset inside the header": (AT["xml_offset"], struct.pack("<Q", 8), "model XML section (offset 8", False),
    "weights length past the end": (AT["weights_size"], struct.pack("<Q", 1 << 62), "weights section", False),
    "weights offset overflowing": (AT["weights_offset"], struct.pack("<Q", (1 << 64) - 8), "weights section", False),
    "zero-length xml": (AT["xml_size"], struct.pack("<Q", 0), "model XML section", False),
    "a changed xml byte": (XML_START, b"<garbage", CHECKSUM, False),
    "a changed checksum": (AT["checksum"], struct.pack("<I", 0xDEADBEEF), CHECKSUM, False),
    "a changed reserved field": (AT["reserved"], struct.pack("<I", 1), CHECKSUM, False),
    "a changed digest": (AT["digest"], b"\x00" * 8, CHECKSUM, False),
    "corrupt model xml, checksum recomputed": (XML_START, b"<garbage", "which was lowered with OpenVINO 20", True),
    "corrupt model xml: the same release wrote it": (XML_START, b"<garbage", "The same OpenVINO release wrote it, so the IR "
                                                                      "itself is wrong: lower the model again", True),
}


@pytest.mark.parametrize("case", list(BAD_BLOBS))
@pytest.mark.sampled(every=2)
def test_bad_blob_fails_init_clearly(good_pte, case):
    offset, data, message, reseal = BAD_BLOBS[case]
    with pytest.raises(RuntimeError) as info:
        exov.load_method(_patched(good_pte, offset, data, reseal=reseal))
    assert message in str(info.value)
    # The process survives and a good program still runs.
    assert_matches_eager(run(good_pte, INPUT), eager(_model_with_same_weights(), INPUT))


def test_a_flipped_weight_byte_fails_init_instead_of_changing_results(good_pte):
    at, size = _blob(good_pte)
    weights_offset = processed_blob.read_header(good_pte, at).weights_offset
    flipped = _patched(good_pte, weights_offset + 5, bytes([good_pte[at + weights_offset + 5] ^ 0x40]))
    with pytest.raises(RuntimeError, match=re.escape(CHECKSUM)):
        exov.load_method(flipped)
    # The control: the same change with the checksum recomputed loads, and computes something else.
    resealed = _patched(good_pte, weights_offset + 5, bytes([good_pte[at + weights_offset + 5] ^ 0x40]), reseal=True)
    assert not torch.equal(run(resealed, INPUT)[0], run(good_pte, INPUT)[0])


@pytest.mark.parametrize("where", ["warm cache, from a file", "warm cache, from memory", "cold cache",
                                   "beside a loaded copy"])
def test_a_flipped_weight_byte_fails_init_wherever_the_compiled_model_comes_from(good_pte, tmp_path, where):
    # The weights' checksum is checked beside OpenVINO's import or compile, not before it: a compiled model
    # that the cache or this process already holds must not hide a damaged program, and a cache filled from
    # one must keep nothing of it.
    at, _ = _blob(good_pte)
    weights_offset = processed_blob.read_header(good_pte, at).weights_offset
    flipped = _patched(good_pte, weights_offset + 5, bytes([good_pte[at + weights_offset + 5] ^ 0x40]))
    (tmp_path / "flipped.pte").write_bytes(flipped)
    cache = tmp_path / "cache"
    kept = None
    try:
        if "cache" in where:
            exov.set_cache_dir(cache)
        if where.startswith("warm cache"):
            run(good_pte, INPUT)
            exov.load_method(good_pte)
            assert exov.last_compile_report()["loaded_from_cache"] is True
        if where == "beside a loaded copy":
            kept = exov.load_method(good_pte)
        source = flipped if where.endswith("memory") else tmp_path / "flipped.pte"
        with pytest.raises(RuntimeError, match=re.escape(CHECKSUM)):
            exov.load_method(source)
        if where == "cold cache":
            assert not [p for p in cache.rglob("*") if p.suffix in (".bin", ".xml", ".blob") or ".tmp-" in p.name]
    finally:
        exov.set_cache_dir(None)
    if kept is not None:
        assert_matches_eager(kept.execute(list(INPUT)), eager(_model_with_same_weights(), INPUT))


def test_randomly_flipped_bytes_anywhere_in_the_blob_all_fail_init(good_pte):
    # executorch 1.5.1's bundled OpenVINO delegate ran 5 of 12 such programs without an error (issue 5).
    at, size = _blob(good_pte)
    rng = random.Random(12)
    positions = sorted(rng.sample(range(size), 12))
    for position in positions:
        flipped = _patched(good_pte, position, bytes([good_pte[at + position] ^ (1 << rng.randrange(8))]))
        with pytest.raises(RuntimeError) as info:
            exov.load_method(flipped)
        assert "processed blob" in str(info.value), (position, str(info.value))
    assert_matches_eager(run(good_pte, INPUT), eager(_model_with_same_weights(), INPUT))


def _model_with_same_weights():
    torch.manual_seed(0)
    return Model()


# A blob cut short inside each header field (and inside the weights), as preprocess would have
# stored it: the writer is wrapped while lowering, so ExecuTorch stores exactly these bytes.
TRUNCATIONS = {
    "empty": (0, "the processed blob is empty"),
    "inside the magic": (5, "does not start with the magic 'EXOVBLOB' (5 bytes)"),
    "inside the format version": (10, "truncated: 10 bytes, shorter than its 88-byte header"),
    "inside the payload kind": (14, "truncated: 14 bytes, shorter than its 88-byte header"),
    "inside the XML offset": (20, "truncated: 20 bytes"),
    "inside the XML size": (28, "truncated: 28 bytes"),
    "inside the weights offset": (36, "truncated: 36 bytes"),
    "inside the weights size": (44, "truncated: 44 bytes"),
    "inside the checksum": (50, "truncated: 50 bytes"),
    "inside the reserved field": (54, "truncated: 54 bytes"),
    "inside the digest": (70, "truncated: 70 bytes"),
    "inside the weights": (-1, "weights section"),
}


# In CI (each case is a lowering, 8 s under the sanitizers): the header's start, its end, the digest and the
# weights; the parser's other offsets by hand (slow) and in processed_blob_fuzz.
TRUNCATIONS_IN_CI = ("empty", "inside the magic", "inside the format version", "inside the digest",
                     "inside the weights")


@pytest.mark.parametrize("case", [pytest.param(case, marks=[] if case in TRUNCATIONS_IN_CI else [pytest.mark.slow])
                                  for case in TRUNCATIONS])
@pytest.mark.sampled(every=2)
def test_truncated_blob_fails_init_clearly(good_pte, case, monkeypatch):
    length, message = TRUNCATIONS[case]
    pack = processed_blob.pack
    monkeypatch.setattr(processed_blob, "pack", lambda ir: pack(ir)[:length])
    torch.manual_seed(0)
    truncated, _ = lower(Model(), INPUT)
    monkeypatch.undo()
    with pytest.raises(RuntimeError) as info:
        exov.load_method(truncated)
    assert message in str(info.value), str(info.value)
    assert "Lower the model again" in str(info.value)
    assert_matches_eager(run(good_pte, INPUT), eager(_model_with_same_weights(), INPUT))
