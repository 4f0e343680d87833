"""Ahead-of-time half of the delegate: ExecuTorch's ``BackendDetails`` for OpenVINO.

The class name is the backend id written into the ``.pte``; it must equal the
id the native delegate registers (``executorch_openvino.BACKEND_ID``).
"""

from __future__ import annotations

import functools
import warnings

import torch
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from ..contract import processed_blob
from ..support import progress
from ..contract.compile_specs import resolve_options
from ..support.quiet import quiet_dependencies
from .conversion import convert_partition, require_openvino_package
from .ops import count_operators
from .gguf_weights import BLOCK as GGUF_BLOCK
from .weight_compression import compress_weights


class ExecutorchOpenvinoBackend(BackendDetails):
    """Preprocess: one partition -> processed blob (header + OpenVINO IR).

    Raises ``ValueError`` for bad compile specs (before conversion starts),
    ``ModuleNotFoundError`` naming the pip command when OpenVINO's Python package is
    not installed, and ``executorch_openvino.ConversionError`` when OpenVINO cannot
    convert the partition.
    """

    @staticmethod
    def preprocess(edge_program, compile_specs) -> PreprocessResult:
        with quiet_dependencies():
            options = resolve_options(compile_specs)  # fail fast, before OpenVINO is involved
            require_openvino_package()
            if options.numerics == "exact":
                _warn_about_flushed_constants(edge_program, gguf=bool(options.gguf_weights))
            compress = None
            if options.weight_compression or options.gguf_weights:
                compress = functools.partial(compress_weights, mode=options.weight_compression,
                                             group_size=options.weight_group_size, ratio=options.weight_ratio,
                                             gguf_file=options.gguf_weights,
                                             float_activations=options.numerics == "exact")
            reporter = progress.current()
            if reporter is not None:
                reporter.converted += 1
                reporter.line(f"partition {reporter.converted} of {reporter.partitions or '?'}: converting "
                              f"{count_operators(edge_program.graph)} operators to OpenVINO")
            ir = convert_partition(edge_program, propagate_nans=options.numerics == "exact", compress=compress,
                                   input_ranges=options.input_ranges)
            return PreprocessResult(processed_bytes=processed_blob.pack(ir))


BACKEND_ID = ExecutorchOpenvinoBackend.__name__


def _warn_about_flushed_constants(program, gguf: bool = False) -> None:
    """Names the parameters/buffers whose subnormal or -0.0 values OpenVINO will make 0.0.

    Lifted constants holding such values are kept on ExecuTorch's side by the
    partitioner; parameters and buffers cannot be (their values are fake while
    ExecuTorch partitions), and their effect is at most a subnormal or the sign
    of a zero in a result. The warning suggests what removes the difference:
    those values set to 0.0 in the model. (``numerics="fast"`` would only skip
    this check: OpenVINO flushes them all the same.)

    With `gguf` (compile spec ``gguf_weights``) matrices whose rows are whole blocks are left out: their
    values come from the file's blocks, which OpenVINO decompresses in its kernels (a Q4_0 block with a
    negative scale holds -0.0 for its 8s, and so does the decompressed value).
    """
    from .operator_support import has_flushed_values

    named = {**program.state_dict, **program.constants}
    flushed = sorted(name for name, value in named.items()
                     if isinstance(value, torch.Tensor) and has_flushed_values(value)
                     and not (gguf and value.dim() == 2 and value.shape[1] % GGUF_BLOCK == 0))
    if flushed:
        warnings.warn(
            f"OpenVINO's CPU plugin flushes subnormal and -0.0 constant values to 0.0; these delegated "
            f"constants hold some: {', '.join(flushed[:5])}{' ...' if len(flushed) > 5 else ''}. Results that "
            "depend on them may differ from PyTorch by a subnormal or the sign of a zero. To match PyTorch "
            "exactly, set those values to 0.0 in the model before exporting it, e.g. for each such tensor t: "
            "t.data = torch.where(t.abs() < torch.finfo(t.dtype).tiny, 0.0, t).",
            stacklevel=2)
