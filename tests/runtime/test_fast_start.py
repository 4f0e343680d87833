"""Running a ``.pte`` needs neither ``executorch.runtime``'s Python side nor ``executorch.exir`` (issue 50: their
import took 4.3 s of a tiny program's 4.4 s first result): ``exov.load_method`` reads the method's signature with
the native module and loads executorch's pybindings extension only for the kernels and backends it registers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.api import lower_exported

from exov_testing.environment import run_python_json
from exov_testing.programs import assert_exactly_eager, assert_matches_eager

pytestmark = [pytest.mark.own_runtime]


class HalfKeptOnExecuTorch(torch.nn.Module):
    """A Linear and GELU on OpenVINO, a cumulative sum left to ExecuTorch's kernels, and an int64 output."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x, counts):
        return torch.cumsum(torch.nn.functional.gelu(self.linear(x)), dim=1), counts * 3


X = torch.randn(3, 8)
COUNTS = torch.arange(6, dtype=torch.int64).reshape(2, 3)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    torch.manual_seed(0)
    module = HalfKeptOnExecuTorch().eval()
    folder = tmp_path_factory.mktemp("fast_start")
    exported = torch.export.export(module, (X, COUNTS), dynamic_shapes=({0: torch.export.Dim("rows", max=16)}, None))
    lowered = lower_exported(exported, exov.OpenVINOPartitioner(op_types_to_skip={"aten.cumsum.default"}))
    path = folder / "half.pte"
    path.write_bytes(lowered.buffer)
    torch.save((X, COUNTS), folder / "inputs.pt")
    return path, folder / "inputs.pt", module(X, COUNTS)


def test_a_fresh_process_runs_a_program_without_executorch_runtime_or_exir(program, tmp_path):
    path, inputs, expected = program
    result = run_python_json(f"""
        import json, sys
        import torch
        import executorch_openvino as exov
        x, counts = torch.load({str(inputs)!r})
        method = exov.load_method({str(path)!r})
        first = method.execute([x, counts])
        again = method.execute([x[:2].contiguous(), counts])  # another size of the dynamic dimension
        torch.save((first, again), "out.pt")
        print(json.dumps({{"modules": sorted(m for m in sys.modules if m.startswith("executorch."))}}))
    """, {}, tmp_path)
    loaded = [m for m in result["modules"] if m.startswith(("executorch.exir", "executorch.runtime"))]
    assert loaded == [], f"loading and running a program imported {loaded}"
    first, again = torch.load(tmp_path / "out.pt")
    assert_matches_eager([first[0]], [expected[0]], rtol=1e-5, atol=1e-5)
    assert_exactly_eager([first[1]], [expected[1]])
    assert_matches_eager([again[0]], [expected[0][:2]], rtol=1e-5, atol=1e-5)


def test_metadata_is_what_executorch_runtime_reads(program):
    from executorch.runtime import Runtime

    path, _, _ = program
    ours = exov.load_method(path).metadata
    theirs = Runtime.get().load_program(path).load_method("forward").metadata
    assert ours.name() == theirs.name() == "forward"
    assert (ours.num_inputs(), ours.num_outputs()) == (theirs.num_inputs(), theirs.num_outputs()) == (2, 2)
    for kind in ("input", "output"):
        for i in range(2):
            a, b = getattr(ours, f"{kind}_tensor_meta")(i), getattr(theirs, f"{kind}_tensor_meta")(i)
            assert (a.sizes(), a.dtype(), a.nbytes(), a.is_memory_planned()) == \
                (tuple(b.sizes()), int(b.dtype()), b.nbytes(), b.is_memory_planned()), (kind, i)
    assert ours.input_tensor_meta(0).sizes() == (16, 8)  # the dynamic dimension's upper bound
    with pytest.raises(IndexError, match="has 2 inputs; index 2"):
        ours.input_tensor_meta(2)


def test_a_number_input_has_no_tensor_metadata(tmp_path):
    class Scaled(torch.nn.Module):
        def forward(self, x, n: int):
            return x * n

    method = exov.load_method(exov.lower(Scaled(), (X, 2), progress=False).buffer)
    assert method.metadata.input_tag(1) == "Int"
    with pytest.raises(IndexError, match="input 1 of method 'forward' is not a tensor"):
        method.metadata.input_tensor_meta(1)
    assert "Int" in repr(method.metadata)


@pytest.mark.parametrize("program", [12, ["x.pte"], memoryview(b"12345678")], ids=["int", "list", "memoryview"])
def test_what_is_not_a_program_source_is_named(program):
    with pytest.raises(TypeError, match="pass a .pte's path"):
        exov.load_method(program)


def test_bytes_that_read_as_a_path_are_named_as_such(program):
    path, _, _ = program
    with pytest.raises(RuntimeError, match="These bytes read as the path .*pass a path as str or pathlib.Path"):
        exov.load_method(os.fsencode(path))
    with pytest.raises(RuntimeError) as info:
        exov.load_method(b"not a program at all")
    assert "read as the path" not in str(info.value)


def test_a_method_name_that_is_not_utf8_is_named_as_damage(program):
    path, _, _ = program
    data = bytearray(path.read_bytes())
    at = data.find(b"forward")
    data[at + 1] = 0xFF  # the name's bytes in the flatbuffer (a breaker found the codec's own words instead)
    with pytest.raises(RuntimeError, match=r"names are not all UTF-8 text \(byte 0xff in b'f\\xffrward.*truncated or "
                                           r"damaged"):
        exov.load_method(bytes(data))


def test_a_text_mode_file_and_a_path_that_is_not_utf8_are_named(program, tmp_path):
    path, _, _ = program
    with open(path, encoding="latin-1") as text, pytest.raises(TypeError, match="open in text mode; open the .pte "
                                                                                  "with 'rb'"):
        exov.load_method(text)
    odd = tmp_path / os.fsdecode(b"odd\xff.pte")  # a byte no UTF-8 text has (was std::bad_cast)
    odd.write_bytes(path.read_bytes())
    with pytest.raises(ValueError, match="is not valid UTF-8.*pass its bytes"):
        exov.load_method(odd)


SPINNING = "OpenMP threads keep spinning after its parallel operations"
# The variables that decide libgomp's spinning, left out of the tests' fresh processes unless a case sets them.
OPENMP_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")


def _run_fresh(code: str, environment: dict, cwd) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in OPENMP_VARIABLES}
    env.update({"OMP_NUM_THREADS": "2"} | environment)  # the warning needs two threads, whatever the machine
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


@pytest.fixture(scope="module")
def large_output_program(tmp_path_factory):
    """A program whose output (256, 256) torch copies on several threads (32,768 elements or more)."""
    path = tmp_path_factory.mktemp("large_output") / "large.pte"
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU()).eval()
    path.write_bytes(exov.lower(model, (torch.randn(256, 64),), progress=False).buffer)
    return path


@pytest.mark.parametrize("door", ["executorch.runtime", "load_method"])
def test_spinning_openmp_threads_are_named_once_where_they_slow_the_calls(program, large_output_program, tmp_path,
                                                                          door):
    """torch's OpenMP threads spin after executorch.runtime's copy of a large output (1.77x a ConvNeXt block's
    time per call, docs/user-guide/troubleshooting.md): the delegate says so once, at the first call with such
    an output; not for small outputs (torch copies them on the calling thread), nor through load_method."""
    small, inputs, _ = program
    load = ("exov.load_method({!r})" if door == "load_method" else
            "Runtime.get().load_program({!r}).load_method('forward')")
    run = _run_fresh(f"""
        import sys, torch
        import executorch_openvino as exov
        from executorch.runtime import Runtime
        small = {load.format(str(small))}
        for _ in range(3):
            small.execute(list(torch.load({str(inputs)!r})))
        print("small calls done", file=sys.stderr, flush=True)
        large = {load.format(str(large_output_program))}
        for _ in range(3):
            large.execute([torch.randn(256, 64)])
    """, {}, tmp_path)
    before, _, after = run.stderr.partition("small calls done")
    assert SPINNING not in before, before[-3000:]
    assert after.count(SPINNING) == (1 if door == "executorch.runtime" else 0), after[-3000:]
    if door == "executorch.runtime":
        assert "OMP_WAIT_POLICY=PASSIVE" in after


@pytest.mark.parametrize("environment, spinning", [
    ({}, True),
    ({"OMP_WAIT_POLICY": "passive"}, False),
    ({"OMP_WAIT_POLICY": "ACTIVE"}, True),
    ({"GOMP_SPINCOUNT": "1k"}, False),
    ({"GOMP_SPINCOUNT": "20000"}, True),
    ({"GOMP_SPINCOUNT": "infinite"}, True),
    ({"OMP_NUM_THREADS": "1"}, False),
    ({"SET_AFTER_IMPORT": "1"}, True),  # os.environ after import torch: libgomp read its settings already
], ids=["unset", "passive", "active", "spincount-1k", "spincount-20000", "spincount-infinite", "one-thread",
        "passive-after-import"])
@pytest.mark.sampled(every=2)
def test_spinning_is_judged_from_the_environment_libgomp_read(tmp_path, environment, spinning):
    run = _run_fresh("""
        import os, torch
        if os.environ.get("SET_AFTER_IMPORT"):
            os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        import executorch_openvino as exov
        print(repr(exov.runtime._native.spinning_openmp_threads_problem()))
    """, environment, tmp_path)
    assert (SPINNING in run.stdout) == spinning, run.stdout


def test_the_doctor_warns_of_spinning_openmp_threads():
    from executorch_openvino.support import doctor

    check, problem = doctor._openmp_check(exov), exov.runtime._native.spinning_openmp_threads_problem()
    assert check.ok and check.warn == bool(problem)
    assert (SPINNING in " ".join(check.detail)) == bool(problem), check.detail


def test_torchs_own_thread_count_decides_in_a_new_thread_too():
    # A new thread's omp_get_max_threads() is libgomp's default whatever torch.set_num_threads said (a tester's
    # false warning): torch's own count decides.
    import threading

    if SPINNING not in exov.runtime._native.spinning_openmp_threads_problem():
        pytest.skip("nothing spins in this process (environment or one thread)")
    threads, seen = torch.get_num_threads(), []
    torch.set_num_threads(1)
    try:
        thread = threading.Thread(target=lambda: seen.append(exov.runtime._native.spinning_openmp_threads_problem()))
        thread.start()
        thread.join()
    finally:
        torch.set_num_threads(threads)
    assert seen == [""]
