"""Case tables that several test modules run: each operator alone (OPERATORS), reductions over all dims,
programs OpenVINO would compute differently (SEMANTICS, REMAINDERS), all-bool inputs (BOOL_OPS)."""

from __future__ import annotations

import torch

from exov_testing.programs import Fn

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
OPERATORS = {
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


ALL_DIMS = {
    "amax()": lambda x: x.amax(), "amin()": lambda x: x.amin(), "amax(dim=[])": lambda x: x.amax(dim=[]),
    "mean(dim=None)": lambda x: torch.mean(x, dim=None), "mean(dim=None, keepdim)": lambda x: torch.mean(
        x, dim=None, keepdim=True), "sum(dim=None)": lambda x: torch.sum(x, dim=None),
    "sum(dim=[])": lambda x: torch.sum(x, dim=[]),
}

SEMANTICS = {
    "int64 add past int32": (lambda i: i + 2**40, (torch.tensor([1, 2**31 - 1]),)),
    "int64 add wrapping int32": (lambda i: i + 1, (torch.tensor([1, 2**31 - 1]),)),
    "int64 mul": (lambda i: i * 100000, (torch.tensor([3, 70000]),)),
    "int64 sum": (lambda i: i.sum(), (torch.full((4,), 2**30),)),
    "widened int32 then mul": (lambda i: i.to(torch.int64) * 4, (torch.tensor([2**30, 5], dtype=torch.int32),)),
    "float to int64": (lambda x: x.long(), (torch.tensor([1e10, -3.5]),)),
    "uint8 add wraps": (lambda u: u + 200, (torch.tensor([100, 250], dtype=torch.uint8),)),
    "int8 add wraps": (lambda i: i + 100, (torch.tensor([100, -3], dtype=torch.int8),)),
    "int8 neg of -128": (lambda i: -i, (torch.tensor([-128, 5], dtype=torch.int8),)),
    "int32 floor division": (lambda a, b: a // b, (torch.tensor([-7, 7], dtype=torch.int32), torch.tensor([2, -2], dtype=torch.int32))),
    "int64 floor division": (lambda a, b: torch.div(a, b, rounding_mode="floor"), (torch.tensor([-7, 7]), torch.tensor([2, -2]))),
    "float64 precision": (lambda x: x * 1.0000001, (torch.tensor([1e300, 3.14159265358979], dtype=torch.float64),)),
}


REMAINDERS = {
    "int32 by a positive scalar": (lambda x: torch.remainder(x, 4), torch.int32),
    "int64 by a negative scalar": (lambda x: x % -3, torch.int64),
    "int8 by a tensor": (lambda x: torch.remainder(x, torch.tensor([4, -3, -5, 7, 3, -2], dtype=torch.int8)), torch.int8),
    "0-d int32": (lambda x: x[0] % 5, torch.int32),
}


B1 = torch.tensor([[True, False, True], [False, False, False]])
B2 = torch.tensor([[False, False, True], [True, False, False]])

BOOL_OPS = {
    "min": (lambda a: a.min(), (B1,)),
    "max": (lambda a: a.max(), (B1,)),
    "min(dim)": (lambda a: tuple(a.min(1)), (B1,)),
    "max(dim)": (lambda a: tuple(a.max(1)), (B1,)),
    "amin": (lambda a: a.amin(1), (B1,)),
    "amax": (lambda a: a.amax(0), (B1,)),
    "minimum": (torch.minimum, (B1, B2)),
    "maximum": (torch.maximum, (B1, B2)),
    "clamp": (lambda a: a.clamp(0, 1), (B1,)),
    "clamp(Tensor)": (lambda a, b: a.clamp(min=b), (B1, B2)),
    "sign": (torch.sign, (B1,)),
}
