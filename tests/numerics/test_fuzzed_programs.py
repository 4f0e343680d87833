"""The differential program fuzzer (tools/program_fuzz/): its saved regressions, a few seeds, and checks
that the fuzzer itself can fail (a bf16 program, a wrong value, a crashing worker, the shrinker).

Each program is lowered with ``exov.lower`` and with ExecuTorch's ``to_edge_transform_and_lower``, saved,
loaded from the file, run twice with fresh inputs and compared with eager PyTorch, in a worker process
(a crash fails the case instead of the test run). ``nox -s program_fuzz`` runs many more; its failures are
shrunk and saved under tools/program_fuzz/regressions/, which this file replays. A regression with an
``xfail`` reason is expected to fail (strict: it flips when the problem is fixed); one with ``expect``
must give exactly that status, overall or per path ("executorch": the program fails the same way with no
delegate at all).
"""

from __future__ import annotations

import json

import pytest
import torch


from program_fuzz import regressions  # noqa: E402
from program_fuzz.compare import compare  # noqa: E402
from program_fuzz.generator import generate  # noqa: E402
from program_fuzz.pool import Worker  # noqa: E402
from program_fuzz.shrink import prune, shrink  # noqa: E402
from program_fuzz.spec import build_module, module_source  # noqa: E402

pytestmark = [pytest.mark.own_runtime]

# The first programs of the CI range (nox -s program_fuzz runs them all); this file runs three times in CI.
SEEDS = range(2)
# A float32 program of linear, gelu and a reduction, which bf16 arithmetic gets wrong by ~1e-2.
FLOAT_PROGRAM = {
    "version": 1, "seed": 5, "dims": {},
    "inputs": [{"name": "x0", "dtype": "float32", "shape": [4, 16], "low": -3.0, "high": 3.0}],
    "tensors": [{"name": "w0", "kind": "parameter", "dtype": "float32", "shape": [8, 16], "low": -1.0, "high": 1.0}],
    "ops": [{"out": "v0", "op": "linear", "args": ["x0", "w0"], "attrs": {}},
            {"out": "v1", "op": "gelu", "args": ["v0"], "attrs": {}},
            {"out": "v2", "op": "sum_dim", "args": ["v1"], "attrs": {"dim": 1, "keepdim": False, "_n": 8}}],
    "outputs": ["v1", "v2"],
}


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    w = Worker(tmp_path_factory.mktemp("program-fuzz"))
    yield w
    w.close()


def _explain(outcome) -> str:
    return json.dumps(outcome, indent=1)[:4000]


def _regression_cases():
    for case in regressions.load_all():
        marks = [pytest.mark.xfail(strict=True, reason=case["xfail"])] if case.get("xfail") else []
        yield pytest.param(case, marks=marks, id=case["file"][: -len(".json")])


@pytest.mark.parametrize("case", list(_regression_cases()))
def test_saved_regression(case, worker):
    outcome = worker.check(case["spec"], paths=case.get("paths"))
    expect = case.get("expect")
    if isinstance(expect, dict):  # per lowering path
        assert {path: r["status"] for path, r in outcome["paths"].items()} == expect, _explain(outcome)
    elif expect:
        assert outcome["status"] == expect, _explain(outcome)
    else:
        assert outcome["status"] in ("passed", "refused"), _explain(outcome)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_program(seed, worker):
    outcome = worker.check(generate(seed))
    assert outcome["status"] in ("passed", "refused", "executorch"), _explain(outcome)


def test_float32_program_passes_and_bf16_fails_the_comparison(worker):
    passed = worker.check(FLOAT_PROGRAM, paths=["exov.lower"])
    assert passed["status"] == "passed", _explain(passed)
    import openvino as ov

    if "BF16" not in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
        pytest.skip("this CPU has no bf16 arithmetic")
    bf16 = worker.check(FLOAT_PROGRAM, paths=["exov.lower"], options={"inference_precision": "bf16"})
    result = bf16["paths"]["exov.lower"]
    assert (bf16["status"], result["category"]) == ("failed", "wrong-value"), _explain(bf16)


def test_comparison_catches_small_differences():
    x = torch.linspace(-3, 3, 50)
    err = (10.0, 0.0)  # ten units of float32 rounding: atol 1.1e-4
    assert compare(x + 1e-5, x, err, "x") is None
    assert compare(x * (1 + 4e-3), x, err, "x")[0] == "wrong-value"  # one bf16 rounding
    assert compare(x.double(), x, err, "x")[0] == "wrong-dtype"
    assert compare(x[:-1], x, err, "x")[0] == "wrong-shape"
    i = torch.tensor([2**24 + 1, 7], dtype=torch.int32)
    assert compare(i, i.clone(), (0.0, 0.0), "i") is None
    assert compare(i - torch.tensor([1, 0], dtype=torch.int32), i, (0.0, 0.0), "i")[0] == "wrong-value"
    nan = torch.tensor([float("nan"), 1.0])
    assert compare(nan.clone(), nan, err, "n") is None
    assert compare(torch.tensor([0.0, 1.0]), nan, err, "n")[0] == "wrong-value"


def test_a_crash_is_reported_and_the_next_program_runs(worker):
    crashed = worker.check(FLOAT_PROGRAM, debug="crash at exov.lower:run1")
    result = crashed["paths"]["exov.lower"]
    assert (crashed["status"], result["stage"], result["category"]) == ("failed", "run1", "crash"), _explain(crashed)
    assert "SIGSEGV" in result["detail"]
    after = worker.check(FLOAT_PROGRAM, paths=["to_edge_transform_and_lower"])
    assert after["status"] == "passed", _explain(after)


def test_generation_is_deterministic_and_round_trips_through_json():
    for seed in range(20):
        spec = generate(seed)
        assert generate(seed) == spec
        assert json.loads(json.dumps(spec)) == spec
        assert module_source(json.loads(json.dumps(spec))) == module_source(spec)
        build_module(spec)


def test_shrinking_keeps_the_failure_and_drops_the_rest():
    seed = next(s for s in range(500) if len(prune(generate(s))["ops"]) >= 5
                and any(op["op"] == "exp" for op in prune(generate(s))["ops"]))
    spec = generate(seed)

    def still_fails(candidate):  # "fails" while the program computes an exp of something
        return any(op["op"] == "exp" for op in candidate["ops"])

    small, checks = shrink(spec, still_fails)
    assert [op["op"] for op in small["ops"]] == ["exp"], small
    assert len(small["outputs"]) == 1 and checks > 0
