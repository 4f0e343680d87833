"""Makes a delegated lookup fail, as PyTorch does, when an index lies outside the table it reads.

OpenVINO's ``Gather`` returns zeros for an index past the end and wraps a
negative one (2026.4.1, CPU): ``Embedding(10, 4)`` returned a row of zeros for
index 12 and the last row for -1, where eager PyTorch raises ``IndexError`` and
ExecuTorch's own kernels fail the call. So each ``embedding``, ``_embedding_bag``, ``index_select``
and tensor ``index`` of a partition gets a check (``gather`` needs none: OpenVINO
fails the inference itself for an index outside ``[-n, n)``), computed by OpenVINO in the
same inference: a 0-d bool that is true when any index is out of range,
returned as an extra output after the partition's own. The tensor name of
that output starts with :data:`~executorch_openvino.contract.processed_blob.INDEX_CHECK_PREFIX`
and carries the message; the delegate keeps these outputs from ExecuTorch and
fails the call, with the message, when one is true (``native/delegate/partition_executor.cpp``).

Indexing with two or more index tensors (``w[i, j]``) reaches OpenVINO as one
flattened index, ``i * columns + j``, which reads the wrong element for a
negative ``j`` (``w[1, -3]`` gave ``w[0, 0]``): such indices are first made
non-negative, ``where(j < 0, j + n, j)``.

Valid indices are PyTorch's: ``[0, n)`` for ``embedding`` and ``index_select``,
``[-n, n)`` for indexing. Lookups along a dimension of symbolic size
(dynamic shapes) and lookups of no index at all stay on ExecuTorch
(:func:`cannot_check`, called by the partitioner). Bool masks are not checked:
PyTorch checks their shape at export. OpenVINO compares integers through float32; the
rounding is monotonic, so an index outside the table is always caught, and
only in a table of more than 2**24 rows can a valid index near its end be
refused too. The checks use ops that OpenVINO 2025.4.1 converts as well (it
has no rule for ``logical_or``).
"""

from __future__ import annotations

import torch

from ..ops import add_call, op_name
from .embedding_bags import scales_last_mean_bag
from .max_embedding_bags import MAX_MODE

aten = torch.ops.aten

# What the call that fails a check says to do (native/delegate/partition_executor.cpp prints each message as
# it is). No commas: OpenVINO's IR separates tensor names with them.
EAGER_RAISES = " (eager PyTorch raises an error for it); "
INDEX_ADVICE = EAGER_RAISES + "pass indices within the size of the dimension they index"
OFFSET_ADVICE = EAGER_RAISES + "give offsets that start at 0 and do not decrease and stay within the number of indices"
RANGE_ADVICE = "; pass values within it or lower the program with a wider range"


def _indexed(node: torch.fx.Node):
    """(index node, table size, lowest valid index) for each tensor of indices `node` reads."""
    name = op_name(node.target)
    value = lambda n: n.meta.get("val") if isinstance(n, torch.fx.Node) else None  # noqa: E731
    if name == "aten.embedding.default":
        return [(node.args[1], value(node.args[0]).shape[0], 0)]
    if name == "aten.index_select.default":
        table, dim = value(node.args[0]), node.args[1]
        return [(node.args[2], table.shape[dim % table.dim()], 0)]
    if name in ("aten.index.Tensor", "aten.index_put.default"):
        table, found, dim = value(node.args[0]), [], 0
        for index in node.args[1]:
            indices = value(index)
            if indices is None:
                dim += 1
            elif indices.dtype == torch.bool:
                dim += indices.dim()
            else:
                found.append((index, table.shape[dim], -table.shape[dim]))
                dim += 1
        return found
    return []


def cannot_check(node: torch.fx.Node) -> bool:
    """A lookup OpenVINO must not take: the size of a dimension it indexes is symbolic (no check, and
    multi-tensor indexing could not be made non-negative), or a tensor of indices is empty (OpenVINO
    2026.4.1's CPU plugin ends the process with SIGFPE compiling a Gather of 0 indices)."""
    for index, size, _ in _indexed(node):
        indices = index.meta.get("val") if isinstance(index, torch.fx.Node) else None
        if not isinstance(size, int) or (isinstance(indices, torch.Tensor) and any(
                isinstance(d, int) and d == 0 for d in indices.shape)):
            return True
    return False


def _outside(graph: torch.fx.Graph, values: torch.fx.Node, lowest: int, size: int) -> torch.fx.Node:
    """True where `values` lies outside ``[lowest, size)``, at the graph's insertion point."""
    return add_call(graph, aten.bitwise_or.Tensor, add_call(graph, aten.lt.Scalar, values, lowest),
                    add_call(graph, aten.ge.Scalar, values, size))


def _embedding_bag_checks(graph: torch.fx.Graph, node: torch.fx.Node) -> list:
    """(check, message) pairs for an embedding bag's indices and offsets, where eager raises: indices outside
    the weight's rows, offsets outside 0..number of indices, a first offset other than 0, offsets that
    decrease. OpenVINO fails the
    inference itself for indices and offsets out of range and for decreasing offsets (2026.4.1), in words that
    do not say which input was wrong, and computes bags from a first offset above 0: so the bags are computed
    from indices and offsets made valid, and the checks' messages are the ones the call fails with."""
    indices, offsets = node.args[1], node.args[2] if len(node.args) > 2 else None
    rows = node.args[0].meta["val"].shape[0]
    where = f"{op_name(node.target)} '{node.name}'"
    found = []
    with graph.inserting_before(node):
        outside = _outside(graph, indices, 0, rows)
        found.append((add_call(graph, aten.any.default, outside),
                      f"{where} was given an index outside 0..{rows - 1}{INDEX_ADVICE}"))
        safe_indices = add_call(graph, aten.where.self, outside, add_call(graph, aten.zeros_like.default, indices),
                                indices)
        node.replace_input_with(indices, safe_indices)
        count = indices.meta["val"].shape[0] if indices.meta["val"].dim() == 1 else None
        if isinstance(offsets, torch.fx.Node) and isinstance(count, int):
            past = add_call(graph, aten.any.default, _outside(graph, offsets, 0, count + 1))
            first = add_call(graph, aten.any.default, add_call(
                graph, aten.ne.Scalar, add_call(graph, aten.slice.Tensor, offsets, 0, 0, 1), 0))
            falling = add_call(graph, aten.any.default, add_call(
                graph, aten.lt.Tensor, add_call(graph, aten.slice.Tensor, offsets, 0, 1, 2**62),
                add_call(graph, aten.slice.Tensor, offsets, 0, 0, -1)))
            # Eager's max mode takes decreasing offsets as if sorted (offset2bag counts them; a tester's finding),
            # where sum and mean raise: so its message says what this refusal is, and what to do.
            falls = (f"{where} was given offsets that decrease, which eager's max mode reads as if sorted and its sum "
                     "and mean modes refuse; this delegate refuses them in every mode: give offsets that do not "
                     "decrease" if len(node.args) > 4 and node.args[4] == MAX_MODE else
                     f"{where} was given offsets that decrease{OFFSET_ADVICE}")
            found += [(past, f"{where} was given an offset outside 0..{count} (the number of indices){OFFSET_ADVICE}"),
                      (first, f"{where} was given a first offset other than 0{OFFSET_ADVICE}"),
                      (falling, falls)]
            # Any of these: every bag empty, which OpenVINO computes (the call fails with the message anyway).
            wrong = add_call(graph, aten.bitwise_or.Tensor, add_call(graph, aten.bitwise_or.Tensor, past, first),
                             falling)
            if len(node.args) > 7 and node.args[7] and node.args[4] == 1 and not scales_last_mean_bag(node):
                # include_last_offset in mean mode: CSR offsets, whose last is the number of indices (PyTorch's
                # documentation). Eager divides another last bag's sum by the indices from its start to the end
                # (offsets [0, 4, 6] over 8: the sum of [4, 6) divided by 4); sums are the bags' either way.
                short = add_call(graph, aten.any.default, add_call(
                    graph, aten.ne.Scalar, add_call(graph, aten.slice.Tensor, offsets, 0, -1, 2**62), count))
                found.append((short, f"{where} was given a last offset other than {count}, the number of indices, "
                                     "with include_last_offset=True in mean mode: eager's result then depends on "
                                     "the last offset, which this delegate takes only with offsets of a static "
                                     "length; pass a last offset of the number of indices, or export the offsets "
                                     "with a static length"))
            node.replace_input_with(offsets, add_call(graph, aten.where.self, wrong,
                                                      add_call(graph, aten.zeros_like.default, offsets), offsets))
    return found


def _make_non_negative(graph: torch.fx.Graph, node: torch.fx.Node) -> None:
    """Rewrites the tensor indices of the ``aten.index.Tensor`` `node` as ``where(i < 0, i + n, i)``."""
    table, indices, dim = node.args[0].meta["val"], list(node.args[1]), 0
    for k, index in enumerate(indices):
        value = index.meta.get("val") if isinstance(index, torch.fx.Node) else None
        if value is not None and value.dtype != torch.bool and isinstance(table.shape[dim], int):
            with graph.inserting_before(node):
                negative = add_call(graph, aten.lt.Scalar, index, 0)
                indices[k] = add_call(graph, aten.where.self, negative,
                                   add_call(graph, aten.add.Scalar, index, table.shape[dim]), index)
        dim += 1 if value is None or value.dtype != torch.bool else value.dim()
    node.args = (node.args[0], indices, *node.args[2:])


def _computations(program: torch.export.ExportedProgram) -> dict:
    """Node -> an int, equal for nodes that compute the same values: the same deterministic operation of the same
    arguments, or small constants (not buffers the program changes) of equal values (a decoder's layers each
    compute the KV cache's write positions from the same input, each with constants of its own and a ``copy``
    into a counter of its own); other inputs and random operations are each their own."""
    signature = program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())  # a KV cache: equal values now, not later
    values = {**{k: program.constants.get(v) for k, v in signature.inputs_to_lifted_tensor_constants.items()},
              **{k: program.state_dict.get(v) for k, v in {**signature.inputs_to_buffers,
                                                              **signature.inputs_to_parameters}.items()
                 if v not in mutated}}
    ids: dict = {}
    interned: dict = {}

    def argument(value):
        if isinstance(value, torch.fx.Node):
            return ids[value]
        if isinstance(value, (list, tuple)):
            return tuple(argument(v) for v in value)
        return repr(value)
    for node in program.graph.nodes:
        operation = getattr(node.target, "_op", node.target)  # an edge operator wraps its ATen one
        value = values.get(node.name) if node.op == "placeholder" else None
        if isinstance(value, torch.Tensor) and value.numel() <= 64:
            structure: tuple = ("constant", str(value.dtype), tuple(value.shape), repr(value.tolist()))
        elif node.op != "call_function" or torch.Tag.nondeterministic_seeded in getattr(operation, "tags", ()):
            structure = (node.op, node.name)
        elif op_name(node.target) == "aten.copy.default":  # src's values in self's shape and dtype, not self's
            target = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
            shape = (str(target.dtype), str(tuple(target.shape))) if isinstance(target, torch.Tensor) else node.name
            structure = ("copy", shape, argument(node.args[1:]), argument(sorted(node.kwargs.items())))
        else:
            structure = (str(node.target), argument(node.args), argument(sorted(node.kwargs.items())))
        ids[node] = interned.setdefault(structure, len(interned))
    return ids


def add_index_checks(program: torch.export.ExportedProgram, input_ranges: tuple = ()) -> list[str]:
    """Appends one check output per tensor of indices that a lookup of the partition `program` reads
    (an edge ``ExportedProgram``, changed in place), and one per partition input named in `input_ranges`
    (``((name, low, high), ...)``, the compile spec: the user's promise, checked), and makes the indices
    of multi-tensor indexing non-negative; returns the checks' messages, in output order."""
    from torch.export.graph_signature import OutputKind, OutputSpec, TensorArgument

    graph = program.graph
    output = next(n for n in graph.nodes if n.op == "output")
    checks, messages = [], []
    declared = {name: (low, high) for name, low, high in input_ranges}
    # One check for lookups of the same indices in the same range (a KV cache's write in every layer):
    # (the indices' computation, lowest, size) -> how many lookups it checks.
    checked: dict[tuple, int] = {}
    firsts: dict[int, tuple] = {}  # message position -> its check's key
    computations = _computations(program)
    for node in list(graph.nodes):
        if node.op == "placeholder" and node.name in declared and node.name in program.graph_signature.user_inputs:
            low, high = declared[node.name]
            with graph.inserting_before(output):
                outside = add_call(graph, aten.bitwise_or.Tensor, add_call(graph, aten.lt.Scalar, node, low),
                                   add_call(graph, aten.gt.Scalar, node, high))
                checks.append(add_call(graph, aten.any.default, outside))
            messages.append(f"input '{node.name}' was given a value outside {low}..{high} (the range declared in "
                            f"input_ranges when it was lowered){RANGE_ADVICE}")
            continue
        if node.op != "call_function":
            continue
        for index, size, lowest in _indexed(node):
            if not isinstance(index, torch.fx.Node) or (
                    index.op == "placeholder" and index.name not in program.graph_signature.user_inputs):
                continue  # a constant: PyTorch checked it when the program was exported
            if not isinstance(size, int):
                continue  # a dynamic size (see the module's docstring)
            if (index.op == "placeholder" and index.name in declared and lowest <= declared[index.name][0]
                    and declared[index.name][1] < size):
                continue  # a user input whose declared range, checked above, lies inside the table
            key = (computations.get(index, index.name), lowest, size)
            if key in checked:
                checked[key] += 1  # the same check: one output for all (a KV cache write per layer)
                continue
            checked[key] = 1
            with graph.inserting_before(output):
                outside = _outside(graph, index, lowest, size)
                checks.append(add_call(graph, aten.any.default, outside))
            # No commas: OpenVINO's IR separates tensor names with them.
            messages.append(f"{op_name(node.target)} '{node.name}' was given an index outside {lowest}..{size - 1}")
            firsts[len(messages) - 1] = key
        if op_name(node.target) == "aten._embedding_bag.default":
            for check, message in _embedding_bag_checks(graph, node):
                checks.append(check)
                messages.append(message)
    for position, key in firsts.items():
        if checked[key] > 1:
            messages[position] += f" (as did {checked[key] - 1} more lookups of the same indices)"
        messages[position] += INDEX_ADVICE
    for node in list(graph.nodes):
        name = op_name(node.target) if node.op == "call_function" else ""
        if ((name == "aten.index.Tensor" and sum(isinstance(i, torch.fx.Node) for i in node.args[1]) > 1)
                or name == "aten.index_put.default"):
            _make_non_negative(graph, node)
    if not checks:
        graph.lint()
        program.graph_module.recompile()
        return []
    output.args = (tuple(output.args[0]) + tuple(checks),)
    program.graph_signature.output_specs.extend(
        OutputSpec(kind=OutputKind.USER_OUTPUT, arg=TensorArgument(name=c.name), target=None) for c in checks)
    program.module_call_graph[0].signature.out_spec = torch.utils._pytree.tree_flatten(tuple(output.args[0]))[1]
    graph.lint()
    program.graph_module.recompile()
    return messages
