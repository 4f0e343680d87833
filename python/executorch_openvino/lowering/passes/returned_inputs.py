"""Gives a program output that *is* one of its inputs a buffer of its own before emission.

Why: ExecuTorch 1.5.1 returns zeros, without an error, for a method whose
inputs or outputs are left out of memory planning (what :func:`lower` does for
dynamic shapes) when an output is an input: the runtime gives every unplanned
output a fresh buffer (``Method::set_output_data_ptr``), and that output's value
is the input's own, so the input's data pointer is replaced with the empty
buffer. The output and everything computed from the input then read zeros.
Measured with and without any delegate (``return x, x * 2`` gave ``[0, 0, 0, 0]``
twice for ``arange(4.)``). A copy makes the output a value of its own.
"""

from __future__ import annotations

import torch


def copy_outputs_that_are_inputs(program) -> int:
    """Inserts ``aten.clone`` (ExecuTorch's portable kernel) for each user output that is a user input.

    ``program``: the edge ``ExportedProgram`` (``EdgeProgramManager.exported_program()``),
    changed in place, graph signature included. Returns how many copies were made.
    """
    from executorch.exir.dialects._ops import ops as exir_ops
    from torch.export.graph_signature import InputKind, OutputKind, TensorArgument

    signature = program.graph_signature
    user_inputs = {spec.arg.name for spec in signature.input_specs
                   if spec.kind == InputKind.USER_INPUT and isinstance(spec.arg, TensorArgument)}
    graph = program.graph_module.graph
    output = graph.output_node()
    placeholders = {node.name: node for node in graph.nodes if node.op == "placeholder"}
    returned = list(output.args[0])
    copies = {}
    for index, spec in enumerate(signature.output_specs):
        if spec.kind != OutputKind.USER_OUTPUT or not isinstance(spec.arg, TensorArgument):
            continue
        if spec.arg.name not in user_inputs:
            continue
        source = placeholders[spec.arg.name]
        copy = copies.get(source.name)
        if copy is None:
            with graph.inserting_before(output):
                copy = graph.call_function(exir_ops.edge.aten.clone.default, (source,))
            value = source.meta["val"]
            with value.fake_mode:
                copy.meta["val"] = torch.ops.aten.clone.default(value)
            copies[source.name] = copy
        returned[index] = copy
        spec.arg = TensorArgument(name=copy.name)
    if copies:
        output.args = (tuple(returned),)
        graph.lint()
        program.graph_module.recompile()
    return len(copies)
