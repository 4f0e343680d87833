"""Max pools over values that cannot hold -inf find their NaN windows with an average pool (nan_propagation.py).

Without -inf, a window's sum is NaN exactly where the window holds NaN (+inf alone sums to +inf, and two
near-FLT_MAX values overflow to +inf, not NaN). So after a relu, a clamp from below, a sigmoid or a SiLU, exact mode
pools the input once more as an average instead of writing and pooling an IsNaN mask of it. The windows
must be the max pool's own for every kernel, stride, padding and ceil_mode, in 2-d and 3-d; where the pool's
indices are read, or it dilates, the mask form stays. Every case is compared with eager PyTorch: NaN in the
same places, the same values elsewhere.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import executorch_openvino as exov
from exov_testing.programs import Fn, partition_operation_types, run, same_special_values

NAN, INF = float("nan"), float("inf")


def _image() -> torch.Tensor:
    """(1, 2, 7, 9): NaN in two corners and inside, +inf, -inf, a block of -inf, two values near FLT_MAX."""
    torch.manual_seed(0)
    x = torch.randn(1, 2, 7, 9) * 3
    x[0, 0, 0, 0] = x[0, 1, 6, 8] = x[0, 0, 3, 4] = NAN
    x[0, 0, 1, 1] = x[0, 1, 0, 5] = INF
    x[0, 1, 2, 2] = -INF
    x[0, 0, 4:7, 6:9] = -INF
    x[0, 1, 4, 0] = x[0, 1, 4, 1] = 3e38
    return x


ACTIVATIONS = {
    "relu": torch.relu,
    "clamp_min": lambda x: torch.clamp(x, min=-1.5),
    "relu6": F.relu6,
    "sigmoid": torch.sigmoid,
    "silu": F.silu,  # x * sigmoid(x) once decomposed: never below -0.28, and NaN for -inf
}
POOLS = {
    "k2": dict(kernel_size=2),
    "k2_s1": dict(kernel_size=2, stride=1),
    "k3_s2_p1": dict(kernel_size=3, stride=2, padding=1),
    "k3_s2_p1_ceil": dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    "k3_s3_ceil": dict(kernel_size=3, stride=3, ceil_mode=True),
    "k2x3_s1x2_p1x0": dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0)),
}


# Every pool after a relu, every activation before the padded ceil_mode pool.
CASES = [("relu", pool) for pool in POOLS] + [(a, "k3_s2_p1_ceil") for a in ACTIVATIONS if a != "relu"]


@pytest.mark.parametrize("activation, pool", CASES)
@pytest.mark.sampled(every=2)
def test_a_pool_after_an_activation_without_minus_inf_finds_nan_by_its_sums(activation, pool):
    module = Fn(lambda x: F.max_pool2d(ACTIVATIONS[activation](x), **POOLS[pool]))
    x = _image()
    program = exov.lower(module, (x,))
    types = partition_operation_types(program)
    assert types["AvgPool"] == 1 and types["MaxPool"] == 1, types  # no second MaxPool of a mask
    expected = module(x)
    assert torch.isnan(expected).any()
    for inputs in (x, -x, x.nan_to_num(nan=0.5)):
        actual, expected = run(program.buffer, (inputs,))[0], module(inputs)
        assert same_special_values(actual, expected), (activation, pool, actual, expected)


def test_a_3d_pool_with_ceil_mode_finds_nan_by_its_sums():
    module = Fn(lambda x: F.max_pool3d(torch.relu(x.reshape(1, 1, 2, 7, 9)), 2, ceil_mode=True))
    x = _image()
    program = exov.lower(module, (x,))
    assert partition_operation_types(program)["AvgPool"] == 1
    for inputs in (x, -x):
        assert same_special_values(run(program.buffer, (inputs,))[0], module(inputs))


CONV_BLOCKS = {
    # The bench's CNN block. The image's +inf and -inf give the convolution's result infinities of both
    # signs and NaN (inf - inf); overflowing finite sums are left out, as their order differs between
    # OpenVINO and PyTorch (+inf against NaN) before any pool.
    "conv_relu_pool": lambda conv: lambda x: F.max_pool2d(torch.relu(conv(x)), 2),
    "conv_relu_pool_padded": lambda conv: lambda x: F.max_pool2d(torch.relu(conv(x)), 3, 2, 1, ceil_mode=True),
}


@pytest.mark.parametrize("name", list(CONV_BLOCKS))
def test_convolution_relu_pool_blocks_match_eager(name):
    torch.manual_seed(1)
    module = Fn(CONV_BLOCKS[name](torch.nn.Conv2d(2, 3, 3, padding=1))).eval()
    x = _image()
    x[0, 1, 4, 0] = x[0, 1, 4, 1] = 1.0  # no finite overflow
    program = exov.lower(module, (x,))
    for inputs in (x, x.nan_to_num(nan=0.0, posinf=INF, neginf=-INF), -x):
        actual, expected = run(program.buffer, (inputs,))[0], module(inputs)
        assert same_special_values(actual, expected), (name, actual, expected)
        assert torch.isinf(expected).any() or torch.isnan(expected).any()


# Found by a tester: two values of -3e38 sum to -inf, which with +inf makes a NaN that eager does not
# have (eager: +inf); in float16 -60000 does so. And avg_pool3d refuses an input smaller than its kernel,
# which max_pool3d pads.
MASK_FORMS = {
    "indices_read": (lambda x: F.max_pool2d(torch.relu(x), 2, return_indices=True), torch.float32),
    "dilated": (lambda x: F.max_pool2d(torch.relu(x), 2, dilation=2), torch.float32),
    "may_hold_minus_inf": (lambda x: F.max_pool2d(x * 2, 2), torch.float32),
    "sums_may_reach_minus_inf": (lambda x: F.max_pool2d(torch.clamp(x, min=-3e38), 2), torch.float32),
    "float16_sums_may_reach_minus_inf": (lambda x: F.max_pool2d(torch.clamp(x, min=-60000.0), 2), torch.float16),
    "3d_kernel_past_the_input": (lambda x: F.max_pool3d(torch.relu(x.reshape(1, 2, 7, 9, 1)), (1, 1, 4), 1,
                                                         (0, 0, 2)), torch.float32),
}


@pytest.mark.parametrize("case", list(MASK_FORMS))
@pytest.mark.sampled(every=2)
def test_other_pools_keep_the_mask_form(case):
    fn, dtype = MASK_FORMS[case]
    module = Fn(fn)
    x = _image().clamp(-60000, 60000).to(dtype) if dtype == torch.float16 else _image()
    x[0, 0, 0, 1] = x[0, 0, 1, 0] = -3e38 if dtype == torch.float32 else -60000.0
    x[0, 0, 1, 1] = INF  # in the same 2x2 window
    program = exov.lower(module, (x,))
    assert partition_operation_types(program)["AvgPool"] == 0
    actual, expected = run(program.buffer, (x,)), module(x)
    for a, e in zip(actual, expected if isinstance(expected, tuple) else (expected,)):
        assert (torch.equal(a, e) if a.dtype == torch.int64 else same_special_values(a, e)), (case, a, e)
