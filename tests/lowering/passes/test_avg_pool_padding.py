"""Average pools with ceil_mode: OpenVINO must divide every window as PyTorch does.

With padding, count_include_pad and a last window past the padded end,
OpenVINO divides that window by the whole kernel (PyTorch by the part inside);
conversion pads explicitly instead (see ``executorch_openvino.lowering.passes.avg_pool_padding``).
Each case here is delegated whole and compared with eager; the OVERFLOWING ones
fail without that rewrite (their last outputs differ by a factor such as 2/3).
"""

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, lower, run

OVERFLOWING = [  # the last window runs past the padded input: the rewritten cases
    (torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True), (1, 8, 100)),
    (torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True), (1, 2, 10, 10)),
    (torch.nn.AvgPool2d((3, 2), (2, 3), padding=(1, 1), ceil_mode=True), (2, 3, 10, 11)),
    (torch.nn.AvgPool2d(4, 3, padding=1, ceil_mode=True), (1, 2, 10, 13)),
    # explicit padding adds a third row of windows (starting in the padding), which is sliced off
    (torch.nn.AvgPool2d(4, (4, 3), padding=(2, 1), ceil_mode=True), (1, 2, 6, 10)),
    (torch.nn.AvgPool3d(3, 2, padding=1, ceil_mode=True), (1, 2, 6, 6, 6)),
    (torch.nn.AvgPool3d((3, 3, 2), (2, 2, 1), padding=1, ceil_mode=True), (1, 3, 6, 8, 4)),
]
DIVIDING_ALIKE = [  # no rewrite needed
    (torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True, count_include_pad=False), (1, 8, 100)),
    (torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True), (1, 8, 99)),  # the last window ends at the padded end
    (torch.nn.AvgPool1d(3, ceil_mode=True), (1, 8, 8)),  # no padding: both divide by the part inside
]


@pytest.mark.parametrize("pool, shape", OVERFLOWING + DIVIDING_ALIKE,
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else type(v).__name__)
@pytest.mark.sampled(every=2)
def test_delegated_and_divided_like_pytorch(pool, shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    pte, summary = lower(pool, (x,))
    assert summary.delegated == summary.total, "an average pool stayed on ExecuTorch"
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))


def test_overflowing_window_inside_a_model():
    # The rewritten pool's output feeds further delegated ops and is returned too.
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True),
                                torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 5 * 5, 3)).eval()
    x = torch.randn(2, 2, 11, 11)
    pte, summary = lower(model, (x,))
    assert summary.delegated == summary.total
    assert_matches_eager(run(pte, (x,)), eager(model, (x,)))


def test_dynamic_sizes_stay_on_executorch():
    # Whether the last window overflows depends on the size: such a pool is not delegated.
    pool = torch.nn.AvgPool1d(3, 2, padding=1, ceil_mode=True).eval()
    x = torch.randn(1, 4, 100)
    program = exov.lower(pool, (x,), dynamic_shapes=({2: 2 * torch.export.Dim("half", min=2, max=100)},))
    assert any("avg_pool" in str(n.target) for n in program.exported_program().graph.nodes
               if n.op == "call_function")
    method = exov.load_method(program.buffer)
    for n in (100, 98, 8):
        x = torch.randn(1, 4, n)
        assert_matches_eager(list(method.execute([x])), [pool(x)])


def test_divisor_override_stays_on_executorch():
    # OpenVINO's converter refuses it ("do not support divisor_override input"):
    # delegated, it failed the whole lowering.
    pool = torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, divisor_override=2)
    x = torch.randn(1, 2, 10, 10)
    pte, summary = lower(pool, (x,))
    assert summary.delegated == 0
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))


def test_dynamic_batch_does_not_keep_pools_off_openvino():
    # Only the spatial sizes decide how the last window is divided.
    pool = torch.nn.AvgPool2d(3, 2, padding=1, ceil_mode=True).eval()
    x = torch.randn(2, 2, 9, 9)  # the last window ends at the padded end: no rewrite needed
    program = exov.lower(pool, (x,), dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=8)},))
    assert not any("avg_pool" in str(n.target) for n in program.exported_program().graph.nodes
                   if n.op == "call_function")
    method = exov.load_method(program.buffer)
    for batch in (2, 5, 1):
        x = torch.randn(batch, 2, 9, 9)
        assert_matches_eager(list(method.execute([x])), [pool(x)])


def test_one_element_kernel_list_means_every_dim():
    # OpenVINO's converter read avg_pool2d(x, [3]) as a 1-D kernel and failed the whole lowering.
    pool = torch.nn.AvgPool2d((3,), 2, padding=1, ceil_mode=True)
    x = torch.randn(1, 2, 10, 10)
    pte, summary = lower(pool, (x,))
    assert summary.delegated == summary.total
    assert_matches_eager(run(pte, (x,)), eager(pool, (x,)))


def test_avg_pool3d_left_to_executorch_is_named_in_a_warning():
    pool = torch.nn.AvgPool3d(3, 2, padding=1, divisor_override=2)
    with pytest.warns(UserWarning, match=r"\(avg_pool3d\) stays on ExecuTorch because of divisor_override.*"
                                         r"no avg_pool3d, so the program will fail to load"):
        lower(pool, (torch.randn(1, 2, 6, 6, 6),))
