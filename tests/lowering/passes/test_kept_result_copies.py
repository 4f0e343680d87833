"""kept_result_copies: a kept operation's result is copied contiguous, so the views traced on it are valid for the
strides ExecuTorch gives it (the measured failure: attention's transpose(1, 2).reshape became an invalid view)."""

from __future__ import annotations

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino as exov
from executorch_openvino.lowering.passes.kept_result_copies import copy_kept_results
from exov_testing.programs import assert_matches_eager, eager

SDPA = torch.ops.aten.scaled_dot_product_attention.default


class HeadsBack(torch.nn.Module):
    """Attention whose (B, H, L, E) result is viewed back to (B, L, H * E), as HF BERT does."""

    def forward(self, q, k, v):
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        batch, heads, length, size = out.shape
        return out.transpose(1, 2).reshape(batch, length, heads * size)


INPUTS = tuple(torch.randn(2, 4, 6, 8) for _ in range(3))


def test_each_kept_result_is_followed_by_a_contiguous_copy_that_its_users_read():
    program = torch.export.export(HeadsBack(), INPUTS)
    attention = next(n for n in program.graph.nodes if n.target == SDPA)
    readers = set(attention.users)
    copy_kept_results(program, lambda node: node.target == SDPA)
    (copy,) = attention.users
    assert copy.target == torch.ops.aten.clone.default
    assert copy.kwargs == {"memory_format": torch.contiguous_format}
    assert set(copy.users) == readers and copy.meta["val"].is_contiguous()
    assert_matches_eager(list(program.module()(*INPUTS)) if isinstance(program.module()(*INPUTS), tuple)
                         else [program.module()(*INPUTS)], eager(HeadsBack(), INPUTS))


def test_a_program_without_kept_operations_is_unchanged():
    program = torch.export.export(HeadsBack(), INPUTS)
    before = [str(n.target) for n in program.graph.nodes]
    copy_kept_results(program, lambda node: False)
    assert [str(n.target) for n in program.graph.nodes] == before


@pytest.mark.parametrize("path", ["exov.lower", "to_edge_transform_and_lower"])
def test_attention_viewed_back_lowers_whole_and_matches_eager(path):
    if path == "exov.lower":
        program = exov.lower(HeadsBack(), INPUTS)
    else:
        program = to_edge_transform_and_lower(torch.export.export(HeadsBack(), INPUTS),
                                              partitioner=[exov.OpenvinoPartitioner()]).to_executorch()
    summary = exov.delegation_summary(program)
    assert summary.delegated == summary.total, summary.report()
    method = exov.load_method(program.buffer)
    for _ in range(2):
        assert_matches_eager(list(method.execute(list(INPUTS))), eager(HeadsBack(), INPUTS))
