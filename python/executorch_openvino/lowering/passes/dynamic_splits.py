"""Splits as slices in a program with dynamic sizes, so that ExecuTorch keeps the sizes dynamic.

ExecuTorch 1.5.1's ``to_edge`` fixes the dynamic sizes of a program that calls ``split`` or ``chunk``
(``aten.split.Tensor``, ``aten.split_with_sizes``, ``aten.chunk``, their ``unsafe_`` and ``_copy`` forms) at the
example's, even without a delegate: its edge verifier (``executorch/exir/verification/arg_validator.py``) takes
``len()`` of the first piece, which guards that piece's dynamic first size to the example's value (torch's log:
"eval Eq(s77, 4) [guard added]"). Measured with torch 2.13: ``x.split(16, -1)[0] * 2`` exported with a dynamic
batch came out of ``to_edge`` with the example's batch; ``tensor_split``, ``narrow``, ``unbind`` and slices kept
it. The method then refuses every other size at run time, or ``to_executorch`` fails ("_ViewSpec is incompatible
with its base"; a tester's attention, whose ``qkv.split(...)`` left 9 partitions).

:func:`split_as_slices` writes each such split whose pieces have a dynamic first size, along a dimension of
static size, as one ``slice`` per piece, on the ATen program before ExecuTorch's decomposition. A GRU
(``aten.gru.input``, whose decomposition splits its gates: a tester's batch_first GRU refused every batch but
the example's) is decomposed first, with torch's own decomposition, which ``to_edge`` would apply next anyway.
An LSTM kept its dynamic batch through ``to_edge`` unchanged. Other splits (an LLM's, on a batch of 1) and
programs without dynamic sizes keep their splits: OpenVINO converts one to a VariadicSplit, as
``convert_model`` does.
"""

from __future__ import annotations

import operator

import torch

from ..ops import NodeBuilder, op_name

aten = torch.ops.aten

# Every ATen op that returns a tensor's pieces along one dimension, each (self, size or sizes or chunks, dim).
_SPLITS = {"aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default", "aten.unsafe_split.Tensor",
           "aten.unsafe_split_with_sizes.default", "aten.unsafe_chunk.default", "aten.split_copy.Tensor",
           "aten.split_with_sizes_copy.default"}
_SPLITTING_LAYERS = (aten.gru.input,)


def _has_dynamic_sizes(program: torch.export.ExportedProgram) -> bool:
    return any(isinstance(size, torch.SymInt) for node in program.graph.nodes if node.op == "placeholder"
               for size in getattr(node.meta.get("val"), "shape", ()))


def _dim(split: torch.fx.Node) -> int:
    dim = split.args[2] if len(split.args) > 2 else split.kwargs.get("dim", 0)
    return dim % split.args[0].meta["val"].dim()


def _piece_sizes(split: torch.fx.Node, dim: int) -> list[int] | None:
    """The size of each piece along `dim`, from the split's own result (``chunk`` and a trailing shorter piece
    included); None when one is symbolic, or when the first piece's first size is not (``to_edge`` keeps that
    split's sizes)."""
    pieces = split.meta.get("val")
    if not isinstance(pieces, (list, tuple)) or not pieces or not isinstance(pieces[0].shape[0], torch.SymInt):
        return None
    sizes = [piece.shape[dim] for piece in pieces]
    return sizes if all(isinstance(size, int) for size in sizes) else None


def split_as_slices(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    """In a program with a dynamic input size: decomposes its GRUs, then rewrites as slices each split or chunk
    along a static dimension whose pieces are only indexed (``getitem``) and have a dynamic first size.
    Returns the program: `program` changed in place, or a new one where a GRU was decomposed. Leaves a static
    program unchanged."""
    if not _has_dynamic_sizes(program):
        return program
    if any(n.op == "call_function" and n.target in _SPLITTING_LAYERS for n in program.graph.nodes):
        from torch._decomp import get_decompositions

        program = program.run_decompositions(get_decompositions(list(_SPLITTING_LAYERS)))
    graph = program.graph
    rewritten = 0
    for split in list(graph.nodes):
        if split.op != "call_function" or op_name(split.target) not in _SPLITS:
            continue
        dim = _dim(split)
        sizes = _piece_sizes(split, dim)
        readers = list(split.users)
        if sizes is None or not all(r.op == "call_function" and r.target is operator.getitem for r in readers):
            continue
        build = NodeBuilder(graph, split)
        starts = [sum(sizes[:index]) for index in range(len(sizes))]
        for reader in readers:
            index = reader.args[1] % len(sizes)
            piece = build(aten.slice.Tensor, split.args[0], dim, starts[index], starts[index] + sizes[index])
            reader.replace_all_uses_with(piece)
            graph.erase_node(reader)
        graph.erase_node(split)
        rewritten += 1
    if rewritten:
        graph.lint()
        program.graph_module.recompile()
    return program
