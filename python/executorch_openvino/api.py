"""High-level API: lower a module to a ``.pte`` for OpenVINO, load and run it.

    import executorch_openvino as exov
    program = exov.lower(model, (x,))            # ExecutorchProgramManager
    program.buffer                                # the .pte bytes
    method = exov.load_method(program.buffer)     # executorch.runtime Method
    outputs = method.execute([x])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from . import _native
from .method_inputs import as_method_inputs, contiguous, explain_refused_inputs
from .partitioner import OpenvinoPartitioner
from .constant_folding import fold_constant_integer_cumsums
from .scalar_promotion import keep_zero_dim_integer_dtypes
from .output_copies import copy_outputs_that_are_inputs
from .integer_remainder import rewrite_integer_remainders


def lower(module: torch.nn.Module, example_inputs: tuple, *, device: str = "CPU",
          inference_precision: str = "", dynamic_shapes=None, numerics: str = "exact",
          performance_hint: str = ""):
    """``torch.export`` + ExecuTorch edge lowering with :class:`OpenvinoPartitioner`.

    Returns an ``executorch.exir.ExecutorchProgramManager`` (``.buffer`` is the
    ``.pte``). Raises ``ValueError`` for bad compile specs before exporting.
    Example inputs in another memory layout (channels_last) are exported as
    contiguous: the program takes contiguous inputs, and
    :meth:`OpenvinoMethod.execute` passes any layout as contiguous. Raises
    ``TypeError`` for a program with complex tensors.

    With ``dynamic_shapes``, the program's inputs and outputs are not memory
    planned: ExecuTorch would otherwise allocate and zero them at their upper
    bounds when the method loads (measured: a (n <= 1e6, 256) float32
    input/output pair cost 1980 MiB resident at load, 27 MiB unplanned). An
    output that is an input is then returned through a copy
    (:mod:`executorch_openvino.output_copies`: ExecuTorch 1.5.1 returned zeros).
    """
    partitioner = OpenvinoPartitioner(device=device, inference_precision=inference_precision, numerics=numerics,
                                      performance_hint=performance_hint)
    exported = export(module, example_inputs, dynamic_shapes=dynamic_shapes)
    return lower_exported(exported, partitioner, plan_inputs=dynamic_shapes is None)


def export(module: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None,
           dynamic_shapes=None):
    """``torch.export.export`` of ``module`` as :func:`lower` does it: example tensors made
    contiguous first, and complex tensors refused (``TypeError``)."""
    # OpenVINO picks its own layouts; a channels_last example would give the
    # program channels_last inputs, which the delegate does not take and
    # ExecuTorch 1.5.1's kernels fail on (x * 2: "different dim orders").
    example_inputs = torch.utils._pytree.tree_map(contiguous, tuple(example_inputs))
    example_kwargs = torch.utils._pytree.tree_map(contiguous, dict(example_kwargs or {}))
    exported = torch.export.export(module, example_inputs, example_kwargs, dynamic_shapes=dynamic_shapes)
    _refuse_complex_tensors(exported)
    return exported


def lower_exported(exported, partitioner: OpenvinoPartitioner, *, plan_inputs: bool = True):
    """The ``ExecutorchProgramManager`` of an :func:`export` result, lowered with ``partitioner``.

    ``plan_inputs=False`` leaves the program's inputs and outputs out of
    memory planning (what :func:`lower` does for dynamic shapes). Modifies
    ``exported`` in place (dtype and constant-folding passes).
    """
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    keep_zero_dim_integer_dtypes(exported)
    rewrite_integer_remainders(exported)
    fold_constant_integer_cumsums(exported)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner])
    # (Mutated buffers start from the module's values: OpenvinoPartitioner marks them.)
    signature = edge.exported_program().graph_signature
    # An input the program changes in place must be planned: left to the
    # caller, ExecuTorch 1.5.1 computed on it wrongly (x.add_(1); x * 2 gave
    # [2, 2, 2, 2] for [0, 1, 2, 3], even without a delegate).
    changes_inputs = any(spec.kind.name == "USER_INPUT_MUTATION" for spec in signature.output_specs)
    planning = MemoryPlanningPass(alloc_graph_input=plan_inputs or changes_inputs, alloc_graph_output=plan_inputs)
    if not plan_inputs:
        copy_outputs_that_are_inputs(edge.exported_program())
    return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=planning))


def _refuse_complex_tensors(exported) -> None:
    """OpenVINO has no complex element type, and ExecuTorch 1.5.1's to_edge refuses
    complex ops with a misleading "mismatched dtypes" SpecViolationError."""
    for node in exported.graph.nodes:
        value = node.meta.get("val")
        if isinstance(value, torch.Tensor) and value.is_complex():
            raise TypeError(
                f"'{node.name}' is a {value.dtype} tensor: neither OpenVINO nor ExecuTorch's edge dialect takes "
                "complex dtypes. Carry real and imaginary parts as a trailing dimension of 2 "
                "(torch.view_as_real) and write the complex arithmetic on them.")


@dataclass(frozen=True)
class DelegationSummary:
    """Operator counts of a lowered edge program: ``delegated / total`` is the fraction on OpenVINO."""

    delegated: int
    total: int
    partitions: int

    @property
    def fraction(self) -> float:
        return self.delegated / self.total if self.total else 0.0


def delegation_summary(edge_program) -> DelegationSummary:
    """Counts operator nodes inside OpenVINO partitions against all operator nodes.

    ``edge_program``: the ``ExportedProgram`` of an ``EdgeProgramManager``
    after ``to_edge_transform_and_lower`` (``.exported_program()``).
    """
    from .backend import BACKEND_ID

    delegated = outside = partitions = 0
    module = edge_program.graph_module
    for node in module.graph.nodes:
        if node.op != "call_function":
            continue
        name = getattr(node.target, "__name__", str(node.target))
        if name == "executorch_call_delegate":
            lowered = getattr(module, node.args[0].target)
            if lowered.backend_id == BACKEND_ID:
                partitions += 1
                delegated += sum(
                    1 for n in lowered.original_module.graph.nodes
                    if n.op == "call_function" and getattr(n.target, "__name__", "") != "getitem"
                )
        elif name != "getitem":
            outside += 1
    return DelegationSummary(delegated, delegated + outside, partitions)


class _DelegateErrors:
    """Adds the delegate's own message to ExecuTorch's RuntimeError (which carries only a code)."""

    def __enter__(self):
        _native.clear_last_error()

    def __exit__(self, kind, error, traceback):
        if isinstance(error, RuntimeError):
            detail = _native.last_error()
            if detail:
                raise RuntimeError(f"{error}\nexecutorch-openvino: {detail}") from error
        return False


class OpenvinoMethod:
    """A loaded ExecuTorch method whose errors name what the delegate found wrong.

    ``execute(inputs)`` takes the method's inputs (a list of tensors of the
    exported dtypes and shapes, in any memory layout) and returns its outputs as
    a list. It raises ``ValueError`` naming the input, what the method takes and
    what to pass when ExecuTorch refuses the inputs (count, dtype, rank, sizes),
    and ``RuntimeError`` with ExecuTorch's error code and the delegate's message
    on any other failure.
    Other attributes are those of ``executorch.runtime.Method``.
    """

    def __init__(self, method, program):
        self._method = method
        self._program = program  # the method must not outlive its program

    def execute(self, inputs):
        inputs = as_method_inputs(inputs)
        with _DelegateErrors():
            try:
                return self._method.execute(inputs)
            except RuntimeError as error:
                # ExecuTorch logs why it refused the inputs and raises only a code.
                problem = explain_refused_inputs(self._method.metadata, inputs) if "set_inputs" in str(error) else None
                if problem is None:
                    raise
                raise ValueError(f"{problem}\n(ExecuTorch: {error})") from error

    def __getattr__(self, name):
        return getattr(self._method, name)


def load_method(program, method_name: str = "forward") -> OpenvinoMethod:
    """Loads a ``.pte`` (bytes or a path) with ``executorch.runtime`` and returns one method.

    Raises ``RuntimeError`` with the delegate's own message (which OpenVINO was
    tried where, which blob field was bad, ...) when loading fails, and
    ``RuntimeError`` naming the methods there are when ``method_name`` is not one.
    """
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    with _DelegateErrors():
        loaded = runtime.load_program(Path(program) if isinstance(program, (str, Path)) else program)
        if method_name not in loaded.method_names:
            raise RuntimeError(f"the program has no method {method_name!r}; it has {sorted(loaded.method_names)}")
        method = loaded.load_method(method_name)
    return OpenvinoMethod(method, loaded)
