"""Programs that return an input, a view or copy of one, a constant or a computed value, on every way to run them.

Before lowering/passes/returned_inputs.py, ``exov.lower(..., dynamic_shapes=...)`` of ``return x, x * 2``
gave zeros for both outputs, without an error (ExecuTorch 1.5.1 replaces the data of
an unplanned output, which was the input itself). Each case here runs with static and
dynamic shapes, one and several outputs, through ``exov.load_method`` (from the file),
``executorch.runtime``, ``OpenVINOBackend`` and the C++ runner, twice with different inputs.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager

from exov_testing.runner_tools import run_runner, save_inputs

pytestmark = [pytest.mark.own_runtime]


class Returns(torch.nn.Module):
    """Returns the outputs named in `kinds`, in order, for a float32 (n, 3) input x."""

    def __init__(self, *kinds: str):
        super().__init__()
        self.kinds = kinds
        self.register_buffer("table", torch.arange(6.0).reshape(2, 3) - 2.5)

    def forward(self, x):
        return tuple(self._value(kind, x) for kind in self.kinds)

    def _value(self, kind, x):
        if kind == "input":
            return x
        if kind == "view":  # a view that is not the whole tensor as it is
            return x.reshape(-1)
        if kind == "contiguous":  # export turns these into the input itself
            return x.contiguous()
        if kind == "same dtype":
            return x.to(torch.float32)
        if kind == "clone":
            return x.clone()
        if kind == "constant":
            return self.table
        if kind == "computed from constant":  # the partition reads the buffer another output returns
            return x * self.table.sum(0)
        if kind == "computed":  # delegated
            return torch.relu(x) * 2 + 1
        if kind == "computed outside":  # float64 stays on ExecuTorch's kernels
            return x.to(torch.float64) * 3
        raise AssertionError(kind)


KINDS = ["input", "view", "contiguous", "same dtype", "clone", "constant", "computed", "computed outside"]
CASES = [(kind,) for kind in KINDS] + [
    ("input", "computed"),
    ("computed", "input"),
    ("input", "input", "computed outside"),
    ("view", "clone", "constant", "computed"),
    ("constant", "computed from constant", "input"),
    ("same dtype", "computed outside", "contiguous"),
]
FIRST, SECOND = torch.randn(4, 3), torch.randn(6, 3)


def _dynamic(dynamic: bool):
    return {"x": {0: torch.export.Dim("n", min=2, max=8)}} if dynamic else None


def _check(outputs, model, x, how):
    outputs = list(outputs)
    assert_matches_eager(outputs, eager(model, (x,)))
    assert any(o.abs().sum() > 0 for o in outputs), f"{how}: every output is zero"


@pytest.fixture(params=[False, True], ids=["static", "dynamic"])
def dynamic(request):
    return request.param


@pytest.mark.parametrize("kinds", CASES, ids=["+".join(c) for c in CASES])
@pytest.mark.sampled(every=2)
def test_lowered_program_returns_eagers_values_every_way(kinds, dynamic, tmp_path):
    model = Returns(*kinds).eval()
    pte = tmp_path / "model.pte"
    pte.write_bytes(exov.lower(model, (FIRST,), dynamic_shapes=_dynamic(dynamic)).buffer)
    calls = [FIRST, SECOND] if dynamic else [FIRST, FIRST * -2]

    method = exov.load_method(pte)
    for x in calls:
        _check(method.execute([x]), model, x, "exov.load_method")

    from executorch.runtime import Runtime

    plain = Runtime.get().load_program(pte).load_method("forward")
    for x in calls:
        _check(plain.execute([x]), model, x, "executorch.runtime")

    if sys.platform != "win32":
        library = exov.load_openvino()["path"]
        for call, x in enumerate(calls):
            folder = tmp_path / f"call{call}"
            folder.mkdir()
            result = run_runner(pte, *save_inputs([x], folder), "--output-dir", folder / "out",
                                "--openvino-lib", library)
            assert result.returncode == 0, result.stderr[-3000:]
            got = [torch.from_numpy(np.load(folder / "out" / f"output_{i}.npy")) for i in range(len(kinds))]
            _check(got, model, x, "the runner")


@pytest.mark.parametrize("kinds", [("input",), ("input", "computed"), ("view", "clone", "constant", "computed")],
                         ids=lambda kinds: "+".join(kinds))
@pytest.mark.sampled(every=2)
def test_openvino_backend_returns_eagers_values(kinds, dynamic, tmp_path):
    model = Returns(*kinds).eval()
    backend = exov.OpenVINOBackend().build(model, (FIRST,), dynamic_shapes=_dynamic(dynamic), cache_dir=tmp_path)
    for x in ([FIRST, SECOND] if dynamic else [FIRST, FIRST + 1]):
        _check(torch.utils._pytree.tree_leaves(backend.infer(x)), model, x, "OpenVINOBackend")


def test_the_standard_lowering_path_returns_an_input(dynamic):
    from executorch.exir import to_edge_transform_and_lower

    model = Returns("input", "computed").eval()
    exported = torch.export.export(model, (FIRST,), dynamic_shapes=_dynamic(dynamic))
    edge = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner()])
    method = exov.load_method(edge.to_executorch().buffer)
    for x in ([FIRST, SECOND] if dynamic else [FIRST]):
        _check(method.execute([x]), model, x, "to_edge_transform_and_lower")
