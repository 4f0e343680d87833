"""A contiguous copy after each operation kept out of ExecuTorch's edge decomposition (before decomposition)."""

from __future__ import annotations

import torch

aten = torch.ops.aten


def copy_kept_results(program: torch.export.ExportedProgram, keep) -> torch.export.ExportedProgram:
    """Follows each node that `keep` keeps with a contiguous copy (`keep`: the filter of
    :func:`~executorch_openvino.lowering.kept_operations.ops_to_not_decompose`).

    The views torch.export traced on a kept operation's result follow eager's
    strides, which can differ from those ExecuTorch's stand-in for the kept op
    gives it (measured, torch 2.13: ``scaled_dot_product_attention`` returned a
    (B, L, H, E)-strided tensor, so HF BERT's ``attn.transpose(1, 2).reshape(B, L, -1)``
    became a ``view``; kept whole, the result was contiguous and that view
    raised "Cannot view a tensor with shape ..."). After a contiguous copy the
    strides are the same either way. Inside a partition OpenVINO's converter
    drops the copy. Returns `program` (changed in place).
    """
    changed = False
    for node in list(program.graph.nodes):
        if not keep(node) or not isinstance(node.meta.get("val"), torch.Tensor):
            continue
        users = list(node.users)
        with program.graph.inserting_after(node):
            copy = program.graph.call_function(aten.clone.default, (node,),
                                               {"memory_format": torch.contiguous_format})
        copy.meta["val"] = node.meta["val"].clone(memory_format=torch.contiguous_format)
        for user in users:
            user.replace_input_with(node, copy)
        changed = True
    if changed:
        program.graph_module.recompile()
    return program
