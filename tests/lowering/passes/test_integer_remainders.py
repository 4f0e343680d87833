"""integer_remainders: integer remainders take the divisor's sign, as in PyTorch, through ExecuTorch's kernels; what
the rewrite cannot reach is refused at lowering."""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.cases import REMAINDERS
from exov_testing.programs import assert_matches_eager, eager, OneInput, run

pytestmark = [pytest.mark.own_runtime]


@pytest.mark.parametrize("case", list(REMAINDERS))
def test_integer_remainder_takes_the_divisors_sign(case):
    # ExecuTorch 1.5.1's portable kernel gives C's %: remainder(-7, 4) == -3 (eager 1).
    fn, dtype = REMAINDERS[case]
    info = torch.iinfo(dtype)
    x = torch.tensor([-7, -1, 7, 0, info.min + 5, info.max], dtype=dtype)
    model = OneInput(fn)
    pte = exov.lower(model, (x,)).buffer
    assert_matches_eager(run(pte, (x,)), eager(model, (x,)))


class InPlaceRemainder(torch.nn.Module):
    def forward(self, x):
        y = x * 1
        y %= 4
        return y


class RemainderInBranches(torch.nn.Module):
    def forward(self, p, x):
        return torch.cond(p.sum() > 0, lambda x: x % 4, lambda x: x % -3, (x,))


@pytest.mark.parametrize("model, inputs", [
    (InPlaceRemainder(), (torch.tensor([-7, 7], dtype=torch.int32),)),
    (RemainderInBranches(), (torch.ones(2), torch.tensor([-7, 7], dtype=torch.int32))),
], ids=["in place", "in torch.cond"])
def test_an_integer_remainder_lowering_cannot_rewrite_is_refused(model, inputs):
    # Left as it is, ExecuTorch gave [-3, 3] for [-7, 7] % 4 (eager [1, 3]).
    with pytest.raises(ValueError, match="is an integer remainder"):
        exov.lower(model, inputs)
