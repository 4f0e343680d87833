"""What a user of executorch's own OpenVINO backend API writes works here unchanged, and the package's
public names can be found (issue: a drop-in for upstream's API)."""

from __future__ import annotations

import pytest
import torch
from executorch.exir.backend.compile_spec_schema import CompileSpec

import executorch_openvino as exov
from exov_testing.programs import assert_matches_eager, eager, Fn, lower, OneInput, run

pytestmark = [pytest.mark.own_runtime]


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).eval()


def test_a_positional_list_of_compile_specs_as_upstream_documents():
    specs = [CompileSpec("device", b"CPU"), CompileSpec("inference_precision", b"f32")]
    partitioner = exov.OpenvinoPartitioner(specs)
    assert partitioner.options == exov.OpenvinoPartitioner(device="CPU", inference_precision="f32").options
    assert list(partitioner.delegation_spec.compile_specs) == specs
    module, inputs = _mlp(), (torch.randn(4, 64),)
    pte, summary = lower(module, inputs, partitioner=partitioner)
    assert summary.delegated == summary.total
    assert_matches_eager(run(pte, inputs), eager(module, inputs))


def test_upstreams_keyword_and_a_bf16_spec_have_upstreams_meaning():
    partitioner = exov.OpenvinoPartitioner(compile_spec=[CompileSpec("inference_precision", b"bf16")])
    assert partitioner.options.inference_precision == "bf16"


def test_upstreams_positional_skip_sets_follow_the_list():
    partitioner = exov.OpenvinoPartitioner([CompileSpec("device", b"CPU")], {"aten.relu.default"}, {"aten_mul_tensor"})
    assert partitioner.op_types_to_skip == {"aten.relu.default"}
    assert partitioner.op_names_to_skip == {"aten_mul_tensor"}


@pytest.mark.parametrize("bad, message", [
    (42, "first argument is a int"),
    (b"CPU", "first argument is a bytes"),
    ([("device", b"CPU")], "must be executorch CompileSpec objects"),
    ([CompileSpec("device", "CPU")], r"has a str value 'CPU'.*CompileSpec\('device', b'CPU'\)"),
])
def test_other_first_arguments_are_a_type_error_saying_what_is_accepted(bad, message):
    with pytest.raises(TypeError, match=message):
        exov.OpenvinoPartitioner(bad)


SPECS = [CompileSpec("device", b"CPU")]


@pytest.mark.parametrize("args, keywords, error, message", [
    ((SPECS, "bf16"), {}, TypeError, r"next argument is op_types_to_skip.*CompileSpec\('inference_precision', b'bf16'\)"),
    ((SPECS,), {"numerics": "fast"}, TypeError, "got compile specs and numerics"),
    ((SPECS,), {"inference_precision": "f32"}, TypeError, r"second argument or inference_precision=\): give a precision"),
    (("CPU", "f32", None, {"fast"}), {}, TypeError, r"numerics is a set: it is a str \('exact' or 'fast'\)"),
    ((SPECS, "aten.relu.default"), {}, TypeError, r"give a set: \{'aten.relu.default'\}"),
    (("CPU", {"aten.relu.default"}), {}, TypeError, "inference_precision is a set.*op_types_to_skip=..."),
    ((), {"compile_specs": SPECS, "inference_precision": "bf16", "device": "GPU"}, TypeError,
     "got compile specs and device, inference_precision"),
    ((SPECS, {"aten.relu.default"}), {"op_types_to_skip": {"aten.relu.default"}}, TypeError, "given twice"),
    ((), {"compile_spec": SPECS, "compile_specs": SPECS}, TypeError, "given twice"),
    ((), {"op_types_to_skip": "aten.relu.default"}, TypeError, r"is a str.*\{'aten.relu.default'\}"),
    # Every option keyword's type is checked before anything calls a method of it (a breaker's AttributeErrors).
    ((), {"weight_compression": b"int8"}, TypeError, r"weight_compression is a bytes: it is a str \('int8', 'int4'"),
    ((), {"weight_group_size": "64"}, TypeError, r"weight_group_size is a str \('64'\): give an int"),
    ((), {"weight_group_size": True}, TypeError, r"weight_group_size is a bool"),
    ((), {"weight_ratio": "0.8"}, TypeError, r"weight_ratio is a str \('0.8'\): give a number"),
    ((), {"gguf_weights": b"m.gguf"}, TypeError, r"gguf_weights is a bytes .*give the .gguf file's path as a str"),
    ((), {"input_ranges": [("x", 0, 1)]}, TypeError, r"input_ranges is a list: give a dict of input name to"),
    ((), {"op_names_to_skip": [3]}, TypeError, "holds a int 3"),
    ((), {"op_types_to_skip": {"aten.relu"}}, ValueError, "no operator overload.*'aten.relu.default'"),
    (([CompileSpec("cache_dir", b"/tmp/ov")],), {}, ValueError, r"unknown compile spec 'cache_dir'.*set_cache_dir\(path\)"),
    # Given by position and by keyword: this package's words, not Python's "got multiple values for argument".
    (("CPU",), {"device": "GPU"}, TypeError, r"got device twice: 'CPU' as argument 1 and device='GPU'; give it once"),
    (("CPU", "f32"), {"inference_precision": "bf16"}, TypeError, "got inference_precision twice: 'f32' as argument 2"),
    ((SPECS,), {"device": "GPU"}, TypeError, "got compile specs and device"),
    ((SPECS, None, None), {"compile_specs": SPECS}, TypeError, "given twice"),
    # Options given with compile specs are refused even when they equal the defaults (the list's value would win).
    ((SPECS,), {"device": "CPU"}, TypeError, "got compile specs and device"),
    ((), {"compile_specs": SPECS, "device": "CPU"}, TypeError, "got compile specs and device: give each option once"),
    ((), {"compile_specs": SPECS, "numerics": "exact", "weight_group_size": 128}, TypeError,
     "got compile specs and numerics, weight_group_size"),
    ((SPECS,), {"performance_hint": ""}, TypeError, "got compile specs and performance_hint"),
    ((SPECS,), {"inference_precision": ""}, TypeError, r"got the str '' .*leave it out"),
    (("CPU",), {"compile_specs": SPECS}, TypeError, "got compile specs and device"),
    # An unknown keyword: the closest one taken, and all of them (Python's own error names neither).
    ((), {"op_types_to_skp": set()}, TypeError, r"unknown keyword argument 'op_types_to_skp' \(did you mean "
                                                r"'op_types_to_skip'\?\); it takes device, inference_precision"),
    ((), {"precision": "f16"}, TypeError, r"'precision' \(did you mean 'inference_precision'\?\)"),
    ((SPECS,), {"colour": 1}, TypeError, r"unknown keyword argument 'colour'; it takes device"),
])
def test_options_given_twice_or_of_the_wrong_kind_are_refused(args, keywords, error, message):
    with pytest.raises(error, match=message):
        exov.OpenvinoPartitioner(*args, **keywords)


def test_a_subclass_is_named_in_the_unknown_keyword_refusal():
    class Mine(exov.OpenvinoPartitioner):
        pass

    with pytest.raises(TypeError, match=r"^Mine got an unknown keyword argument 'devise' \(did you mean 'device'\?\)"):
        Mine(devise="CPU")


def test_the_signature_shows_the_defaults_and_they_apply():
    import inspect

    signature = str(inspect.signature(exov.OpenvinoPartitioner))
    assert signature.startswith("(device='CPU', inference_precision='', compile_specs=None, numerics: 'str' = "
                                "'exact', performance_hint: 'str' = '', *, compile_spec=None"), signature
    default = exov.OpenvinoPartitioner()
    assert default.options == exov.OpenvinoPartitioner(device="CPU", inference_precision="", numerics="exact").options
    assert list(default.delegation_spec.compile_specs) == list(
        exov.OpenvinoPartitioner("CPU", "", None, "exact", "").delegation_spec.compile_specs)


def test_compile_specs_given_twice_are_refused():
    with pytest.raises(TypeError, match="given twice"):
        exov.OpenvinoPartitioner([CompileSpec("device", b"CPU")], compile_specs=[CompileSpec("device", b"CPU")])


def test_skipped_op_types_and_node_names_stay_on_executorch_kernels():
    module, inputs = Fn(lambda x: ((x * 2).relu() + 1,)), (torch.randn(8),)
    pte, summary = lower(module, inputs, partitioner=exov.OpenvinoPartitioner(
        [CompileSpec("device", b"CPU")], op_types_to_skip={"aten.relu.default"}))
    assert summary.delegated == summary.total - 1 and summary.partitions == 2, summary
    assert_matches_eager(run(pte, inputs), eager(module, inputs))
    pte, summary = lower(module, inputs, partitioner=exov.OpenvinoPartitioner(op_names_to_skip={"aten_mul_tensor"}))
    assert summary.delegated == summary.total - 1, summary
    assert_matches_eager(run(pte, inputs), eager(module, inputs))


def test_every_public_name_is_listed_and_exists():
    listed = [name for name in dir(exov) if not name.startswith("_")]
    for name in ("lower", "load_method", "OpenvinoPartitioner", "OpenVINOBackend", "delegation_summary",
                 "DelegationSummary", "OpenVINOMethod", "ConversionError"):
        assert name in listed
    assert not {"os", "sys", "annotations"} & set(listed)
    for name in listed:
        getattr(exov, name)
    with pytest.raises(AttributeError):
        exov.run_program  # noqa: B018


def test_upstreams_spelling_of_the_partitioner_is_the_same_class():
    from executorch_openvino.lowering.partitioner import OpenVINOPartitioner, OpenvinoPartitioner

    assert exov.OpenvinoPartitioner is exov.OpenVINOPartitioner is OpenvinoPartitioner is OpenVINOPartitioner


def test_delegation_summary_of_what_lower_returns():
    module, inputs = Fn(lambda x: (torch.cumsum(x.int(), 0) + 1, x.relu() * 2)), (torch.randn(4),)
    lowered = exov.lower(module, inputs)
    summary = exov.delegation_summary(lowered)
    assert summary.partitions >= 1 and 0 < summary.delegated < summary.total
    from executorch.exir import to_edge_transform_and_lower

    edge = to_edge_transform_and_lower(torch.export.export(module, inputs), partitioner=[exov.OpenvinoPartitioner()])
    assert exov.delegation_summary(edge) == exov.delegation_summary(edge.exported_program())
    assert exov.delegation_summary(edge).total == summary.total
    with pytest.raises(TypeError, match="lowered program"):
        exov.delegation_summary(lowered.buffer)


class PositionIds(torch.nn.Module):
    def forward(self, ids):
        return (torch.ones_like(ids).cumsum(-1) - 1) * ids


@pytest.mark.parametrize("module, inputs", [
    (Fn(lambda a: (a * 2,)), (torch.tensor(3, dtype=torch.int32),)),            # 0-d int32 stays int32
    (Fn(lambda a, b: (a * b, a + 1)), (torch.tensor(3, dtype=torch.int16), torch.tensor([1, 2], dtype=torch.int16))),
    (Fn(lambda i: (torch.remainder(i, 3), i % -4)), (torch.tensor([-7, -1, 0, 5, 2**20], dtype=torch.int32),)),
    (PositionIds(), (torch.tensor([[5, 6, 7, 8]]),)),
], ids=["0-d int32", "0-d int16 with 1-d", "integer remainder", "position ids cumsum"])
@pytest.mark.sampled(every=2)
def test_the_standard_path_gives_what_lower_gives(module, inputs):
    from executorch.exir import to_edge_transform_and_lower

    expected = eager(module, inputs)
    edge = to_edge_transform_and_lower(torch.export.export(module, inputs), partitioner=[exov.OpenvinoPartitioner()])
    lowered = exov.lower(module, inputs)
    assert exov.delegation_summary(edge) == exov.delegation_summary(lowered)
    for pte in (edge.to_executorch().buffer, lowered.buffer):
        assert_matches_eager(run(pte, inputs), expected)


def test_to_edge_then_to_backend_refuses_a_remainder_it_would_get_wrong():
    """``to_edge(...).to_backend(...)`` skips transform_for_pre_decomposition: ExecuTorch's kernel would give
    remainder(-7, 3) == -1 (eager 2) without any error."""
    from executorch.exir import to_edge

    x = torch.tensor([-7, 5, 1, -1], dtype=torch.int32)
    edge = to_edge(torch.export.export(Fn(lambda x: (x % 3,)), (x,)))
    with pytest.raises(ValueError, match="integer remainder that would run on ExecuTorch.s kernel.*to_edge_transform_and_lower"):
        edge.to_backend(exov.OpenvinoPartitioner())
    module, inputs = Fn(lambda x: ((x * 3).relu() - 1,)), (x,)
    edge = to_edge(torch.export.export(module, inputs)).to_backend(exov.OpenvinoPartitioner())
    assert exov.delegation_summary(edge).delegated > 0
    assert_matches_eager(run(edge.to_executorch().buffer, inputs), eager(module, inputs))


def test_a_partitioner_reused_after_a_failed_lowering_still_refuses_a_remainder(monkeypatch):
    """A transform_for_pre_decomposition that failed part-way is not counted as one that ran: the same
    partitioner given to to_edge(...).to_backend(...) afterwards must not leave the remainders to ExecuTorch's
    kernel, which gives remainder(-7, 3) == -1 (eager 2)."""
    from executorch.exir import to_edge, to_edge_transform_and_lower

    x = torch.tensor([-7, 5, 1, -1], dtype=torch.int32)
    module = Fn(lambda x: (x % 3, torch.remainder(x, -4)))
    partitioner = exov.OpenvinoPartitioner()

    def fail(program):
        raise RuntimeError("a pass failed on purpose")

    with monkeypatch.context() as patch:
        patch.setattr(partitioner, "ops_to_not_decompose", fail)
        with pytest.raises(RuntimeError, match="on purpose"):
            to_edge_transform_and_lower(torch.export.export(module, (x,)), partitioner=[partitioner])
    with pytest.raises(ValueError, match="integer remainder that would run on ExecuTorch.s kernel"):
        to_edge(torch.export.export(module, (x,))).to_backend(partitioner)


def test_delegation_summary_counts_another_backends_operators_in_the_total():
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    module, inputs = Fn(lambda x: (torch.cumsum(x.int(), 0) + 1, x.relu() * 2)), (torch.randn(4),)
    alone = exov.delegation_summary(to_edge_transform_and_lower(
        torch.export.export(module, inputs), partitioner=[exov.OpenvinoPartitioner()]))
    both = exov.delegation_summary(to_edge_transform_and_lower(
        torch.export.export(module, inputs),
        partitioner=[XnnpackPartitioner(), exov.OpenvinoPartitioner()]))
    assert both.total == alone.total and both.delegated < alone.delegated, (alone, both)


def test_a_bare_tensor_as_example_inputs_is_refused_not_split():
    """tuple(tensor) would have made each row of a (1, 4) example an input: a program for shape (4,)."""
    with pytest.raises(TypeError, match=r"example_inputs is a Tensor: give a tuple .*\(x,\)"):
        exov.lower(torch.nn.Linear(4, 4), torch.randn(1, 4))


def test_a_node_name_to_skip_that_the_program_lacks_is_a_warning():
    module, inputs = Fn(lambda x: ((x * 2).relu(),)), (torch.randn(8),)
    with pytest.warns(UserWarning, match=r"op_names_to_skip names \['aten_relu_defualt'\].*aten_mul_tensor"):
        pte, summary = lower(module, inputs, partitioner=exov.OpenvinoPartitioner(op_names_to_skip={"aten_relu_defualt"}))
    assert summary.delegated == summary.total


def test_the_version_is_the_installed_distributions():
    from importlib.metadata import version

    assert exov.__version__ == version("executorch-openvino")


def test_a_dynamic_size_without_an_upper_bound_is_a_warning_naming_the_dimension():
    """ExecuTorch plans it at the example's size: (2, 5) here, refusing a batch of 3 at run time."""
    from torch.export import Dim

    module, inputs = OneInput(lambda x: (x * 2).softmax(-1)), (torch.randn(2, 5),)
    with pytest.warns(UserWarning, match=r"without an upper bound \(input 0 dimension 0\).*Dim\('b', max=64\)") as caught:
        exov.lower(module, inputs, dynamic_shapes=({0: Dim("b")},))
    assert [w.filename for w in caught if "upper bound" in str(w.message)] == [__file__]  # the caller's line
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        program = exov.lower(module, inputs, dynamic_shapes=({0: Dim("b", max=8)},))
    x = torch.randn(7, 5)
    assert_matches_eager(run(program.buffer, (x,)), eager(module, (x,)))


def test_exact_and_fast_remainders_and_the_remainders_executorch_adds(tmp_path):
    """numerics="fast" leaves integer remainders to OpenVINO (its floor division truncates, so the exact rewrite
    would be wrong there); take_along_dim's decomposition adds a remainder after the rewrite, which stays as
    before; to_edge().to_backend() refuses one inside a torch.cond branch."""
    from executorch.exir import to_edge

    from executorch_openvino.lowering.operator_support import openvino_supported_ops

    x = torch.tensor([-7, -1, 7, 0, 5], dtype=torch.int32)
    module = Fn(lambda x: (x % 3, torch.remainder(x, -4)))
    assert_matches_eager(run(exov.lower(module, (x,)).buffer, (x,)), eager(module, (x,)))
    if "torch.ops.aten.remainder.Scalar" in openvino_supported_ops():  # 2026.4.1's converter
        assert_matches_eager(run(exov.lower(module, (x,), numerics="fast").buffer, (x,)), eager(module, (x,)))
    else:  # 2025.4.1's takes none: ExecuTorch's kernel would give the dividend's sign
        with pytest.raises(ValueError, match="integer remainder that would run on ExecuTorch's kernel"):
            exov.lower(module, (x,), numerics="fast")
    a, i = torch.arange(12.).reshape(3, 4), torch.tensor([[0, -1], [1, 2], [-2, 0]])
    take = Fn(lambda a, i: (torch.take_along_dim(a, i, dim=1),))
    assert_matches_eager(run(exov.lower(take, (a, i)).buffer, (a, i)), eager(take, (a, i)))

    class Branches(torch.nn.Module):
        def forward(self, p, x):
            return torch.cond(p.sum() > 0, lambda x: x % 4, lambda x: x + 1, (x,))

    edge = to_edge(torch.export.export(Branches(), (torch.ones(1), x)))
    with pytest.raises(ValueError, match="integer remainder that would run on ExecuTorch's kernel"):
        edge.to_backend(exov.OpenvinoPartitioner())


def test_delegation_summary_of_a_chosen_method():
    from executorch.exir import to_edge_transform_and_lower

    def programs_():
        return {"double": torch.export.export(Fn(lambda x: (x * 2,)), (torch.randn(4),)),
                "relu": torch.export.export(Fn(lambda x: (x.relu().cumsum(0).int() + 1,)), (torch.randn(4),))}

    programs = programs_()
    edge = to_edge_transform_and_lower(programs, partitioner=[exov.OpenvinoPartitioner()])
    for name, exported in programs_().items():
        alone = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner()])
        assert exov.delegation_summary(edge, method=name) == exov.delegation_summary(alone), name
    assert exov.delegation_summary(edge.to_executorch(), method="double") == exov.delegation_summary(edge, "double")
    with pytest.raises(ValueError, match="no method 'forward'; its methods: double, relu"):
        exov.delegation_summary(edge)
