"""Converts one delegated partition to OpenVINO IR with OpenVINO's PyTorch frontend.

The partition arrives as an edge-dialect ``ExportedProgram``; ``openvino.convert_model``
reads it through OpenVINO's own FX decoder. The result is fixed to the
partition's static input shapes and to exactly the dtypes ExecuTorch will hand
the delegate, then serialised as IR without fp16 weight compression (so weights
stay bit-identical to the PyTorch ones).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

from . import avg_pool_padding, bool_casts, nan_propagation
from .op_names import op_name
from .processed_blob import LOWERED_WITH_KEY, OpenvinoIr

# torch dtype -> OpenVINO element type name; the delegate's runtime supports these.
TORCH_TO_OPENVINO = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.uint8: "u8",
    torch.bool: "boolean",
}


# ExecuTorch's edge dialect spells these aten ops as dim-order ops; for the
# contiguous layout (the only one the partitioner takes) they mean the same.
DIM_ORDER_OPS = {
    "dim_order_ops._to_dim_order_copy.default": torch.ops.aten._to_copy.default,
    "dim_order_ops._clone_dim_order.default": torch.ops.aten.clone.default,
}


def _restore_aten_ops(program: torch.export.ExportedProgram) -> None:
    for node in program.graph.nodes:
        if node.op == "call_function":
            aten_op = DIM_ORDER_OPS.get(op_name(node.target))
            if aten_op is not None:
                node.target = aten_op
                node.kwargs = {k: v for k, v in node.kwargs.items() if k != "dim_order"}
            _spell_out_all_dims(node)
            if op_name(node.target) in avg_pool_padding.AVG_POOLS:
                avg_pool_padding.spell_out_arguments(node)
    program.graph_module.recompile()


# Reductions whose dim list, when absent, None or [], means every dim; its argument position.
_REDUCTION_DIMS = {"aten.amax.default": 1, "aten.amin.default": 1, "aten.mean.dim": 1, "aten.sum.dim_IntList": 1}
_PERMUTES = ("aten.permute_copy.default", "aten.permute.default")


def _spell_out_all_dims(node: torch.fx.Node) -> None:
    """Dim lists written out in full, as OpenVINO 2025.4.1's converter needs them.

    ``x.amax()`` and ``torch.mean(x, dim=None)`` become reductions over
    ``[0, ..., rank-1]`` ("Got less inputs 1 than expected 2"); ``x.permute(-1, 0, -2)``
    gets non-negative dims (its conversion failed).
    """
    name = op_name(node.target)
    value = node.args[0].meta.get("val") if node.args and isinstance(node.args[0], torch.fx.Node) else None
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        return
    if name in _REDUCTION_DIMS:
        position = _REDUCTION_DIMS[name]
        dims = node.kwargs.get("dim", node.args[position] if len(node.args) > position else None)
        if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
            args = list(node.args) + [None] * max(0, position + 1 - len(node.args))
            args[position] = list(range(value.dim()))
            node.args = tuple(args)
            node.kwargs = {k: v for k, v in node.kwargs.items() if k != "dim"}
    elif name in _PERMUTES and any(d < 0 for d in node.args[1]):
        node.args = (node.args[0], [d % value.dim() for d in node.args[1]], *node.args[2:])


# Ops that OpenVINO's converter turns into nothing when the result has its
# source's shape and dtype (a clone, a full slice, a same-dtype ``.to()``...):
# a partition returning such a copy would return its source's tensor.
COPY_OPS = frozenset({
    "aten.clone.default", "aten.alias_copy.default", "aten.lift_fresh_copy.default", "aten.detach_copy.default",
    "aten._to_copy.default", "aten.slice_copy.Tensor", "aten.view_copy.default", "aten.expand_copy.default",
    "aten.squeeze_copy.dims", "aten.squeeze_copy.dim", "aten.unsqueeze_copy.default",
})


def is_bare_copy(node) -> bool:
    """A copy op whose result has its source's dtype and shape (a cast or reshape is not bare)."""
    if not (isinstance(node, torch.fx.Node) and node.op == "call_function" and node.args
            and isinstance(node.args[0], torch.fx.Node)):
        return False
    name = op_name(node.target)
    if name not in COPY_OPS and name not in DIM_ORDER_OPS:
        return False
    value, source = node.meta.get("val"), node.args[0].meta.get("val")
    return (isinstance(value, torch.Tensor) and isinstance(source, torch.Tensor)
            and value.dtype == source.dtype and value.shape == source.shape)


def _copy_source(node):
    """The node whose values `node` returns unchanged (itself when it computes something)."""
    while is_bare_copy(node):
        node = node.args[0]
    return node


def _return_copy_sources(program: torch.export.ExportedProgram) -> list[int]:
    """Makes the partition return each copy's source once; returns output -> returned position.

    OpenVINO names a returned copy after its source, so ``(y, y.clone())`` fails
    to convert and ``x.clone()`` comes back as the input itself. The copies are
    made again after conversion (see :func:`_restore_copies`).
    """
    from torch.export.graph_signature import OutputKind, OutputSpec, TensorArgument

    output = next(n for n in program.graph.nodes if n.op == "output")
    specs = program.graph_signature.output_specs
    if any(spec.kind != OutputKind.USER_OUTPUT for spec in specs):
        return list(range(len(specs)))
    sources, positions = [], []
    for arg in output.args[0]:
        source = _copy_source(arg)
        if source not in sources:
            sources.append(source)
        positions.append(sources.index(source))
    output.args = (tuple(sources),)
    specs[:] = [OutputSpec(kind=OutputKind.USER_OUTPUT, arg=TensorArgument(name=s.name), target=None)
                for s in sources]
    # ExportedProgram.module() unflattens the outputs with this spec.
    program.module_call_graph[0].signature.out_spec = torch.utils._pytree.tree_flatten(tuple(sources))[1]
    program.graph.eliminate_dead_code()
    program.graph_module.recompile()
    return positions


def _restore_copies(model, positions: list[int]):
    """One OpenVINO result per partition output, in order; copies share their source's port.

    Each result gets its own output tensor, so the returned buffers stay
    distinct (a result fed by a parameter is copied by the delegate).
    """
    import openvino as ov

    if positions == list(range(len(positions))):
        return model
    results = model.get_results()
    ports = [results[p].input_value(0) for p in positions]
    return ov.Model([ov.opset13.result(port) for port in ports], model.get_parameters(), model.get_friendly_name())


class ConversionError(RuntimeError):
    """OpenVINO could not convert a partition; the message says which part and why."""


def _user_input_values(program: torch.export.ExportedProgram) -> list:
    names = set(program.graph_signature.user_inputs)
    return [n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder" and n.name in names]


def _user_output_values(program: torch.export.ExportedProgram) -> list:
    output = next(n for n in program.graph.nodes if n.op == "output")
    return [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in output.args[0]]


def _openvino_type(value, what: str):
    import openvino as ov

    if not isinstance(value, torch.Tensor):
        raise ConversionError(f"{what} is a {type(value).__name__}, only tensors are delegated")
    name = TORCH_TO_OPENVINO.get(value.dtype)
    if name is None:
        raise ConversionError(f"{what} has dtype {value.dtype}, which the OpenVINO delegate does not take")
    return getattr(ov.Type, name)


def _check_int64_constants(program: torch.export.ExportedProgram) -> None:
    """OpenVINO narrows int64 to int32: refuse constants that would change."""
    limit = 2**31
    for name, value in {**program.state_dict, **program.constants}.items():
        if isinstance(value, torch.Tensor) and value.dtype == torch.int64 and value.numel():
            low, high = value.min().item(), value.max().item()
            if low < -limit or high >= limit:
                raise ConversionError(
                    f"the int64 constant {name!r} holds {high if high >= limit else low}, outside the int32 "
                    "range that OpenVINO computes int64 in; its result would be wrong. Keep the computation "
                    "that reads it out of the delegated graph (compute it before or after the model), or "
                    "store the constant as float64/int32 if its values allow"
                )


def _restore_dropped_inputs(model, program: torch.export.ExportedProgram):
    """Puts back, in the partition's order, the parameters OpenVINO's converter dropped as unused.

    Only an input that the partition's graph really does not read is put back;
    one that it reads (for its shape, say) makes a :class:`ConversionError`,
    because the runtime binds inputs by position and a missing one would shift
    the others silently.
    """
    import openvino as ov

    names = set(program.graph_signature.user_inputs)
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder" and n.name in names]
    by_name = {p.get_friendly_name(): p for p in model.get_parameters()}
    if len(by_name) == len(placeholders) or not set(by_name) <= {n.name for n in placeholders}:
        return model  # nothing dropped, or names OpenVINO did not keep: the count check decides
    parameters = []
    for position, node in enumerate(placeholders):
        if node.name in by_name:
            parameters.append(by_name[node.name])
            continue
        if node.users:
            raise ConversionError(
                f"OpenVINO's converter dropped partition input {position} ({node.name!r}) although the partition "
                f"reads it (in {', '.join(u.name for u in node.users)}); the runtime binds inputs by position, "
                "so this partition cannot be delegated. Please report the model to executorch-openvino")
        value = node.meta.get("val")
        if isinstance(value, torch.SymInt):
            parameter = ov.opset13.parameter([], ov.Type.i64, name=node.name)
        else:
            shape = ov.PartialShape([d if isinstance(d, int) else -1 for d in value.shape])
            parameter = ov.opset13.parameter(shape, _openvino_type(value, f"partition input {position}"),
                                             name=node.name)
        parameter.output(0).get_tensor().set_names({node.name})
        parameters.append(parameter)
    return ov.Model(model.get_results(), parameters, model.get_friendly_name())


def _fix_int_parameters(model, inputs: list) -> None:
    """Int (SymInt) partition inputs become 0-d int64 parameters, as the delegate binds them.

    OpenVINO's FX decoder leaves their type and rank dynamic.
    """
    import openvino as ov

    changed = False
    for i, value in enumerate(inputs):
        if isinstance(value, torch.SymInt):
            parameter = model.input(i).get_node()
            parameter.set_element_type(ov.Type.i64)
            parameter.set_partial_shape(ov.PartialShape([]))
            changed = True
    if changed:
        model.validate_nodes_and_infer_types()


def convert_partition(program: torch.export.ExportedProgram, *, propagate_nans: bool = True) -> OpenvinoIr:
    """Returns the OpenVINO IR (XML text, weights) of an edge-dialect partition.

    Inputs keep the partition's order, static shapes and dtypes; outputs keep
    its dtypes. With `propagate_nans` (``numerics="exact"``), min/max-type ops
    return NaN where PyTorch does (``nan_propagation.py``). Raises :class:`ConversionError` when OpenVINO rejects the graph,
    its inputs/outputs do not line up with the partition's, or an int64
    constant lies outside the int32 range.
    """
    import openvino as ov

    inputs = _user_input_values(program)
    outputs = _user_output_values(program)
    _check_int64_constants(program)
    _restore_aten_ops(program)
    avg_pool_padding.pad_explicitly(program)
    nan_propagation.zero_rows_without_keys(program)
    bool_casts.compare_instead_of_casting(program)
    if propagate_nans:
        nan_propagation.propagate_nans(program)
    positions = _return_copy_sources(program)
    try:
        model = ov.convert_model(program)
    except Exception as exc:  # OpenVINO raises several exception types
        raise ConversionError(f"OpenVINO's PyTorch frontend could not convert the partition: {exc}") from exc
    if len(model.outputs) == max(positions, default=-1) + 1:
        model = _restore_copies(model, positions)

    model = _restore_dropped_inputs(model, program)
    if len(model.inputs) != len(inputs):
        raise ConversionError(
            f"OpenVINO's model has {len(model.inputs)} inputs but the partition has {len(inputs)}; "
            "the runtime binds inputs by position, so this partition cannot be delegated"
        )
    if len(model.outputs) != len(outputs):
        raise ConversionError(
            f"OpenVINO's model has {len(model.outputs)} outputs but the partition has {len(outputs)}"
        )

    # Every size that is not symbolic is fixed, in dynamic inputs too: the
    # runtime then refuses a wrong one (ExecuTorch checks a dynamic input only
    # against its element count, and OpenVINO would read (2, 4) as (2, 3)).
    known_shapes = {}
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor):
            known_shapes[model.input(i)] = ov.PartialShape([d if isinstance(d, int) else -1 for d in value.shape])
    if known_shapes:
        model.reshape(known_shapes)

    _fix_int_parameters(model, inputs)
    ppp = ov.preprocess.PrePostProcessor(model)
    for i, value in enumerate(inputs):
        if isinstance(value, torch.SymInt):
            continue
        ppp.input(i).tensor().set_element_type(_openvino_type(value, f"partition input {i}"))
    for i, value in enumerate(outputs):
        ppp.output(i).tensor().set_element_type(_openvino_type(value, f"partition output {i}"))
    model = ppp.build()
    # Named by the runtime when another OpenVINO cannot read this IR (what
    # OpenVINO records itself differs: "OpenVINO Runtime" in 2026.4.1, only
    # from its converter in 2025.4.1).
    model.set_rt_info(ov.get_version(), LOWERED_WITH_KEY)

    with tempfile.TemporaryDirectory(prefix="exov-ir-") as tmp:
        xml_path = Path(tmp) / "partition.xml"
        ov.save_model(model, xml_path, compress_to_fp16=False)
        return OpenvinoIr(xml_path.read_bytes(), xml_path.with_suffix(".bin").read_bytes())
