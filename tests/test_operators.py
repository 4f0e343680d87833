"""Each operator is lowered alone, must be delegated entirely, and must match eager in float32."""

from __future__ import annotations

import pytest
import torch

from conftest import Fn, check_fully_delegated

pytestmark = [pytest.mark.older_openvino, pytest.mark.aarch64]

torch.manual_seed(0)


class AddMM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(7))
        self.weight = torch.nn.Parameter(torch.randn(5, 7))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight, beta=0.5, alpha=2.0)


def r(*shape):
    return torch.randn(*shape)


# name -> (module factory, list of input tuples for two or more shapes)
CASES = {
    "add": (lambda: Fn(torch.add), [(r(8), r(8)), (r(2, 3, 4), r(3, 4))]),
    "sub": (lambda: Fn(torch.sub), [(r(8), r(8)), (r(2, 3, 4), r(2, 1, 4))]),
    "mul": (lambda: Fn(torch.mul), [(r(8), r(8)), (r(4, 5), r(5))]),
    "div": (lambda: Fn(torch.div), [(r(8), r(8).abs() + 0.5), (r(3, 4), r(3, 4).abs() + 0.5)]),
    "linear": (lambda: torch.nn.Linear(256, 256), [(r(4, 256),), (r(2, 3, 256),)]),
    "addmm": (lambda: AddMM(), [(r(3, 5),), (r(9, 5),)]),
    "matmul": (lambda: Fn(torch.matmul), [(r(4, 6), r(6, 3)), (r(2, 4, 6), r(2, 6, 5))]),
    "conv2d": (lambda: torch.nn.Conv2d(3, 8, 3, padding=1), [(r(1, 3, 16, 16),), (r(2, 3, 9, 7),)]),
    "relu": (lambda: torch.nn.ReLU(), [(r(10),), (r(2, 3, 4),)]),
    "gelu": (lambda: torch.nn.GELU(), [(r(10),), (r(2, 3, 4),)]),
    "sigmoid": (lambda: torch.nn.Sigmoid(), [(r(10),), (r(2, 3, 4),)]),
    "softmax": (lambda: torch.nn.Softmax(dim=-1), [(r(10),), (r(2, 3, 17),)]),
    "layer_norm": (lambda: torch.nn.LayerNorm(16), [(r(4, 16),), (r(2, 3, 16),)]),
    "batch_norm": (lambda: _trained_batch_norm(), [(r(2, 4, 5, 5),), (r(1, 4, 3, 8),)]),
    "mean": (lambda: Fn(lambda x: x.mean(dim=-1)), [(r(10),), (r(2, 3, 4),)]),
    "sum": (lambda: Fn(lambda x: x.sum(dim=0)), [(r(10),), (r(2, 3, 4),)]),
    "permute": (lambda: Fn(lambda x: x.permute(2, 0, 1) * 1.0), [(r(2, 3, 4),), (r(5, 1, 6),)]),
    "view": (lambda: Fn(lambda x: x.view(-1, 4) + 1), [(r(2, 3, 4),), (r(8, 2),)]),
    "reshape": (lambda: Fn(lambda x: x.reshape(x.shape[0], -1) * 2), [(r(2, 3, 4),), (r(6, 5, 1),)]),
    "cat": (lambda: Fn(lambda x, y: torch.cat([x, y, x], dim=1)), [(r(2, 3), r(2, 5)), (r(1, 2, 4), r(1, 3, 4))]),
    "max_pool2d": (lambda: torch.nn.MaxPool2d(2), [(r(1, 3, 8, 8),), (r(2, 2, 7, 6),)]),
    "avg_pool2d": (lambda: torch.nn.AvgPool2d(3, stride=2), [(r(1, 3, 9, 9),), (r(2, 2, 7, 11),)]),
    "embedding": (lambda: torch.nn.Embedding(50, 16),
                  [(torch.tensor([[1, 4, 49], [0, 2, 7]]),), (torch.arange(10).reshape(5, 2),)]),
}


def _trained_batch_norm():
    bn = torch.nn.BatchNorm2d(4)
    with torch.no_grad():  # non-trivial running statistics, as after training
        bn.running_mean.copy_(torch.linspace(-1, 1, 4))
        bn.running_var.copy_(torch.linspace(0.5, 2, 4))
        bn.weight.copy_(torch.linspace(0.5, 1.5, 4))
        bn.bias.copy_(torch.linspace(-0.2, 0.2, 4))
    return bn.eval()


@pytest.mark.parametrize(
    "name,shape_index",
    [(name, i) for name, (_, shapes) in CASES.items() for i in range(len(shapes))],
)
def test_operator_matches_eager(name, shape_index):
    factory, shapes = CASES[name]
    torch.manual_seed(shape_index)
    check_fully_delegated(factory(), shapes[shape_index])


ALL_DIMS = {
    "amax()": lambda x: x.amax(), "amin()": lambda x: x.amin(), "amax(dim=[])": lambda x: x.amax(dim=[]),
    "mean(dim=None)": lambda x: torch.mean(x, dim=None), "mean(dim=None, keepdim)": lambda x: torch.mean(
        x, dim=None, keepdim=True), "sum(dim=None)": lambda x: torch.sum(x, dim=None),
    "sum(dim=[])": lambda x: torch.sum(x, dim=[]),
}


@pytest.mark.parametrize("op", ALL_DIMS)
def test_reduction_over_all_dims(op):
    """OpenVINO 2025.4.1's converter failed on reductions without a dim list (``x.amax()``,
    ``torch.mean(x, dim=None)``: "Got less inputs 1 than expected 2"), and the whole lowering with it."""
    check_fully_delegated(Fn(ALL_DIMS[op]), (torch.randn(3, 4),))


def test_permute_with_negative_dims():
    """OpenVINO 2025.4.1's converter failed on ``x.permute(-1, 0, -2)``."""
    check_fully_delegated(Fn(lambda x: x.permute(-1, 0, -2)), (torch.randn(2, 3, 4),))
