"""Programs delegated to other backends: named, with what to do, before ExecuTorch fails with an error code;
executorch's own OpenVINO delegate's programs run (executorch 1.5.1's build crashed the process with OpenVINO
2026.4.1 on a program loaded from a file path: exov.load_method loads such a program from memory)."""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import torch

import executorch_openvino as exov
from exov_testing.environment import run_python_json
from exov_testing.runner_tools import run_runner

pytestmark = [pytest.mark.older_openvino]

OWN_BACKEND_BUILT_FOR = (2025, 1) <= tuple(int(p) for p in version("openvino").split(".")[:2]) < (2026, 0)


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


class MulAdd(torch.nn.Module):
    def forward(self, a, b):
        return a * b + a


@pytest.fixture(scope="module")
def executorch_own_openvino_program(tmp_path_factory):
    """A .pte that executorch's own OpenVINO delegate lowered (backend id OpenvinoBackend), and its edge program."""
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner as ExecutorchOwnPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.backend_details import CompileSpec

    exported = torch.export.export(LinearRelu().eval(), (torch.randn(2, 8),))
    edge = to_edge_transform_and_lower(exported, partitioner=[ExecutorchOwnPartitioner([CompileSpec("device", b"CPU")])])
    path = tmp_path_factory.mktemp("own") / "own_openvino.pte"
    path.write_bytes(edge.to_executorch().buffer)
    return path, edge


@pytest.fixture(scope="module")
def unregistered_backend_program(tmp_path_factory):
    """A .pte delegated to ExecuTorch's demo backend, which no runtime library registers."""
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.test.op_partitioner_demo import AddMulPartitionerDemo

    exported = torch.export.export(MulAdd(), (torch.randn(2, 2), torch.randn(2, 2)))
    edge = to_edge_transform_and_lower(exported, partitioner=[AddMulPartitionerDemo()])
    path = tmp_path_factory.mktemp("demo") / "demo.pte"
    path.write_bytes(edge.to_executorch().buffer)
    return path, edge


# In a child process: a regression would crash the interpreter, not the test run.
LOAD_AND_RUN = """
    import json, sys, torch
    import executorch_openvino as exov
    torch.manual_seed(1)
    x = torch.randn(2, 8)
    source = {source}
    try:
        method = exov.load_method(source)
        out = method.execute([x])[0]
    except RuntimeError as e:
        print(json.dumps({{"error": str(e)}}))
    else:
        torch.manual_seed(0)
        linear = torch.nn.Linear(8, 4)
        print(json.dumps({{"max_diff": (out - torch.relu(linear(x))).abs().max().item()}}))
"""


@pytest.mark.parametrize("given_as", ["path", "bytes"])
@pytest.mark.sampled(every=2)
def test_executorch_own_openvino_programs_run_through_load_method(executorch_own_openvino_program, given_as,
                                                                  tmp_path):
    path, _ = executorch_own_openvino_program
    source = repr(str(path)) if given_as == "path" else f"open({str(path)!r}, 'rb').read()"
    result = run_python_json(LOAD_AND_RUN.format(source=source), {}, tmp_path)
    # executorch's own delegate computes in bf16 on CPUs that have it (docs/benchmarks.md: about 1e-3)
    assert result.get("max_diff", 1.0) < 2e-2, result


def test_a_program_for_an_unregistered_backend_is_refused_with_its_backend_named(unregistered_backend_program):
    path, _ = unregistered_backend_program
    for source in (path, path.read_bytes()):
        with pytest.raises(RuntimeError) as raised:
            exov.load_method(source)
        message = str(raised.value)
        assert "method 'forward' was delegated to the backend 'BackendWithCompilerDemo'" in message
        assert "no library in this process has registered" in message
        assert "executorch_openvino.OpenVINOPartitioner" in message


def test_delegation_summary_names_other_backends(executorch_own_openvino_program, unregistered_backend_program):
    own = exov.delegation_summary(executorch_own_openvino_program[1])
    assert (own.partitions, own.delegated, own.other_backends) == (0, 0, {"OpenvinoBackend": 1})
    assert "'OpenvinoBackend'" in own.report() and "executorch's own OpenVINO delegate" in own.report()
    demo = exov.delegation_summary(unregistered_backend_program[1])
    assert demo.other_backends == {"BackendWithCompilerDemo": 1}
    assert "'BackendWithCompilerDemo'" in demo.report() and "executorch's own" not in demo.report()
    mine = exov.delegation_summary(exov.lower(LinearRelu().eval(), (torch.randn(2, 8),)))
    assert (mine.partitions, mine.other_backends) == (1, {})


@pytest.mark.runner
@pytest.mark.skipif(sys.platform == "win32", reason="the runner is built on Linux only for now")
def test_the_runner_names_the_backend_a_program_needs(unregistered_backend_program, request):
    import importlib.util

    programs = [(unregistered_backend_program, "BackendWithCompilerDemo")]
    if importlib.util.find_spec("nncf") is not None:  # executorch's own OpenVINO partitioner imports it
        programs.append((request.getfixturevalue("executorch_own_openvino_program"), "OpenvinoBackend"))
    for (path, _), backend in programs:
        proc = run_runner(path, "--random-inputs")
        assert proc.returncode == 1, proc
        assert f"method 'forward' was delegated to the backend '{backend}'" in proc.stderr, proc.stderr
        assert "OpenVINOPartitioner" in proc.stderr, proc.stderr
        assert proc.stderr.count("executorch-openvino-run:") == 1, proc.stderr


def test_the_native_and_python_names_of_executorchs_own_backend_agree():
    from executorch_openvino.runtime import foreign_backends

    message = exov.runtime._native.unregistered_backends_message("m", [(foreign_backends.EXECUTORCH_OWN_OPENVINO_BACKEND,
                                                                False)])
    assert "executorch's own OpenVINO delegate" in message
    with pytest.raises(ValueError, match="not an ExecuTorch program"):
        exov.runtime._native.program_backends(b"not a program" * 8)


def test_executorch_own_program_on_another_release_is_explained(executorch_own_openvino_program, tmp_path):
    """executorch's own delegate reads only the partitions of the OpenVINO release that lowered them: its program,
    run where OPENVINO_LIB_PATH names the other tested release, fails with what to do (and does not crash)."""
    from exov_testing.environment import nox_provided

    other = Path(nox_provided("EXOV_OTHER_OPENVINO_DIR", "the other OpenVINO release, unpacked"))
    library = sorted((other / "openvino" / "libs").glob("libopenvino_c.so*"))[-1]
    code = f"""
        import json, executorch_openvino as exov
        try:
            exov.load_method({str(executorch_own_openvino_program[0])!r})
            print(json.dumps({{"loaded": True}}))
        except RuntimeError as e:
            print(json.dumps({{"error": str(e)}}))
    """
    result = run_python_json(code, {"OPENVINO_LIB_PATH": str(library)}, tmp_path)
    assert "whose partitions only the OpenVINO release that lowered them can read" in result.get("error", ""), result
    assert f"OpenVINO {other.name}" in result["error"] and "executorch_openvino.OpenVINOPartitioner" in result["error"]


# Damaged copies of a lowered program: its flatbuffer is read before loading, and a damaged one must be refused,
# never read out of bounds (with ExecuTorch's Minimal verification 3 of 40 such copies crashed the process).
DAMAGE = """
    import json, random, sys
    import executorch_openvino as exov
    source = open(sys.argv[1], "rb").read()
    outcomes = {{}}
    for seed in range({copies}):
        rnd = random.Random(seed)
        damaged = bytearray(source)
        for _ in range(rnd.randint(1, 20)):
            damaged[rnd.randrange(8, len(damaged))] = rnd.randrange(256)
        try:
            exov.load_method(bytes(damaged))
            outcome = "loaded"
        except Exception as e:  # ExecuTorch's own load raised MemoryError (std::bad_alloc) for one such copy
            outcome = "refused: not a program" if "not a .pte, or one truncated or damaged" in str(e) else "refused"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(json.dumps(outcomes))
"""


def test_damaged_programs_are_refused_without_crashing(tmp_path):
    import os
    import subprocess
    import textwrap

    path = tmp_path / "mine.pte"
    path.write_bytes(exov.lower(LinearRelu().eval(), (torch.randn(2, 8),)).buffer)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(DAMAGE.format(copies=60)), str(path)],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ), cwd=tmp_path)
    assert proc.returncode == 0, f"the interpreter died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    outcomes = __import__("json").loads(proc.stdout.strip().splitlines()[-1])
    assert outcomes.get("refused: not a program", 0) > 0, outcomes
    with pytest.raises(RuntimeError, match="is not an ExecuTorch program this runtime can read"):
        exov.load_method(b"PY" * 40)


def test_a_subclass_with_parameters_of_its_own_is_constructed():
    class Tagged(exov.OpenVINOPartitioner):
        def __init__(self, tag, device="CPU", **options):
            self.tag = tag
            super().__init__(device=device, **options)

    partitioner = Tagged("mine", device="CPU", numerics="fast")
    assert (partitioner.tag, partitioner.options.numerics) == ("mine", "fast")
