"""Post-training INT8 quantization with NNCF, for programs this delegate runs on OpenVINO's integer kernels.

    import executorch_openvino as exov
    quantized = exov.quantize(model, (x,), calibration)   # a torch.fx.GraphModule
    program = exov.lower(quantized, (x,))                 # INT8 matmuls and convolutions on OpenVINO

NNCF (OpenVINO's quantization library) inserts ``quantized_decomposed``
quantize/dequantize pairs on activations and stores weights as int8 with their
float scales, into the ``torch.export`` graph of the module; OpenVINO's CPU
plugin turns those patterns into 8-bit kernels. NNCF is optional: install it with
``pip install 'executorch-openvino[quantize]'``. Pairs tested here (CPU, torch 2.13.0,
tests/lowering/test_quantization.py): nncf 3.4.0 with OpenVINO 2026.4.1, nncf 3.1.0 with OpenVINO 2025.4.1
(:data:`NNCF_FOR_OPENVINO`).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Iterable

import torch

from .support.nncf_library import INSTALL_HINT, NNCF_FOR_OPENVINO, import_nncf

# NNCF's QuantizationPreset names: "performance" quantizes activations and
# weights symmetrically; "mixed" makes activations asymmetric (better where
# they are not centred on zero, e.g. after GELU).
PRESETS = ("performance", "mixed")
# NNCF's ModelType: "transformer" keeps attention's softmax/layer norm inputs
# and similar sensitive spots in float (NNCF's transformer rules).
MODEL_TYPES = (None, "transformer")

__all__ = ["quantize", "PRESETS", "MODEL_TYPES", "INSTALL_HINT", "NNCF_FOR_OPENVINO"]


def _nncf():
    return import_nncf("executorch_openvino.quantize")


class _WithoutBackendNotice(logging.Filter):
    """Drops NNCF's notice that its Torch FX backend is experimental (nncf 3.1.0 and 3.4.0 print it on every
    call): the FX graph is the only form an ExecuTorch program has. NNCF's other messages pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Experimental Torch FX quantization backend" not in record.getMessage()


@contextlib.contextmanager
def _nncf_notices_filtered():
    logger, notice = logging.getLogger("nncf"), _WithoutBackendNotice()
    logger.addFilter(notice)
    try:
        yield
    finally:
        logger.removeFilter(notice)


def _as_inputs(item, examples: tuple, index: int) -> tuple:
    """One calibration item as the module's positional inputs: a tensor, or a tuple/list of them, each with
    the dtype and rank of its example (sizes may differ: a batch of another size calibrates as well)."""
    inputs = (item,) if isinstance(item, torch.Tensor) else item
    if not isinstance(inputs, (tuple, list)):
        raise TypeError(f"calibration item {index} is a {type(item).__name__}: give a tensor, or a tuple of the "
                        "module's positional inputs as in example_inputs")
    if len(inputs) != len(examples):
        raise ValueError(f"calibration item {index} holds {len(inputs)} inputs, example_inputs {len(examples)}: "
                         "each item must give every positional input of the module")
    for position, (value, example) in enumerate(zip(inputs, examples)):
        if not isinstance(example, torch.Tensor):
            continue
        if not isinstance(value, torch.Tensor) or value.dtype != example.dtype or value.dim() != example.dim():
            got = (f"a {value.dtype} tensor of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
                   else f"a {type(value).__name__}")
            raise ValueError(f"calibration item {index}, input {position} is {got}; example_inputs has a "
                             f"{example.dtype} tensor of shape {tuple(example.shape)}: give the same dtype and rank")
        if value.is_floating_point() and not bool(torch.isfinite(value).all()):
            raise ValueError(f"calibration item {index}, input {position} holds NaN or infinity: the ranges NNCF "
                             "takes from it would make every quantization scale NaN")
    return tuple(inputs)


def _check_quantized(quantized: torch.nn.Module, example_inputs: tuple, nncf_version: str) -> None:
    """Runs the quantized module once on the examples: NNCF 3.4.0 returned modules that fail there (a layer
    called twice: only its first call's weight was dequantized, "self and mat2 must have the same dtype")."""
    try:
        with torch.no_grad():
            quantized(*example_inputs)
    except Exception as exc:
        raise RuntimeError(f"the module NNCF {nncf_version} quantized fails on example_inputs ({exc}). A "
                           "layer called more than once (a shared weight) does this: name its nodes in "
                           "ignored_scope, or give each call its own layer") from exc


def _several_results(graph_module: torch.fx.GraphModule) -> list[str]:
    """``"name (operator)"`` of each node whose result is several tensors (``aten.lstm.input``: output, h, c)."""
    return [f"{node.name} ({node.target})" for node in graph_module.graph.nodes
            if node.op == "call_function" and isinstance(node.meta.get("val"), (tuple, list))
            and sum(isinstance(v, torch.Tensor) for v in node.meta["val"]) > 1]


def _ignored_scope(nncf, ignored_scope):
    if ignored_scope is None or isinstance(ignored_scope, nncf.IgnoredScope):
        return ignored_scope
    if isinstance(ignored_scope, (list, tuple, set, frozenset)) and all(isinstance(n, str) for n in ignored_scope):
        return nncf.IgnoredScope(names=sorted(ignored_scope))
    raise TypeError(f"ignored_scope is a {type(ignored_scope).__name__}: give node names (a list of str) or an "
                    "nncf.IgnoredScope (names, patterns, types, subgraphs)")


def quantize(module: torch.nn.Module, example_inputs: tuple, calibration: Iterable, *,
             preset: str = "performance", model_type: str | None = None, ignored_scope=None,
             subset_size: int = 300, fast_bias_correction: bool = True, dynamic_shapes=None) -> torch.fx.GraphModule:
    """The INT8 post-training quantization of ``module`` by NNCF: a module to pass to :func:`lower`.

    ``example_inputs``: a tuple of the module's positional inputs, as for :func:`lower`.
    ``calibration``: an iterable of inputs like them (a tensor, or a tuple of tensors, per item), drawn from
    the data the model will see; the first ``subset_size`` items are read once each (a generator is fine).
    NNCF collects activation ranges on them (per-tensor for activations, per-channel for weights) and
    corrects the biases the rounding shifted. ``preset``: one of :data:`PRESETS`; ``model_type``:
    ``"transformer"`` for attention models (NNCF's transformer rules) or ``None``;
    ``ignored_scope``: nodes left in float, as node names of
    ``torch.export.export(module, example_inputs).module()`` (a list of str) or an ``nncf.IgnoredScope``.
    ``dynamic_shapes``: as for :func:`lower`, which must then be given the same.

    Returns a ``torch.fx.GraphModule`` that computes the quantized model in PyTorch (fake-quantized: the
    reference for the delegate's INT8 results) and that :func:`lower` and :func:`export` take like any
    module. Raises ``ImportError`` with the pip command when NNCF is missing, ``ValueError`` for an
    unknown preset or model type, an empty calibration, or a calibration item with another number of
    inputs than ``example_inputs``, another dtype or rank, or NaN/infinity, ``TypeError`` for a
    calibration item or ``ignored_scope`` of another kind, and ``RuntimeError`` when NNCF fails (with
    nncf 3.4.0: on recurrent layers such as ``torch.nn.LSTM``, whose ``aten.lstm`` has several results), or
    its module fails on ``example_inputs`` (a layer called twice).
    """
    from .api import export

    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r}: choose one of {', '.join(map(repr, PRESETS))}")
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type={model_type!r}: choose 'transformer' or None")
    if not isinstance(subset_size, int) or subset_size < 1:
        raise ValueError(f"subset_size={subset_size!r}: give a positive number of calibration items")
    nncf = _nncf()
    exported = export(module, example_inputs, dynamic_shapes=dynamic_shapes)
    examples = tuple(example_inputs)
    items = [_as_inputs(item, examples, i) for i, item in enumerate(itertools.islice(iter(calibration), subset_size))]
    if not items:
        raise ValueError("calibration is empty: give at least one input (hundreds for stable ranges; NNCF reads "
                         f"up to subset_size={subset_size})")
    graph_module = exported.module()
    # Unused layers (BERT's pooler when only the hidden states are read) would
    # still be quantized, and NNCF's SmoothQuant (on for transformers) fails on
    # their weights ("Node with name encoder_pooler_dense_weight is not found", nncf 3.4.0).
    graph_module.graph.eliminate_dead_code()
    graph_module.recompile()
    scope = _ignored_scope(nncf, ignored_scope)
    try:
        with _nncf_notices_filtered():
            quantized = nncf.quantize(
                graph_module, nncf.Dataset(items), subset_size=len(items), preset=nncf.QuantizationPreset(preset),
                model_type=None if model_type is None else nncf.ModelType(model_type), ignored_scope=scope,
                fast_bias_correction=fast_bias_correction)
    except TypeError as exc:
        several = _several_results(graph_module)
        if not several:
            raise
        # nncf 3.4.0's graph gives such a node's edges no shape (NNCFGraphEdge: "'NoneType' object is not
        # iterable"), for the bench's LSTM; ignored_scope does not help, the graph is built first.
        raise RuntimeError(f"NNCF {nncf.__version__} cannot quantize a module with operators of several tensor "
                           f"results ({', '.join(several)}): it fails building its graph ({exc}). Quantize the "
                           "layers before and after them as modules of their own and keep these in float "
                           "(lower the float module: the delegate runs it)") from exc
    except (NotImplementedError, RuntimeError) as exc:
        # nncf 3.1.0 collects statistics of bool tensors in transformers ("abs_cpu" not implemented for
        # 'Bool', MiniLM's attention mask); 3.4.0 does not.
        several = _several_results(graph_module)
        # topk's (values, indices) reached this branch ("'isempty' is not implemented for tuple", a tester)
        suspects = "" if not several else (
            f"; it often fails on operators of several tensor results, which this module has "
            f"({', '.join(several)}): quantize the layers around them as modules of their own")
        raise RuntimeError(f"NNCF {nncf.__version__} failed to quantize this module: {exc}. NNCF 3.4.0 "
                           "(with OpenVINO 2026.4) quantizes the models tested here (MLP, CNN, MiniLM as a "
                           "transformer); nncf.IgnoredScope can leave the failing operation in float"
                           f"{suspects}") from exc
    _check_quantized(quantized, examples, nncf.__version__)
    return quantized
