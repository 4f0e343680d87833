"""passes/view_sizes.py: a view's -1 written as the static size it stands for, and the Llama whose KV cache
length equalled its head size, which failed every call without it (OpenVINO read that -1 as 1)."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.llm_models import eager_greedy, method_greedy, tiny_llama

pytestmark = [pytest.mark.older_openvino]


def test_minus_one_becomes_the_static_size():
    from executorch.exir import to_edge

    from executorch_openvino.lowering.passes.view_sizes import write_static_view_sizes

    class Heads(torch.nn.Module):
        def forward(self, x):  # (1, n, 64) -> (1, 4, n, 16) -> back, n dynamic
            heads = x.view(1, x.shape[1], 4, 16).transpose(1, 2) * 2
            return heads.reshape(1, -1, x.shape[1], 16)

    n = torch.export.Dim("n", min=1, max=32)
    exported = torch.export.export(Heads(), (torch.randn(1, 5, 64),), dynamic_shapes=({1: n},))
    program = to_edge(exported).exported_program()
    # As transformers' attention leaves it in an LLM's program: [1, -1, n, 16] (torch wrote 4 here).
    view = [node for node in program.graph.nodes if "view_copy" in str(node.target)][-1]
    view.args = (view.args[0], [1, -1, *view.args[1][2:]])
    assert write_static_view_sizes(program) == 1
    assert view.args[1][:2] == [1, 4] and -1 not in view.args[1], view.args
    program.graph_module.recompile()
    x = torch.randn(1, 7, 64)
    torch.testing.assert_close(program.module()(x), Heads()(x))

def test_a_context_as_long_as_the_head_size():
    model = tiny_llama()  # head size 16
    method = exov.load_method(exov.export_llm(model, max_context_len=16).buffer)
    expected, _ = eager_greedy(model, [5, 17, 42], 10)
    got, _ = method_greedy(method, [5, 17, 42], 10)
    assert got == expected
