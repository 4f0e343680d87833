"""Matrix products on an input of rank 3 or more: no Reshape pair around each in the IR, eager's values.

ExecuTorch's edge decomposition flattens the operand of a linear layer or an LSTM step (``view_copy``,
``addmm`` or ``mm``, ``view_copy`` back); ``passes/flattened_matmuls.py`` gives OpenVINO the product on the
operand's own shape, as ``openvino.convert_model`` does. On a transposed input it writes ``bmm`` with the
weight broadcast over the batch, which OpenVINO folded into one copy of the weight per batch entry. The IR
checks fail without that rewrite (the LSTM had 2 Reshapes per step, the transposed linear a Broadcast); the
products it must leave alone are checked for their values.
"""

import pytest
import torch

import executorch_openvino as exov
from exov_testing.programs import Fn, assert_matches_eager, eager, partition_models, partition_operation_types

NUMERICS = ["exact", "fast"]


class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 16, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(16, 3)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out), h, c


def _reshapes_beside_products(program) -> int:
    """Reshapes that feed a MatMul or read one, in every partition's IR."""
    found = 0
    for model in partition_models(program):
        for op in model.get_ops():
            if op.get_type_name() != "MatMul":
                continue
            feeding = [op.input_value(i).get_node() for i in range(op.get_input_size())]
            reading = [target.get_node() for target in op.output(0).get_target_inputs()]
            found += sum(node.get_type_name() == "Reshape" for node in feeding + reading)
    return found


def _lowered(module, inputs, **options):
    program = exov.lower(module.eval(), inputs, **options)
    assert partition_operation_types(program)["MatMul"] > 0, "the products were not delegated"
    return program


def _check(program, module, input_sets):
    method = exov.load_method(program.buffer)
    for inputs in input_sets:  # several calls, and of one loaded method
        assert_matches_eager(list(method.execute(list(inputs))), eager(module, inputs))


# The LSTM takes 14 s per mode: fast mode (the same pass, other numerics) by hand, within CI's 25 minutes.
@pytest.mark.parametrize("numerics", ["exact", pytest.param("fast", marks=pytest.mark.slow)])
def test_lstm_steps_have_no_reshapes(numerics, tmp_path):
    torch.manual_seed(0)
    module = Recurrent().eval()
    inputs = (torch.randn(3, 5, 6),)
    program = _lowered(module, inputs, numerics=numerics)
    assert _reshapes_beside_products(program) == 0
    path = tmp_path / "lstm.pte"
    path.write_bytes(program.buffer)  # and from a file
    method = exov.load_method(path)
    for _ in range(2):
        x = torch.randn(3, 5, 6)
        assert_matches_eager(list(method.execute([x])), eager(module, (x,)))


@pytest.mark.parametrize("bias", [True, False], ids=["addmm", "mm"])
@pytest.mark.parametrize("shape", [(2, 7, 8), (2, 3, 5, 8), (1, 1, 8)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.sampled(every=2)
def test_linear_on_higher_ranks(shape, bias):
    torch.manual_seed(0)
    module = torch.nn.Linear(8, 6, bias=bias)
    program = _lowered(module, (torch.randn(shape),))
    assert partition_operation_types(program)["Reshape"] == 0
    assert _reshapes_beside_products(program) == 0
    _check(program, module, [(torch.randn(shape),), (torch.randn(shape),)])


def test_dynamic_sizes_are_rewritten_too():
    torch.manual_seed(0)
    module = torch.nn.Linear(8, 6).eval()
    batch = torch.export.Dim("batch", min=1, max=16)
    program = _lowered(module, (torch.randn(4, 5, 8),), dynamic_shapes=({0: batch},))
    assert _reshapes_beside_products(program) == 0
    _check(program, module, [(torch.randn(n, 5, 8),) for n in (1, 4, 16)])


def test_dynamic_batch_of_zero():
    # torch's shape environment takes a dynamic size for 2 or more while tracing, so the product is rewritten
    # even where the range starts at 0; a call with no rows gives eager's empty result.
    torch.manual_seed(0)
    module = torch.nn.Linear(8, 6).eval()
    batch = torch.export.Dim("batch", min=0, max=16)
    program = _lowered(module, (torch.randn(4, 5, 8),), dynamic_shapes=({0: batch},))
    _check(program, module, [(torch.randn(n, 5, 8),) for n in (0, 1, 16)])


# Products the rewrite must leave alone, each written with the views that the decomposition writes.
def _full_bias(x, w, b):  # a bias with one row per flattened row: it does not broadcast over (2, 3)
    return torch.addmm(b, x.reshape(6, 8), w).reshape(2, 3, 6)


def _scaled(x, w, b):  # beta and alpha other than 1
    return torch.addmm(b, x.reshape(6, 8), w, beta=0.5, alpha=2.0).reshape(2, 3, 6)


def _flat_result_returned(x, w, b):  # the flat product is read by something other than its view back
    flat = torch.addmm(b, x.reshape(6, 8), w)
    return flat.reshape(2, 3, 6), flat.sum(0)


def _flat_operand_returned(x, w, b):  # the flattened operand is read elsewhere too: rewritten, it stays
    flat = x.reshape(6, 8)
    return torch.addmm(b, flat, w).reshape(2, 3, 6), flat * 2


def _regrouped(x, w, b):  # viewed back to other leading sizes than the operand's
    return torch.addmm(b, x.reshape(6, 8), w).reshape(3, 2, 6)


@pytest.mark.parametrize("fn, bias_shape", [(_full_bias, (6, 6)), (_scaled, (6,)), (_flat_result_returned, (6,)),
                                            (_flat_operand_returned, (6,)), (_regrouped, (6,)),
                                            (_regrouped, (1, 6))],
                         ids=["full-bias", "scaled", "flat-result-returned", "flat-operand-returned", "regrouped",
                              "regrouped-row-bias"])
@pytest.mark.sampled(every=2)
def test_other_products_keep_eager_values(fn, bias_shape):
    torch.manual_seed(0)
    module = Fn(fn)
    make = lambda: (torch.randn(2, 3, 8), torch.randn(8, 6), torch.randn(bias_shape))  # noqa: E731
    program = _lowered(module, make())
    _check(program, module, [make(), make()])


def test_flat_operand_returned_is_still_rewritten():
    # The product is rewritten; the view that something else reads stays, once.
    program = _lowered(Fn(_flat_operand_returned), (torch.randn(2, 3, 8), torch.randn(8, 6), torch.randn(6)))
    assert partition_operation_types(program)["Reshape"] == 1


def test_empty_weights_are_left_as_they_were():
    # Linear(8, 0) on a rank-3 input: rewritten, its empty weight constant made an IR OpenVINO could not read
    # (found by a tester); left flattened it gives eager's empty result.
    module = torch.nn.Linear(8, 0).eval()
    x = torch.randn(2, 3, 8)
    program = exov.lower(module, (x,))
    assert_matches_eager(list(exov.load_method(program.buffer).execute([x])), eager(module, (x,)))


class TransposedLinear(torch.nn.Module):
    """A linear layer on a transposed input: the decomposition writes ``bmm`` with the weight broadcast over
    the batch (``expand_copy``), which OpenVINO folded into one weight copy per batch entry."""

    def __init__(self, dims, bias=True):
        super().__init__()
        self.dims = dims
        self.linear = torch.nn.Linear(64, 96, bias=bias)

    def forward(self, x):
        return self.linear(x.transpose(*self.dims))


class _AttentionOnly(torch.nn.Module):
    def __init__(self, attention):
        super().__init__()
        self.attention = attention

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


def _constant_bytes(program) -> int:
    return sum(op.get_byte_size() for model in partition_models(program) for op in model.get_ops()
               if op.get_type_name() == "Constant")


def _weight_bytes(module) -> int:
    return sum(p.numel() * p.element_size() for p in module.parameters())


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("shape, dims", [((16, 4, 64), (0, 1)), ((2, 16, 3, 64), (1, 2))], ids=["rank3", "rank4"])
def test_linear_on_transposed_input_holds_its_weight_once(shape, dims, bias):
    torch.manual_seed(0)
    module = TransposedLinear(dims, bias).eval()
    program = _lowered(module, (torch.randn(shape),))
    types = partition_operation_types(program)
    assert types["Broadcast"] == 0 and types["Reshape"] == 0, types
    assert _constant_bytes(program) < 1.1 * _weight_bytes(module)  # 4 and 16 copies of it without the rewrite
    _check(program, module, [(torch.randn(shape),), (torch.randn(shape),)])


@pytest.mark.parametrize("dim", [0, 1], ids=["dynamic-batch", "dynamic-length"])
def test_linear_on_transposed_input_with_dynamic_sizes(dim):
    # A Broadcast of the weight to a dynamic size is computed on every call: a tester's batch_first
    # MultiheadAttention with a dynamic length took 24.5 ms against convert_model's 1.17 ms.
    torch.manual_seed(0)
    module = TransposedLinear((0, 1)).eval()
    size = torch.export.Dim("size", min=1, max=16)
    program = _lowered(module, (torch.randn(16, 4, 64),), dynamic_shapes=({dim: size},))
    assert partition_operation_types(program)["Broadcast"] == 0
    shapes = [(16, n, 64) if dim == 1 else (n, 4, 64) for n in (1, 4, 16)]
    _check(program, module, [(torch.randn(shape),) for shape in shapes])


def test_batch_first_attention_with_dynamic_length():
    torch.manual_seed(0)
    attention = torch.nn.MultiheadAttention(64, 4, batch_first=True).eval()
    module = _AttentionOnly(attention)
    length = torch.export.Dim("length", min=2, max=32)
    program = _lowered(module, (torch.randn(3, 10, 64),), dynamic_shapes=({1: length},))
    assert partition_operation_types(program)["Broadcast"] == 0
    _check(program, module, [(torch.randn(3, n, 64),) for n in (10, 2, 32)])


@pytest.mark.parametrize("numerics", NUMERICS)
def test_batch_first_encoder_layer(numerics, tmp_path):
    # MultiheadAttention under batch_first=True projects its transposed input: the tester's case, where the
    # program held the input projection's weight once per batch entry (52.7 MB for 3.16 MB of weights).
    torch.manual_seed(0)
    module = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True).eval()
    shape = (4, 10, 64)
    program = _lowered(module, (torch.randn(shape),), numerics=numerics)
    assert partition_operation_types(program)["Broadcast"] == 0
    assert _constant_bytes(program) < 1.1 * _weight_bytes(module)
    path = tmp_path / "encoder.pte"
    path.write_bytes(program.buffer)
    method = exov.load_method(path)
    for _ in range(2):
        x = torch.randn(shape)
        assert_matches_eager(list(method.execute([x])), eager(module, (x,)))


def test_broadcast_weight_viewed_to_other_sizes_is_left_alone():
    # Each batch entry of the right operand is w.reshape(8, 3), not w: no linear of w stands for it (a breaker's
    # program, which failed to lower).
    torch.manual_seed(0)
    module = Fn(lambda x, w: torch.bmm(x.reshape(6, 5, 8), w.expand(6, 4, 6).reshape(6, 8, 3)).reshape(2, 3, 5, 3))
    make = lambda: (torch.randn(2, 3, 5, 8), torch.randn(4, 6))  # noqa: E731
    program = _lowered(module, make())
    _check(program, module, [make(), make()])
