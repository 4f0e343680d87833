"""Comparing a lowered program's outputs with eager PyTorch's.

Integers and bools exactly, dtype and shape always exactly; floats with
``rtol = 1e-5`` (1e-3 for float16) and ``atol = 1e-5 * (1 + s32) + 1e-3 * s16``
where ``(s32, s16)`` is the output's error bound from :mod:`.ops` (the sum of
the magnitudes it was rounded at): at 1e-5 per unit that is about a hundred
float32 ulps per rounding, while bf16 arithmetic is off by 4e-3 per unit.
NaN must be NaN where eager's is, infinities equal.
"""

from __future__ import annotations

import torch

RTOL = {torch.float32: 1e-5, torch.float64: 1e-5, torch.float16: 1e-3}
ATOL_PER_UNIT_F32 = 1e-5
ATOL_PER_UNIT_F16 = 1e-3


def tolerance(dtype: torch.dtype, err) -> tuple:
    """(rtol, atol) for a float output of `dtype` with error bound `err` = (s32, s16)."""
    s32, s16 = err
    return RTOL[dtype], ATOL_PER_UNIT_F32 * (1 + s32) + ATOL_PER_UNIT_F16 * s16


def compare(got, want: torch.Tensor, err, what: str) -> tuple | None:
    """None when `got` matches `want`, else (category, detail) with category
    wrong-type, wrong-dtype, wrong-shape or wrong-value."""
    if not isinstance(got, torch.Tensor):
        return "wrong-type", f"{what} is a {type(got).__name__}, eager gives a tensor"
    want = want.detach()
    if got.dtype != want.dtype:
        return "wrong-dtype", f"{what} has dtype {got.dtype}, eager {want.dtype}"
    if tuple(got.shape) != tuple(want.shape):
        return "wrong-shape", f"{what} has shape {tuple(got.shape)}, eager {tuple(want.shape)}"
    if not want.dtype.is_floating_point:
        if torch.equal(got, want):
            return None
        where = (got != want).nonzero()[:3].tolist()
        return "wrong-value", f"{what} differs at {where}: {_values(got, want, got != want)}"
    rtol, atol = tolerance(want.dtype, err)
    g, w = got.double(), want.double()
    nan_g, nan_w = torch.isnan(g), torch.isnan(w)
    bad = nan_g != nan_w
    both = ~nan_g & ~nan_w
    finite = both & torch.isfinite(w) & torch.isfinite(g)
    bad |= both & ~(torch.isfinite(w) & torch.isfinite(g)) & (g != w)
    bad |= finite & ((g - w).abs() > atol + rtol * w.abs())
    if not bool(bad.any()):
        return None
    diff = float((g - w)[finite].abs().max()) if bool(finite.any()) else float("nan")
    return "wrong-value", (f"{what}: {int(bad.sum())} of {bad.numel()} elements differ (max abs diff {diff:.3g}, "
                           f"atol {atol:.3g}, rtol {rtol:g}): {_values(got, want, bad)}")


def _values(got, want, bad) -> str:
    index = bad.reshape(-1).nonzero()[:4].reshape(-1)
    g = got.reshape(-1)[index].tolist()
    w = want.reshape(-1)[index].tolist()
    return f"got {g}, eager {w}"
