"""The partitioner: tags the subgraphs OpenVINO runs, leaving the rest to ExecuTorch's CPU kernels."""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable

import torch
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from ..support import progress
from ..support.quiet import quiet_dependencies
from ..contract.compile_specs import (KEYWORD_DEFAULTS, input_ranges_spec, make_compile_specs, program_state_spec,
                                      resolve_options)
from .conversion import require_openvino_package
from .integer_ranges import integer_ranges
from .kept_operations import ops_to_not_decompose
from .partitioner_arguments import (NotGiven, check_option_types, checked_specs, compile_specs_and, given_once,
                                    given_value, options_given, refuse_repeated, refuse_unknown, skip_set,
                                    upstream_skip_sets)
from .partitioner_arguments import default
from .operator_support import (OpenVINOOperatorSupport, flushed_constant_names,
                               refuse_quantization_left_for_executorch)
from .passes import run_before_decomposition
from .passes.integer_remainders import refuse_remainders_left_for_executorch
from .ops import count_operators, op_name
from .preprocess import BACKEND_ID

# Where the partitioner writes (operator, why) of a node that stays on ExecuTorch (node.meta): delegation_summary
# reads it, also after to_executorch has made the operator its out variant.
REFUSAL_META = "executorch_openvino_refusal"
_log = logging.getLogger(__name__)
# The option keywords' defaults, told apart from the same values given (partitioner_arguments.NotGiven).
_DEVICE, _PRECISION, _NUMERICS, _HINT, _COMPRESSION, _GROUP_SIZE, _RATIO, _GGUF = (
    default(KEYWORD_DEFAULTS[key]) for key in ("device", "inference_precision", "numerics", "performance_hint",
                                               "weight_compression", "weight_group_size", "weight_ratio",
                                               "gguf_weights"))


class OpenVINOPartitioner(Partitioner):
    """Delegates every connected group of OpenVINO-supported nodes.

    What OpenVINO would compute differently from PyTorch stays on ExecuTorch's
    CPU kernels (see :mod:`executorch_openvino.lowering.operator_support`).

    ``device``, ``inference_precision``, ``numerics``, ``performance_hint``, the weight compression
    (``weight_compression`` ``"int8"``/``"int4"``, ``weight_group_size``, ``weight_ratio``) and ``gguf_weights``
    (the ``.gguf`` file the weights were read from, for its own quantized blocks) become compile specs
    (see :mod:`executorch_openvino.contract.compile_specs`). Alternatively give the compile specs themselves, a list of
    ``executorch.exir.backend.compile_spec_schema.CompileSpec``, as ``compile_specs=`` or in the form of
    executorch's own ``executorch.backends.openvino.partitioner.OpenvinoPartitioner``:
    ``OpenvinoPartitioner(compile_spec, op_types_to_skip=None, op_names_to_skip=None)``, where a list first
    makes the next two positional arguments the skip sets, as there, and ``compile_spec=`` is accepted too.
    ``input_ranges``: ``{input name: (low, high)}``, integer inputs whose values you promise stay in the
    range (checked on every call); integer arithmetic on them can then be delegated with
    ``numerics="exact"`` (:mod:`executorch_openvino.contract.compile_specs`).
    ``op_types_to_skip`` (operator names such as ``"aten.add.Tensor"``, what ``node.target.__name__`` gives)
    and ``op_names_to_skip`` (graph node names such as ``"aten_add_tensor"``) stay on ExecuTorch's CPU
    kernels, as upstream's do.

    Raises ``ValueError`` at construction for an unknown precision, key or performance hint, or a
    device name that is empty or not upper case (OpenVINO's names), before any conversion starts (a
    device's existence is checked where the program loads), and ``TypeError`` for a first argument that is
    neither a device name nor a
    list of ``CompileSpec``, for compile specs given twice or together with option keywords, for a
    compile spec value that is not bytes, and for a skip set that is a string or holds non-strings;
    ``ValueError`` for an entry of ``op_types_to_skip`` that names no operator overload.
    """

    def __new__(cls, *args, **keywords):
        if cls.__init__ is OpenVINOPartitioner.__init__:  # a subclass's own parameters are its business
            refuse_unknown(keywords, list(inspect.signature(cls.__init__).parameters)[1:], cls.__name__)
            refuse_repeated(args, keywords)  # before Python's own "got multiple values for argument"
        return super().__new__(cls)

    def __init__(self, device=_DEVICE, inference_precision=_PRECISION, compile_specs=None, numerics: str = _NUMERICS,
                 performance_hint: str = _HINT, *, compile_spec=None, op_types_to_skip=None, op_names_to_skip=None,
                 weight_compression: str = _COMPRESSION, weight_group_size: int = _GROUP_SIZE,
                 weight_ratio: float = _RATIO, input_ranges: dict | None = None, gguf_weights: str = _GGUF):
        options = {"device": device, "inference_precision": inference_precision, "numerics": numerics,
                   "performance_hint": performance_hint, "weight_compression": weight_compression,
                   "weight_group_size": weight_group_size, "weight_ratio": weight_ratio, "gguf_weights": gguf_weights}
        given = options_given(options)
        if isinstance(device, (list, tuple)):  # upstream's positional form: (compile_spec, op_types, op_names)
            op_types_to_skip, op_names_to_skip = upstream_skip_sets(inference_precision, compile_specs,
                                                                    op_types_to_skip, op_names_to_skip)
            compile_specs, device, inference_precision = (list(device), KEYWORD_DEFAULTS["device"],
                                                          KEYWORD_DEFAULTS["inference_precision"])
            given = [name for name in given if name not in ("device", "inference_precision")]
        elif not isinstance(device, (str, NotGiven)):
            raise TypeError(f"OpenVINOPartitioner's first argument is a {type(device).__name__}: give a device "
                            "name (str, e.g. 'CPU') or a list of executorch CompileSpec objects")
        else:
            check_option_types(options, input_ranges)
        if compile_spec is not None:
            compile_specs = given_once("compile specs", compile_specs, list(compile_spec))
        self.op_types_to_skip = skip_set("op_types_to_skip", op_types_to_skip)
        self.op_names_to_skip = skip_set("op_names_to_skip", op_names_to_skip)
        if compile_specs is None:
            specs = make_compile_specs(**{name: given_value(value) for name, value in options.items()})
        else:
            if given:
                raise TypeError(compile_specs_and(given))
            specs = checked_specs(compile_specs)
        if input_ranges:
            specs = [*specs, input_ranges_spec(input_ranges)]
        self.options = resolve_options(specs)
        _warn_about_unused_weight_options(self.options.weight_compression, {
            name: given_value(options[name]) for name in ("weight_group_size", "weight_ratio") if name in given})
        self.delegation_spec = DelegationSpec(BACKEND_ID, specs)
        self._remainders_rewritten = 0  # transform_for_pre_decomposition calls not yet met by a partition()

    def _support(self, exported_program) -> OpenVINOOperatorSupport:
        """The support check, with the declared ``input_ranges`` assumed where they hold: only for an input
        every reader of which is delegated, since each partition reading it checks it, while a value derived
        on ExecuTorch's side would reach OpenVINO unchecked."""
        require_openvino_package()  # before anything asks OpenVINO's frontend what it converts
        declared = self._declared_ranges(exported_program)
        placeholders = {n.name: n for n in exported_program.graph.nodes if n.op == "placeholder"}
        dropped: dict[str, tuple[torch.fx.Node, str]] = {}  # input -> (a reader left on ExecuTorch, its reason)
        while True:
            support = self._support_assuming(exported_program, declared)
            for name in declared:
                refused = [(user, why) for user in placeholders[name].users if (why := support.refusal(user))]
                if refused:
                    dropped[name] = refused[0]
            if not dropped.keys() & declared.keys():
                support.unused_ranges = dropped
                return support
            declared = {name: bounds for name, bounds in declared.items() if name not in dropped}

    def _support_assuming(self, exported_program, assumed: dict) -> OpenVINOOperatorSupport:
        signature = exported_program.graph_signature
        constants = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
                     **signature.inputs_to_lifted_tensor_constants}
        return OpenVINOOperatorSupport(constant_names=constants, numerics=self.options.numerics,
                                       flushed_constants=flushed_constant_names(exported_program),
                                       integer_ranges=integer_ranges(exported_program, assumed),
                                       op_types_to_skip=self.op_types_to_skip, op_names_to_skip=self.op_names_to_skip)

    def _declared_ranges(self, exported_program) -> dict:
        """The declared ``input_ranges``, checked against the program's integer user inputs."""
        declared = {name: (low, high) for name, low, high in self.options.input_ranges}
        inputs = {n.name: n.meta.get("val") for n in exported_program.graph.nodes
                  if n.op == "placeholder" and n.name in exported_program.graph_signature.user_inputs}
        for name in declared:
            value = inputs.get(name)
            if not isinstance(value, torch.Tensor) or value.dtype not in (torch.int32, torch.int64):
                raise ValueError(f"input_ranges names {name!r}, which is not an int32/int64 input of this program; "
                                 f"its inputs are {', '.join(inputs)}")
        return declared

    def ops_to_not_decompose(self, exported_program: torch.export.ExportedProgram
                             ) -> tuple[list, Callable[[torch.fx.Node], bool]]:
        """The operations OpenVINO runs better whole, kept so where this partitioner delegates them
        (:mod:`executorch_openvino.lowering.kept_operations`)."""
        with quiet_dependencies():
            return ops_to_not_decompose(self._support(exported_program), exported_program)

    def transform_for_pre_decomposition(self, exported_program: torch.export.ExportedProgram
                                        ) -> torch.export.ExportedProgram:
        """The passes this package runs on the ATen program, in place, before ExecuTorch's edge decomposition
        (``to_edge_transform_and_lower`` calls this; so ``exov.lower`` and ExecuTorch's own API give the same
        program): 0-d integer operands keep eager's result dtype, splits of a program with dynamic sizes become
        slices (else ``to_edge`` fixes the sizes), integer remainders are rewritten exactly (with
        ``numerics="exact"``),
        integer cumsums of constants are folded, and the views of kept operations' results are made valid
        for the strides ExecuTorch gives them."""
        with quiet_dependencies():
            exact = self.options.numerics == "exact"
            program = run_before_decomposition(exported_program, exact=exact,
                                               kept_filter=lambda p: self.ops_to_not_decompose(p)[1])
            if exact:
                self._remainders_rewritten += 1
            return program

    def partition(self, exported_program: torch.export.ExportedProgram) -> PartitionResult:
        reporter = progress.current()
        if reporter is not None:
            reporter.line(f"checking {count_operators(exported_program.graph)} operators for OpenVINO "
                          "(ExecuTorch's decompositions done)")
        with quiet_dependencies():
            support = self._support(exported_program)
            # One transform_for_pre_decomposition per method before its partition(): count, not a flag, so that
            # a partitioner reused by to_edge(...).to_backend(...) does not count an earlier lowering's.
            rewritten = self._remainders_rewritten > 0
            self._remainders_rewritten = max(0, self._remainders_rewritten - 1)
            refuse_remainders_left_for_executorch(exported_program, lambda node: support.is_node_supported(None, node),
                                                  rewritten)
            refuse_quantization_left_for_executorch(exported_program,
                                                    lambda node: support.is_node_supported(None, node))
            _warn_about_unknown_node_names(exported_program, self.op_names_to_skip)
            proposer = CapabilityBasedPartitioner(exported_program.graph_module, support,
                                                  allows_single_node_partition=True)
            # Last, so it wins over a program_state given in compile_specs.
            spec = DelegationSpec(BACKEND_ID, [*self.delegation_spec.compile_specs,
                                               program_state_spec(exported_program)])
            tags = {}
            partitions = proposer.propose_partitions()
            for partition in partitions:
                tag = f"openvino_{partition.id}"
                for node in partition.nodes:
                    node.meta["delegation_tag"] = tag
                tags[tag] = spec
            _report_partitions(exported_program, partitions)
            tag_constant_data(exported_program)
            _tag_buffers_updated_inside(exported_program)
            _untag_returned_constants(exported_program)
            _initialise_mutated_buffers(exported_program)
            _record_refusals(exported_program, support)
            _warn_about_unused_ranges(exported_program, support.unused_ranges)
            return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


def _warn_about_unused_ranges(exported_program, unused: dict) -> None:
    """A declared input range is assumed only where every reader of the input is delegated (OpenVINOPartitioner
    ._support); say which reader kept one from use, and note it in the reasons of the nodes it would have let in."""
    for name, (reader, why) in unused.items():
        what = "the program returns it" if reader.op == "output" else (
            f"{reader.name} ({op_name(reader.target)}) reads it and stays on ExecuTorch ({why})")
        warnings.warn(f"input_ranges: the range of {name!r} is not used, because {what}: a value computed from it "
                      "there would reach OpenVINO unchecked. With numerics='exact', integer arithmetic on it stays on "
                      "ExecuTorch as long as that reader does", stacklevel=4)
        downstream, pending = set(), [n for n in exported_program.graph.nodes if n.name == name]
        while pending:
            for user in pending.pop().users:
                if user not in downstream:
                    downstream.add(user)
                    pending.append(user)
        for node in downstream:
            recorded = node.meta.get(REFUSAL_META)
            if recorded and recorded[1].startswith("integer arithmetic not proven"):
                node.meta[REFUSAL_META] = (recorded[0], f"{recorded[1]}; the input_ranges of {name!r} are unused: "
                                                        f"{reader.name} reads it on ExecuTorch")


def _record_refusals(exported_program, support: OpenVINOOperatorSupport) -> None:
    """Writes into each operator node left untagged why it stays on ExecuTorch (REFUSAL_META), and logs it at
    debug level (``logging.basicConfig()`` and ``logging.getLogger("executorch_openvino").setLevel(logging.DEBUG)``
    show them)."""
    for node in exported_program.graph.nodes:
        if node.op != "call_function" or "delegation_tag" in node.meta or op_name(node.target) == "getitem":
            continue
        reason = support.refusal(node) or "supported, but the partitioner left it out of every partition"
        node.meta[REFUSAL_META] = (op_name(node.target), reason)
        _log.debug("%s (%s) stays on ExecuTorch: %s", node.name, op_name(node.target), reason)


def _warn_about_unknown_node_names(exported_program, names) -> None:
    known = {node.name for node in exported_program.graph.nodes}
    unknown = sorted(set(names) - known)
    if unknown:  # a typo, or a partitioner reused for another program
        operators = [n.name for n in exported_program.graph.nodes if n.op == "call_function"]
        warnings.warn(f"op_names_to_skip names {unknown}, which no node of this program has; its operator "
                      f"nodes are named like {operators[:5]}", stacklevel=2)


def _untag_returned_constants(exported_program) -> None:
    """A parameter, buffer or constant the program also returns stays ExecuTorch's: the partition reads it as an input.

    ``tag_constant_data`` hands a constant to the partition that reads it even
    when the graph's output uses it too, and ExecuTorch 1.5.1's lowering then
    fails with "constant data node (p_w) is tagged with (openvino_0) but has user
    (output) which has tag (None)" (``return self.w, self.w * x``).
    """
    for node in exported_program.graph.nodes:
        if node.op == "placeholder" and "delegation_tag" in node.meta and any(
                user.op == "output" for user in node.users):
            del node.meta["delegation_tag"]


def _tag_buffers_updated_inside(exported_program) -> None:
    """Hands a buffer the program updates to the partition that reads it and computes its new value.

    The delegate then keeps the buffer as OpenVINO state across calls (a KV cache stays inside
    OpenVINO: no copy in and out per call; ``lowering/model_state.py``). A buffer stays ExecuTorch's,
    and reaches the partition as an input as before, when several partitions or ExecuTorch's kernels
    read it, when its update is computed elsewhere, when anything but the update itself uses the new
    value outside the partition (ExecuTorch 1.5.1 cannot lower a delegate-owned buffer whose new value
    is also returned or read by its kernels), or when it is int64 and its values are read (OpenVINO's CPU
    plugin keeps no int64 state: "ReadValue ... does not support i64", 2026.4.1).
    """
    signature = exported_program.graph_signature
    updates = {buffer: value for value, buffer in signature.buffers_to_mutate.items()}
    nodes = {node.name: node for node in exported_program.graph.nodes}
    output = next(n for n in exported_program.graph.nodes if n.op == "output")
    for node in exported_program.graph.nodes:
        buffer = signature.inputs_to_buffers.get(node.name) if node.op == "placeholder" else None
        update = nodes.get(updates.get(buffer))
        if update is None:
            continue
        tag = update.meta.get("delegation_tag")
        if tag is None or any(user.meta.get("delegation_tag") != tag for user in node.users):
            continue
        if any(user is not output and user.meta.get("delegation_tag") != tag for user in update.users):
            continue
        if sum(value is update for value in output.args[0]) != 1:
            continue  # also a user output
        value = node.meta.get("val")
        if isinstance(value, torch.Tensor) and value.dtype == torch.int64 and not all(
                op_name(user.target) == "aten.copy.default" and user.args[0] is node and user.args[1] is not node
                for user in node.users):
            continue
        node.meta["delegation_tag"] = tag


def _initialise_mutated_buffers(exported_program) -> None:
    """Has ExecuTorch's emitter write the values of the buffers the program changes, as eager starts from them.

    ExecuTorch 1.5.1 writes only the shape of a mutated buffer unless its
    placeholder carries ``et_init_buffer`` (what ``InitializedMutableBufferPass``
    sets), so along ``to_edge_transform_and_lower(...).to_executorch()`` a buffer
    updated in place started from zeros (``y = self.b * 2; self.b.add_(x)`` gave
    ``[0, 0, 0, 0]`` for ``b = arange(4.)``, with or without this delegate).
    """
    signature = exported_program.graph_signature
    mutated = set(signature.buffers_to_mutate.values())
    for node in exported_program.graph.nodes:
        if node.op == "placeholder" and signature.inputs_to_buffers.get(node.name) in mutated:
            node.meta["et_init_buffer"] = True


# help() and inspect show __init__'s parameters, not __new__'s (*args, **keywords).
OpenVINOPartitioner.__signature__ = inspect.signature(OpenVINOPartitioner.__init__).replace(
    parameters=list(inspect.signature(OpenVINOPartitioner.__init__).parameters.values())[1:])
# ExecuTorch's bundled OpenVINO backend spells it so (executorch.backends.openvino.partitioner): code written for
# it keeps working with this package's partitioner.
OpenvinoPartitioner = OpenVINOPartitioner


def _report_partitions(program, partitions) -> None:
    """The stage line of the partitioning, and the count that preprocess's lines number against."""
    reporter = progress.current()
    if reporter is None:
        return
    reporter.partitions, reporter.converted = len(partitions), 0
    delegated = sum(len(p.nodes) for p in partitions)
    reporter.line(f"{len(partitions)} partition{'s' if len(partitions) != 1 else ''} for OpenVINO: "
                  f"{delegated} of {count_operators(program.graph)} operators")


def _warn_about_unused_weight_options(compression: str, given: dict) -> None:
    """Warns when `weight_group_size` or `weight_ratio` was given but does nothing: they shape NNCF's int4
    compression only (int8 is one scale per row; without weight_compression nothing is compressed). Their
    defaults, and a group size of -1 (per row, what export_llm gives), are never reported."""
    inert = {"weight_group_size": (128, -1), "weight_ratio": (1.0,)}
    unused = [name for name, value in given.items() if value not in inert[name] and compression != "int4"]
    if unused:
        now = f"weight_compression='{compression}'" if compression else "no weight_compression"
        warnings.warn(f"{' and '.join(unused)} given with {now}: they apply to weight_compression='int4' only, so "
                      "they change nothing here; give weight_compression='int4' or leave them out", stacklevel=3)
