"""The partitioner: tags the subgraphs OpenVINO runs, leaving the rest to ExecuTorch's CPU kernels."""

from __future__ import annotations

from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.backend.utils import tag_constant_data
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from .backend import BACKEND_ID
from .compile_specs import make_compile_specs, resolve_options
from .operator_support import OpenvinoOperatorSupport, flushed_constant_names


class OpenvinoPartitioner(Partitioner):
    """Delegates every connected group of OpenVINO-supported nodes.

    What OpenVINO would compute differently from PyTorch stays on ExecuTorch's
    CPU kernels (see :mod:`executorch_openvino.operator_support`).

    ``device``, ``inference_precision``, ``numerics`` and ``performance_hint`` become compile specs (see
    :mod:`executorch_openvino.compile_specs`); alternatively pass
    ``compile_specs`` directly. Raises ``ValueError`` at construction for an
    unknown precision, device or key, before any conversion starts.
    """

    def __init__(self, device: str = "CPU", inference_precision: str = "", compile_specs=None,
                 numerics: str = "exact", performance_hint: str = ""):
        specs = (list(compile_specs) if compile_specs is not None
                 else make_compile_specs(device, inference_precision, numerics, performance_hint))
        self.options = resolve_options(specs)
        self.delegation_spec = DelegationSpec(BACKEND_ID, specs)

    def partition(self, exported_program) -> PartitionResult:
        signature = exported_program.graph_signature
        constants = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
                     **signature.inputs_to_lifted_tensor_constants}
        proposer = CapabilityBasedPartitioner(
            exported_program.graph_module,
            OpenvinoOperatorSupport(constant_names=constants, numerics=self.options.numerics,
                                    flushed_constants=flushed_constant_names(exported_program)),
            allows_single_node_partition=True,
        )
        tags = {}
        for partition in proposer.propose_partitions():
            tag = f"openvino_{partition.id}"
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
            tags[tag] = self.delegation_spec
        tag_constant_data(exported_program)
        _untag_returned_constants(exported_program)
        _initialise_mutated_buffers(exported_program)
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


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
