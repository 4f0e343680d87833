"""Adaptive max pools written out as ops ExecuTorch has kernels for and OpenVINO converts.

ExecuTorch 1.5.1 has no kernel for ``adaptive_max_pool2d`` (which
``adaptive_max_pool1d`` becomes), and ``to_edge`` refuses it as not core ATen;
ExecuTorch cannot keep it whole for a partitioner either, as it returns two
tensors (``_remove_invalid_ops_for_not_decompose`` reads two results as an
aliased one). So on the ATen program, before ExecuTorch's decomposition:

- where each input size is a multiple of its output size, PyTorch's windows
  (``[floor(i * n / m), ceil((i + 1) * n / m))``) are a max pool's with kernel
  and stride ``n / m``: the pool becomes ``max_pool2d_with_indices``, values and
  indices alike (indices index the flattened input plane in both), and ties and
  NaN follow the max pool's rules (``nan_propagation``);
- otherwise, when the indices are unused, a max over each window's rows, then
  over each window's columns (windows of rows and columns are independent), as
  slices, ``amax`` and ``cat``: one pair of ops per output row and column.

Other adaptive max pools (indices of uneven windows, dynamic sizes, integer
inputs) are left as they were, and fail to lower as before.
"""

from __future__ import annotations

import operator

import torch

from ..ops import NodeBuilder, op_name, result_read

aten = torch.ops.aten

POOLS = ("aten.adaptive_max_pool1d.default", "aten.adaptive_max_pool2d.default")
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def _windows(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive pooling windows of `size` elements into `out` (start, end)."""
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _plan(node: torch.fx.Node):
    """(input sizes, output sizes, indices used) of a pool this pass writes out, else None."""
    source = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    spatial = 1 if op_name(node.target) == "aten.adaptive_max_pool1d.default" else 2
    if not isinstance(source, torch.Tensor) or source.dtype not in _FLOATS or source.dim() not in (spatial + 1,
                                                                                                   spatial + 2):
        return None
    sizes = list(source.shape[-spatial:])
    output = node.args[1] if len(node.args) > 1 else node.kwargs["output_size"]
    output = [output] * spatial if isinstance(output, int) else list(output)
    if not all(isinstance(s, int) and s > 0 for s in sizes + output):
        return None
    indices_used = result_read(node, 1)
    even = all(s % o == 0 for s, o in zip(sizes, output))
    if not even and indices_used:
        return None
    return sizes, output, indices_used


def _uneven_max(build: NodeBuilder, x: torch.fx.Node, sizes: list, output: list) -> torch.fx.Node:
    """The adaptive max of `x` over its last len(sizes) dims, one window of rows and columns at a time."""
    for axis, (size, out) in enumerate(zip(sizes, output)):
        dim = axis - len(sizes)
        parts = [build(aten.amax.default, build(aten.slice.Tensor, x, dim, start, end), [dim], True)
                 for start, end in _windows(size, out)]
        x = build(aten.cat.default, parts, dim) if len(parts) > 1 else parts[0]
    return x


def write_out_adaptive_max_pools(program: torch.export.ExportedProgram) -> int:
    """Rewrites the adaptive max pools of `program`'s graph that this module takes, in place; returns how many."""
    graph = program.graph
    changed = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or op_name(node.target) not in POOLS or (plan := _plan(node)) is None:
            continue
        sizes, output, _ = plan
        x = node.args[0]
        build = NodeBuilder(graph, node)
        one_d = len(sizes) == 1
        if one_d:  # as a plane of one row
            x = build(aten.unsqueeze.default, x, -2)
            sizes, output = [1, *sizes], [1, *output]
        if all(s % o == 0 for s, o in zip(sizes, output)):
            kernel = [s // o for s, o in zip(sizes, output)]
            pooled = build(aten.max_pool2d_with_indices.default, x, kernel, kernel)
            results = [build(operator.getitem, pooled, 0), build(operator.getitem, pooled, 1)]
        else:
            results = [_uneven_max(build, x, sizes, output), None]
        if one_d:
            results = [r if r is None else build(aten.squeeze.dims, r, [-2]) for r in results]
        for user in list(node.users):
            if user.target is operator.getitem and results[user.args[1]] is not None:
                user.replace_all_uses_with(results[user.args[1]])
                graph.erase_node(user)
            elif user.target is operator.getitem:  # indices of uneven windows: unused
                graph.erase_node(user)
        graph.erase_node(node)
        changed += 1
    if changed:
        graph.lint()
        program.graph_module.recompile()
    return changed
