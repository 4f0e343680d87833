"""Rewrites of a partition's OpenVINO model that keep OpenVINO's CPU plugin from crashing at compile.

OpenVINO 2026.4.1's CPU plugin ends the process (SIGSEGV in ``GraphRewrite::apply_matcher_passes`` under
``compile_model``) on a static-shape model compiled with the f32 inference precision hint, which this delegate
always gives on CPU, where two biased matmuls in a row are added to a product or a select:
``z * q + linear2(linear1(x))``, or a max-mode embedding bag plus an MLP (a new user's finding). Measured on
an AVX-512/AMX Xeon: OpenVINO's own conversion of the same program crashed the same way once its shapes were
made static; without the hint, with the bf16 or f16 hint, or with 2025.4.1 it compiled.

The guard puts ``Maximum(y, y)`` between the biased matmul's result ``y`` and that sum. ``max(y, y)`` is ``y``
for every float (NaN and the sign of zero included), and the plugin then compiles the model.
"""

from __future__ import annotations

_PRODUCTS = ("Multiply", "Select")


def _biased_matmul(output) -> bool:
    """Whether `output` is ``Add(MatMul, Constant)`` in either order (``aten.addmm`` or ``nn.Linear``)."""
    node = output.get_node()
    if node.get_type_name() != "Add":
        return False
    kinds = sorted(node.input_value(i).get_node().get_type_name() for i in range(2))
    return kinds == ["Constant", "MatMul"]


def guard_biased_matmul_sums(model) -> int:
    """Inserts the guard (above) before each ``Add(product, biased matmul)`` of `model` (an ``openvino.Model``,
    changed in place); returns how many."""
    from openvino import opset13

    guarded = 0
    for node in model.get_ordered_ops():
        if node.get_type_name() != "Add":
            continue
        for i in range(2):
            matmul, other = node.input_value(i), node.input_value(1 - i)
            if _biased_matmul(matmul) and other.get_node().get_type_name() in _PRODUCTS:
                node.input(i).replace_source_output(opset13.maximum(matmul, matmul).output(0))
                guarded += 1
                break
    if guarded:
        model.validate_nodes_and_infer_types()
    return guarded
