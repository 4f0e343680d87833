"""Runs the programs ``record_programs.py`` recorded, where OpenVINO comes only from an install tree.

    EXOV_RECORD_DIR=... pytest tests/deployment/replay_programs.py -p no:cacheprovider

Each recorded method is loaded from its ``.pte`` file (as a deployment loads
it) with ``executorch.runtime`` and called with the recorded inputs, in the
recorded order, in one loaded method. Every output must equal the recorded
one exactly (shape, dtype and bits: the same program on the same OpenVINO
release and CPU), every call that failed must fail again, and a method whose
load failed must fail to load. The recording side already compared those
outputs with eager PyTorch.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import torch

import executorch_openvino as exov

ROOT = Path(os.environ.get("EXOV_RECORD_DIR", "")) if os.environ.get("EXOV_RECORD_DIR") else None
RECORDS = sorted((ROOT / "methods").glob("*.pt")) if ROOT else []


def test_openvino_comes_only_from_the_install_tree():
    assert importlib.util.find_spec("openvino") is None, "the openvino Python package is installed here"
    loaded = exov.load_openvino()
    assert loaded["source"] == "INTEL_OPENVINO_DIR install tree", loaded
    assert Path(loaded["path"]).is_relative_to(Path(os.environ["INTEL_OPENVINO_DIR"]))


def test_something_was_recorded():
    assert ROOT is not None, "set EXOV_RECORD_DIR to the folder record_programs.py wrote"
    delegated = [p for p in (ROOT / "programs").glob("*.pte") if exov.BACKEND_ID.encode() in p.read_bytes()]
    assert len(delegated) >= 100, f"only {len(delegated)} recorded programs with an OpenVINO delegate in {ROOT}"


# Same bits: integers of the dtype's width (so -0.0 differs from 0.0, inf from float max, NaN payloads count).
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _assert_same(actual, expected, where: str) -> None:
    assert len(actual) == len(expected), f"{where}: {len(actual)} outputs, recorded {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        if not isinstance(e, torch.Tensor):
            assert a == e, f"{where}, output {i}: {a!r}, recorded {e!r}"
            continue
        assert (a.dtype, a.shape) == (e.dtype, e.shape), \
            f"{where}, output {i}: {a.dtype}{tuple(a.shape)}, recorded {e.dtype}{tuple(e.shape)}"
        bits = _BITS[e.element_size()]
        assert torch.equal(a.contiguous().view(bits), e.contiguous().view(bits)), \
            f"{where}, output {i} differs from the recording"


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_recorded_method_gives_the_recorded_results(path):
    record = torch.load(path, weights_only=False)
    where = f"{record['test']} ({record['method']})"
    pte = ROOT / "programs" / f"{record['program']}.pte"
    if record["load_error"] is not None:
        _assert_fails_alike(lambda: exov.load_method(pte, record["method"]), record["load_error"], where)
        return
    method = exov.load_method(pte, record["method"])
    for n, call in enumerate(record["calls"]):
        if call["error"] is not None:
            _assert_fails_alike(lambda: method.execute(call["inputs"]), call["error"], f"{where}, call {n}")
            continue
        _assert_same(list(method.execute(call["inputs"])), call["outputs"], f"{where}, call {n}")


def _assert_fails_alike(action, recorded: str, where: str) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - compared with the recorded failure
        # The type and ExecuTorch's first line (its error code); later lines name paths of this machine.
        assert f"{type(exc).__name__}: {exc}".splitlines()[0] == recorded.splitlines()[0], \
            f"{where}: {exc!r}, recorded {recorded}"
    else:
        raise AssertionError(f"{where}: ran, but the recording failed with {recorded}")
