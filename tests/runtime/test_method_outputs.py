"""``exov.load_method``'s outputs: copies of the method's planned memory, made without torch's OpenMP threads.

``copy_outputs`` copies tensors of 32768 elements or more with numpy (torch's clone would run on OpenMP
threads whose spinning slows OpenVINO's next inference: runtime/method_outputs.py) and smaller ones with
torch. Either copy must keep values bit for bit, dtype, sizes and strides, and own its memory, so that a
later call (which rewrites the planned memory) leaves an earlier result unchanged.
"""

from __future__ import annotations

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.runtime.method_outputs import copy_outputs, outputs_cloned_on_calling_thread

from exov_testing.programs import Fn, assert_matches_eager, eager

SMALL, LARGE = (4, 8), (300, 200)  # 32 and 60000 elements: torch's clone and numpy's copy

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8, torch.int16,
          torch.int32, torch.int64, torch.bool, torch.complex64, torch.complex128]


def _values(shape, dtype):
    raw = torch.randn(shape, dtype=torch.float64) * 100
    if dtype == torch.bool:
        return raw > 0
    if dtype.is_complex:
        return torch.complex(raw, -raw).to(dtype)
    if dtype.is_floating_point:
        return raw.to(dtype)
    info = torch.iinfo(dtype)
    return raw.clamp(info.min, info.max).to(dtype)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_copies_keep_bits_dtype_and_own_their_memory(dtype, shape):
    source = _values(shape, dtype)
    kept = source.clone()
    (copy,) = copy_outputs([source])
    assert copy.dtype == dtype and copy.shape == source.shape and copy.stride() == source.stride()
    assert copy.data_ptr() != source.data_ptr()
    # Bit for bit, NaN payloads and -0.0 included: compare the bytes.
    assert torch.equal(copy.view(torch.uint8), kept.view(torch.uint8))
    source.zero_()
    assert torch.equal(copy, kept)  # the copy does not view the source


@pytest.mark.parametrize("channels", [2, 64], ids=["small", "large"])
def test_copies_keep_a_channels_last_layout(channels):
    source = torch.randn(1, channels, 32, 32).to(memory_format=torch.channels_last)
    (copy,) = copy_outputs([source])
    assert copy.stride() == source.stride() and torch.equal(copy, source)


def test_other_values_pass_unchanged_and_odd_shapes_copy():
    scalar, empty = torch.tensor(-0.0), torch.empty(0, 5)
    out = copy_outputs([3, 2.5, None, True, scalar, empty])
    assert out[:4] == [3, 2.5, None, True]
    assert out[4].shape == () and torch.equal(out[4].view(torch.int32), scalar.view(torch.int32))
    assert out[5].shape == (0, 5) and out[5].dtype == torch.float32


@pytest.mark.own_runtime
@pytest.mark.native
@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
def test_a_result_stays_unchanged_after_later_calls(shape):
    # Three outputs of three dtypes, planned in the method's memory, which every call rewrites.
    model = Fn(lambda x: (x * 2 - 1, x > 0.25, torch.round(x * 50).to(torch.int32)))
    first = torch.randn(shape)
    method = exov.load_method(exov.lower(model, (first,)).buffer)
    results = []
    for x in [first, torch.randn(shape), -first]:
        results.append((x, method.execute([x])))
    for x, outputs in results:
        assert_matches_eager(list(outputs), eager(model, (x,)))
    assert [o.dtype for o in results[0][1]] == [torch.float32, torch.bool, torch.int32]


class _SmallAndLarge(torch.nn.Module):
    def forward(self, x, y):
        return x + 1, y * 2


@pytest.mark.own_runtime
@pytest.mark.native
def test_the_bindings_clone_only_outputs_torch_copies_on_the_calling_thread():
    # Where every output is below 32768 elements at its largest, executorch's pybindings clone them (torch, one
    # thread); otherwise copy_outputs copies them all. A dynamic size counts at its upper bound.
    def decides(program):
        return outputs_cloned_on_calling_thread(exov.load_method(program.buffer).metadata)

    small, large = torch.randn(SMALL), torch.randn(LARGE)
    assert decides(exov.lower(_SmallAndLarge(), (small, small)))
    assert not decides(exov.lower(_SmallAndLarge(), (small, large)))
    rows = torch.export.Dim("rows", max=300)
    dynamic = exov.lower(_SmallAndLarge(), (small, torch.randn(4, 200)), dynamic_shapes=(None, {0: rows}))
    assert not decides(dynamic)  # (300, 200) at its largest
    method = exov.load_method(dynamic.buffer)
    for x, y in [(small, torch.randn(4, 200)), (-small, large)]:
        first = method.execute([x, y])
        method.execute([x * 3, y * 3])
        assert_matches_eager(first, eager(_SmallAndLarge(), (x, y)))
