"""Converts one delegated partition to OpenVINO IR with OpenVINO's PyTorch frontend.

The partition arrives as an edge-dialect ``ExportedProgram``; ``openvino.convert_model``
reads it through OpenVINO's own FX decoder. The result is fixed to the
partition's static input shapes and to exactly the dtypes ExecuTorch will hand
the delegate, then serialised as IR without fp16 weight compression (so weights
stay bit-identical to the PyTorch ones).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch

from ..support import progress
from ..contract.processed_blob import (INDEX_CHECK_PREFIX, LOWERED_WITH_KEY, SIZES_CHECK_MARK, STATE_CHECK_MARK,
                                       OpenVINOIr)
from . import cached_attention, compile_crash_guards, model_state
from .ops import TORCH_TO_OPENVINO
from .passes import embedding_bags, index_checks, max_embedding_bags, returned_copies, run_before_conversion


class ConversionError(RuntimeError):
    """OpenVINO could not convert a partition; the message says which part and why."""


def require_openvino_package() -> None:
    """Raises ``ModuleNotFoundError`` (``name="openvino"``) saying what to install when OpenVINO's Python
    package is missing: lowering needs its PyTorch frontend, running a ``.pte`` needs only its C library. The
    requirement named is this wheel's own (its metadata), so the command matches what pip would install."""
    try:
        import openvino  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "openvino":
            raise  # a broken installation: its own message says more
        raise ModuleNotFoundError(
            "lowering needs OpenVINO's Python package (its PyTorch frontend converts each partition), and it is "
            f"not installed in this environment ({sys.executable}): pip install '{_openvino_requirement()}'. "
            "Running a lowered .pte needs only OpenVINO's C library, from that package or an OpenVINO install "
            "tree (docs/user-guide/deployment.md).", name="openvino") from None


def _openvino_requirement() -> str:
    """``openvino<2027,>=2025.4.1``: the requirement in this wheel's metadata (``openvino`` if none)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement

    try:
        found = [Requirement(r) for r in requires("executorch-openvino") or ()]
    except PackageNotFoundError:
        found = []
    return next((str(r) for r in found if r.name == "openvino" and r.marker is None), "openvino")


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


def _grow_cached_attention(program, buffers: list, inputs: list, outputs: list):
    """``(cached, growing, buffers by placeholder, restart input position)``: a static KV cache's attention
    rewritten by ``cached_attention`` (None when it is not one), ``{input position: (buffer name, growing
    axis)}`` of the states that now grow; `buffers`, `inputs` and `outputs` get the positions' state."""
    names = set(program.graph_signature.user_inputs)
    user_inputs = [n.name for n in program.graph.nodes if n.op == "placeholder" and n.name in names]
    by_placeholder = {user_inputs[b.input_position]: b for b in buffers if b.input_position is not None}
    states = {name: b.initial for name, b in by_placeholder.items()}
    cached = cached_attention.rewrite(program, states) if by_placeholder else None
    if cached is None:
        return None, {}, {}, -1
    restart = user_inputs.index(cached.restart_input)
    growing = {by_placeholder[c].input_position: (by_placeholder[c].name, 2) for c in cached.caches}
    inputs.append(cached.positions_value)
    outputs.append(cached.positions_value)  # its shape and dtype: (any, int64)
    buffers.append(model_state.UpdatedBuffer(name=cached.positions_input, initial=torch.zeros(0, dtype=torch.int64),
                                             input_position=len(inputs) - 1, output_position=len(outputs) - 1))
    growing[len(inputs) - 1] = (cached.positions_input, 0)
    return cached, growing, by_placeholder, restart


def size_range(program, size):
    """An input's size as an OpenVINO ``Dimension``: fixed, or up to its symbol's exported upper bound (an
    expression of several symbols gets no bound). Lower bounds are not kept: a partition's range says 2 where
    the export said 0 or 1 (torch 2.13's specialization of sizes 0 and 1, through ExecuTorch 1.5.1's
    partitioning), and 3 for ``m + 1`` whose ``m`` was raised from 1 to 2, which takes 2 (a test's case)."""
    import openvino as ov

    from ..contract.input_spec import finite_bound

    if isinstance(size, int):
        return ov.Dimension(size)
    bounds = program.range_constraints.get(size.node.expr)
    upper = finite_bound(bounds.upper) if bounds is not None else None
    return ov.Dimension(0, -1 if upper is None else upper)


def shared_size_checks(model, inputs: list, growing: set, state_inputs: set, names: list[str] = ()) -> list[str]:
    """Appends to `model` (its inputs in `inputs`' order) one check output per pair of input sizes exported as
    one symbol (``x: (n, 4)``, ``y: (n, 2)``): true when the sizes differ. Returns, per check, what follows the
    check prefix and mark in its name (:func:`_name_size_checks`): ``sizes:A,a,B,b:`` and the message, with the
    inputs numbered as the compiled model will have them (the `state_inputs` become state, so they are gone)
    and named by `names` (the partition's placeholders, :func:`_name_inputs`) where given.

    The runtime's shape check looks at each input alone: without these, ``x`` (5, 4) with ``y`` (3, 2) failed
    inside OpenVINO unexplained, and a size of 1 would broadcast. The checks go last: the runtime reads
    trailing check outputs. Left out: `growing` inputs (a KV cache whose length grows) and `state_inputs`."""
    import openvino as ov
    from openvino import opset13

    def now(position):
        return position - sum(s < position for s in state_inputs)

    def named(position):
        name = f" ({names[position]!r})" if len(names) == len(inputs) else ""
        return f"input {now(position)}{name}"

    first_seen: dict = {}
    checks = []
    for i, value in enumerate(inputs):
        if not isinstance(value, torch.Tensor) or i in growing or i in state_inputs:
            continue
        for d, size in enumerate(value.shape):
            if isinstance(size, int):
                continue
            key = str(size.node.expr)
            if key not in first_seen:
                first_seen[key] = (i, d)
                continue
            j, e = first_seen[key]
            sizes = [opset13.gather(opset13.shape_of(model.input(k), "i64"), opset13.constant([axis], ov.Type.i64),
                                    opset13.constant(0, ov.Type.i64)) for k, axis in ((j, e), (i, d))]
            model.add_results([opset13.result(opset13.squeeze(opset13.not_equal(*sizes),
                                                              opset13.constant([0], ov.Type.i64)))])
            checks.append(f"{SIZES_CHECK_MARK}{now(j)},{e},{now(i)},{d}:{named(j)} dimension {e} and {named(i)} "
                          f"dimension {d} differ, but the program was exported with them as one dynamic size; pass "
                          "inputs whose sizes agree")
    return checks


def _name_size_checks(model, checks: list, mark: str) -> None:
    """Names the last outputs of `model`, :func:`shared_size_checks`' flags, for the runtime."""
    first = len(model.outputs) - len(checks)
    for k, check in enumerate(checks):
        model.output(first + k).get_tensor().set_names({INDEX_CHECK_PREFIX + mark + check})


def _name_inputs(model, names: list[str]) -> None:
    """Gives each of `model`'s inputs the name of the partition's placeholder it is (a method's input keeps its
    argument's name: "input_ids", where the converter wrote "arg_0"), which the runtime's messages show beside
    the partition's input number. A name another tensor has already is left alone."""
    if len(names) != len(model.inputs):
        return
    taken = {name for op in model.get_ordered_ops() for out in op.outputs() for name in out.get_names()}
    for port, name in zip(model.inputs, names):
        if name not in taken:
            port.get_tensor().set_names({name})


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


def convert_partition(program: torch.export.ExportedProgram, *, propagate_nans: bool = True,
                      compress=None, input_ranges: tuple = ()) -> OpenVINOIr:
    """Returns the OpenVINO IR (XML text, weights) of an edge-dialect partition.

    Inputs keep the partition's order, static shapes and dtypes; outputs keep
    its dtypes. With `propagate_nans` (``numerics="exact"``), min/max-type ops
    return NaN where PyTorch does (``passes/nan_propagation.py``). `compress`, when given, takes the
    OpenVINO model and returns it with compressed weights (``weight_compression.py``); `input_ranges`, the
    declared ranges of inputs to check (compile spec ``input_ranges``). Raises :class:`ConversionError` when
    OpenVINO rejects the graph,
    its inputs/outputs do not line up with the partition's, or an int64
    constant lies outside the int32 range.
    """
    import openvino as ov

    buffers = model_state.expose_updated_buffers(program)
    inputs = _user_input_values(program)
    outputs = _user_output_values(program)
    _check_int64_constants(program)
    run_before_conversion(program, propagate_nans=propagate_nans)
    positions = returned_copies.return_copy_sources(program)
    checks = index_checks.add_index_checks(program, input_ranges)
    max_embedding_bags.expand_max_bags(program)  # after the checks, which read the user's indices and offsets
    embedding_bags.add_spare_bag(program)  # the same
    kept_outputs = len(outputs) - len(buffers)  # the partition's own outputs, before the checks
    cached, growing, cached_buffers, restart = _grow_cached_attention(program, buffers, inputs, outputs)
    if cached is not None:
        checks.append(cached.check_message)
    try:
        model = ov.convert_model(program)
    except Exception as exc:  # OpenVINO raises several exception types
        raise ConversionError(f"OpenVINO's PyTorch frontend could not convert the partition: {exc}") from exc
    progress.stage(f"OpenVINO's model: {len(model.get_ordered_ops())} nodes")
    # (after the checks: the positions' state, then its check, when cached is not None)
    trailing = len(checks) + (cached is not None)
    if len(model.outputs) == max(positions, default=-1) + 1 + trailing:
        model = returned_copies.restore_copies(model, positions, trailing=trailing)

    model = _restore_dropped_inputs(model, program)
    if len(model.inputs) != len(inputs):
        raise ConversionError(
            f"OpenVINO's model has {len(model.inputs)} inputs but the partition has {len(inputs)}; "
            "the runtime binds inputs by position, so this partition cannot be delegated"
        )
    if len(model.outputs) != len(outputs) + len(checks):
        raise ConversionError(
            f"OpenVINO's model has {len(model.outputs)} outputs but the partition has {len(outputs)}"
            + (f" and {len(checks)} index checks" if checks else "")
        )
    if cached is not None:
        model = cached_attention.move_state_before_checks(model, len(outputs) - 1, len(checks))
    _name_inputs(model, list(program.graph_signature.user_inputs))

    # Every size that is not symbolic is fixed, in dynamic inputs too: the
    # runtime then refuses a wrong one (ExecuTorch checks a dynamic input only
    # against its element count, and OpenVINO would read (2, 4) as (2, 3)).
    # A symbolic size gets its exported upper bound (Dim("seq", max=128) -> 0..128), which the runtime names and
    # enforces: ExecuTorch checks a dynamic input only against its element count.
    known_shapes = {}
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor):
            shape = [size_range(program, d) for d in value.shape]
            if i in growing:
                shape[growing[i][1]] = ov.Dimension()
            known_shapes[model.input(i)] = ov.PartialShape(shape)
    if known_shapes:
        model.reshape(known_shapes)
    # (inputs that become state are left out: the runtime never sees them)
    state_inputs = {b.input_position for b in buffers if b.input_position is not None}
    size_checks = shared_size_checks(model, inputs, set(growing), state_inputs,
                                     list(program.graph_signature.user_inputs))

    _fix_int_parameters(model, inputs)
    ppp = ov.preprocess.PrePostProcessor(model)
    for i, value in enumerate(inputs):
        if isinstance(value, torch.SymInt):
            continue
        ppp.input(i).tensor().set_element_type(_openvino_type(value, f"partition input {i}"))
    for i, value in enumerate(outputs):
        ppp.output(i).tensor().set_element_type(_openvino_type(value, f"partition output {i}"))
    model = model_state.keep_as_state(ppp.build(), buffers, {name: axis for name, axis in growing.values()})
    mark = STATE_CHECK_MARK if buffers else ""
    for k, message in enumerate(checks):
        model.output(kept_outputs + k).get_tensor().set_names({INDEX_CHECK_PREFIX + mark + message})
    if cached is not None:
        variables = {b.name: model_state.variable_id(b.name) for b in buffers}
        variables.update({placeholder: model_state.variable_id(b.name) for placeholder, b in cached_buffers.items()})
        # (the states' inputs before it are gone: keep_as_state made them variables)
        restart -= sum(b.input_position is not None and b.input_position < restart for b in buffers)
        model = cached_attention.finish(model, cached, variables, restart=restart, exact=propagate_nans)
    # Named by the runtime when another OpenVINO cannot read this IR (what
    # OpenVINO records itself differs: "OpenVINO Runtime" in 2026.4.1, only
    # from its converter in 2025.4.1).
    _name_size_checks(model, size_checks, mark)
    if compress is not None:
        model = compress(model)
    compile_crash_guards.guard_biased_matmul_sums(model)  # last: it avoids a crash of OpenVINO's compile
    model.set_rt_info(ov.get_version(), LOWERED_WITH_KEY)

    progress.stage("writing the partition's IR")
    with tempfile.TemporaryDirectory(prefix="exov-ir-") as tmp:
        xml_path = Path(tmp) / "partition.xml"
        ov.save_model(model, xml_path, compress_to_fp16=False)
        return OpenVINOIr(xml_path.read_bytes(), xml_path.with_suffix(".bin").read_bytes())
