"""Ahead-of-time half of the delegate: ExecuTorch's ``BackendDetails`` for OpenVINO.

The class name is the backend id written into the ``.pte``; it must equal the
id the native delegate registers (``executorch_openvino.BACKEND_ID``).
"""

from __future__ import annotations

from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult

from . import processed_blob
from .compile_specs import resolve_options
from .conversion import convert_partition


class ExecutorchOpenvinoBackend(BackendDetails):
    """Preprocess: one partition -> processed blob (header + OpenVINO IR).

    Raises ``ValueError`` for bad compile specs (before conversion starts) and
    ``executorch_openvino.conversion.ConversionError`` when OpenVINO cannot
    convert the partition.
    """

    @staticmethod
    def preprocess(edge_program, compile_specs) -> PreprocessResult:
        resolve_options(compile_specs)  # fail fast, before OpenVINO is involved
        ir = convert_partition(edge_program)
        return PreprocessResult(processed_bytes=processed_blob.pack(ir))


BACKEND_ID = ExecutorchOpenvinoBackend.__name__
