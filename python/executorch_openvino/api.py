"""High-level API: lower a module to a ``.pte`` for OpenVINO, load and run it (loading and running:
:mod:`executorch_openvino.runtime.loaded_method`).

    import executorch_openvino as exov
    program = exov.lower(model, (x,))            # ExecutorchProgramManager
    program.buffer                                # the .pte bytes
    method = exov.load_method(program.buffer)     # an OpenVINOMethod: the program loaded, ready to run
    outputs = method.execute([x])                 # from any number of threads
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field
from typing import NoReturn

import torch

from .support import progress as progress_lines
from .lowering.conversion import require_openvino_package
from .lowering.partitioner import OpenVINOPartitioner
from .lowering.passes import run_before_emission
from .support.quiet import quiet_dependencies
from .runtime.loaded_method import OpenVINOMethod, load_method
from .runtime.foreign_backends import EXECUTORCH_OWN_OPENVINO_BACKEND
from .runtime.method_inputs import contiguous
from .contract.compile_specs import KEYWORD_DEFAULTS as _DEFAULTS  # compile_specs.json's defaults

__all__ = ["lower", "export", "lower_exported", "delegation_summary", "DelegationSummary", "NotDelegated",
           "load_method", "OpenVINOMethod"]


def lower(module, example_inputs: tuple | None = None, *, device: str = _DEFAULTS["device"],
          inference_precision: str = _DEFAULTS["inference_precision"], dynamic_shapes=None,
          numerics: str = _DEFAULTS["numerics"], performance_hint: str = _DEFAULTS["performance_hint"],
          strict: bool = False, weight_compression: str = _DEFAULTS["weight_compression"],
          weight_group_size: int = _DEFAULTS["weight_group_size"], weight_ratio: float = _DEFAULTS["weight_ratio"],
          constant_methods: dict | None = None, verbose: bool = False, progress: bool | None = None):
    """``torch.export`` + ExecuTorch edge lowering with :class:`OpenVINOPartitioner`.

    Returns an ``executorch.exir.ExecutorchProgramManager`` (``.buffer`` is the
    ``.pte``). `module`: a ``torch.nn.Module``, exported here, or a ``torch.export.ExportedProgram``
    you exported yourself (then `example_inputs` and `dynamic_shapes` are not given: the program has them).
    ``example_inputs``: a tuple (or list) of the module's positional inputs. ``strict=True`` exports
    with TorchDynamo (``torch.export.export(..., strict=True)``), which some modules need: transformers'
    static-cache wrapper reaches its cache buffers through two paths that non-strict export turns into
    duplicated inputs. ``weight_compression`` (``"int8"``, ``"int4"``), ``weight_group_size`` and
    ``weight_ratio``: NNCF weight-only compression of the delegated weights
    (:mod:`executorch_openvino.contract.compile_specs`). ``constant_methods``: ``{name: value}`` methods returning
    constants, written into the program (ExecuTorch's LLM runners read ``get_max_seq_len`` and others).
    ``verbose=True`` prints :meth:`DelegationSummary.report` to stderr: how many operators went to OpenVINO
    and, per operator, why the others stay on ExecuTorch. Other libraries' known harmless messages are
    not shown meanwhile (:mod:`executorch_openvino.support.quiet`); this package's warnings are. ``progress``: stage
    lines on stderr with the seconds since the start (exporting, partitioning, converting each partition,
    writing): ``None`` (default) when stderr is a terminal, ``True`` always, ``False`` never
    (:mod:`executorch_openvino.support.progress`).

    Raises ``ModuleNotFoundError`` naming the pip command when OpenVINO's Python package is not installed
    (lowering needs it; running a ``.pte`` does not), ``ValueError`` for bad compile specs before exporting
    and for sizes exported as dynamic that ExecuTorch's ``to_edge`` fixed (``GRUCell``, ``LSTMCell``),
    ``TypeError`` for example inputs that are
    not a tuple or list, for a program with complex tensors, and for example inputs given with an
    ``ExportedProgram``; ``RuntimeError`` naming ``strict=True`` when torch's decomposition fails on a
    non-strict export's duplicated inputs.
    Example inputs in another memory layout (channels_last) are exported as
    contiguous: the program takes contiguous inputs, and
    :meth:`OpenVINOMethod.execute` passes any layout as contiguous.

    With ``dynamic_shapes``, the program's inputs and outputs are not memory
    planned: ExecuTorch would otherwise allocate and zero them at their upper
    bounds when the method loads (measured: a (n <= 1e6, 256) float32
    input/output pair cost 1980 MiB resident at load, 27 MiB unplanned). An
    output that is an input is then returned through a copy
    (:mod:`executorch_openvino.lowering.passes.returned_inputs`: ExecuTorch 1.5.1 returned zeros).
    """
    require_openvino_package()  # before exporting: one clear error, not one deep in ExecuTorch's lowering
    with quiet_dependencies(), progress_lines.reporting(progress):
        partitioner = OpenVINOPartitioner(device=device, inference_precision=inference_precision, numerics=numerics,
                                          performance_hint=performance_hint, weight_compression=weight_compression,
                                          weight_group_size=weight_group_size, weight_ratio=weight_ratio)
        if isinstance(module, torch.export.ExportedProgram):
            if example_inputs is not None or dynamic_shapes is not None:
                raise TypeError("lower() got an ExportedProgram and example_inputs or dynamic_shapes: an exported "
                                "program has its inputs and shapes; give the program alone")
            exported = module
            dynamic = any(not isinstance(d, int) for n in exported.graph.nodes if n.op == "placeholder"
                          for d in getattr(n.meta.get("val"), "shape", ()))
        else:
            if example_inputs is None:
                raise TypeError("lower() needs example_inputs for a module: a tuple of its positional inputs, "
                                "e.g. (x,)")
            progress_lines.stage(f"exporting {type(module).__name__} with torch.export")
            exported = export(module, example_inputs, dynamic_shapes=dynamic_shapes, strict=strict)
            dynamic = dynamic_shapes is not None
        _warn_about_unbounded_sizes(exported)
        program = lower_exported(exported, partitioner, plan_outputs=not dynamic, constant_methods=constant_methods)
        progress_lines.stage("lowered")  # (no size: program.buffer would serialize the program and keep the bytes)
        if verbose:
            print(delegation_summary(program).report(), file=sys.stderr)
        return program


def _warn_about_unbounded_sizes(exported) -> None:
    """ExecuTorch 1.5.1 plans a dynamic size without an upper bound at the example's size (measured: a
    (2, 5) example with ``Dim("b")`` refused a batch of 3 at run time)."""
    import warnings

    from .contract.input_spec import finite_bound

    unbounded = {symbol for symbol, bounds in exported.range_constraints.items() if finite_bound(bounds.upper) is None}
    if not unbounded:
        return
    where = [f"input {index} dimension {dim}"
             for index, shape in enumerate(_user_input_shapes(exported))
             for dim, size in enumerate(shape)
             if isinstance(size, torch.SymInt) and size.node.expr in unbounded]
    warnings.warn(f"dynamic sizes without an upper bound ({', '.join(where) or ', '.join(map(str, unbounded))}): "
                  "ExecuTorch plans them at the example's size, and larger ones fail at run time. Give one, "
                  "e.g. Dim('b', max=64)", stacklevel=3)


def export(module: torch.nn.Module, example_inputs: tuple, example_kwargs: dict | None = None,
           dynamic_shapes=None, strict: bool = False):
    """``torch.export.export`` of ``module`` as :func:`lower` does it: example tensors made
    contiguous first; complex tensors, and example inputs that are not a tuple or list, refused (``TypeError``)."""
    if not isinstance(example_inputs, (tuple, list)):
        # tuple(tensor) would split a tensor along its first dimension into several inputs.
        raise TypeError(f"example_inputs is a {type(example_inputs).__name__}: give a tuple of the module's "
                        f"positional inputs, e.g. (x,) for one tensor")
    # OpenVINO picks its own layouts; a channels_last example would give the
    # program channels_last inputs, which the delegate does not take and
    # ExecuTorch 1.5.1's kernels fail on (x * 2: "different dim orders").
    example_inputs = torch.utils._pytree.tree_map(contiguous, tuple(example_inputs))
    example_kwargs = torch.utils._pytree.tree_map(contiguous, dict(example_kwargs or {}))
    exported = torch.export.export(module, example_inputs, example_kwargs, dynamic_shapes=dynamic_shapes,
                                   strict=strict)
    _refuse_complex_tensors(exported)
    return exported


def lower_exported(exported, partitioner: OpenVINOPartitioner, *, plan_outputs: bool | None = None,
                   constant_methods: dict | None = None, plan_inputs: bool | None = None):
    """The ``ExecutorchProgramManager`` of an :func:`export` result, lowered with ``partitioner``.

    The program's inputs are left out of memory planning, except those it changes in place: ExecuTorch then
    computes on the caller's tensors rather than copying each into the method's planned memory first (the
    bench's MLP, a (32, 784) float32 input: 0.94x the time per call through ``exov.load_method``, measured on a
    2-core AMD EPYC with OpenVINO 2026.4.1). ``plan_outputs=False`` leaves the outputs out as well (what
    :func:`lower` does for dynamic shapes). ``plan_inputs``: the name ``plan_outputs`` had in 0.1.0, with a
    ``DeprecationWarning``; giving both raises ``TypeError``. Raises ``ValueError`` naming the input and
    dimension when ExecuTorch's ``to_edge`` fixed a size that ``exported`` has as dynamic. Modifies ``exported``
    in place (dtype and constant-folding passes).
    """
    if plan_inputs is not None:
        if plan_outputs is not None:
            raise TypeError("lower_exported() got plan_outputs and plan_inputs, its old name: give plan_outputs only")
        warnings.warn("lower_exported(plan_inputs=...) is now plan_outputs=...: inputs are never planned unless "
                      "the program changes them in place", DeprecationWarning, stacklevel=2)
        plan_outputs = plan_inputs
    plan_outputs = True if plan_outputs is None else plan_outputs
    _refuse_named_tuple_outputs(exported)
    dynamic_before = _dynamic_input_sizes(exported)
    with quiet_dependencies():
        from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
        from executorch.exir.passes import MemoryPlanningPass
        from torch._export.verifier import SpecViolationError  # what to_edge raises for an op outside core ATen

        # (OpenVINOPartitioner.transform_for_pre_decomposition runs this package's passes on `exported` first.)
        progress_lines.stage("ExecuTorch's edge lowering: decompositions and the partitioner's support checks")
        try:
            edge = to_edge_transform_and_lower(exported, partitioner=[partitioner], constant_methods=constant_methods)
        except AssertionError as exc:
            _raise_for_decomposition(exc)
        except SpecViolationError as exc:
            if not (hint := _no_kernel_hint(str(exc))):
                raise
            raise SpecViolationError(f"{exc}\n{hint}") from exc

        _refuse_fixed_dynamic_sizes(dynamic_before, edge.exported_program())
        # (Mutated buffers start from the module's values: OpenVINOPartitioner marks them.)
        signature = edge.exported_program().graph_signature
        # An input the program changes in place must be planned: left to the
        # caller, ExecuTorch 1.5.1 computed on it wrongly (x.add_(1); x * 2 gave
        # [2, 2, 2, 2] for [0, 1, 2, 3], even without a delegate).
        changes_inputs = any(spec.kind.name == "USER_INPUT_MUTATION" for spec in signature.output_specs)
        planning = MemoryPlanningPass(alloc_graph_input=changes_inputs, alloc_graph_output=plan_outputs)
        run_before_emission(edge.exported_program())  # outputs that are unplanned inputs get a copy
        progress_lines.stage("writing the ExecuTorch program (memory planning, serialization)")
        return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=planning))


def _user_input_shapes(program) -> list[tuple]:
    user_inputs = set(program.graph_signature.user_inputs)
    return [tuple(getattr(n.meta.get("val"), "shape", ())) for n in program.graph.nodes
            if n.op == "placeholder" and n.name in user_inputs]


def _is_dynamic(size) -> bool:
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    # A SymInt that torch's shape environment has since fixed (a guard) is concrete.
    return isinstance(size, torch.SymInt) and not is_concrete_int(size)


def _dynamic_input_sizes(program) -> dict[tuple[int, int], str]:
    """``{(input, dimension): symbol}`` of the program's dynamic input sizes."""
    return {(i, d): str(size) for i, shape in enumerate(_user_input_shapes(program))
            for d, size in enumerate(shape) if _is_dynamic(size)}


def _refuse_fixed_dynamic_sizes(dynamic_before: dict, edge_program) -> None:
    """Raises ``ValueError`` when ExecuTorch's ``to_edge`` fixed an input size that was exported as dynamic: the
    method would refuse every other size at run time (ExecuTorch 1.5.1 does so for a split whose pieces start
    with a dynamic size, ``lowering/passes/dynamic_splits.py``; that pass covers splits, chunks and GRUs, and
    ``GRUCell``/``LSTMCell`` were found by a tester to be fixed too)."""
    shapes = _user_input_shapes(edge_program)
    fixed = [(i, d, symbol, shapes[i][d]) for (i, d), symbol in dynamic_before.items()
             if i < len(shapes) and d < len(shapes[i]) and not _is_dynamic(shapes[i][d])]
    if not fixed:
        return
    where = ", ".join(f"input {i} dimension {d} ({symbol}) at {size}" for i, d, symbol, size in fixed)
    raise ValueError(
        f"ExecuTorch's to_edge fixed sizes exported as dynamic: {where}. The program would refuse every other "
        "size at run time. ExecuTorch 1.5.1 does this, among other cases, where an operation returns several pieces "
        "of a tensor whose first size is dynamic: split and chunk and GRU layers are rewritten by this package, "
        "GRUCell and LSTMCell are not. Write such pieces with slices (x[:, :k], x[:, k:]), run the cell's steps with "
        "nn.GRU/nn.LSTM, or export those sizes as static")


def _raise_for_decomposition(exc: AssertionError) -> NoReturn:
    if "compiled_fn" not in str(exc):
        raise exc
    # torch 2.13's run_decompositions on a non-strict export whose module reaches one buffer by two
    # paths (transformers' static cache): the buffer became two inputs (reproducible with torch alone).
    raise RuntimeError(f"torch could not decompose the exported program ({exc}). This happens with "
                       "modules that reach a buffer by two paths, such as transformers' static KV cache, "
                       "when exported non-strict: export with strict=True (exov.lower(..., strict=True), "
                       "or torch.export.export(..., strict=True) and pass the ExportedProgram)") from exc


# Operators outside core ATen that ExecuTorch 1.5.1 has no kernel for, and what of them this package delegates
# (lowering/passes/medians.py, adaptive_max_pools.py, embedding_bags.py): to_edge's own message names only the
# operator and core ATen.
_NO_KERNEL_HINTS = {
    "aten.median": "a median of float32, float16 or bfloat16 values over sizes known at export",
    "aten.adaptive_max_pool": ("an adaptive max pool of float values over sizes known at export, its indices only "
                               "where each input size is a multiple of the output size"),
    "aten._embedding_bag_forward_only": ("an embedding bag without padding_idx over a number of indices known at "
                                         "export, whose side results are unused"),
}


def _no_kernel_hint(message: str) -> str | None:
    """What this package takes of the operator `to_edge` refused as outside core ATen, if it is one it handles."""
    if "is not in Core ATen opset" not in message:
        return None
    for prefix, taken in _NO_KERNEL_HINTS.items():
        if f"torch._ops.{prefix}" in message:
            return (f"ExecuTorch has no kernel for this operator either; this package delegates {taken} "
                    "(docs/user-guide/numerics.md, 'Operations ExecuTorch has no kernel for').")
    return None


def _refuse_named_tuple_outputs(exported) -> None:
    """ExecuTorch 1.5.1 cannot write a ``torch.return_types`` result (``torch.max(x, 1)``, ``torch.median(x, 0)``,
    ``torch.sort``...) into a program's output structure: ``to_executorch`` fails at the end of lowering with
    "No registered serialization name" (torch 2.13, with any backend). Said before lowering, with the fix."""
    pending = [exported.call_spec.out_spec] if exported.call_spec.out_spec is not None else []
    while pending:
        spec = pending.pop()
        kind = getattr(spec, "type", None)
        if kind is not None and getattr(kind, "__module__", None) == "torch.return_types":
            name = kind.__name__
            fields = tuple(getattr(kind, "_fields", None) or getattr(kind, "__match_args__", None) or ())
            raise TypeError(f"the module returns torch.return_types.{name} (a named tuple of "
                            f"{', '.join(fields)}), which ExecuTorch cannot write into a program: return "
                            f"tuple(...) of it instead, e.g. `return tuple(torch.{name}(x, 1))`")
        # torch 2.13 deprecates children_specs (a FutureWarning per lowering) for children().
        children = getattr(spec, "children", None)
        pending.extend(children() if callable(children) else getattr(spec, "children_specs", []))


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
class NotDelegated:
    """An operator node left on ExecuTorch's kernels: its graph name, operator (``aten.cumsum.default``) and
    the partitioner's reason."""

    node: str
    operator: str
    reason: str


@dataclass(frozen=True)
class DelegationSummary:
    """Operator counts of a lowered edge program: ``delegated / total`` is the fraction on OpenVINO.

    ``not_delegated``: the operator nodes that run on ExecuTorch's kernels, each with the reason this
    package's partitioner recorded (``"not lowered with this package's partitioner"`` where it recorded
    none); nodes inside another backend's delegate are not listed. ``other_backends``: ``{backend id:
    partitions}`` of the delegates that are not this package's (``OpenvinoBackend`` is executorch's own
    OpenVINO delegate, which this package does not run).
    """

    delegated: int
    total: int
    partitions: int
    not_delegated: tuple[NotDelegated, ...] = ()
    other_backends: dict[str, int] = field(default_factory=dict)

    @property
    def fraction(self) -> float:
        return self.delegated / self.total if self.total else 0.0

    def reasons(self) -> dict[tuple[str, str], list[str]]:
        """``{(operator, reason): [node names]}`` of the operators left on ExecuTorch, most frequent first."""
        grouped: dict[tuple[str, str], list[str]] = {}
        for item in self.not_delegated:
            grouped.setdefault((item.operator, item.reason), []).append(item.node)
        return dict(sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def report(self) -> str:
        """The counts and, per operator and reason, what stays on ExecuTorch (what ``lower(verbose=True)``
        prints)."""
        lines = [f"{self.delegated} of {self.total} operators on OpenVINO in {self.partitions} partition(s)"
                 f"{'; on ExecuTorch:' if self.not_delegated else ''}"]
        for (operator, reason), nodes in self.reasons().items():
            shown = ", ".join(nodes[:3]) + (f" and {len(nodes) - 3} more" if len(nodes) > 3 else "")
            lines.append(f"  {operator} x{len(nodes)} ({shown}): {reason}")
        for backend, count in self.other_backends.items():
            lines.append(f"the rest of the {self.total} is in {count} partition(s) of another backend, {backend!r}"
                         + (": executorch's own OpenVINO delegate, not this package's; lower with "
                            "executorch_openvino.OpenVINOPartitioner to run them with this package"
                            if backend == EXECUTORCH_OWN_OPENVINO_BACKEND else ""))
        return "\n".join(lines)


def delegation_summary(program, method: str = "forward") -> DelegationSummary:
    """Counts the operator nodes inside OpenVINO partitions against all operator nodes of a lowered program.

    ``program``: what :func:`lower` returns (an ``ExecutorchProgramManager``), the ``EdgeProgramManager``
    of ``to_edge_transform_and_lower``, or the ``ExportedProgram`` of either (``.exported_program()``).
    ``method``: which method of a program manager (default ``forward``). Operators inside another
    backend's delegate (XNNPACK's, say) count in ``total``, not in ``delegated``; ExecuTorch's
    memory-planning nodes (``alloc``) are not operators and are not counted; a program that was never
    lowered gives ``delegated == 0``. Raises ``TypeError`` for anything else, ``ValueError`` for a method
    the manager lacks (naming those it has).
    """
    from .lowering.preprocess import BACKEND_ID

    if hasattr(program, "exported_program") and callable(program.exported_program):
        methods = sorted(getattr(program, "methods", None) or [method])
        if method not in methods:
            raise ValueError(f"the program has no method {method!r}; its methods: {', '.join(methods)} "
                             "(delegation_summary(program, method=...))")
        program = program.exported_program(method)
    if not isinstance(program, torch.export.ExportedProgram):
        raise TypeError(f"delegation_summary takes a lowered program (what exov.lower or "
                        f"to_edge_transform_and_lower returns), not a {type(program).__name__}")
    from .lowering.partitioner import REFUSAL_META

    delegated = outside = partitions = 0
    left: list[NotDelegated] = []
    others: dict[str, int] = {}
    module = program.graph_module
    ours = any(REFUSAL_META in n.meta for n in module.graph.nodes)
    for node in module.graph.nodes:
        if node.op != "call_function" or getattr(node.target, "__module__", "") == "executorch.exir.memory":
            continue
        name = getattr(node.target, "__name__", str(node.target))
        if name == "executorch_call_delegate":
            lowered = getattr(module, node.args[0].target)
            inside = sum(1 for n in lowered.original_module.graph.nodes
                         if n.op == "call_function" and getattr(n.target, "__name__", "") != "getitem")
            if lowered.backend_id == BACKEND_ID:
                partitions += 1
                delegated += inside
            else:
                outside += inside
                others[lowered.backend_id] = others.get(lowered.backend_id, 0) + 1
        elif name != "getitem":
            outside += 1
            recorded = node.meta.get(REFUSAL_META)
            left.append(NotDelegated(node.name, *recorded) if recorded else NotDelegated(
                node.name, _operator_name(node.target), _UNRECORDED[ours or partitions > 0]))
    return DelegationSummary(delegated, delegated + outside, partitions, tuple(left), others)


# Why a node without a recorded reason runs on ExecuTorch: in a program this package's partitioner lowered, it was
# added after partitioning (the copy of a returned input, ExecuTorch's write-back of an updated buffer).
_UNRECORDED = {True: "added after partitioning (a copy of a returned input, or ExecuTorch's write-back of a buffer)",
               False: "not lowered with this package's partitioner"}


def _operator_name(target) -> str:
    """``aten.cumsum.default`` for an edge or ATen operator (``aten.cumsum.out`` for an out variant)."""
    schema = getattr(target, "_schema", None)
    if schema is not None:
        namespace, _, base = schema.name.partition("::")
        return f"{namespace}.{base}.{schema.overload_name or 'default'}"
    return getattr(target, "__name__", str(target))
