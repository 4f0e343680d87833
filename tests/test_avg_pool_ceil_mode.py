"""Average pools whose last ceil_mode window OpenVINO would divide differently stay on ExecuTorch."""

import pytest
import torch
from executorch.exir import to_edge_transform_and_lower

import executorch_openvino as exov
from conftest import assert_matches_eager, eager, lower, run


def _pools_left_outside(module, x) -> list:
    edge = to_edge_transform_and_lower(torch.export.export(module.eval(), (x,)),
                                       partitioner=[exov.OpenvinoPartitioner()])
    return [n for n in edge.exported_program().graph.nodes if n.op == "call_function" and "avg_pool" in str(n.target)]


@pytest.mark.parametrize("pool, shape", [
    (torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True), (1, 8, 100)),
    (torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True), (1, 2, 10, 10)),
])
def test_ceil_mode_counting_padding_runs_on_executorch(pool, shape):
    x = torch.randn(shape)
    assert len(_pools_left_outside(pool, x)) == 1  # OpenVINO divides the last window by the whole kernel
    pte, _ = lower(pool, (x,))
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))


def test_ceil_mode_counting_padding_3d_is_not_delegated():
    # ExecuTorch's portable kernels have no avg_pool3d, so this program does not
    # load; a wrong last window would be worse.
    assert len(_pools_left_outside(torch.nn.AvgPool3d(3, 2, padding=1, ceil_mode=True), torch.randn(1, 2, 6, 6, 6))) == 1


def test_ceil_mode_without_counting_padding_is_delegated():
    pool = torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)
    x = torch.randn(1, 8, 100)
    pte, summary = lower(pool, (x,))
    assert summary.delegated == summary.total
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))


def test_ceil_mode_without_overflowing_window_is_delegated():
    # 99 elements, kernel 3, stride 2, padding 1: the last window ends exactly at the padded end.
    pool = torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True)
    x = torch.randn(1, 8, 99)
    assert not _pools_left_outside(pool, x)
    pte, _ = lower(pool, (x,))
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))


def test_ceil_mode_overflowing_window_without_padding_is_delegated():
    # Without padding OpenVINO also divides the last window by the part inside.
    pool = torch.nn.AvgPool1d(3, ceil_mode=True)
    x = torch.randn(1, 8, 8)
    assert not _pools_left_outside(pool, x)
    pte, _ = lower(pool, (x,))
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))
