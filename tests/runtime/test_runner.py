"""The C++ runner (executorch-openvino-run): outputs bit-equal to executorch.runtime's, and clear failures."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import executorch_openvino as exov
from exov_testing.environment import INSTALL_TREE_LIB
from exov_testing.cases import OPERATORS
from exov_testing.programs import lower, OneInput
from exov_testing.runner_tools import RUNNER, assert_runner_matches_python, run_runner, save_inputs

pytestmark = [pytest.mark.own_runtime, pytest.mark.runner, pytest.mark.aarch64,
              pytest.mark.skipif(sys.platform == "win32", reason="the runner is built on Linux only for now")]


@pytest.fixture(scope="module")
def small_program(tmp_path_factory):
    """A float32 (3, 4) and an int64 (2, 3) input; a float32 and an int64 output."""

    class Two(torch.nn.Module):
        def forward(self, x, ids):
            return torch.relu(x) * 2, (ids * 3).sum()

    folder = tmp_path_factory.mktemp("program")
    inputs = (torch.randn(3, 4), torch.arange(6).reshape(2, 3))
    (folder / "two.pte").write_bytes(lower(Two(), inputs)[0])
    return folder / "two.pte", inputs


def test_the_runner_is_in_the_wheel_and_lists_methods(small_program):
    assert RUNNER.is_file() and os.access(RUNNER, os.X_OK)
    result = run_runner(small_program[0], "--list")
    assert result.returncode == 0, result.stderr
    assert "forward\n  inputs:\n    0: Float (3, 4)\n    1: Long (2, 3)\n  outputs:\n    0: Float (3, 4)\n" \
           "    1: Long ()\n" in result.stdout


def test_the_runner_finds_the_pip_package_next_to_its_own(small_program):
    from executorch_openvino.runtime.library_discovery import pip_openvino_library_dir

    result = run_runner(small_program[0], "--random-inputs")
    assert result.returncode == 0, result.stderr
    beside = (RUNNER.parent.parent / "openvino" / "libs").resolve()
    assert f"(pip openvino package): {beside}" in result.stdout, result.stdout
    if os.environ.get("EXOV_REQUIRE_ALL") == "1":  # the nox tests session: one openvino package in the venv
        assert pip_openvino_library_dir().resolve() == beside


def test_the_command_starts_the_runner(small_program):
    command = shutil.which("executorch-openvino-run", path=str(Path(sys.executable).parent))
    assert command, "the wheel's entry point executorch-openvino-run is not installed next to this Python"
    result = subprocess.run([command, str(small_program[0]), "--list"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "0: Float (3, 4)" in result.stdout, result.stderr


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.sampled(every=2)
def test_operator_program_outputs_equal_pythons_bit_for_bit(name, tmp_path):
    factory, shapes = OPERATORS[name]
    torch.manual_seed(0)
    inputs = shapes[0]
    (tmp_path / "op.pte").write_bytes(lower(factory(), inputs)[0])
    assert_runner_matches_python(tmp_path / "op.pte", inputs, tmp_path, "--iterations", "2")


def test_summary_and_timing(small_program, tmp_path):
    pte, inputs = small_program
    result = assert_runner_matches_python(pte, inputs, tmp_path, "--iterations", "7")
    assert "7 timed runs: median" in result.stdout
    # An even count's median is the mean of the two middle times (a breaker saw the upper one).
    result = assert_runner_matches_python(pte, inputs, tmp_path, "--iterations", "4", "--times")
    times = sorted(float(t) for t in re.search(r"run times ms:(.*)", result.stdout).group(1).split())
    median = float(re.search(r"4 timed runs: median ([0-9.]+) ms", result.stdout).group(1))
    assert median == pytest.approx((times[1] + times[2]) / 2, abs=1e-3), result.stdout
    assert f"(explicit path (set_library_path)): {exov.load_openvino()['path']}" in result.stdout
    assert "output 0: Float (3, 4) -> " in result.stdout and "output 1: Long () -> " in result.stdout


def test_a_dynamic_dimension_takes_smaller_sizes(tmp_path):
    n = torch.export.Dim("n", min=1, max=64)
    model = OneInput(lambda x: torch.softmax(x, dim=-1) * 3)
    pte = exov.lower(model, (torch.randn(8, 5),), dynamic_shapes={"x": {0: n}}).buffer
    (tmp_path / "dyn.pte").write_bytes(pte)
    assert_runner_matches_python(tmp_path / "dyn.pte", (torch.randn(3, 5),), tmp_path)


def test_random_inputs_are_deterministic_per_seed(small_program, tmp_path):
    pte, _ = small_program
    outputs = []
    for seed, folder in ((5, "a"), (5, "b"), (6, "c")):
        result = run_runner(pte, "--random-inputs", "--seed", seed, "--output-dir", tmp_path / folder)
        assert result.returncode == 0, result.stderr
        outputs.append(np.load(tmp_path / folder / "output_0.npy").tobytes())
    assert outputs[0] == outputs[1] != outputs[2]


def test_a_program_with_state_writes_its_first_calls_outputs(tmp_path):
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(1))

        def forward(self, x):
            self.calls.add_(1)
            return x + self.calls

    x = torch.zeros(3)
    (tmp_path / "state.pte").write_bytes(exov.lower(Counter(), (x,)).buffer)
    assert_runner_matches_python(tmp_path / "state.pte", (x,), tmp_path, "--iterations", "10")  # 1, not 11


def test_non_tensor_inputs(tmp_path):
    class Scale(torch.nn.Module):
        def forward(self, x, k: int):
            return x * k

    x = torch.randn(4)
    pte = tmp_path / "scale.pte"
    pte.write_bytes(exov.lower(Scale(), (x, 3)).buffer)
    np.save(tmp_path / "x.npy", x.numpy())
    result = run_runner(pte, "--input", tmp_path / "x.npy", "--input", "int:3", "--output-dir", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert np.load(tmp_path / "out" / "output_0.npy").tobytes() == (x * 3).numpy().tobytes()
    for value, message in (("float:0.5", "input 1 is an Int: give it as int:VALUE, not 'float:0.5'"),
                           ("int:99999999999999999999", "'int:99999999999999999999' is not a valid int"),
                           ("int:4", "refused the inputs \\(ExecuTorch error 0x12\\)")):  # exported with k=3
        result = run_runner(pte, "--input", tmp_path / "x.npy", "--input", value)
        assert result.returncode == 2 and re.search(message, result.stderr), (value, result.stderr)


def test_a_bfloat16_output_is_written_as_its_bits(tmp_path):
    model = OneInput(lambda x: (x * 2).to(torch.bfloat16))
    x = torch.randn(5)
    pte = tmp_path / "bf16.pte"
    pte.write_bytes(lower(model, (x,))[0])
    np.save(tmp_path / "x.npy", x.numpy())
    result = run_runner(pte, "--input", tmp_path / "x.npy", "--output-dir", tmp_path / "out")
    assert result.returncode == 0 and "(bfloat16 bits as uint16: NumPy has no bfloat16)" in result.stdout, result.stderr
    bits = np.load(tmp_path / "out" / "output_0.npy")
    expected = exov.load_method(pte).execute([x])[0]
    assert bits.dtype == np.uint16 and bits.tobytes() == expected.view(torch.int16).numpy().tobytes()


@pytest.mark.skipif(not Path("/proc/sys/vm/overcommit_memory").exists()
                    or Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "1",
                    reason="with overcommit always on, a 16 TiB allocation succeeds until its pages are touched")
@pytest.mark.skipif(bool(os.environ.get("EXOV_SANITIZE")),
                    reason="AddressSanitizer reports a 16 TiB request instead of returning null")
def test_an_upper_bound_too_large_to_allocate_ends_with_a_message(tmp_path):
    n = torch.export.Dim("n", min=1, max=2**30)
    pte = tmp_path / "wide.pte"
    pte.write_bytes(exov.lower(OneInput(lambda x: x * 2), (torch.randn(2, 4096),), dynamic_shapes={"x": {0: n}}).buffer)
    np.save(tmp_path / "x.npy", np.ones((2, 4096), np.float32))
    result = run_runner(pte, "--input", tmp_path / "x.npy")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "output 0 needs 17592186044416 bytes at its upper bound (1073741824, 4096)" in result.stderr


@pytest.mark.slow  # MiniLM is lowered in CI by numerics/test_models.py; the runner's exactness by OPERATORS
def test_minilm_outputs_equal_pythons_bit_for_bit(tmp_path):
    pytest.importorskip("transformers")
    from executorch_openvino.examples.minilm import load_model_and_inputs

    model, inputs = load_model_and_inputs(seq_len=16)
    (tmp_path / "minilm.pte").write_bytes(lower(model, inputs)[0])
    result = assert_runner_matches_python(tmp_path / "minilm.pte", inputs, tmp_path, "--iterations", "3")
    assert "output 0: Float (4, 384)" in result.stdout


@pytest.mark.parametrize("arguments, message", [
    (["missing.pte"], "the program 'missing.pte' does not exist or is not a file"),
    (["{pte}", "--method", "nope"], "the program has no method 'nope'; it has: forward"),
    (["{pte}", "--input", "{x}"], "method 'forward' takes 2 inputs, 1 --input value was given"),
    (["{pte}", "--input", "{wide}", "--input", "{ids}"],
     "input 0 \\('.*wide.npy'\\) has shape \\(3, 5\\); the method takes \\(3, 4\\)"),
    (["{pte}", "--input", "{x64}", "--input", "{ids}"],
     "input 0 \\('.*x64.npy'\\) holds NumPy type '<f8'; the method takes Float \\('<f4'\\)"),
    (["{pte}", "--input", "{x}", "--input", "gone.npy"], "input 1: cannot open 'gone.npy'"),
    (["{pte}", "--input", "{x}", "--input", "int:3"], "input 1 is a Long \\(2, 3\\) tensor: pass a .npy file \\(int: values "
                                                     "are for non-tensor inputs\\)"),
    (["{pte}", "--input", "{pte}", "--input", "{ids}"], "is not a .npy file"),
    (["{pte}", "--input", "{fortran}", "--input", "{ids}"], "is in Fortran order"),
    (["{pte}", "--input", "{huge}", "--input", "{ids}"],
     "huge.npy' is truncated: its header declares shape \\(1099511627776, 4\\) of '<f4' \\(17592186044416 bytes\\), "
     "the file holds 8 bytes of data"),
    (["{pte}", "--input", "{x}", "--random-inputs"], "give either --input values or --random-inputs"),
    (["{pte}", "--iterations", "many"], "--iterations takes a whole number from 0 to \\d+, got 'many'"),
    (["{pte}", "--seed", "99999999999999999999999"], "--seed takes a whole number from 0 to"),
    (["{pte}", "--random-inputs", "--output-dir", "{x}"], "cannot create the output folder '.*x.npy'"),
    (["{pte}", "--input", "{x}", "--input", "{ids_short}"],
     "input 1 \\('.*ids_short.npy'\\) has shape \\(1, 3\\); the method refused it and takes \\(2, 3\\)"),
    (["{pte}", "--frobnicate"], "unknown option '--frobnicate'"),
    (["{pte}", "--openvino-lib", "/no/such/libopenvino_c.so"], "--openvino-lib '/no/such/libopenvino_c.so' is not "
                                                               "a file"),
])
def test_bad_arguments_end_with_a_message_and_status_2(arguments, message, small_program, tmp_path):
    pte, (x, ids) = small_program
    files = {"pte": pte, "x": tmp_path / "x.npy", "ids": tmp_path / "ids.npy", "wide": tmp_path / "wide.npy",
             "x64": tmp_path / "x64.npy", "fortran": tmp_path / "fortran.npy", "huge": tmp_path / "huge.npy",
             "ids_short": tmp_path / "ids_short.npy"}
    np.save(files["ids_short"], ids.numpy()[:1])  # smaller than the static (2, 3)
    np.save(files["x"], x.numpy())
    np.save(files["ids"], ids.numpy())
    np.save(files["wide"], np.zeros((3, 5), np.float32))
    np.save(files["x64"], x.numpy().astype(np.float64))
    np.save(files["fortran"], np.asfortranarray(x.numpy()))
    # A header declaring 16 TiB over 8 bytes of data: refused before anything is allocated.
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1, 4), np.float32))
    with open(files["huge"], "wb") as f:
        np.lib.format.write_array_header_1_0(f, {**header, "shape": (2**40, 4)})
        f.write(bytes(8))
    result = run_runner(*[a.format(**files) for a in arguments], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert re.search(message, result.stderr), result.stderr


def test_a_failed_run_is_told_once_with_the_delegates_reason_and_status_1(tmp_path):
    pte = tmp_path / "lookup.pte"
    pte.write_bytes(exov.lower(torch.nn.Embedding(10, 4), (torch.tensor([1, 2, 3]),)).buffer)
    np.save(tmp_path / "ids.npy", np.array([1, 2, 30]))
    result = run_runner(pte, "--input", tmp_path / "ids.npy")
    assert result.returncode == 1, result.stdout + result.stderr
    reason = "was given an index outside 0..9"
    assert result.stderr.count(reason) == 1 and result.stderr.count("executorch-openvino-run:") == 1, result.stderr
    assert result.stderr.startswith("executorch-openvino-run: method 'forward' failed on run 1"), result.stderr


def test_the_delegates_warnings_show_when_a_run_succeeds(tmp_path):
    """The runner holds ExecuTorch's error lines until it knows whether the run failed; the delegate's warnings
    (a precision OpenVINO does not compute in here) are not failures and still show."""
    pte = tmp_path / "half.pte"
    pte.write_bytes(exov.lower(torch.nn.Linear(8, 4), (torch.randn(2, 8),), inference_precision="f16").buffer)
    exov.load_method(pte)
    if exov.last_compile_report()["effective_precision"] == "f16":
        pytest.skip("this CPU computes in f16: no precision warning to show")
    result = run_runner(pte, "--random-inputs")
    assert result.returncode == 0, result.stderr
    assert "warning: init: inference_precision 'f16' was asked for" in result.stderr, result.stderr


def test_the_documented_exit_statuses_are_the_runners(small_program, tmp_path):
    """docs/user-guide/runner-and-cpp.md's exit statuses, one case each: 0 ran, 2 bad arguments or input files,
    1 the program failed to load or run."""
    from exov_testing import REPOSITORY

    doc = (REPOSITORY / "docs" / "user-guide" / "runner-and-cpp.md").read_text()
    statuses = dict(re.findall(r"^  - `(\d)`: (.+)$", doc, re.M))
    assert sorted(statuses) == ["0", "1", "2"], statuses
    pte = small_program[0]
    other = tmp_path / "other.pte"
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.test.op_partitioner_demo import AddMulPartitionerDemo

    class MulAdd(torch.nn.Module):
        def forward(self, a, b):
            return a * b + a

    exported = torch.export.export(MulAdd(), (torch.randn(2, 2), torch.randn(2, 2)))
    other.write_bytes(to_edge_transform_and_lower(exported, partitioner=[AddMulPartitionerDemo()]).to_executorch().buffer)
    cases = {"0": [pte, "--random-inputs"], "2": [pte, "--iterations", "-1"], "1": [other, "--random-inputs"]}
    for status, arguments in cases.items():
        result = run_runner(*arguments)
        assert result.returncode == int(status), (statuses[status], result.stderr)


def _copied_runner(tmp_path: Path) -> Path:
    """The runner and the delegate library copied with the executorch runtime's folder beside them, as a
    deployment without Python or the pip openvino package would lay them out."""
    import executorch

    package = tmp_path / "deploy" / "executorch_openvino"
    package.mkdir(parents=True)
    for name in ("executorch_openvino_run", "libexecutorch_openvino_backend.so"):
        shutil.copy2(RUNNER.with_name(name), package / name)
    (tmp_path / "deploy" / "executorch").mkdir()
    (tmp_path / "deploy" / "executorch" / "lib").symlink_to(Path(list(executorch.__path__)[0]) / "lib")
    return package / "executorch_openvino_run"


def test_without_openvino_the_runner_names_the_places_tried_and_the_option(small_program, tmp_path):
    runner = _copied_runner(tmp_path)
    result = run_runner(small_program[0], "--random-inputs", runner=runner,
                        env_updates={"INTEL_OPENVINO_DIR": str(tmp_path / "no-tree"), "LD_LIBRARY_PATH": ""})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "method 'forward' did not load; to choose the OpenVINO C library, pass --openvino-lib PATH" in result.stderr
    assert "could not load the OpenVINO C library. Places tried, in order:" in result.stderr
    assert "INTEL_OPENVINO_DIR install tree" in result.stderr


def test_a_copied_runner_finds_openvino_by_option_variable_and_install_tree(small_program, tmp_path,
                                                                            pip_openvino_c_library):
    runner = _copied_runner(tmp_path)
    pte, inputs = small_program
    tree = tmp_path / "tree" / INSTALL_TREE_LIB
    tree.parent.mkdir(parents=True)
    tree.symlink_to(pip_openvino_c_library.parent)
    for env, extra in (({}, ["--openvino-lib", pip_openvino_c_library]),
                       ({"OPENVINO_LIB_PATH": str(pip_openvino_c_library)}, []),
                       ({"INTEL_OPENVINO_DIR": str(tmp_path / "tree")}, [])):
        out = tmp_path / f"out{len(env)}{len(extra)}"
        result = run_runner(pte, *save_inputs(inputs, tmp_path), "--output-dir", out, *extra, runner=runner,
                            env_updates=env)
        assert result.returncode == 0, (env, extra, result.stderr[-2000:])
        expected = exov.load_method(pte).execute(list(inputs))[0].numpy()
        assert np.load(out / "output_0.npy").tobytes() == expected.tobytes()
    bad = tmp_path / "not-a-library.so"
    bad.write_text("not a library")
    result = run_runner(pte, "--random-inputs", "--openvino-lib", bad, runner=runner)
    assert result.returncode == 1 and "not-a-library.so" in result.stderr, result.stderr


def test_a_missing_runner_is_named_with_what_to_do(monkeypatch, tmp_path):
    from executorch_openvino.runtime import runner

    monkeypatch.setattr(runner, "RUNNER", tmp_path / "executorch_openvino_run")
    with pytest.raises(SystemExit, match=r"executorch_openvino_run is missing\. Linux wheels and editable installs "
                                         r"carry it.*reinstall"):
        runner.main()
