"""The outputs of a loaded method, copied out of its planned memory on the calling thread only.

``executorch.runtime``'s ``Method.execute`` (executorch 1.5.1) returns each
output tensor as ``torch.clone`` of the method's planned memory. For more than
32768 elements torch copies on its OpenMP threads, and after that copy
libgomp's idle threads spin on the cores that OpenVINO's next inference runs
on. Measured on a 2-core AMD EPYC (AVX-512), OpenVINO 2026.4.1, the bench's
U-Net (a (1, 3, 128, 128) float32 output): 1.16x the time of OpenVINO's own
API on the same IR through ``executorch.runtime``, 1.00x with
``OMP_WAIT_POLICY=PASSIVE`` (which stops the spinning). So
:func:`copy_outputs` copies with numpy, one thread and no OpenMP, from the
outputs that the method returns uncloned. Where every output is smaller than
that, the pybindings' own clone (C++, on the calling thread) is the cheaper copy:
:func:`outputs_cloned_on_calling_thread` says when.
"""

from __future__ import annotations

import math

import torch

# torch copies fewer than this many elements on the calling thread (ATen's GRAIN_SIZE, torch 2.13): its clone
# is then the faster copy (1.6 us against numpy's 3.6 for 16 floats, measured).
_ONE_THREAD_ELEMENTS = 32768
# A numpy-readable integer dtype of each element size: any torch dtype (bfloat16,
# bool, float8...) is viewed as one of these for the copy, then viewed back.
_SAME_SIZE_INTEGERS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def outputs_cloned_on_calling_thread(meta) -> bool:
    """True when torch clones every tensor output of the method that ``meta`` (an ExecuTorch ``MethodMeta``)
    describes on the calling thread: each has fewer than 32768 elements at its largest (a dynamic dimension
    counts at its upper bound). The pybindings' clone then costs 1.3 us less per call than
    :func:`copy_outputs` (a 16-float output, measured as :func:`copy_outputs` was)."""
    try:
        for index in range(meta.num_outputs()):
            try:
                info = meta.output_tensor_meta(index)
            except (RuntimeError, IndexError):  # not a tensor output (an int): never cloned
                continue
            if math.prod(int(size) for size in info.sizes()) >= _ONE_THREAD_ELEMENTS:
                return False
    except Exception:  # a MethodMeta that reads otherwise: copy_outputs is right for any output
        return False
    return True


def copy_outputs(outputs: list) -> list:
    """``outputs`` with each tensor replaced by a copy of it that owns its memory; other values as they are.

    ``outputs``: what ``ExecuTorchMethod(inputs, clone_outputs=False)`` returns, tensors that view the
    method's planned memory (the next call overwrites them). Each copy keeps the tensor's dtype, sizes and
    strides. From 32768 elements on, the copy is numpy's (a ``memcpy`` on the calling thread), where torch's
    own ``clone`` would run on its OpenMP threads (see the module docstring); below, torch's.
    """
    return [_copy(value) if isinstance(value, torch.Tensor) else value for value in outputs]


def _copy(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.numel() < _ONE_THREAD_ELEMENTS:
        return tensor.clone()
    if tensor.dtype == torch.complex128:  # 16 bytes: no integer of that size, numpy reads it as it is
        return torch.from_numpy(tensor.numpy().copy(order="K"))
    integers = tensor.view(_SAME_SIZE_INTEGERS[tensor.element_size()])
    return torch.from_numpy(integers.numpy().copy(order="K")).view(tensor.dtype)
