"""Operations the partitioner keeps whole (``kept_operations.KEPT``): they reach OpenVINO undecomposed
where they are delegated, stay decomposed for ExecuTorch's kernels where they are not, and give eager
PyTorch's results either way, through ``exov.lower`` and through ExecuTorch's own
``to_edge_transform_and_lower``, with static and dynamic shapes, from a file, over several calls."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, lower, run
from executorch_openvino.lowering.preprocess import BACKEND_ID
from executorch_openvino.lowering.ops import op_name

F = torch.nn.functional
SDPA = "aten.scaled_dot_product_attention.default"


def _delegated_ops(program) -> list[str]:
    """Names of the ops inside this delegate's partitions, and of those outside them (prefixed "outside:")."""
    module = program.exported_program().graph_module
    names = []
    for node in module.graph.nodes:
        if node.op != "call_function":
            continue
        if "executorch_call_delegate" in str(node.target):
            lowered = getattr(module, node.args[0].target)
            assert lowered.backend_id == BACKEND_ID
            names += [op_name(n.target) for n in lowered.original_module.graph.nodes if n.op == "call_function"]
        elif op_name(node.target) not in ("getitem", "alloc"):  # partition outputs, memory planning
            names.append("outside:" + op_name(node.target))
    return names


def _attention(**kwargs):
    return Fn(lambda q, k, v, *mask: F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask[0] if mask else None, **kwargs))


def _qkv(seed: int, heads: int = 2, length: int = 16, width: int = 8, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(2, heads, length, width, generator=g, dtype=dtype) for _ in range(3))


ATTENTION_CASES = {
    "no mask": (_attention(), lambda s: _qkv(s)),
    "bool mask": (_attention(), lambda s: _qkv(s) + (torch.rand(2, 1, 16, 16, generator=torch.Generator()
                                                                .manual_seed(s)) > 0.3,)),
    "float mask": (_attention(), lambda s: _qkv(s) + (torch.randn(2, 1, 16, 16, generator=torch.Generator()
                                                                  .manual_seed(s)),)),
    "causal": (_attention(is_causal=True), lambda s: _qkv(s)),
    "scale": (_attention(scale=0.3), lambda s: _qkv(s)),
    # 3-d inputs, a 2-d mask broadcast over batch and heads, more keys than queries
    "3d": (_attention(), lambda s: tuple(t[0] for t in _qkv(s))),
    "2d mask, 12 keys": (_attention(), lambda s: (_qkv(s)[0], *(t[:, :, :12] for t in _qkv(s + 7)[1:]),
                                                  torch.randn(16, 12, generator=torch.Generator().manual_seed(s)))),
    "causal, 6 queries": (_attention(is_causal=True), lambda s: (_qkv(s)[0][:, :, :6], *_qkv(s + 7)[1:])),
}


@pytest.mark.parametrize("case, numerics", [(case, "exact") for case in ATTENTION_CASES]
                         + [("bool mask", "fast"), ("causal", "fast")])
@pytest.mark.sampled(every=2)
def test_attention_reaches_openvino_whole_and_matches_eager(case, numerics, tmp_path):
    module, make_inputs = ATTENTION_CASES[case]
    program = exov.lower(module, make_inputs(0), numerics=numerics)
    ops = _delegated_ops(program)
    assert ops.count(SDPA) == 1 and not any(op.startswith("outside:") for op in ops), ops
    assert "aten.bmm.default" not in ops and "aten._softmax.default" not in ops, ops  # not decomposed
    path = tmp_path / "attention.pte"
    path.write_bytes(program.buffer)
    method = exov.load_method(path)  # from a file, several calls with other inputs
    for seed in range(3):
        inputs = make_inputs(seed)
        assert_matches_eager(method.execute(list(inputs)), eager(module, inputs), rtol=1e-5, atol=1e-6)


def test_attention_through_executorchs_own_lowering_is_kept_and_matches_eager():
    module, make_inputs = ATTENTION_CASES["bool mask"]
    pte, summary = lower(module, make_inputs(0))  # to_edge_transform_and_lower with OpenvinoPartitioner
    assert summary.delegated == summary.total <= 2  # the undecomposed op (and the copy after it)
    assert_matches_eager(run(pte, make_inputs(1)), eager(module, make_inputs(1)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_rows_whose_mask_allows_no_key_are_zero_as_in_eager(mask_kind):
    # OpenVINO's fused attention gives NaN there (measured, 2025.4.1 and 2026.4.1); numerics="exact"
    # gives PyTorch's 0.
    q, k, v = _qkv(3)
    if mask_kind == "bool":
        mask = torch.rand(2, 1, 16, 16, generator=torch.Generator().manual_seed(3)) > 0.3
        mask[:, :, 5] = False
    else:
        mask = torch.randn(2, 1, 16, 16, generator=torch.Generator().manual_seed(3))
        mask[:, :, 5] = float("-inf")
    module = _attention()
    expected = eager(module, (q, k, v, mask))
    assert torch.equal(expected[0][:, :, 5], torch.zeros(2, 2, 8))  # eager's own convention
    method = exov.load_method(exov.lower(module, (q, k, v, mask)).buffer)
    assert_matches_eager(method.execute([q, k, v, mask]), expected, rtol=1e-5, atol=1e-6)


def test_a_float32_precision_error_would_show():
    # The control: a tolerance that bf16 would break (7 significant bits) holds for the delegate.
    module, make_inputs = ATTENTION_CASES["float mask"]
    inputs = make_inputs(0)
    out = exov.load_method(exov.lower(module, inputs).buffer).execute(list(inputs))[0]
    expected = eager(module, inputs)[0]
    assert (out - expected).abs().max() <= 1e-5
    assert (out.bfloat16().float() - expected).abs().max() > 1e-4


class _CausalAttention(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_attention_with_a_dynamic_sequence_length():
    module = _CausalAttention()
    length = torch.export.Dim("length", min=2, max=64)
    shapes = ({2: length}, {2: length}, {2: length})
    program = exov.lower(module, _qkv(0), dynamic_shapes=shapes)
    assert _delegated_ops(program).count(SDPA) == 1
    method = exov.load_method(program.buffer)
    for seed, size in enumerate((16, 5, 64, 2)):
        inputs = _qkv(seed, length=size)
        assert_matches_eager(method.execute(list(inputs)), eager(module, inputs), rtol=1e-5, atol=1e-6)


def test_attention_left_to_executorch_is_decomposed_for_its_kernels():
    # float64 stays on ExecuTorch's kernels under numerics="exact"; ExecuTorch has no kernel for the
    # whole op, so it must reach them decomposed (else lowering fails "was not decomposed or delegated").
    module, inputs = _attention(), _qkv(0, dtype=torch.float64)
    program = exov.lower(module, inputs)
    ops = _delegated_ops(program)
    assert not any("scaled_dot_product_attention" in op for op in ops), ops
    assert_matches_eager(exov.load_method(program.buffer).execute(list(inputs)), eager(module, inputs),
                         rtol=1e-12, atol=1e-12)


def test_attention_in_training_with_dropout_keeps_the_decomposition():
    module = _attention(dropout_p=0.5)
    ops = _delegated_ops(exov.lower(module, _qkv(0)))
    assert not any("scaled_dot_product_attention" in op for op in ops), ops


def test_grouped_query_attention_keeps_the_decomposition_and_matches_eager():
    # Whole, OpenVINO 2026.4.1 failed to compile it ("key_input_correctness").
    module = _attention(enable_gqa=True)
    g = torch.Generator().manual_seed(0)
    inputs = (torch.randn(2, 8, 16, 8, generator=g), torch.randn(2, 2, 16, 8, generator=g),
              torch.randn(2, 2, 16, 8, generator=g))
    program = exov.lower(module, inputs)
    assert not any("scaled_dot_product_attention" in op for op in _delegated_ops(program))
    assert_matches_eager(exov.load_method(program.buffer).execute(list(inputs)), eager(module, inputs),
                         rtol=1e-5, atol=1e-6)


class _AttentionBlock(torch.nn.Module):
    """torch's own multi-head attention (which calls SDPA), its output returned twice and next to an
    integer op that stays on ExecuTorch's kernels (an int64 cumsum), so the program has several
    partitions and aliasing outputs."""

    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x, counts):
        y = self.attention(x, x, x, need_weights=False)[0]
        total = counts.cumsum(0)
        return y, y, total, y * total[-1].float()


def test_multi_head_attention_with_several_partitions_and_aliasing_outputs():
    torch.manual_seed(0)
    module = _AttentionBlock().eval()
    inputs = (torch.randn(2, 10, 32), torch.arange(5, dtype=torch.int64))
    program = exov.lower(module, inputs)
    ops = _delegated_ops(program)
    assert ops.count(SDPA) == 1 and "outside:aten.cumsum.out" in ops, ops
    method = exov.load_method(program.buffer)
    for seed in range(2):
        x = torch.randn(2, 10, 32, generator=torch.Generator().manual_seed(seed))
        assert_matches_eager(method.execute([x, inputs[1]]), eager(module, (x, inputs[1])), rtol=1e-5,
                             atol=1e-6)


PADS = {
    "reflect 2d": lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
    "replicate 2d": lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"),
    "reflect 1d": lambda x: F.pad(x[0], (2, 1), mode="reflect"),
    "replicate 3d": lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"),
}
# NaN, infinities, signed zeros, subnormals and ordinary values: padding copies them bit for bit.
SPECIAL = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e30, -1e30, 1e-40, -1e-40, 2.5])


@pytest.mark.parametrize("case", list(PADS))
def test_reflect_and_replicate_padding_reach_openvino_whole_and_copy_values_exactly(case):
    x = torch.cat([SPECIAL, torch.randn(54)]).reshape(1, 4, 4, 4)
    module = Fn(PADS[case])
    program = exov.lower(module, (x,))
    ops = _delegated_ops(program)
    assert "aten.pad.default" in ops and not any(op.startswith("outside:") for op in ops), ops
    out = exov.load_method(program.buffer).execute([x])[0]
    expected = eager(module, (x,))[0]
    assert torch.equal(out.view(torch.int32), expected.view(torch.int32))  # every bit, NaN and -0.0 too


def test_constant_and_circular_padding_are_not_kept():
    x = torch.randn(1, 4, 4, 4)
    for mode in ("constant", "circular"):
        ops = _delegated_ops(exov.lower(Fn(lambda t: F.pad(t, (1, 1, 1, 1), mode=mode)), (x,)))
        assert "aten.pad.default" not in ops, (mode, ops)


@pytest.mark.parametrize("name", ["mish", "softplus"])
def test_mish_and_softplus_are_kept_with_fast_numerics_only(name):
    # Kept whole, OpenVINO computes ln(1 + e^x), which rounds to 0 where eager's log1p keeps e^x.
    fn = getattr(F, name)
    module = Fn(lambda t: fn(t) * 2)
    x = torch.cat([torch.randn(60), torch.tensor([-20.0, -30.0, 25.0, 0.0])])
    fast = exov.lower(module, (x,), numerics="fast")
    assert f"aten.{name}.default" in _delegated_ops(fast)
    out = exov.load_method(fast.buffer).execute([x])[0]
    assert_matches_eager([out[:60]], [eager(module, (x,))[0][:60]], rtol=1e-5, atol=1e-6)
    exact = exov.lower(module, (x,))
    assert f"aten.{name}.default" not in _delegated_ops(exact)
    out = exov.load_method(exact.buffer).execute([x])[0]
    assert_matches_eager([out], eager(module, (x,)), rtol=1e-5, atol=0)  # softplus(-20) = 2.1e-9 relative


class _AttentionInCond(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.cond(q.sum() > 0, lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
                          lambda q, k, v: F.scaled_dot_product_attention(q, k, v) * 2, (q, k, v))


class _ChannelsLastQuery(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q.contiguous(memory_format=torch.channels_last), k, v)


# Found by a tester: each lowered and ran before attention was kept whole, and must still.
EDGE_CASES = {
    "inside torch.cond": (_AttentionInCond(), lambda: _qkv(0)),
    "channels_last query": (_ChannelsLastQuery(), lambda: _qkv(0)),
    "2-d inputs": (_attention(), lambda: tuple(t[0, 0] for t in _qkv(0))),
    "no keys, a mask": (_attention(), lambda: (_qkv(0)[0], *(t[:, :, :0] for t in _qkv(1)[1:]),
                                               torch.ones(2, 1, 16, 0, dtype=torch.bool))),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_attention_the_partitioner_cannot_take_whole_still_lowers_and_matches_eager(case):
    module, make_inputs = EDGE_CASES[case]
    inputs = make_inputs()
    program = exov.lower(module, inputs)
    assert_matches_eager(exov.load_method(program.buffer).execute(list(inputs)), eager(module, inputs),
                         rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("numerics", ["exact", "fast"])
def test_rows_whose_mask_allows_no_key_are_zero_with_either_numerics(numerics):
    # A left-padded batch: fast mode gave NaN there once attention reached OpenVINO whole.
    q, k, v = _qkv(5)
    mask = torch.ones(2, 1, 16, 16, dtype=torch.bool).tril()
    mask[0, :, :, :4] = False  # the first sequence is padded on the left: its first 4 rows see no key
    module = _attention()
    method = exov.load_method(exov.lower(module, (q, k, v, mask), numerics=numerics).buffer)
    out = method.execute([q, k, v, mask])
    assert not torch.isnan(out[0]).any()
    assert_matches_eager(out, eager(module, (q, k, v, mask)), rtol=1e-5, atol=1e-6)
