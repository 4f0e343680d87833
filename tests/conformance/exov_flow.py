"""ExecuTorch's backend conformance suite, run against executorch_openvino: a pytest plugin.

Load it with ``-p exov_flow`` (this folder on ``PYTHONPATH``) when running pytest
on ``executorch/backends/test/suite/operators`` of the installed executorch;
``run_suite.py`` does that and prints the per-operator table.

What it does:
- replaces the suite's hard-coded flow list (``flow.all_flows``) by one flow,
  ``executorch_openvino``: our ``OpenvinoPartitioner`` inside the suite's own
  ``Tester``. The suite's conftest binds ``all_flows`` when it is imported,
  which happens after ``-p`` plugins load, so patching at import is in time.
  The bundled flows are left out: they test other delegates (and executorch's
  own ``OpenvinoBackend``), not ours;
- lets programs with 3-D convolutions run (see below) instead of skipping them;
- runs the NaN/Inf edge-case tests the suite skips for every backend
  (``@unittest.skip("NaN and Inf are not enforced for backends.")``): with
  ``numerics="exact"`` (the default) this delegate promises eager's special
  values, so they are enforced here (see below);
- starts a suite "test session" with a fixed seed, so a run's random inputs
  can be reproduced (without one the suite draws a new seed per process);
- attaches, per test, the suite's own result record (result kind, delegated
  and undelegated op counts) to the pytest report, where the summary reads it.
"""

from __future__ import annotations

import functools
import json
import os

import pytest

import executorch_openvino  # registers the delegate with ExecuTorch's runtime
from executorch.backends.test.harness import Tester
from executorch.backends.test.harness.stages import Partition, StageType, ToEdgeTransformAndLower
from executorch.backends.test.suite import flow as suite_flow
from executorch.backends.test.suite import operators as suite_operators
from executorch.backends.test.suite import reporting, runner

FLOW_NAME = "executorch_openvino"
DEFAULT_SEED = 20260401
USER_PROPERTY = "exov_subtests"


class OpenVINOTester(Tester):
    """The suite's ``Tester`` lowering with ``executorch_openvino.OpenvinoPartitioner`` (CPU, f32)."""

    def __init__(self, module, example_inputs, dynamic_shapes=None):
        stages = Tester.default_stage_classes() | {
            StageType.PARTITION: lambda: Partition(executorch_openvino.OpenvinoPartitioner()),
            # The harness's edge config (IR validity checks off), as in every
            # bundled flow: with the checks on, to_edge refuses ops outside core
            # ATen (adaptive_max_pool2d, median, round.decimals) before any
            # partitioner sees them.
            StageType.TO_EDGE_TRANSFORM_AND_LOWER: functools.partial(
                ToEdgeTransformAndLower,
                default_partitioner_cls=executorch_openvino.OpenvinoPartitioner,
            ),
        }
        super().__init__(module, example_inputs, stage_classes=stages, dynamic_shapes=dynamic_shapes)


EXOV_FLOW = suite_flow.TestFlow(
    FLOW_NAME,
    backend=FLOW_NAME,
    tester_factory=OpenVINOTester,
    # The partitioner leaves some graphs (integer/float64 policy) wholly to
    # ExecuTorch's CPU kernels. With is_delegated=True the suite reports those
    # as passed without running them; False runs and compares every program.
    is_delegated=False,
    # These return torch.median(x, dim) itself: ExecuTorch cannot write the torch.return_types.median named tuple
    # into the program ("No registered serialization name"), with any backend. They run (strict xfail), so one
    # that starts passing is reported; the values-only median tests and tests/lowering/passes/test_medians.py
    # (which returns a tuple) check the delegate's medians and indices against eager.
    xfail_patterns=["test_median_with_indices", "test_median_keepdim_with_indices"],
)


def _exov_flows() -> dict:
    return {EXOV_FLOW.name: EXOV_FLOW}


suite_flow.all_flows = _exov_flows


def _no_unsupported_patterns(edge_program) -> bool:
    return False


# The suite skips every program with a 3-D convolution, because ExecuTorch's
# portable kernels lack one; it looks at the graph before partitioning, so it
# also skips 3-D convolutions that OpenVINO runs. Without the check they run
# and are compared; one left to the portable kernels fails instead of skipping.
runner._graph_has_unsupported_patterns = _no_unsupported_patterns


# The suite's NaN/Inf edge-case tests carry ``@unittest.skip(NAN_INF_SKIP)``,
# whose wrapper raises SkipTest and keeps the test in ``__wrapped__``
# (functools.wraps). ``operator_test`` turns each ``test*`` method of a class
# into a module-level pytest function when the test module is imported, which
# happens at collection, after this plugin loaded: the test modules import
# ``operator_test`` from the package then, so replacing the package's attribute
# here is in time. The replacement hands ``operator_test`` the undecorated
# method for exactly that skip reason; other skips (in-place activations) stay.
NAN_INF_SKIP = "NaN and Inf are not enforced for backends."
_suite_operator_test = suite_operators.operator_test


def _operator_test_enforcing_nan_inf(cls):
    for name in dir(cls):
        method = getattr(cls, name)
        if (name.startswith("test") and getattr(method, "__unittest_skip_why__", None) == NAN_INF_SKIP
                and hasattr(method, "__wrapped__")):
            setattr(cls, name, method.__wrapped__)
    return _suite_operator_test(cls)


suite_operators.operator_test = _operator_test_enforcing_nan_inf


def pytest_configure(config):
    seed = int(os.environ.get("EXOV_CONFORMANCE_SEED", DEFAULT_SEED))
    if reporting.get_active_test_session() is None:
        reporting.begin_test_session(None, seed=seed)


def _record(summary) -> dict:
    return {
        "result": summary.result.name,
        "delegated_ops": sum(summary.delegated_op_counts.values()) if summary.delegated_op_counts else 0,
        "undelegated_ops": dict(summary.undelegated_op_counts or {}),
        "error": None if summary.error is None else f"{type(summary.error).__name__}: {summary.error}"[:2000],
    }


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    # user_properties travel with the report, also from pytest-xdist workers.
    if call.when == "call":
        test_runner = getattr(item, "funcargs", {}).get("test_runner")
        records = [_record(s) for s in getattr(test_runner, "_results", [])]
        item.user_properties.append((USER_PROPERTY, json.dumps(records)))
    yield


# --- the per-operator summary (printed by the controlling process only) ---

_reports: list = []


def pytest_runtest_logreport(report):
    # A test's outcome is that of its call phase, or of setup when setup
    # skipped or failed it.
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _reports.append(report)


def _operator(nodeid: str) -> str:
    # .../operators/test_add.py::test_add_f32_alpha[...] -> add
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return module.removeprefix("test_").removesuffix(".py")


def _delegation(report) -> str:
    records = json.loads(dict(report.user_properties).get(USER_PROPERTY, "[]"))
    if not records:
        return "none"
    if all(r["delegated_ops"] and not r["undelegated_ops"] for r in records):
        return "full"
    return "partial" if any(r["delegated_ops"] for r in records) else "none"


def _first_error(report) -> str:
    records = json.loads(dict(report.user_properties).get(USER_PROPERTY, "[]"))
    for r in records:
        if r["result"] not in ("SUCCESS", "SUCCESS_UNDELEGATED"):
            return f"{r['result']}: {(r['error'] or '').splitlines()[0][:160] if r['error'] else ''}"
    return report.longreprtext.strip().splitlines()[-1][:200] if report.longreprtext else ""


def summarize(reports) -> dict:
    per_op: dict = {}
    details = {"failed": [], "skipped": []}
    for report in reports:
        row = per_op.setdefault(_operator(report.nodeid), {
            "passed": 0, "failed": 0, "skipped": 0, "full": 0, "partial": 0, "none": 0})
        row[report.outcome] += 1
        if report.outcome == "passed":
            row[_delegation(report)] += 1
        else:
            reason = (report.longrepr[2] if report.outcome == "skipped" and isinstance(report.longrepr, tuple)
                      else _first_error(report))
            details[report.outcome].append({"test": report.nodeid.split("::", 1)[-1], "reason": reason})
    total = {k: sum(r[k] for r in per_op.values()) for k in ("passed", "failed", "skipped", "full", "partial", "none")}
    return {"operators": per_op, "total": total, **details}


def pytest_terminal_summary(terminalreporter, config):
    if hasattr(config, "workerinput") or not _reports:
        return  # a pytest-xdist worker: the controller prints
    summary = summarize(_reports)
    write = terminalreporter.write_line
    terminalreporter.section(f"{FLOW_NAME}: conformance per operator")
    write(f"{'operator':<26}{'passed':>7}{'failed':>7}{'skipped':>8}   passed and delegated: full/partial/none")
    for op, r in sorted(summary["operators"].items()):
        write(f"{op:<26}{r['passed']:>7}{r['failed']:>7}{r['skipped']:>8}   {r['full']}/{r['partial']}/{r['none']}")
    t = summary["total"]
    write(f"{'TOTAL':<26}{t['passed']:>7}{t['failed']:>7}{t['skipped']:>8}   {t['full']}/{t['partial']}/{t['none']}")
    for kind in ("failed", "skipped"):
        if summary[kind]:
            write(f"{kind}:")
            for entry in summary[kind]:
                write(f"  {entry['test']}: {entry['reason']}")
    path = os.environ.get("EXOV_CONFORMANCE_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
        write(f"report: {path}")
    # The plain closing line CI tools read.
    write(f"conformance: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped")
