"""Lower with the OpenVINO partitioner, run with executorch.runtime, compare with eager PyTorch."""

from __future__ import annotations

import collections
from pathlib import Path

import torch

import executorch_openvino as exov
from executorch_openvino.api import delegation_summary

# float32 tolerances that OpenVINO's bf16 default on this CPU fails (bf16 keeps
# 8 mantissa bits: ~4e-3 relative error).
FLOAT32_TOLERANCE = dict(rtol=1e-5, atol=1e-5)


class Fn(torch.nn.Module):
    """Wraps a function of positional tensors as a module to export."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class OneInput(Fn):
    """Fn with one named input, for ``dynamic_shapes`` given per input."""

    def forward(self, x):
        return self.fn(x)


class ThreadsModel(torch.nn.Module):
    """The thread tests' model: one float32 (4, 32) input, one float32 (4, 16) output
    (tests/native/delegate_threads.cpp is written for these shapes)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(32, 16)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2 + x[:, :16]


def lower(module: torch.nn.Module, inputs: tuple, *, partitioner=None):
    """Returns (.pte bytes, DelegationSummary) for `module` lowered with the OpenVINO partitioner."""
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(module.eval(), inputs)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner or exov.OpenvinoPartitioner()])
    summary = delegation_summary(edge.exported_program())
    return edge.to_executorch().buffer, summary


def run(pte: bytes | Path, inputs: tuple) -> list:
    """Executes the .pte's forward method through executorch.runtime."""
    return list(exov.load_method(pte).execute(list(inputs)))


def eager(module: torch.nn.Module, inputs: tuple) -> list:
    with torch.no_grad():
        out = module.eval()(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    # Flattened as ExecuTorch returns them (nested tuples, torch.return_types...).
    return torch.utils._pytree.tree_leaves(out)


def assert_matches_eager(actual: list, expected: list, **tolerance) -> None:
    """Integers and bools exactly (dtype included); floats within `tolerance` (default float32's)."""
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype, f"output {i}: dtype {a.dtype} != eager {e.dtype}"
        assert a.shape == e.shape, f"output {i}: shape {tuple(a.shape)} != eager {tuple(e.shape)}"
        if e.dtype.is_floating_point:
            torch.testing.assert_close(a, e, **(tolerance or FLOAT32_TOLERANCE), msg=lambda m: f"output {i}: {m}")
        else:
            assert torch.equal(a, e), f"output {i}: {a} != eager {e}"


def assert_exactly_eager(actual: list, expected: list) -> None:
    """Equal to eager bit for bit: values, dtypes, shapes and the sign of floating-point zeros."""
    assert_matches_eager(actual, expected, rtol=0, atol=0)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if e.dtype.is_floating_point:
            assert torch.equal(torch.signbit(a), torch.signbit(e)), f"output {i}: sign of zero differs: {a} vs {e}"



def check_fully_delegated(module: torch.nn.Module, inputs: tuple, **tolerance) -> None:
    """Lowers, asserts that every operator went to OpenVINO, runs and compares with eager."""
    pte, summary = lower(module, inputs)
    assert summary.partitions >= 1 and summary.delegated == summary.total, (
        f"only {summary.delegated}/{summary.total} operators were delegated")
    assert_matches_eager(run(pte, inputs), eager(module, inputs), **tolerance)


def resealed(pte: bytes) -> bytes:
    """`pte` with each processed blob's checksum recomputed, after a test changed its bytes on purpose."""
    import struct

    from executorch_openvino.contract import processed_blob

    out = bytearray(pte)
    at = out.find(processed_blob.MAGIC)
    while at >= 0:
        weights_offset, weights_size = struct.unpack_from("<QQ", out, at + 32)
        blob = out[at : at + weights_offset + weights_size]
        processed_blob.seal(blob)
        out[at : at + len(blob)] = blob
        at = out.find(processed_blob.MAGIC, at + 1)
    return bytes(out)


def same_special_values(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Shape and dtype equal, NaN in the same places, the same infinities, and float32-close numbers elsewhere."""
    return (actual.shape == expected.shape and actual.dtype == expected.dtype
            and torch.equal(torch.isnan(actual), torch.isnan(expected))
            and torch.allclose(actual, expected, rtol=1e-6, atol=1e-7, equal_nan=True))


def partition_models(program) -> list:
    """The ``openvino.Model`` of every partition of this delegate in `program` (what ``exov.lower`` returns)."""
    import numpy as np
    import openvino as ov

    from executorch_openvino.contract import processed_blob
    from executorch_openvino.lowering.preprocess import BACKEND_ID

    core, models = ov.Core(), []
    for _, lowered in program.exported_program().graph_module.named_children():
        if getattr(lowered, "backend_id", None) == BACKEND_ID:
            ir = processed_blob.unpack(lowered.processed_bytes)
            models.append(core.read_model(ir.xml, ov.Tensor(np.frombuffer(ir.weights, np.uint8).copy())))
    return models


def partition_operation_types(program) -> collections.Counter:
    """OpenVINO operation types (``"MaxPool"``, ``"Select"``...) summed over the IR of every partition of this
    delegate in `program` (what ``exov.lower`` returns)."""
    return collections.Counter(op.get_type_name() for model in partition_models(program) for op in model.get_ops())
