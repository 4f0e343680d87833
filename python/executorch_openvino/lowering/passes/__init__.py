"""The lowering's graph passes: which run at which stage, in what order (the one place that says so).

Each pass is a module of this folder and rewrites a program in place. Three stages:

1. :func:`run_before_decomposition`: on the ATen program, before ExecuTorch's edge decomposition
   (``OpenVINOPartitioner.transform_for_pre_decomposition``, which ``to_edge_transform_and_lower``
   calls, so ``exov.lower`` and ExecuTorch's own API lower the same program).
2. :func:`run_before_emission`: on the edge program after partitioning, before ExecuTorch writes the
   ``.pte`` (``exov.lower``).
3. :func:`run_before_conversion`: on each delegated partition, before OpenVINO's PyTorch frontend
   converts it (``conversion.convert_partition``). ``returned_copies`` brackets the conversion
   itself (a graph half before, a model half after), so ``convert_partition`` calls it.

Importing this package imports only torch and :mod:`executorch_openvino.lowering.ops`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from . import (adaptive_max_pools, arange_dtypes, aten_spelling, avg_pool_padding, bool_casts, clamp_bounds,
               constant_cumsums, dynamic_splits, embedding_bags, flattened_matmuls, integer_remainders,
               kept_result_copies, medians, nan_propagation, per_channel_dequantize, returned_inputs, round_decimals,
               view_sizes, zero_dim_integer_dtypes)


def run_before_decomposition(program: torch.export.ExportedProgram, *, exact: bool,
                             kept_filter: Callable[[torch.export.ExportedProgram], Callable[[torch.fx.Node], bool]]
                             ) -> torch.export.ExportedProgram:
    """Stage 1. `exact`: ``numerics="exact"``; `kept_filter`: gives, for the program as the earlier passes
    left it, the filter of the operations kept whole (``Partitioner.ops_to_not_decompose``).
    Returns the program: changed in place, or a new one where a GRU of a dynamic program was decomposed."""
    zero_dim_integer_dtypes.keep_zero_dim_integer_dtypes(program)
    program = dynamic_splits.split_as_slices(program)  # else to_edge fixes the dynamic sizes at the example's
    # "fast" delegates remainders (where OpenVINO's converter takes them: 2026.4.1, not 2025.4.1, whose
    # fast-mode remainders the partitioner refuses), and OpenVINO's integer floor division truncates
    # (docs/user-guide/numerics.md).
    if exact:
        integer_remainders.rewrite_integer_remainders(program)
    constant_cumsums.fold_constant_integer_cumsums(program)
    # Operations ExecuTorch has no kernel for and to_edge refuses, in operations it has and OpenVINO converts.
    medians.write_out_medians(program)
    adaptive_max_pools.write_out_adaptive_max_pools(program)
    embedding_bags.call_embedding_bag_directly(program)
    round_decimals.write_out_round_decimals(program)
    return kept_result_copies.copy_kept_results(program, kept_filter(program))


def run_before_emission(program) -> int:
    """Stage 2, on an ``EdgeProgramManager``'s methods; returns how many outputs were given a copy."""
    return returned_inputs.copy_outputs_that_are_inputs(program)


def run_before_conversion(program: torch.export.ExportedProgram, *, propagate_nans: bool) -> None:
    """Stage 3 on one partition. `propagate_nans`: ``numerics="exact"``."""
    aten_spelling.restore_aten_ops(program)
    arange_dtypes.state_float_arange_dtypes(program)
    per_channel_dequantize.write_out_per_channel_dequantize(program)
    avg_pool_padding.pad_explicitly(program)
    flattened_matmuls.unflatten_matmuls(program)
    nan_propagation.zero_rows_without_keys(program)
    view_sizes.write_static_view_sizes(program)
    bool_casts.compare_instead_of_casting(program)
    clamp_bounds.round_half_clamp_bounds(program)
    if propagate_nans:
        nan_propagation.propagate_nans(program)
