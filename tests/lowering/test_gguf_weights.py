"""``lowering/gguf_weights.py``: weights read from a GGUF file (compile spec ``gguf_weights``) reach OpenVINO as
the file's own blocks. The files are written here with the ``gguf`` package (its quantizers give the blocks,
its ``dequantize`` the values a model holds, as transformers reads them); each program runs against eager
PyTorch on the same dequantized weights."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.contract import processed_blob
from exov_testing.gguf_files import write_gguf

gguf = pytest.importorskip("gguf")
from gguf.quants import dequantize, quantize  # noqa: E402

pytestmark = [pytest.mark.older_openvino]
Q = gguf.GGMLQuantizationType


def quantized(weight: torch.Tensor, kind) -> tuple:
    """``(blocks, dequantized values)`` of `weight` in GGML type `kind`."""
    blocks = quantize(weight.detach().numpy().astype(np.float32), kind)
    return blocks, torch.from_numpy(dequantize(blocks, kind).reshape(weight.shape).copy())


def ir_of(pte: bytes, folder):
    """The OpenVINO model of the program's first delegate blob."""
    import openvino as ov
    from exov_testing.compile_harness import write_first_blob

    ir = processed_blob.unpack(write_first_blob(pte, folder / "first.blob").read_bytes())
    return ov.Core().read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy()))


def weight_types(model) -> dict:
    """Element types of the model's constants with at least 1,024 values, counted."""
    found: dict = {}
    for op in model.get_ordered_ops():
        if op.get_type_name() == "Constant" and int(np.prod(op.get_output_shape(0))) >= 1024:
            kind = op.get_element_type().get_type_name()
            found[kind] = found.get(kind, 0) + 1
    return found


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embedding = torch.nn.Embedding(96, 64)
        self.up = torch.nn.Linear(64, 128)
        self.down = torch.nn.Linear(128, 64, bias=False)
        self.out = torch.nn.Linear(64, 96, bias=False)

    def forward(self, tokens):
        return self.out(self.down(torch.nn.functional.silu(self.up(self.embedding(tokens)))))


def _gguf_mlp(tmp_path, kinds: dict, permute: str = "", leave_out: str = ""):
    """An Mlp whose weights (by parameter name) are the dequantized `kinds`, and a GGUF file of their blocks;
    `permute`'s rows stored reversed in the file, `leave_out` not stored."""
    module, tensors = Mlp(), {}
    for name, kind in kinds.items():
        parameter = module.get_parameter(name)
        blocks, values = quantized(parameter, kind)
        parameter.data = values
        if name == permute:
            blocks = blocks[::-1].copy()
        if name != leave_out:
            tensors[f"t.{name}"] = (blocks, kind)
    path = tmp_path / "weights.gguf"
    write_gguf(path, tensors)
    return module, path


def _lower(module, **options) -> bytes:
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(copy.deepcopy(module), (torch.tensor([[1, 5, 7, 9]]),))
    partitioner = exov.OpenvinoPartitioner(**options)
    return to_edge_transform_and_lower(exported, partitioner=[partitioner]).to_executorch().buffer


KINDS = {"embedding.weight": Q.Q8_0, "up.weight": Q.Q4_1, "down.weight": Q.Q4_0, "out.weight": Q.Q8_0}


def test_each_block_type_reaches_openvino_as_blocks(tmp_path):
    module, path = _gguf_mlp(tmp_path, KINDS, permute="up.weight")
    pte = _lower(module, gguf_weights=str(path))
    # Q4_0 and Q4_1 as u4, Q8_0 as i8, with f16 scales (and zero points), no float32 weight left.
    types = weight_types(ir_of(pte, tmp_path))
    # Q4_1's matmul: signed 4-bit d * (q - 8) plus each block's sum of x times m + 8 d; Q4_0: u4 with zero point 8.
    assert types.get("f32", 0) == 0 and types["i4"] == 1 and types["u4"] == 1 and types["i8"] == 2, types
    tokens = torch.tensor([[1, 95, 0, 9]])
    with torch.no_grad():
        expected = module(tokens)
    got = exov.load_method(pte).execute([tokens])[0]
    # OpenVINO's CPU plugin quantizes activations per 32 values to 8 bits inside compressed matmuls
    # (DYNAMIC_QUANTIZATION_GROUP_SIZE, 2026.4.1): about 1% of the logits' scale here; wrong blocks or rows
    # (a Q4_1 minimum lost, the permuted rows unpermuted) move them by tens of percent.
    scale = expected.abs().max().item()
    torch.testing.assert_close(got, expected, rtol=0, atol=0.03 * scale)
    assert got.argmax(-1).tolist() == expected.argmax(-1).tolist()


@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_exact_numerics_keep_activations_float32_in_compressed_matmuls(tmp_path, numerics):
    """``exact`` writes DYNAMIC_QUANTIZATION_GROUP_SIZE=0 into the IR (OpenVINO's CPU default quantizes
    activations to 8 bits inside compressed matmuls); ``fast`` leaves OpenVINO's default."""
    import openvino as ov

    module, path = _gguf_mlp(tmp_path, KINDS)
    model = ir_of(_lower(module, gguf_weights=str(path), numerics=numerics), tmp_path)
    compiled = ov.Core().compile_model(model, "CPU")
    group = int(compiled.get_property("DYNAMIC_QUANTIZATION_GROUP_SIZE"))
    assert (group == 0) == (numerics == "exact"), group
    if numerics == "exact":  # the answer of float32 activations: eager's to float32 rounding
        tokens = torch.tensor([[1, 95, 0, 9]])
        got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([tokens.numpy()])[0]
        with torch.no_grad():
            torch.testing.assert_close(torch.from_numpy(got), module(tokens), rtol=1e-4, atol=1e-4)


def test_a_q4_1_block_of_equal_values_keeps_them(tmp_path):
    """A block whose values are all equal has scale 0 and minimum m: written with scale m (not (q - z) * 0)."""
    import openvino as ov

    from executorch_openvino.lowering.gguf_weights import GgufBlocks

    weight = Mlp().up.weight.detach().clone()
    weight[:, :32] = 0.25
    weight[3, 32:] = -0.5
    blocks, values = quantized(weight, Q.Q4_1)
    path = tmp_path / "flat.gguf"
    write_gguf(path, {"t.up": (blocks, Q.Q4_1)})
    found = GgufBlocks(path).find(values.numpy())
    assert found is not None and found[1].tolist() == list(range(128))
    output = GgufBlocks(path).decompression(*found)
    got = torch.from_numpy(ov.Core().compile_model(ov.Model([output.get_node()], []), "CPU")({})[0])
    assert (got[:, :32] == 0.25).all() and (got[3, 32:] == -0.5).all()
    # Elsewhere the zero point -m/d, in f16, moves a value by at most |m| * 2**-11.
    torch.testing.assert_close(got, values, rtol=0, atol=values.abs().max().item() * 2**-10)


def test_a_nearly_flat_q4_1_embedding_keeps_its_values(tmp_path):
    """An embedding (a Gather, not a matmul) of nearly equal large values: the zero points -m/d exceed 65504,
    past f16 (they were written as inf: every value inf), so the block form is written in f32."""
    from executorch.exir import to_edge_transform_and_lower

    torch.manual_seed(0)
    blocks, values = quantized(1.0 + 1e-4 * torch.rand(16, 64), Q.Q4_1)
    embedding = torch.nn.Embedding(16, 64)
    embedding.weight.data = values
    path = tmp_path / "flat.gguf"
    write_gguf(path, {"token_embd.weight": (blocks, Q.Q4_1)})
    tokens = torch.tensor([[0, 3, 7, 15]])
    exported = torch.export.export(embedding, (tokens,))
    pte = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner(gguf_weights=str(path))])
    got = exov.load_method(pte.to_executorch().buffer).execute([tokens])[0]
    torch.testing.assert_close(got, embedding(tokens).detach(), rtol=0, atol=1e-6)


def test_vectors_of_block_types_in_the_file_are_left_alone(tmp_path):
    """llama.cpp keeps 1-D tensors in F32, but a file may hold them in Q8_0 (lowering once failed reshaping one)."""
    module, path = _gguf_mlp(tmp_path, KINDS)
    from gguf import GGUFReader

    tensors = {t.name: (np.asarray(t.data).copy(), t.tensor_type) for t in GGUFReader(str(path)).tensors}
    tensors["t.norm"] = (quantize(np.ones(64, np.float32), Q.Q8_0), Q.Q8_0)
    write_gguf(path, tensors)
    assert weight_types(ir_of(_lower(module, gguf_weights=str(path)), tmp_path)).get("f32", 0) == 0


@pytest.mark.parametrize("compression", ["", "int8"])
def test_weights_missing_from_the_file_are_named(tmp_path, compression):
    module, path = _gguf_mlp(tmp_path, KINDS, leave_out="down.weight")
    rest = "NNCF compresses them" if compression else "they stay float32"
    if compression:
        pytest.importorskip("nncf")
    with pytest.warns(UserWarning, match=rf"4 weight constants, 1 Q4_1, 2 Q8_0 came from .*weights.gguf'; 1 "
                                         rf"\(e\.g\. .*\) equal no Q4_0, Q4_1, Q8_0 tensor of the file .*; {rest}"):
        pte = _lower(module, gguf_weights=str(path), weight_compression=compression)
    types = weight_types(ir_of(pte, tmp_path))
    assert types.get("f32", 0) == (0 if compression else 1), types
    tokens = torch.tensor([[1, 5, 7, 9]])
    with torch.no_grad():
        expected = module(tokens)
    got = exov.load_method(pte).execute([tokens])[0]
    torch.testing.assert_close(got, expected, rtol=0, atol=0.03 * expected.abs().max().item())


def test_bad_gguf_weights_are_refused(tmp_path):
    with pytest.raises(ValueError, match="'gguf_weights' is 'model.bin'; give the path of the .gguf file"):
        exov.OpenvinoPartitioner(gguf_weights="model.bin")
    with pytest.raises(FileNotFoundError, match="no GGUF file at"):
        _lower(Mlp(), gguf_weights=str(tmp_path / "missing.gguf"))
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(b"GGUF" + b"\0" * 20)
    with pytest.raises(ValueError, match="could not be read as a GGUF file"):
        _lower(Mlp(), gguf_weights=str(damaged))
    shouted = tmp_path / "DAMAGED.GGUF"  # the suffix in capitals is still a GGUF file's
    damaged.rename(shouted)
    with pytest.raises(ValueError, match="DAMAGED.GGUF' could not be read as a GGUF file"):
        exov.export_llm(shouted)
    with pytest.raises(ValueError, match="weights='gguf' takes the weights' own blocks from the GGUF file"):
        exov.export_llm(Mlp(), weights="gguf")


def test_a_decoder_read_from_gguf_generates_from_its_blocks(tmp_path):
    """A tiny Llama whose matrices are Q4_1 and embedding Q8_0, its query and key rows stored in the file in
    llama.cpp's order (transformers reorders them when it reads a GGUF): the fused-attention program runs
    on the file's blocks and generates eager's greedy tokens."""
    from exov_testing.llm_models import eager_greedy, tiny_llama

    from executorch_openvino.api import lower_exported
    from executorch_openvino.llm.export import export_decoder

    model, tensors = tiny_llama(), {}
    for name, parameter in model.named_parameters():
        if parameter.dim() != 2:
            continue
        kind = Q.Q8_0 if "embed" in name else Q.Q4_1
        blocks, parameter.data = quantized(parameter, kind)
        if name.endswith(("q_proj.weight", "k_proj.weight")):  # llama.cpp's row order: halves interleaved
            heads = 4 if "q_proj" in name else 2
            blocks = blocks.reshape(heads, 2, -1, blocks.shape[1]).swapaxes(1, 2).reshape(blocks.shape)
        tensors[name] = (blocks, kind)
    path = tmp_path / "tiny.gguf"
    write_gguf(path, tensors)
    exported, metadata = export_decoder(model, 48)
    partitioner = exov.OpenvinoPartitioner(gguf_weights=str(path), input_ranges={"cache_position": (0, 47)})
    pte = lower_exported(exported, partitioner, constant_methods=metadata).buffer
    types = weight_types(ir_of(pte, tmp_path))
    # The Q4_1 matmuls of one input share one i4 constant and one minimums matmul: per layer query, key and
    # value; output; gate and up; down; then the LM head (7 per layer unmerged).
    assert types.get("f32", 0) == 0 and types["i4"] == 4 * model.config.num_hidden_layers + 1, types
    assert b"executorch_openvino_restart_state" in pte  # OpenVINO's fused attention
    # Eager's greedy tokens fed back one by one (teacher forcing): OpenVINO quantizes activations inside the
    # compressed matmuls, which may flip a near tie of this random model, so tokens are compared only where
    # eager's top two logits are apart by more than twice the tolerance.
    prompt = [5, 17, 42, 9, 3]
    expected, expected_logits = eager_greedy(model, prompt, 10)
    method = exov.load_method(pte)
    logits = [method.execute([torch.tensor([prompt]), torch.arange(5)])[0][0, -1]]
    for position, token in enumerate(expected[:-1], start=5):
        logits.append(method.execute([torch.tensor([[token]]), torch.tensor([position])])[0][0, -1])
    expected_logits = torch.stack(expected_logits)
    tolerance = 0.03 * expected_logits.abs().max().item()
    torch.testing.assert_close(torch.stack(logits), expected_logits, rtol=0, atol=tolerance)
    top = expected_logits.topk(2).values
    clear = (top[:, 0] - top[:, 1]) > 2 * tolerance
    assert clear.any() and (torch.stack(logits).argmax(-1) == torch.tensor(expected))[clear].all()
