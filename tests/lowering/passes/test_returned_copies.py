"""Returned copies: OpenVINO's converter turns a copy into nothing, yet every copy must come out right.

Before conversion.py returned each copy's source once and restored the copies
as separate OpenVINO results, ``(y, y.clone())`` failed to lower and a
returned ``x.clone()`` was the input's own tensor.
"""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, lower

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]

COPIES = {
    "clone of an input": (lambda x: x.clone(), (torch.randn(2, 3),)),
    "full slice of an input": (lambda x: x[:, :], (torch.randn(2, 3),)),
    "to() copy of a computed value": (lambda x: (x * 2).to(torch.float32, copy=True), (torch.randn(2, 3),)),
    "clone of a computed value": (lambda x: (x * 2).clone(), (torch.randn(2, 3),)),
    "two clones of one input": (lambda x: (x.clone(), x.clone()), (torch.randn(2, 3),)),
    "two clones of one value": (lambda x: (lambda y: (y.clone(), y.clone()))(x.relu()), (torch.randn(2, 3),)),
    "a value and its clone": (lambda x: (lambda y: (y, y.clone()))(x * 2), (torch.randn(2, 3),)),
    "a value and its full slice": (lambda x: (lambda y: (y[:, :], y))(x - 1), (torch.randn(2, 3),)),
    "an input, its clone and a computed value": (lambda x: (x.clone(), x * 3, x[:]), (torch.randn(2, 3),)),
    "int32 value and its clone": (lambda i: (lambda y: (y, y.clone()))(i + 7),
                                  (torch.tensor([[1, -5, 2**30]], dtype=torch.int32),)),
    "channels_last copy": (lambda x: (x * 2).clone(memory_format=torch.channels_last), (torch.randn(1, 2, 3, 3),)),
}


@pytest.mark.parametrize("case", list(COPIES))
@pytest.mark.sampled(every=2)
def test_returned_copy_matches_eager_and_is_its_own_buffer(case):
    fn, inputs = COPIES[case]
    model = Fn(fn)
    pte, summary = lower(model, inputs)
    assert summary.delegated >= 1
    method = exov.load_method(pte)
    original = [x.clone() for x in inputs]
    for _ in range(2):
        outputs = list(method.execute(list(inputs)))
        assert_matches_eager(outputs, eager(model, inputs))
    # Writing into one output changes no other output and no input.
    expected = [o.clone() for o in outputs]
    pointers = {o.data_ptr() for o in outputs} | {x.data_ptr() for x in inputs}
    assert len(pointers) == len(outputs) + len(inputs)
    outputs[0].fill_(0)
    for i, (o, e) in enumerate(zip(outputs[1:], expected[1:]), start=1):
        assert torch.equal(o, e), f"output {i} changed when output 0 was written"
    for x, before in zip(inputs, original):
        assert torch.equal(x, before)


class ReturnsBufferCopy(torch.nn.Module):
    SIZE = 262144  # float32: 1 MiB

    def __init__(self, also_on_cpu: bool):
        super().__init__()
        self.register_buffer("table", torch.randn(self.SIZE))
        self.also_on_cpu = also_on_cpu

    def forward(self, x):
        outputs = (self.table.clone(), x + 1)
        # float64 stays on ExecuTorch's kernels: the buffer is read outside the delegate too.
        return outputs + ((self.table.double(),) if self.also_on_cpu else ())


@pytest.mark.parametrize("also_on_cpu", [False, True])
def test_copy_of_a_constant_is_right_and_stored_once(also_on_cpu):
    model = ReturnsBufferCopy(also_on_cpu).eval()
    inputs = (torch.randn(3),)
    pte, _ = lower(model, inputs)
    assert_matches_eager(list(exov.load_method(pte).execute(list(inputs))), eager(model, inputs))
    # Measured: 2.004 MiB when the delegate kept its own copy of the buffer, 1.004 MiB now.
    assert len(pte) < 1.2 * ReturnsBufferCopy.SIZE * 4, f"the .pte holds {len(pte)} bytes"
