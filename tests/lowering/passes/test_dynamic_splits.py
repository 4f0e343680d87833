"""passes/dynamic_splits.py: programs with dynamic sizes that split a tensor (attention's ``qkv.split``,
``chunk``, a GRU's gates) keep their dynamic sizes through ExecuTorch's ``to_edge``, lower into one partition
and give eager's values at every size in their range, from a file too. Without the pass ExecuTorch fixed the
sizes at the example's: the programs below were refused at other sizes, or did not lower at all."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, partition_operation_types

NUMERICS = ["exact", "fast"]
BATCH = torch.export.Dim("batch", min=1, max=16)


class Attention(torch.nn.Module):
    """Attention written by hand, its projections split from one linear layer."""

    def __init__(self, width=32, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (p.view(b, t, self.heads, c // self.heads).transpose(1, 2) for p in self.qkv(x).split(c, dim=-1))
        weights = (q @ k.transpose(-1, -2) / (c // self.heads) ** 0.5).softmax(-1)
        return self.out((weights @ v).transpose(1, 2).reshape(b, t, c))


class OneInput(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _delegate_calls(program) -> int:
    return sum("executorch_call_delegate" in str(n.target) for n in program.exported_program().graph.nodes)


def _check_sizes(program, module, shapes, tmp_path=None):
    source = program.buffer
    if tmp_path is not None:  # and from a file
        source = tmp_path / "program.pte"
        source.write_bytes(program.buffer)
    method = exov.load_method(source)
    for shape in shapes:  # several calls of one method, each size in the range
        x = torch.randn(shape)
        assert_matches_eager(list(method.execute([x])), eager(module, (x,)))


@pytest.mark.parametrize("numerics", NUMERICS)
def test_attention_with_dynamic_batch(numerics, tmp_path):
    torch.manual_seed(0)
    module = Attention().eval()
    program = exov.lower(module, (torch.randn(4, 10, 32),), dynamic_shapes=({0: BATCH},), numerics=numerics)
    assert _delegate_calls(program) == 1  # was 9 partitions, the views between them on ExecuTorch
    _check_sizes(program, module, [(n, 10, 32) for n in (4, 1, 16, 2)], tmp_path)


def test_attention_with_dynamic_batch_through_executorch_api():
    # to_edge_transform_and_lower with the partitioner runs the pass as well.
    from executorch.exir import to_edge_transform_and_lower

    torch.manual_seed(0)
    module = Attention().eval()
    exported = torch.export.export(module, (torch.randn(3, 10, 32),), dynamic_shapes=({0: BATCH},))
    edge = to_edge_transform_and_lower(exported, partitioner=[exov.OpenVINOPartitioner()])
    method = exov.load_method(edge.to_executorch().buffer)
    for n in (3, 1, 16):
        x = torch.randn(n, 10, 32)
        assert_matches_eager(list(method.execute([x])), eager(module, (x,)))


def test_dynamic_tokens_keep_their_split():
    # Pieces with a static first size (an LLM's batch of 1) keep their sizes through to_edge: the split stays.
    torch.manual_seed(0)
    module = Attention().eval()
    tokens = torch.export.Dim("tokens", min=2, max=24)
    program = exov.lower(module, (torch.randn(1, 10, 32),), dynamic_shapes=({1: tokens},))
    types = partition_operation_types(program)
    assert types["VariadicSplit"] + types["Split"] == 1
    _check_sizes(program, module, [(1, n, 32) for n in (10, 2, 24)])


# Pieces of other sizes (chunk's, a shorter last piece, listed sizes), pieces returned directly, unused pieces.
@pytest.mark.parametrize("fn", [
    lambda x: x.chunk(3, dim=-1)[0][..., :10] * x.chunk(3, dim=-1)[2],
    lambda x: x.split(10, dim=2),
    lambda x: x.split([5, 20, 7], dim=-1)[1].relu(),
    lambda x: torch.cat(x.split(4, dim=1)[::-1], dim=1),
    lambda x: torch.unsafe_chunk(x, 2, -1)[1] - torch.unsafe_split(x, 16, -1)[0],
    lambda x: torch.unsafe_split_with_sizes(x, [30, 2], -1)[1] * 2,
    lambda x: [p + 1 for p in torch.split_copy(x, 20, -1) + torch.split_with_sizes_copy(x, [1, 31], -1)],
], ids=["chunk", "uneven-returned", "sizes-one-used", "split-middle-dim", "unsafe", "unsafe-sizes", "copies"])
@pytest.mark.sampled(every=2)
def test_splits_keep_dynamic_batch(fn):
    torch.manual_seed(0)
    module = OneInput(fn)
    program = exov.lower(module, (torch.randn(3, 8, 32),), dynamic_shapes=({0: BATCH},))
    _check_sizes(program, module, [(n, 8, 32) for n in (3, 1, 16)])


@pytest.mark.parametrize("numerics", NUMERICS)
# The 2-layer bidirectional GRU (30 s per numerics in CI) runs by hand (slow_tests): CI's 25-minute budget.
@pytest.mark.parametrize("batch_first, layers, bidirectional", [
    (True, 1, False), (False, 1, False), pytest.param(True, 2, True, marks=pytest.mark.slow)],
    ids=["batch-first", "sequence-first", "2-layers-bidirectional"])
@pytest.mark.sampled(every=2)
def test_gru_with_dynamic_batch(batch_first, layers, bidirectional, numerics):
    torch.manual_seed(0)
    module = torch.nn.GRU(8, 16, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first).eval()
    batch_dim = 0 if batch_first else 1
    shape = lambda n: (n, 5, 8) if batch_first else (5, n, 8)  # noqa: E731
    program = exov.lower(module, (torch.randn(shape(4)),), dynamic_shapes=({batch_dim: BATCH},), numerics=numerics)
    assert _delegate_calls(program) == 1
    _check_sizes(program, module, [shape(n) for n in (4, 1, 16)])


def test_static_programs_keep_their_splits():
    # Without dynamic sizes nothing changes: OpenVINO gets the split, as convert_model gives it.
    torch.manual_seed(0)
    module = Attention().eval()
    x = torch.randn(4, 10, 32)
    program = exov.lower(module, (x,))
    assert partition_operation_types(program)["VariadicSplit"] + partition_operation_types(program)["Split"] == 1
    assert_matches_eager(list(exov.load_method(program.buffer).execute([x])), eager(module, (x,)))


@pytest.mark.parametrize("cell", [torch.nn.GRUCell, torch.nn.LSTMCell], ids=["GRUCell", "LSTMCell"])
def test_sizes_that_executorch_still_fixes_are_refused_at_lowering(cell):
    # The cells' decomposition splits on the batch inside to_edge, after the pass (found by a tester): the
    # method would refuse every batch but the example's, so lowering says so and what to do instead.
    module = cell(8, 16).eval()
    with pytest.raises(ValueError, match=r"fixed sizes exported as dynamic: input 0 dimension 0 \(\w+\) at 4\..*"
                                         r"GRUCell and LSTMCell are not.*slices"):
        exov.lower(module, (torch.randn(4, 8),), dynamic_shapes=({0: BATCH},))
