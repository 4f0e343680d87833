"""Programs OpenVINO would compute differently from PyTorch: the result must still equal eager.

Each case was a silently wrong answer before the partitioner kept it on
ExecuTorch's kernels (or the runtime learned the case); see operator_support.py.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import executorch_openvino as exov
from exov_testing.cases import SEMANTICS
from exov_testing.programs import assert_matches_eager, eager, Fn, lower, OneInput, resealed, run

pytestmark = [pytest.mark.own_runtime]


@pytest.mark.parametrize("case", list(SEMANTICS))
@pytest.mark.sampled(every=2)
def test_matches_eager(case):
    fn, inputs = SEMANTICS[case]
    pte, _ = lower(Fn(fn), inputs)
    assert_matches_eager(run(pte, inputs), eager(Fn(fn), inputs))


B = 2**24 + 1  # the first integer float32 cannot hold


@pytest.mark.parametrize("case", [
    "eq", "relu", "amax", "clamp", "matmul", "max_dim", "arange", "full_float_literal",
])
@pytest.mark.sampled(every=2)
def test_integers_past_float32_precision(case):
    i32 = lambda *v: torch.tensor(v, dtype=torch.int32)  # noqa: E731
    fn, inputs = {
        "eq": (lambda a, b: a == b, (i32(B, 3), i32(B - 1, 3))),
        "relu": (torch.relu, (i32(B, -2),)),
        "amax": (lambda a: a.amax(), (i32(B, 0),)),
        "clamp": (lambda a: a.clamp(0, B), (i32(B, 5),)),
        "matmul": (lambda a, b: a @ b, (i32(4097, 1).view(1, 2), i32(4097, 1).view(2, 1))),
        "max_dim": (lambda a: a.max(0)[0], (torch.tensor([B, 3]),)),
        "arange": (lambda a: torch.cat([a, torch.arange(B, B + 3)]), (torch.tensor([1, 2]),)),
        "full_float_literal": (lambda a: torch.cat([a, torch.full((2,), 16777217.0, dtype=torch.int32)]), (i32(1, 2),)),
    }[case]
    pte, _ = lower(Fn(fn), inputs)
    assert_matches_eager(run(pte, inputs), eager(Fn(fn), inputs))


@pytest.mark.parametrize("source", ["memory", "file"])
def test_an_output_that_is_a_copy_of_an_input(source, tmp_path):
    class PassThrough(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x, ids):
            return self.linear(x), ids.clone(), x.clone()

    model = PassThrough().eval()
    inputs = (torch.randn(2, 3), torch.tensor([4, 7]))
    pte, _ = lower(model, inputs)
    if source == "file":
        (tmp_path / "p.pte").write_bytes(pte)
        pte = tmp_path / "p.pte"
    method = exov.load_method(pte)
    for _ in range(2):
        assert_matches_eager(list(method.execute(list(inputs))), eager(model, inputs))


def test_int64_buffer_outside_int32_fails_lowering_clearly():
    class WithBuffer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("offset", torch.tensor([2**40, 1]))

        def forward(self, x):
            return self.offset.view(2, 1).expand(2, 3).clone(), x * 2

    with pytest.raises(Exception, match="holds 1099511627776, outside the int32 range"):
        lower(WithBuffer(), (torch.randn(3),))


def test_dynamic_output_takes_openvinos_shape_each_call():
    model = OneInput(lambda x: x.t() * 2)
    a, b = torch.export.Dim("a", min=2, max=8), torch.export.Dim("b", min=2, max=8)
    program = exov.lower(model, (torch.randn(4, 5),), dynamic_shapes=({0: a, 1: b},))
    method = exov.load_method(program.buffer)
    for shape in [(2, 3), (3, 2), (8, 8), (2, 2), (5, 7)]:  # same byte count, other shape, grow, shrink
        x = torch.randn(*shape)
        assert_matches_eager(list(method.execute([x])), eager(model, (x,)))


def test_dynamic_shape_model_with_symbolic_sizes_lowers_and_runs():
    attention = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
    model = OneInput(lambda x: attention(x, x, x, need_weights=False)[0])
    seq = torch.export.Dim("seq", min=2, max=32)
    program = exov.lower(model, (torch.randn(2, 5, 16),), dynamic_shapes=({1: seq},))
    method = exov.load_method(program.buffer)
    for length in (5, 9, 3):
        x = torch.randn(2, length, 16)
        assert_matches_eager(list(method.execute([x])), eager(model, (x,)))


def test_non_utf8_bytes_in_errors_do_not_abort_the_process(tmp_path):
    pte, _ = lower(torch.nn.Sequential(torch.nn.Linear(4, 4)), (torch.randn(1, 4),))
    (tmp_path / "bad.pte").write_bytes(resealed(pte.replace(b'type="Const"', b'type="\x93onst"', 1)))
    # Lowering refuses such a device name, so it is written into the program afterwards.
    device_pte = exov.lower(torch.nn.Linear(4, 4).eval(), (torch.randn(1, 4),), device="X" * 200).buffer
    (tmp_path / "device.pte").write_bytes(device_pte.replace(b"X" * 200, "\u00e9".encode() * 100))
    code = """
import executorch_openvino as exov
for name in ("bad.pte", "device.pte"):
    try:
        exov.load_method(name)
    except RuntimeError as e:
        print(name, "refused:", " ".join(str(e).split())[:600])
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "could not read the model in the processed blob" in proc.stdout.split("device.pte")[0]
    assert "executorch-openvino: init: OpenVINO device '\\xc3\\xa9" in proc.stdout.split("device.pte")[1]


def test_an_old_delegate_error_is_not_attached_to_a_new_failure(tmp_path):
    y = torch.ones(2, dtype=torch.int64)
    method = exov.load_method(lower(Fn(lambda a, b: torch.cat([a, b])), (y.clone(), y))[0])
    with pytest.raises(ValueError, match="outside the int32 range"):  # a refused input: ValueError
        method.execute([torch.tensor([1, 2**40]), y])
    (tmp_path / "garbage.pte").write_bytes(b"not a program" * 8)
    with pytest.raises(RuntimeError) as failure:
        exov.load_method(tmp_path / "garbage.pte")
    assert "int32" not in str(failure.value)


@pytest.mark.parametrize("name", ["missing.pte", "."])
def test_a_path_that_is_no_file_is_named(tmp_path, name):
    with pytest.raises(FileNotFoundError, match="the program '.*' does not exist or is not a file"):
        exov.load_method(tmp_path / name)


def test_unknown_method_name_is_a_clear_error():
    pte, _ = lower(torch.nn.Linear(2, 2), (torch.randn(1, 2),))
    with pytest.raises(RuntimeError, match="the program has no method 'predict'; it has \\['forward'\\]"):
        exov.load_method(pte, "predict")


class CountsInBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.arange(4.0))

    def forward(self, x):
        y = self.state * 2  # delegated, reads the buffer before it changes
        self.state.add_(x)
        return y


@pytest.mark.parametrize("path", ["exov.lower", "to_edge_transform_and_lower"])
def test_a_buffer_changed_in_place_starts_from_the_modules_values(path):
    # ExecuTorch 1.5.1 alone writes only the buffer's shape: [0, 0, 0, 0] on the first call.
    from executorch.exir import to_edge_transform_and_lower

    x = torch.ones(4)
    if path == "exov.lower":
        pte = exov.lower(CountsInBuffer(), (x,)).buffer
    else:
        exported = torch.export.export(CountsInBuffer(), (x,))
        pte = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner()]).to_executorch().buffer
    method, reference = exov.load_method(pte), CountsInBuffer()
    for _ in range(3):
        assert_matches_eager(list(method.execute([x])), eager(reference, (x,)))














# Quotients that are exact integers: OpenVINO (its divide is a multiply by the
# reciprocal once read from IR) gave 41 / 41 = 0.99999994, so floor, casts and
# comparisons of it were off by one; operator_support.DIVISIONS keeps these divisions.
NUMERATORS, DENOMINATORS = torch.tensor([41.0, 47.0, 55.0, 82.0, -49.0]), torch.tensor([41.0, 47.0, 55.0, 41.0, 49.0])
ROUNDED_QUOTIENTS = {
    "floor": (lambda a, b: torch.floor(a / b), (NUMERATORS, DENOMINATORS)),
    "ceil of the negated": (lambda a, b: torch.ceil(-a / b) * 2, (NUMERATORS, DENOMINATORS)),
    "trunc after a view": (lambda a, b: torch.trunc((a / b).reshape(1, 5)), (NUMERATORS, DENOMINATORS)),
    "int64 quotient cast back": (lambda a, b: (a / b).long() + 1, (NUMERATORS.long(), DENOMINATORS.long())),
    "compared with 1": (lambda a, b: (a / b) >= 1, (NUMERATORS, DENOMINATORS)),
    "frac": (lambda a, b: torch.frac(a / b) + b, (NUMERATORS, DENOMINATORS)),
    "argmax against ones": (lambda a, b: torch.argmax(torch.stack([a / b, torch.ones_like(a)]), 0),
                            (NUMERATORS, DENOMINATORS)),
    "floor after relu": (lambda a, b: torch.floor(torch.relu(a / b)), (NUMERATORS, DENOMINATORS)),
    "clamped, compared": (lambda a, b: torch.clamp(a / b, max=1) == 1, (NUMERATORS, DENOMINATORS)),
    "remainder of 1": (lambda a, b: torch.remainder(a / b, 1.0) + b, (NUMERATORS, DENOMINATORS)),
}


@pytest.mark.parametrize("case", list(ROUNDED_QUOTIENTS))
@pytest.mark.sampled(every=2)
def test_a_rounded_quotient_is_exact(case):
    fn, inputs = ROUNDED_QUOTIENTS[case]
    pte, summary = lower(Fn(fn), inputs)
    assert summary.delegated > 0, summary  # what reads the quotient runs on OpenVINO
    assert_matches_eager(run(pte, inputs), eager(Fn(fn), inputs), rtol=0, atol=0)


def test_a_quotient_used_as_a_float_stays_on_openvino():
    pte, summary = lower(Fn(lambda a, b: torch.softmax(a / b, 0)), (NUMERATORS, DENOMINATORS))
    assert summary.delegated == summary.total, summary


