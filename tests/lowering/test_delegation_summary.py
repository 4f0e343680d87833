"""delegation_summary's reasons: every operator left on ExecuTorch says why, on both lowering paths, after
to_executorch, with numerics="fast", with skip sets, and for a program this package did not lower."""

from __future__ import annotations

import ast
import inspect

import pytest
import torch
from executorch.exir import to_edge, to_edge_transform_and_lower

import executorch_openvino as exov
from executorch_openvino.lowering import operator_support

pytestmark = [pytest.mark.own_runtime]


class Mixed(torch.nn.Module):
    """relu and mul go to OpenVINO; argmax (NaN placement), an integer cumsum and float64 arithmetic do not."""

    def forward(self, x, i):
        y = torch.relu(x) * 2
        return y.double().sum(), torch.cumsum(i, 0), torch.argmax(x, 1)


INPUTS = (torch.randn(4, 8), torch.arange(4))
EXPECTED = {
    "aten.argmax.default": "NaN, which OpenVINO's argmax and argmin skip (PyTorch: NaN is the extreme) (numerics='exact')",
    "aten.cumsum.default": "accumulates int64, which OpenVINO computes in int32 (wrong past 2**31)",
    "aten.sum.dim_IntList": "float64, which OpenVINO computes in float32 (numerics='exact')",
}


def _by_operator(summary) -> dict[str, str]:
    return {item.operator: item.reason for item in summary.not_delegated}


def test_each_operator_left_on_executorch_has_its_reason_on_both_lowering_paths():
    edge = to_edge_transform_and_lower(torch.export.export(Mixed(), INPUTS), partitioner=[exov.OpenvinoPartitioner()])
    from_edge = exov.delegation_summary(edge)
    from_lower = exov.delegation_summary(exov.lower(Mixed(), INPUTS))  # after to_executorch: out variants
    for summary in (from_edge, from_lower):
        found = _by_operator(summary)
        assert {op: found.get(op) for op in EXPECTED} == EXPECTED, found
        assert len(summary.not_delegated) == summary.total - summary.delegated
        assert summary.partitions == 1
    assert sorted((i.operator, i.reason) for i in from_edge.not_delegated) == sorted(
        (i.operator, i.reason) for i in from_lower.not_delegated)


def test_fast_numerics_delegates_what_only_exactness_kept():
    summary = exov.delegation_summary(exov.lower(Mixed(), INPUTS, numerics="fast"))
    assert set(_by_operator(summary)) == {"aten.cumsum.default"}, summary.report()


def test_a_skipped_operator_says_it_was_skipped():
    partitioner = exov.OpenvinoPartitioner(op_types_to_skip={"aten.relu.default"})
    edge = to_edge_transform_and_lower(torch.export.export(Mixed(), INPUTS), partitioner=[partitioner])
    assert _by_operator(exov.delegation_summary(edge))["aten.relu.default"] == (
        "skipped by op_types_to_skip or op_names_to_skip")


def test_a_program_lowered_without_this_partitioner_says_so():
    summary = exov.delegation_summary(to_edge(torch.export.export(Mixed(), INPUTS)))
    assert summary.delegated == 0 and summary.not_delegated
    assert {i.reason for i in summary.not_delegated} == {"not lowered with this package's partitioner"}


def test_a_node_added_after_partitioning_says_so():
    """exov.lower returns an input through a copy when shapes are dynamic (passes/returned_inputs.py)."""

    class Returned(torch.nn.Module):
        def forward(self, x):
            return x, torch.relu(x)

    program = exov.lower(Returned(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: torch.export.Dim("b", max=16)}})
    (copy,) = exov.delegation_summary(program).not_delegated
    assert copy.reason == "added after partitioning (a copy of a returned input, or ExecuTorch's write-back of a buffer)"


class Positions(torch.nn.Module):
    def forward(self, pos):
        return pos * 3 + 1, torch.cumsum(pos, 0)


def test_an_unused_input_range_is_named_in_a_warning_and_in_the_reasons():
    partitioner = exov.OpenVINOPartitioner(input_ranges={"pos": (0, 100)})
    with pytest.warns(UserWarning, match="the range of 'pos' is not used, because aten_cumsum_default "
                                         r"\(aten.cumsum.default\) reads it and stays on ExecuTorch"):
        edge = to_edge_transform_and_lower(torch.export.export(Positions(), (torch.arange(4),)),
                                           partitioner=[partitioner])
    reasons = _by_operator(exov.delegation_summary(edge))
    assert reasons["aten.mul.Tensor"].endswith("the input_ranges of 'pos' are unused: aten_cumsum_default reads it "
                                               "on ExecuTorch")


def test_a_used_input_range_gives_no_warning(recwarn):
    class Arithmetic(torch.nn.Module):
        def forward(self, pos):
            return pos * 3 + 1

    edge = to_edge_transform_and_lower(torch.export.export(Arithmetic(), (torch.arange(4),)),
                                       partitioner=[exov.OpenVINOPartitioner(input_ranges={"pos": (0, 100)})])
    summary = exov.delegation_summary(edge)
    assert summary.delegated == summary.total == 2 and not summary.not_delegated
    assert not [w for w in recwarn if "input_ranges" in str(w.message)]


def test_verbose_lower_prints_the_report_to_stderr(capsys):
    exov.lower(Mixed(), INPUTS, verbose=True)
    printed = capsys.readouterr()
    assert "aten.cumsum.default x1 (aten_cumsum_default): accumulates int64" in printed.err
    assert printed.err.splitlines()[0].endswith("operators on OpenVINO in 1 partition(s); on ExecuTorch:")
    assert "aten.cumsum" not in printed.out


def test_report_groups_nodes_by_operator_and_reason():
    class Many(torch.nn.Module):
        def forward(self, i):
            return torch.cumsum(i, 0), torch.cumsum(i + 1, 0), torch.cumsum(i * 2, 0), torch.cumsum(i - 1, 0)

    summary = exov.delegation_summary(exov.lower(Many(), (torch.arange(4),)))
    ((operator, reason), nodes), *_ = summary.reasons().items()
    assert (operator, len(nodes)) == ("aten.cumsum.default", 4)
    assert "x4 (" in summary.report() and "and 1 more" in summary.report()


def test_every_refusal_in_the_support_check_returns_a_reason():
    """No bare boolean left in the check: each return is a reason (a string) or None (taken)."""
    source = inspect.getsource(operator_support.OpenVINOOperatorSupport.refusal)
    tree = ast.parse(source.replace("\n    ", "\n")[source.index("def"):])
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return)]
    assert len(returns) > 30
    for node in returns:
        value = node.value
        assert not (isinstance(value, ast.Constant) and isinstance(value.value, bool)), ast.unparse(node)
        constants = [c.value for c in ast.walk(value) if isinstance(c, ast.Constant)] if value else [None]
        assert any(c is None or (isinstance(c, str) and c.strip()) for c in constants), ast.unparse(node)
