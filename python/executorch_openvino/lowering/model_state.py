"""Buffers a partition updates, kept by OpenVINO as state between calls (a static KV cache).

When the partitioner hands a partition a buffer together with the computation of its new value
(``partitioner._tag_buffers_updated_inside``), ExecuTorch gives the delegate the buffer to own: the
partition's program reads it as a ``BUFFER`` input and returns its new value as a ``BUFFER_MUTATION``
output, and neither reaches the delegate at run time. The delegate keeps it the way OpenVINO's own
LLM pipelines keep a KV cache: a variable read by ``ReadValue`` (initialised with the buffer's values
from the program) and written by ``Assign``, held in the infer request. So a decode step reads and
writes the cache in place instead of copying it in and out of OpenVINO.

Each delegate handle (one per loaded method) has its own infer request, so a method loaded twice
holds two independent states, each starting from the buffer's values, as ExecuTorch's own mutable
buffers do.

Two steps around OpenVINO's converter: :func:`expose_updated_buffers` before it makes each such buffer
a user input and its update a user output, so OpenVINO converts them as a parameter and a result;
:func:`keep_as_state` after it replaces each pair with a variable.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class UpdatedBuffer:
    """A buffer the partition updates: its name, its values when the program starts, and the
    positions of its input and of its new value among the partition's user inputs and outputs."""

    name: str
    initial: torch.Tensor
    input_position: int | None  # None: the partition never reads the buffer (only its new value is kept)
    output_position: int


def expose_updated_buffers(program: torch.export.ExportedProgram) -> list[UpdatedBuffer]:
    """Rewrites `program` (an edge partition, in place) so that the buffers it updates are its first
    user inputs and their new values user outputs; returns them (none: the program is unchanged)."""
    from torch.export.graph_signature import InputKind, InputSpec, OutputKind, OutputSpec

    signature = program.graph_signature
    updated = {spec.target for spec in signature.output_specs if spec.kind == OutputKind.BUFFER_MUTATION}
    if not updated:
        return []
    placeholders = {node.name: node for node in program.graph.nodes if node.op == "placeholder"}
    kept, moved, initial, unread = [], [], {}, []
    for spec in signature.input_specs:
        if spec.kind == InputKind.BUFFER and spec.target in updated and not placeholders[spec.arg.name].users:
            # Written, never read: not an input (OpenVINO would drop it); its new value is never observed.
            values = program.state_dict if spec.target in program.state_dict else program.constants
            unread.append((spec.target, values.pop(spec.target)))
            program.graph.erase_node(placeholders.pop(spec.arg.name))
            continue
        if spec.kind == InputKind.BUFFER and spec.target in updated:
            moved.append(InputSpec(kind=InputKind.USER_INPUT, arg=spec.arg, target=None, persistent=None))
            values = program.state_dict if spec.target in program.state_dict else program.constants
            initial[spec.arg.name] = (spec.target, values.pop(spec.target))
        else:
            kept.append(spec)
    first_user = next((i for i, spec in enumerate(kept) if spec.kind == InputKind.USER_INPUT), len(kept))
    signature.input_specs[:] = kept[:first_user] + moved + kept[first_user:]
    # Placeholders follow the signature's order.
    anchor = next((placeholders[s.arg.name] for s in kept[first_user:]), None)
    for spec in moved:
        node = placeholders[spec.arg.name]
        if anchor is not None:
            anchor.prepend(node)
        else:
            next(n for n in program.graph.nodes if n.op != "placeholder").prepend(node)

    outputs, found = [], {}
    for position, spec in enumerate(signature.output_specs):
        if spec.kind == OutputKind.BUFFER_MUTATION and spec.target in updated:
            found[spec.target] = position
            spec = OutputSpec(kind=OutputKind.USER_OUTPUT, arg=spec.arg, target=None)
        outputs.append(spec)
    signature.output_specs[:] = outputs

    user_inputs = [s.arg.name for s in signature.input_specs if s.kind == InputKind.USER_INPUT]
    user_outputs = [s for s in signature.output_specs if s.kind == OutputKind.USER_OUTPUT]
    call = program.module_call_graph[0].signature
    if call is not None:
        call.in_spec = torch.utils._pytree.tree_flatten((tuple(user_inputs), {}))[1]
        call.out_spec = torch.utils._pytree.tree_flatten(tuple(user_outputs))[1]
    program.graph.lint()
    program.graph_module.recompile()
    outputs_by_target = {target: [s.arg.name for s in user_outputs].index(outputs[position].arg.name)
                          for target, position in found.items()}
    buffers = [UpdatedBuffer(name=target, initial=value, input_position=None,
                             output_position=outputs_by_target[target]) for target, value in unread]
    for spec in moved:
        target, value = initial[spec.arg.name]
        buffers.append(UpdatedBuffer(name=target, initial=value.detach().clone(),
                                     input_position=user_inputs.index(spec.arg.name),
                                     output_position=[s.arg.name for s in user_outputs].index(
                                         outputs[found[target]].arg.name)))
    return buffers


def keep_as_state(model, buffers: list[UpdatedBuffer], growing: dict | None = None):
    """Returns the OpenVINO model `model` (converted from the program :func:`expose_updated_buffers`
    rewrote) with each buffer's parameter and result replaced by a variable: ``ReadValue`` initialised
    with the buffer's values where the parameter was read, ``Assign`` of the result's value. A buffer
    named in `growing` (name -> axis) is a variable of any size along that axis, starting empty
    (``cached_attention``: a KV cache each call appends to)."""
    import openvino as ov
    from openvino import opset6, opset13
    from openvino.op.util import Variable, VariableInfo

    if not buffers:
        return model
    parameters, results = list(model.get_parameters()), list(model.get_results())
    assigns, variables = [], []
    for buffer in buffers:
        if buffer.input_position is None:
            continue  # never read: its result goes, no variable
        parameter = parameters[buffer.input_position]
        result = results[buffer.output_position]
        if not parameter.output(0).get_target_inputs():
            # Never read (copy(self, src) takes only its shape): ExecuTorch gave the delegate the buffer, so
            # nothing else reads it either, and its value cannot be observed. OpenVINO's IR reader also
            # refuses a variable that is assigned and never read.
            continue
        info = VariableInfo()
        info.variable_id = variable_id(buffer.name)
        info.data_type = parameter.get_element_type()
        info.data_shape = parameter.get_partial_shape()
        initial = buffer.initial
        if buffer.name in (growing or {}):
            axis = growing[buffer.name]
            shape = list(parameter.get_partial_shape())
            shape[axis] = ov.Dimension(-1)
            info.data_shape = ov.PartialShape(shape)
            initial = initial.narrow(axis, 0, 0)
        variable = Variable(info)
        read = opset6.read_value(_initial_value(initial, info.data_type, opset13), variable)
        for target in list(parameter.output(0).get_target_inputs()):
            target.replace_source_output(read.output(0))
        value = result.input_value(0)
        if value.get_element_type() != info.data_type or value.get_index() != 0:
            value = opset13.convert(value, info.data_type).output(0)
        assigns.append(opset6.assign(value.get_node(), variable))  # (it takes a node, of one output)
        variables.append(variable)
    kept_results = [r for i, r in enumerate(results) if i not in {b.output_position for b in buffers}]
    read = {b.input_position for b in buffers if b.input_position is not None}
    kept_parameters = [p for i, p in enumerate(parameters) if i not in read]
    stateful = ov.Model(kept_results, assigns, kept_parameters, model.get_friendly_name())
    stateful.validate_nodes_and_infer_types()
    return stateful


def variable_id(name: str) -> str:
    """The OpenVINO variable that keeps buffer `name`."""
    return f"exov_state_{name}"


def _initial_value(values: torch.Tensor, element_type, opset):
    """The buffer's starting values as a node: a broadcast zero for a buffer of +0.0 or 0 (a KV cache: no
    constant of the cache's size in the IR), else a constant of the values (-0.0 and subnormal values
    are flushed to 0.0 by OpenVINO's CPU plugin, as in any constant: preprocess warns about them)."""
    if not values.any() and not (values.is_floating_point() and torch.signbit(values).any()):
        return opset.broadcast(opset.constant(0, element_type), opset.constant(list(values.shape), dtype=int))
    if values.dtype == torch.bfloat16:
        return opset.convert(opset.constant(values.float().numpy()), element_type)
    return opset.convert(opset.constant(values.numpy()), element_type)
