"""Partition outputs that are bare copies of other values: returned once before conversion, copied again after.

OpenVINO's converter turns a copy that keeps its source's shape and dtype into nothing
(see :data:`~executorch_openvino.lowering.ops.COPY_OPS`), so the copies are taken out of the
graph's outputs and restored as separate results of the converted model.
"""

from __future__ import annotations

import torch

from ..ops import is_bare_copy


def _copy_source(node):
    """The node whose values `node` returns unchanged (itself when it computes something)."""
    while is_bare_copy(node):
        node = node.args[0]
    return node


def return_copy_sources(program: torch.export.ExportedProgram) -> list[int]:
    """Makes the partition return each copy's source once; returns output -> returned position.

    OpenVINO names a returned copy after its source, so ``(y, y.clone())`` fails
    to convert and ``x.clone()`` comes back as the input itself. The copies are
    made again after conversion (see :func:`restore_copies`).
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


def restore_copies(model, positions: list[int], trailing: int = 0):
    """One OpenVINO result per partition output, in order; copies share their source's port.

    Each result gets its own output tensor, so the returned buffers stay
    distinct (a result fed by a parameter is copied by the delegate). The
    model's last `trailing` results (index checks) stay last, as they are.
    """
    import openvino as ov

    if positions == list(range(len(positions))):
        return model
    results = model.get_results()
    ports = [results[p].input_value(0) for p in positions]
    ports += [r.input_value(0) for r in results[len(results) - trailing:]] if trailing else []
    return ov.Model([ov.opset13.result(port) for port in ports], model.get_parameters(), model.get_friendly_name())
