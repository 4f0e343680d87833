"""NaN and infinities come out of delegated min/max-type ops as they do in eager PyTorch.

OpenVINO's CPU plugin drops NaN in these ops (``relu(nan) == 0``); with the
default ``numerics="exact"`` the delegate restores it (nan_propagation.py), and
``numerics="fast"`` keeps OpenVINO's answer (the control below).
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

import executorch_openvino as exov
from exov_testing.programs import lower, partition_operation_types, run, same_special_values

NAN, INF = float("nan"), float("inf")
# Rows: a NaN among numbers, +inf, all -inf, a plain row, and -inf beside numbers.
X = torch.tensor([
    [1.0, NAN, 3.0, -2.0, 0.5, 4.0],
    [INF, -1.0, 2.0, 0.5, -3.0, 1.0],
    [-INF, -INF, -INF, -INF, -INF, -INF],
    [0.25, -0.5, 1.5, 2.0, -1.0, 0.0],
    [-INF, 2.0, 1.0, -0.5, 3.0, 0.125],
])

OPS = {
    "relu": lambda x: torch.relu(x),
    "clamp": lambda x: torch.clamp(x, -1.0, 1.0),
    "clamp_min": lambda x: torch.clamp(x, min=0.0),
    "hardtanh": lambda x: F.hardtanh(x),
    "relu6": lambda x: F.relu6(x),
    "maximum": lambda x: torch.maximum(x, torch.zeros_like(x)),
    "minimum_broadcast": lambda x: torch.minimum(x, x[:1]),
    "amax": lambda x: x.amax(dim=1),
    "amax_all_keepdim": lambda x: x.amax(dim=(0, 1), keepdim=True),
    "amin": lambda x: x.amin(dim=0),
    "max_pool1d": lambda x: F.max_pool1d(x.unsqueeze(0), 2),
    "max_pool2d_padded": lambda x: F.max_pool2d(x.reshape(1, 1, 5, 6), 3, stride=2, padding=1),
    "max_pool3d": lambda x: F.max_pool3d(x.reshape(1, 1, 5, 2, 3), 2, ceil_mode=True),
    # A pool after a clamp from below takes the cheaper rewrite (no -inf windows to look for).
    "relu_max_pool2d": lambda x: F.max_pool2d(torch.relu(x.reshape(1, 1, 5, 6)), 2, ceil_mode=True),
    "clamp_max_pool2d": lambda x: F.max_pool2d(torch.clamp(x.reshape(1, 1, 5, 6), min=-1.0), 2, ceil_mode=True),
    "sigmoid_max_pool2d": lambda x: F.max_pool2d(torch.sigmoid(x.reshape(1, 1, 5, 6)), 3, stride=1, padding=1),
    "clamp_above_max_pool2d": lambda x: F.max_pool2d(torch.clamp(x.reshape(1, 1, 5, 6), max=1.0), 2),
    # min finite but max -inf: every value is -inf (found by a tester: the shortcut gave -3.4e38)
    "clamp_to_minus_inf_max_pool2d": lambda x: F.max_pool2d(torch.clamp(x.reshape(1, 1, 5, 6), 0.0, -INF), 2),
    "softmax": lambda x: torch.softmax(x, dim=1),
    "softmax_dim0": lambda x: torch.softmax(x, dim=0),
    "log_softmax": lambda x: torch.log_softmax(x, dim=-1),
}


class Op(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.sampled(every=2)
def test_nan_and_infinities_propagate_as_in_eager(name):
    pte, summary = lower(Op(OPS[name]), (X,))
    assert summary.delegated == summary.total, f"{name} was not delegated"
    expected = OPS[name](X)
    assert torch.isnan(expected).any()  # the case does exercise NaN
    actual = run(pte, (X,))[0]
    assert same_special_values(actual, expected), f"{name}: eager {expected.flatten().tolist()}, got {actual.flatten().tolist()}"
    finite = X.nan_to_num(nan=0.5, posinf=5.0, neginf=-5.0)
    assert same_special_values(run(pte, (finite,))[0], OPS[name](finite))  # and numbers stay what they were


@pytest.mark.parametrize("name", ["relu", "amax", "max_pool2d_padded", "softmax"])
def test_numerics_fast_leaves_openvinos_answer(name):
    # The control: without the rewrite OpenVINO drops the NaN, so the test above can fail.
    pte, _ = lower(Op(OPS[name]), (X,), partitioner=exov.OpenvinoPartitioner(numerics="fast"))
    assert not same_special_values(run(pte, (X,))[0], OPS[name](X))


def test_integer_inputs_are_left_alone():
    x = torch.tensor([[3, -2, 7], [0, -9, 4]], dtype=torch.int32)
    fn = lambda t: torch.clamp(torch.relu(t), max=5).amax(dim=1)  # noqa: E731
    pte, summary = lower(Op(fn), (x,))
    actual = run(pte, (x,))[0]
    assert actual.dtype == torch.int32 and torch.equal(actual, fn(x))


class _ProductsThenRelu(torch.nn.Module):
    """relu after a linear layer and after a convolution, then a max pool: the mlp and cnn blocks."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(6, 4)
        self.conv = torch.nn.Conv2d(1, 2, 3, padding=1, bias=False)

    def forward(self, x):
        image = torch.relu(self.conv(x.reshape(1, 1, 5, 6)))
        return torch.relu(self.linear(x)), F.max_pool2d(image, 2, ceil_mode=True), torch.relu(x @ self.linear.weight.T)


def test_relu_after_a_product_is_exact_in_a_form_openvino_fuses():
    # relu of a linear layer's or a matmul's result becomes abs(elu(x, -0.0)), which OpenVINO fuses into
    # the product as it fuses its Relu, instead of a Select after it. Same answers as eager in every form:
    # NaN where eager has NaN, +0.0 (not -0.0) for negatives, -inf, zero rows and -0.0 inputs.
    x = X.clone()
    x[3] = torch.tensor([0.0, -0.0, -0.0, 0.0, -0.0, 0.0])  # products of zeros: +0.0 in both engines
    module = _ProductsThenRelu().eval()
    program = exov.lower(module, (x,))
    types = partition_operation_types(program)
    # The convolution's relu feeds a max pool, whose NaN rewrite reads it twice: OpenVINO could not fuse it
    # there, and it keeps the where(x < 0, 0, x) form.
    assert types["Elu"] == types["Abs"] == 2 and types["Less"] == 1, types
    for inputs in (x, x.nan_to_num(nan=0.5, posinf=5.0, neginf=-5.0), -x):
        actual, expected = run(program.buffer, (inputs,)), module(inputs)
        for a, e in zip(actual, expected):  # sums of products: float32 rounding apart (bf16 is ~1e-2 off)
            assert torch.equal(torch.isnan(a), torch.isnan(e)) and a.dtype == e.dtype, (inputs, a, e)
            assert torch.allclose(a, e, rtol=1e-5, atol=1e-6, equal_nan=True), (inputs, a, e)
            assert torch.equal(torch.signbit(a[a == 0]), torch.signbit(e[a == 0])), (a, e)
        assert torch.isnan(expected[0]).any() or inputs is not x


class _BatchNormRelu(torch.nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.norm = torch.nn.BatchNorm2d(2)
        with torch.no_grad():
            self.norm.bias.copy_(torch.tensor(bias))
            self.norm.weight.copy_(torch.tensor([1.5, 0.5]))

    def forward(self, x):
        return torch.relu(self.norm(x.reshape(1, 2, 3, 5)))


@pytest.mark.parametrize("bias, fused", [([0.0, 0.25], True), ([0.0, -0.0], False)])
def test_relu_after_a_batch_norm_is_fused_unless_its_bias_holds_minus_zero(bias, fused):
    # A batch norm's output is -0.0 only where its bias is (and its input is -0.0): with a -0.0 bias the
    # relu keeps the where() form, which keeps the -0.0 that eager gives there.
    module = _BatchNormRelu(bias).eval()
    x = X.clone()
    x[3] = torch.tensor([0.0, -0.0, -0.0, 0.0, -0.0, 0.0])
    with warnings.catch_warnings(record=True) as caught:  # the -0.0 bias is a constant OpenVINO flushes
        warnings.simplefilter("always")
        program = exov.lower(module, (x,))
    flushed = [w for w in caught if "flushes subnormal and -0.0 constant values" in str(w.message)]
    assert len(flushed) == (0 if fused else 1), [str(w.message) for w in caught]
    types = partition_operation_types(program)
    assert (types["Elu"], types["Less"]) == ((1, 0) if fused else (0, 1)), types
    for inputs in (x, -x):
        actual, expected = run(program.buffer, (inputs,))[0], module(inputs)
        assert torch.equal(torch.isnan(actual), torch.isnan(expected))
        assert torch.allclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True), (actual, expected)
        assert torch.equal(torch.signbit(actual[actual == 0]), torch.signbit(expected[actual == 0])), (actual, expected)
    assert fused or torch.signbit(module(x)[module(x) == 0]).any()  # the -0.0 bias does give -0.0 in eager


class _AfterLinear(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(6, 4)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.linear(x))


# Found by a tester: with the fused form, OpenVINO fuses a negation or scaling after it too, as alpha * x + beta,
# which gives +0.0 for -(+0.0); and clamp(min=-0.0) is no relu (negatives give the bound, -0.0).
SIGN_OF_ZERO_CASES = {
    "negated": lambda y: -torch.relu(y),
    "scaled_by_minus_two": lambda y: torch.relu(y) * -2.0,
    "clamp_min_minus_zero": lambda y: torch.clamp(y, min=-0.0),
}


@pytest.mark.parametrize("name", list(SIGN_OF_ZERO_CASES))
def test_relu_after_a_product_keeps_the_zero_sign_that_what_reads_it_makes(name):
    module = _AfterLinear(SIGN_OF_ZERO_CASES[name]).eval()
    expected = module(X)
    zeros = expected == 0
    assert torch.signbit(expected[zeros]).all() and zeros.sum() > 2  # the case does give -0.0
    actual = run(exov.lower(module, (X,)).buffer, (X,))[0]
    assert torch.equal(torch.isnan(actual), torch.isnan(expected))
    assert torch.equal(torch.signbit(actual[zeros]), torch.signbit(expected[zeros])), (actual, expected)


class _ProductsReluQuantize(torch.nn.Module):
    """relu of a linear layer and of a convolution, each read by a quantize only (an 8-bit program's pattern)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(6, 5)
        self.conv = torch.nn.Conv2d(1, 3, 1)

    def forward(self, x):
        from torch.ao.quantization.fx._decomposed import quantized_decomposed_lib  # noqa: F401 - the ops

        q = torch.ops.quantized_decomposed
        results = []
        for y in (torch.relu(self.linear(x)), torch.relu(self.conv(x.reshape(1, 1, 5, 6)))):
            codes = q.quantize_per_tensor.default(y, 0.1, 3, 0, 255, torch.uint8)
            results.append(q.dequantize_per_tensor.default(codes, 0.1, 3, 0, 255, torch.uint8))
        return tuple(results)


def test_relu_read_by_a_quantize_is_fused_and_gives_eagers_codes_for_nan():
    # A quantize reads +0.0 and -0.0 alike, so the fused form serves it: the 8-bit layers around it then run
    # as in numerics="fast" (no f32 island). The relu's NaN reaches OpenVINO's quantize in both forms: eager
    # gives it code 0 (here -0.3 once dequantized), OpenVINO quant_min, the same for this uint8 quantize
    # (an int8 one differs in both forms: docs/user-guide/numerics.md).
    module = _ProductsReluQuantize().eval()
    program = exov.lower(module, (X,))
    types = partition_operation_types(program)
    assert types["Elu"] == types["Abs"] == 2 and types["Select"] == 0, types
    for inputs in (X, -X):
        for actual, expected in zip(run(program.buffer, (inputs,)), module(inputs)):
            assert same_special_values(actual, expected), (inputs, actual, expected)
    assert bool((module(X)[1] == -0.3).any())  # the case does quantize NaN


class _ReluQuantize(torch.nn.Module):
    def __init__(self, zero_point, low, high, dtype):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(1, 3, 1)
        self.args = (0.1, zero_point, low, high, dtype)

    def forward(self, x):
        from torch.ao.quantization.fx._decomposed import quantized_decomposed_lib  # noqa: F401 - the ops

        q = torch.ops.quantized_decomposed
        codes = q.quantize_per_tensor.default(torch.relu(self.conv(x.reshape(1, 1, 5, 6))), *self.args)
        return q.dequantize_per_tensor.default(codes, *self.args)


@pytest.mark.parametrize("zero_point, low, high, dtype, plain", [
    (0, 0, 255, torch.uint8, True),  # NNCF's quantize after a relu: OpenVINO's own Relu gives eager's codes
    (0, -128, 127, torch.int8, False),  # OpenVINO quantizes NaN to quant_min -128, eager to 0: the fused form
])
def test_relu_before_a_quantize_from_code_zero_stays_openvinos_relu(zero_point, low, high, dtype, plain):
    module = _ReluQuantize(zero_point, low, high, dtype).eval()
    program = exov.lower(module, (X,))
    types = partition_operation_types(program)
    # OpenVINO's conversion may fold the plain Relu into the FakeQuantize (its input_low 0 clamps too).
    assert (types["Elu"], types["Select"], types["Less"]) == ((0, 0, 0) if plain else (1, 0, 0)), types
    for inputs in (X, -X):
        actual, expected = run(program.buffer, (inputs,))[0], module(inputs)
        assert torch.isnan(module.conv(inputs.reshape(1, 1, 5, 6))).any()  # NaN reaches the relu
        if plain:  # eager's codes exactly, NaN's included
            assert same_special_values(actual, expected), (inputs, actual, expected)
