"""Programs delegated to other backends: named, with what to do, before ExecuTorch fails with an error code;
executorch's own OpenVINO delegate's programs run (executorch 1.5.1's build crashed the process with OpenVINO
2026.4.1 on a program loaded from a file path: exov.load_method loads such a program from memory)."""

from __future__ import annotations

import sys
from importlib.metadata import version

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
def test_the_runner_names_the_backend_a_program_needs(executorch_own_openvino_program, unregistered_backend_program):
    for (path, _), backend in ((executorch_own_openvino_program, "OpenvinoBackend"),
                               (unregistered_backend_program, "BackendWithCompilerDemo")):
        proc = run_runner(path, "--random-inputs")
        assert proc.returncode == 1, proc
        assert f"method 'forward' was delegated to the backend '{backend}'" in proc.stderr, proc.stderr
        assert "OpenVINOPartitioner" in proc.stderr, proc.stderr
        assert proc.stderr.count("executorch-openvino-run:") == 1, proc.stderr


def test_the_native_and_python_names_of_executorchs_own_backend_agree():
    from executorch_openvino.runtime import foreign_backends

    message = exov._native.unregistered_backends_message("m", [(foreign_backends.EXECUTORCH_OWN_OPENVINO_BACKEND,
                                                                False)])
    assert "executorch's own OpenVINO delegate" in message
    with pytest.raises(ValueError, match="not an ExecuTorch program"):
        exov._native.program_backends(b"not a program" * 8)


def test_doctor_says_which_backends_a_program_needs(executorch_own_openvino_program, unregistered_backend_program,
                                                    tmp_path):
    import os
    import subprocess

    own = tmp_path / "mine.pte"
    own.write_bytes(exov.lower(LinearRelu().eval(), (torch.randn(2, 8),)).buffer)
    expected = {own: (0, "ExecutorchOpenvinoBackend", True),
                executorch_own_openvino_program[0]: (0, "OpenvinoBackend", True),
                unregistered_backend_program[0]: (1, "BackendWithCompilerDemo (not registered)", False)}
    for program, (status, backends, ok) in expected.items():
        proc = subprocess.run([sys.executable, "-m", "executorch_openvino", "doctor", str(program)],
                              capture_output=True, text=True, timeout=300, env=dict(os.environ), cwd=tmp_path)
        assert proc.returncode == status, proc.stdout + proc.stderr[-2000:]
        assert f"[{'ok' if ok else 'FAIL'}] program {program}\n    forward: delegated to {backends}\n" in proc.stdout
        assert proc.stdout.splitlines()[-1] == ("the delegate can run here" + (
            "" if ok else "; the program cannot: see its fix above")), proc.stdout
        loaded_from_memory = "exov.load_method loads it from memory" in proc.stdout
        assert loaded_from_memory == (program == executorch_own_openvino_program[0] and not OWN_BACKEND_BUILT_FOR)
