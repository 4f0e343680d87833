"""Inputs a loaded method or the lowering does not take: each gets a message naming
what was wrong and what to pass, and the same method still runs a good call after.

(Bad blobs: test_processed_blob.py; bad OpenVINO libraries: test_library_loading.py;
bad compile specs: test_compile_specs.py; another executorch: test_version_check.py.)
"""

from __future__ import annotations

import re

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.api import delegation_summary

from exov_testing.programs import assert_matches_eager, eager, Fn, lower, OneInput

pytestmark = [pytest.mark.own_runtime, pytest.mark.native]


def _model(x):
    return torch.relu(x) * 2 + 1


X = torch.randn(1, 3, 4, 4)


@pytest.fixture(scope="module")
def method():
    pte, summary = lower(OneInput(_model), (X,))
    assert summary.delegated == summary.total
    return exov.load_method(pte)


def _still_works(method):
    assert_matches_eager(list(method.execute([X])), eager(OneInput(_model), (X,)))


REFUSED = {
    "float64 instead of float32": ([X.double()], "input 0 of method 'forward' has dtype torch.float64, the method was "
                                                 "exported for torch.float32; pass x.to(torch.float32) for it"),
    "int32 instead of float32": ([X.int()], "has dtype torch.int32, the method was exported for torch.float32"),
    "complex64": ([torch.complex(X, X)], "has dtype torch.complex64, the method was exported for torch.float32; "
                                         "complex values have no OpenVINO type"),
    "one dimension": ([X[0, 0, 0]], "has 1 dimension (shape (4,)), the method was exported for 4"),
    "one dimension too few": ([X[0]], "input 0 of method 'forward' has 3 dimensions (shape (3, 4, 4)), the method "
                                      "was exported for 4 (shape (1, 3, 4, 4))"),
    "a wrong size": ([torch.randn(1, 3, 4, 5)], "input 0 of method 'forward' has shape (1, 3, 4, 5), the method was "
                                                "exported for (1, 3, 4, 4)"),
    "zero-size instead of static": ([torch.randn(0, 3, 4, 4)], "has shape (0, 3, 4, 4), the method was exported for "
                                                               "(1, 3, 4, 4)"),
    "two inputs for one": ([X, X], "method 'forward' takes 1 input, 2 were given; pass exactly 1, in one list"),
    "no inputs": ([], "method 'forward' takes 1 input, 0 were given"),
    "an int for a tensor": ([3], "input 0 of method 'forward' is of type int, the method takes a torch.float32 tensor "
                                 "of shape (1, 3, 4, 4)"),
}


@pytest.mark.parametrize("case", list(REFUSED))
@pytest.mark.sampled(every=2)
def test_refused_input_names_what_is_wrong_and_the_method_still_runs(method, case):
    inputs, message = REFUSED[case]
    with pytest.raises(ValueError) as info:
        method.execute(inputs)
    assert message in str(info.value)
    _still_works(method)


def _not_tensors():
    import numpy as np

    return {
        "a numpy array": ([X.numpy()], "input 0 is a numpy.ndarray: the method takes torch.Tensor inputs; pass "
                                       "torch.from_numpy(array) (no copy), or torch.tensor(array)"),
        "a numpy scalar": ([np.float32(1.0)], "input 0 is a numpy.float32: the method takes torch.Tensor inputs; "
                                              "pass torch.tensor(value) for a tensor input, or value.item()"),
        "a nested list": ([[X]], "input 0 is a list: the method takes torch.Tensor inputs; pass one flat list"),
        "a str": (["x"], "input 0 is a str: the method takes torch.Tensor inputs; pass a torch.Tensor"),
        "a sparse COO tensor": ([X.to_sparse()], "input 0 is a torch.sparse_coo tensor: the method takes dense "
                                                 "tensors; pass x.to_dense()"),
        "a sparse CSR tensor": ([X[0, 0].to_sparse_csr()], "input 0 is a torch.sparse_csr tensor: the method takes "
                                                          "dense tensors; pass x.to_dense()"),
        "one numpy array for the list": (X.numpy(), "the inputs are a numpy.ndarray, not a list: the method takes a "
                                                    "list of torch.Tensor, e.g. [torch.from_numpy(array)]"),
    }


@pytest.mark.parametrize("case", list(_not_tensors()))
@pytest.mark.sampled(every=2)
def test_a_value_that_is_not_a_tensor_is_a_type_error_saying_what_to_pass(method, case):
    # executorch.runtime alone raised RuntimeError("Unsupported python type <class 'numpy.ndarray'>").
    inputs, message = _not_tensors()[case]
    with pytest.raises(TypeError) as info:
        method.execute(inputs)
    assert message in str(info.value)
    _still_works(method)


LAYOUTS = {
    "channels_last": X.contiguous(memory_format=torch.channels_last),
    "transposed": torch.randn(1, 3, 4, 4).transpose(2, 3),
    "every other column": torch.randn(1, 3, 4, 8)[..., ::2],
    "expanded (stride 0)": torch.randn(1, 1, 4, 4).expand(1, 3, 4, 4),
}


@pytest.mark.parametrize("case", list(LAYOUTS))
def test_any_memory_layout_gives_eagers_values(method, case):
    # executorch.runtime alone copies such a tensor's memory as if it were
    # contiguous and returns scrambled values (measured: max abs error 4.8 here).
    x = LAYOUTS[case]
    assert not x.is_contiguous()
    assert_matches_eager(list(method.execute([x])), eager(OneInput(_model), (x,)))
    _still_works(method)


class _Weights(torch.Tensor):
    """A tensor subclass of a user's own."""


KINDS = {
    "a Parameter": lambda: torch.nn.Parameter(X.clone()),
    "a tensor subclass": lambda: X.clone().as_subclass(_Weights),
    "a negated view (torch's neg bit)": lambda: torch._neg_view(X.clone()),
}


@pytest.mark.parametrize("case", list(KINDS))
def test_other_kinds_of_tensor_give_eagers_values(method, case):
    # A Parameter or subclass was refused by executorch's pybindings ("Unsupported python type"); a negated
    # view is contiguous but holds the unnegated values in memory, which ExecuTorch read (found by a tester).
    x = KINDS[case]()
    plain = x.detach().as_subclass(torch.Tensor).resolve_neg().clone()
    for _ in range(2):
        assert_matches_eager(list(method.execute([x])), eager(OneInput(_model), (plain,)))
    _still_works(method)


def test_a_channels_last_example_is_lowered_as_contiguous():
    x = X.contiguous(memory_format=torch.channels_last)
    program = exov.lower(OneInput(_model), (x,))
    summary = delegation_summary(program.exported_program())
    assert summary.delegated == summary.total
    method = exov.load_method(program.buffer)
    for given in (x, X):
        assert_matches_eager(list(method.execute([given])), eager(OneInput(_model), (given,)))


def test_past_a_dynamic_upper_bound_names_the_bound():
    x = torch.randn(4, 3)
    n = torch.export.Dim("n", min=1, max=100)
    method = exov.load_method(exov.lower(OneInput(_model), (x,), dynamic_shapes={"x": {0: n}}).buffer)
    with pytest.raises(ValueError, match=r"has shape \(101, 3\), the method was exported for \(100, 3\) \(for "
                                         r"dimensions exported as dynamic: their upper bounds\)"):
        method.execute([torch.randn(101, 3)])
    for rows in (1, 7, 100):
        y = torch.randn(rows, 3)
        assert_matches_eager(list(method.execute([y])), eager(OneInput(_model), (y,)))


@pytest.mark.parametrize("second, message", [
    (torch.tensor([3]), r"input 1 of method 'forward' has dtype torch.int64, the method was exported for torch.int32"),
    (torch.tensor([3, 4], dtype=torch.int32), r"input 1 of method 'forward' has shape \(2,\), the method was exported "
                                              r"for \(1,\)"),
], ids=["dtype", "shape"])
def test_a_smaller_dynamic_input_is_not_blamed_for_a_later_inputs_mistake(second, message):
    # A tester found "input 0 ... has shape (6, 16)" for a valid input 0 below its bound.
    class Scale(torch.nn.Module):
        def forward(self, x, k):
            return x * k.to(torch.float32)

    model = Scale()
    n = torch.export.Dim("n", min=1, max=64)
    method = exov.load_method(exov.lower(model, (torch.randn(8, 16), torch.tensor([3], dtype=torch.int32)),
                                         dynamic_shapes=({0: n}, None)).buffer)
    small = torch.randn(6, 16)
    with pytest.raises(ValueError, match=message):
        method.execute([small, second])
    k = torch.tensor([3], dtype=torch.int32)
    assert_matches_eager(list(method.execute([small, k])), eager(model, (small, k)))


def test_a_wrong_static_size_next_to_a_dynamic_one_is_refused_by_the_delegate():
    # ExecuTorch checks a dynamic input only against its element count: (2, 4)
    # fits a (n <= 100, 3) input's capacity, and OpenVINO would read it as (2, 3).
    x = torch.randn(4, 3)
    n = torch.export.Dim("n", min=1, max=100)
    model = OneInput(lambda t: torch.nn.functional.linear(t, torch.ones(5, 3)))
    method = exov.load_method(exov.lower(model, (x,), dynamic_shapes={"x": {0: n}}).buffer)
    for shape in ((2, 4), (2, 1), (1, 1), (4,)):
        with pytest.raises((RuntimeError, ValueError)) as info:
            method.execute([torch.randn(*shape)])
        assert "the model was lowered for (" in str(info.value) or "dimension" in str(info.value), str(info.value)
    with pytest.raises(ValueError, match=r"^input 0 \('x'\) has shape \(2, 4\) but the model was lowered for "
                                         r"\(0\.\.100, 3\); pass such a shape"):
        method.execute([torch.randn(2, 4)])
    for rows in (1, 9):
        y = torch.randn(rows, 3)
        assert_matches_eager(list(method.execute([y])), eager(model, (y,)))


def test_a_lone_tensor_stands_for_a_list_of_one(method):
    assert_matches_eager(list(method.execute(X)), eager(OneInput(_model), (X,)))


def test_a_number_input_of_another_kind_is_named_with_what_to_pass():
    # ExecuTorch refuses a float for an int (and an int for a float, a bool for an int, an int for a bool) with
    # error 0x12 only (issue 51): the ValueError names the input, its kind and the exported one; the values the
    # program was exported with still run.
    class Numbers(torch.nn.Module):
        def forward(self, x, n: int, f: float, b: bool):
            return x * n + f + b

    method = exov.load_method(exov.lower(Numbers(), (X, 3, 1.5, True)).buffer)
    for given, message in (
            ([X, 2.5, 1.5, True], "input 1 of method 'forward' is a float (2.5), the method was exported with an "
                                  "int there: pass int(value)"),
            ([X, True, 1.5, True], "input 1 of method 'forward' is a bool (True), the method was exported with an "
                                   "int there"),
            ([X, 3, 1, True], "input 2 of method 'forward' is an int (1), the method was exported with a float "
                              "there: pass float(value)"),
            ([X, 3, 1.5, 1], "input 3 of method 'forward' is an int (1), the method was exported with a bool")):
        with pytest.raises(ValueError, match=re.escape(message)):
            method.execute(given)
    assert_matches_eager(list(method.execute([X, 3, 1.5, True])), [X * 3 + 1.5 + True])


def test_a_nested_channels_last_example_is_lowered_as_contiguous():
    x = X.contiguous(memory_format=torch.channels_last)
    model = OneInput(lambda xs: torch.relu(xs[0]) * 2 + xs[1])
    method = exov.load_method(exov.lower(model, ([x, x],)).buffer)
    assert_matches_eager(list(method.execute([X, x])), eager(Fn(lambda a, b: torch.relu(a) * 2 + b), (X, x)))


def test_zero_size_tensors_run_when_exported_so():
    x = torch.randn(0, 3)
    method = exov.load_method(exov.lower(OneInput(_model), (x,)).buffer)
    (out,) = method.execute([torch.randn(0, 3)])
    assert out.shape == (0, 3) and out.dtype == torch.float32


def test_complex_tensors_are_refused_at_lowering_with_the_way_around():
    model = OneInput(lambda x: torch.view_as_real(torch.view_as_complex(x) * 2))
    with pytest.raises(TypeError, match=r"is a torch.complex64 tensor: neither OpenVINO nor ExecuTorch's edge "
                                        r"dialect takes complex dtypes. Carry real and imaginary parts as a "
                                        r"trailing dimension of 2 \(torch.view_as_real\)"):
        exov.lower(model, (torch.randn(3, 2),))


def test_a_named_tuple_result_is_refused_before_lowering_with_the_way_around():
    # Before: to_executorch failed at the end of lowering, "No registered serialization name for
    # <class 'torch.return_types.max'>" (ExecuTorch 1.5.1, torch 2.13, with any backend).
    model = OneInput(lambda x: (x * 2, {"kept": torch.max(x, 1)}))
    with pytest.raises(TypeError, match=r"returns torch.return_types.max \(a named tuple of values, indices\), "
                                        r"which ExecuTorch cannot write into a program: return tuple"):
        exov.lower(model, (torch.randn(3, 2),))


@pytest.mark.parametrize("device,suggestion", [("cpu", "'CPU'"), ("Gpu.0", "'GPU.0'"), ("auto:cpu", "'AUTO:CPU'")])
def test_a_lower_case_device_is_refused_at_lowering(device, suggestion):
    with pytest.raises(ValueError, match=f"compile spec 'device' is '{device}'; OpenVINO device names are upper "
                                         f"case \\(did you mean {suggestion}\\?\\)"):
        exov.lower(OneInput(_model), (X,), device=device)


def test_an_unknown_device_fails_at_load_naming_the_available_ones(method):
    pte = exov.lower(OneInput(_model), (X,), device="TPU").buffer
    with pytest.raises(RuntimeError, match=r"OpenVINO device 'TPU' is not available on this machine "
                                           r"\(available: CPU[^)]*\)\. Lower the model with compile spec device "
                                           r"set to one of those"):
        exov.load_method(pte)
    _still_works(method)


def test_a_dynamic_upper_bound_is_named_and_enforced_by_the_delegate():
    # A tester's (2, Dim("seq", min=2, max=128)) program was said to be "lowered for (2, 0..)", and a wrong
    # batch size came as a RuntimeError after ExecuTorch's log line. Lower bounds are not kept (a partition's
    # range says 2 for an exported 0 or 1, and 3 for a derived m + 1 that takes 2): 0..128.
    seq = torch.export.Dim("seq", min=3, max=128)
    method = exov.load_method(exov.lower(OneInput(_model), (torch.randn(2, 8),), dynamic_shapes={"x": {1: seq}}).buffer)
    with pytest.raises(ValueError, match=r"^input 0 \('x'\) has shape \(3, 8\) but the model was lowered for "
                                         r"\(2, 0\.\.128\); pass such a shape"):
        method.execute([torch.randn(3, 8)])
    y = torch.randn(2, 3)
    assert_matches_eager(list(method.execute([y])), eager(OneInput(_model), (y,)))


class TwoInputs(torch.nn.Module):
    def forward(self, x, y):
        return x.sum(1) + y.sum(1)


class TwoInputsReadBackwards(torch.nn.Module):
    def forward(self, x, y):
        return y.sum(1) + x.sum(1)


@pytest.mark.parametrize("low,model", [(1, TwoInputs()), (2, TwoInputs()), (2, TwoInputsReadBackwards())])
def test_inputs_exported_with_one_dynamic_size_must_agree(low, model):
    # Before, (5, 4) with (1, 2) broadcast y and returned 5 wrong sums; (5, 4) with (3, 2) failed inside OpenVINO.
    # The delegate numbers a partition's inputs in the order it reads them (y first in the second model), so the
    # message names them as the program does.
    n = torch.export.Dim("n", min=low, max=16)
    pte = exov.lower(model, (torch.randn(3, 4), torch.randn(3, 2)), dynamic_shapes=({0: n}, {0: n})).buffer
    method = exov.load_method(pte)
    names = ("x", "y") if isinstance(model, TwoInputs) else ("y", "x")
    for rows in (1, 3):
        size = {"x": 5, "y": rows}
        expected = (f"input 0 ('{names[0]}') dimension 0 and input 1 ('{names[1]}') dimension 0 differ, but the "
                    f"program was exported with them as one dynamic size (here {size[names[0]]} and "
                    f"{size[names[1]]}); pass inputs whose sizes agree")
        with pytest.raises(ValueError, match="^" + re.escape(expected)):
            method.execute([torch.randn(5, 4), torch.randn(rows, 2)])
    for rows in (low, 7):
        inputs = (torch.randn(rows, 4), torch.randn(rows, 2))
        assert_matches_eager(list(method.execute(list(inputs))), eager(model, inputs))


def test_executorch_s_own_runtime_refuses_disagreeing_sizes_too():
    from executorch.runtime import Runtime

    n = torch.export.Dim("n", min=1, max=16)
    pte = exov.lower(TwoInputs(), (torch.randn(3, 4), torch.randn(3, 2)), dynamic_shapes=({0: n}, {0: n})).buffer
    method = Runtime.get().load_program(pte).load_method("forward")
    with pytest.raises(RuntimeError):
        method.execute([torch.randn(5, 4), torch.randn(1, 2)])
    assert method.execute([torch.randn(4, 4), torch.randn(4, 2)])[0].shape == (4,)
