"""Measures each candidate of ``executorch_openvino.lowering.kept_operations``: the operation kept whole against
ExecuTorch's decomposition of it, on this machine.

For every candidate, a small module built around the operation is lowered
twice with ``exov.lower`` (``numerics="exact"``): once with the operation
decomposed as ExecuTorch does it (nothing kept) and once kept whole. The table
gives the OpenVINO operations of the delegated partitions, median latency per
call (interleaved rounds), the largest difference from eager PyTorch relative to
the output's largest magnitude, and whether special values (NaN, infinities in
the inputs) come out where eager PyTorch puts them. An operation belongs in
``KEPT`` when it is faster whole and no less exact (or, when it is less exact,
kept with ``numerics="fast"`` only). The kept variant here is kept whenever its
tensors are float32, whatever ``KEPT``'s own condition says.

    python benchmarks/kept_ops.py [--ops sdpa silu ...] [--seconds 1.5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from engines import ir_operation_counts

aten = torch.ops.aten
nn = torch.nn


class _Apply(nn.Module):
    def __init__(self, fn, *modules):
        super().__init__()
        self.fn, self.layers = fn, nn.ModuleList(modules)

    def forward(self, *xs):
        return self.fn(self.layers, *xs)


def _conv_then(activation):
    return lambda: (_Apply(lambda m, x: m[1](m[0](x)), nn.Conv2d(32, 32, 3, padding=1), activation),
                    (torch.randn(1, 32, 64, 64),))


def _sdpa(mask_kind):
    def build():
        q, k, v = (torch.randn(4, 8, 128, 64) for _ in range(3))
        if mask_kind == "bool":
            mask = torch.rand(4, 1, 128, 128) > 0.2
            return _Apply(lambda m, q, k, v, a: nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=a)), \
                (q, k, v, mask)
        if mask_kind == "float":
            mask = torch.randn(4, 1, 128, 128)
            return _Apply(lambda m, q, k, v, a: nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=a)), \
                (q, k, v, mask)
        causal = mask_kind == "causal"
        return _Apply(lambda m, q, k, v: nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)), \
            (q, k, v)
    return build


def _recurrent(cls):
    def build():
        layer = cls(64, 128, num_layers=2, batch_first=True)
        return _Apply(lambda m, x: m[0](x)[0], layer), (torch.randn(4, 32, 64),)
    return build


# name -> (the aten op kept, a builder of (module, inputs))
CANDIDATES = {
    "sdpa": (aten.scaled_dot_product_attention.default, _sdpa(None)),
    "sdpa_bool_mask": (aten.scaled_dot_product_attention.default, _sdpa("bool")),
    "sdpa_float_mask": (aten.scaled_dot_product_attention.default, _sdpa("float")),
    "sdpa_causal": (aten.scaled_dot_product_attention.default, _sdpa("causal")),
    "linear": (aten.linear.default, lambda: (nn.Linear(384, 1536), (torch.randn(8, 128, 384),))),
    "matmul": (aten.matmul.default, lambda: (_Apply(lambda m, a, b: a @ b),
                                             (torch.randn(4, 8, 128, 64), torch.randn(4, 8, 64, 128)))),
    "layer_norm": (aten.layer_norm.default, lambda: (nn.LayerNorm(384), (torch.randn(8, 128, 384),))),
    "rms_norm": (aten.rms_norm.default, lambda: (nn.RMSNorm(384), (torch.randn(8, 128, 384),))),
    "group_norm": (aten.group_norm.default, lambda: (nn.GroupNorm(8, 64), (torch.randn(2, 64, 32, 32),))),
    "instance_norm": (aten.instance_norm.default,
                      lambda: (nn.InstanceNorm2d(64, affine=True), (torch.randn(2, 64, 32, 32),))),
    "silu": (aten.silu.default, _conv_then(nn.SiLU())),
    "hardswish": (aten.hardswish.default, _conv_then(nn.Hardswish())),
    "hardsigmoid": (aten.hardsigmoid.default, _conv_then(nn.Hardsigmoid())),
    "mish": (aten.mish.default, _conv_then(nn.Mish())),
    "softplus": (aten.softplus.default, _conv_then(nn.Softplus())),
    "prelu": (aten.prelu.default, _conv_then(nn.PReLU(32))),
    "pixel_shuffle": (aten.pixel_shuffle.default,
                      lambda: (_Apply(lambda m, x: m[1](m[0](x)), nn.Conv2d(32, 128, 3, padding=1),
                                      nn.PixelShuffle(2)), (torch.randn(1, 32, 32, 32),))),
    "upsample_nearest": (aten.upsample_nearest2d.vec, lambda: (
        _Apply(lambda m, x: nn.functional.interpolate(m[0](x), scale_factor=2.0, mode="nearest"),
               nn.Conv2d(32, 32, 3, padding=1)), (torch.randn(1, 32, 32, 32),))),
    "upsample_bilinear": (aten.upsample_bilinear2d.vec, lambda: (
        _Apply(lambda m, x: nn.functional.interpolate(m[0](x), scale_factor=2.0, mode="bilinear"),
               nn.Conv2d(32, 32, 3, padding=1)), (torch.randn(1, 32, 32, 32),))),
    "reflection_pad": (aten.pad.default, lambda: (
        _Apply(lambda m, x: m[0](nn.functional.pad(x, (1, 1, 1, 1), mode="reflect")), nn.Conv2d(32, 32, 3)),
        (torch.randn(1, 32, 64, 64),))),
    "stack": (aten.stack.default, lambda: (_Apply(lambda m, *xs: torch.stack(xs, dim=1) * 2),
                                           tuple(torch.randn(64, 256) for _ in range(4)))),
    "lstm": (aten.lstm.input, _recurrent(nn.LSTM)),
    "gru": (aten.gru.input, _recurrent(nn.GRU)),
}


def _agreement(actual: torch.Tensor, expected: torch.Tensor) -> tuple[float, bool]:
    """(largest difference relative to the largest finite magnitude of `expected`, special values equal)."""
    finite = torch.isfinite(expected) & torch.isfinite(actual)
    same_special = bool(torch.equal(torch.isnan(actual), torch.isnan(expected))
                        and torch.equal(torch.isposinf(actual), torch.isposinf(expected))
                        and torch.equal(torch.isneginf(actual), torch.isneginf(expected)))
    scale = float(expected[torch.isfinite(expected)].abs().max()) if torch.isfinite(expected).any() else 1.0
    error = float((actual[finite] - expected[finite]).abs().max()) / max(scale, 1e-30) if finite.any() else 0.0
    return error, same_special


def _with_special_values(inputs: tuple) -> tuple:
    """The inputs with a NaN, an inf and a -inf in the first float input (other inputs unchanged)."""
    out = list(inputs)
    for i, x in enumerate(out):
        if x.is_floating_point():
            x = x.clone()
            flat = x.view(-1)
            flat[0], flat[flat.numel() // 2], flat[-1] = float("nan"), float("inf"), float("-inf")
            out[i] = x
            break
    return tuple(out)


def measure(name: str, seconds: float) -> dict:
    import executorch_openvino as exov
    from executorch_openvino.lowering import kept_operations

    op, build = CANDIDATES[name]
    torch.manual_seed(0)
    module, inputs = build()
    module.eval()
    special = _with_special_values(inputs)
    with torch.no_grad():
        expected, expected_special = module(*inputs), module(*special)
    saved = dict(kept_operations.KEPT)
    row, methods = {"op": str(op)}, {}
    try:
        others = {k: v for k, v in saved.items() if k != op}
        for variant, kept in (("decomposed", others),
                              ("kept", {**others, op: kept_operations.float32_only})):
            kept_operations.KEPT.clear()
            kept_operations.KEPT.update(kept)
            try:
                program = exov.lower(module, inputs)
            except Exception as exc:  # reported in the table
                row[variant] = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"}
                continue
            method = exov.load_method(program.buffer)
            error, _ = _agreement(method.execute(list(inputs))[0], expected)
            _, special_ok = _agreement(method.execute(list(special))[0], expected_special)
            counts = ir_operation_counts(program)
            summary = exov.api.delegation_summary(program.exported_program())
            row[variant] = {"ir_operations": sum(counts.values()), "partitions": summary.partitions,
                            "undelegated": summary.total - summary.delegated, "max_rel_error": error,
                            "special_values_as_eager": special_ok, "times": []}
            methods[variant] = method
    finally:
        kept_operations.KEPT.clear()
        kept_operations.KEPT.update(saved)
    calls = list(inputs)
    for method in methods.values():
        for _ in range(3):
            method.execute(calls)
    end = time.perf_counter() + seconds * len(methods)
    while methods and time.perf_counter() < end:
        for variant, method in methods.items():  # interleaved, so load changes hit both
            start = time.perf_counter()
            method.execute(calls)
            row[variant]["times"].append(time.perf_counter() - start)
    for variant in methods:
        times = row[variant].pop("times")
        row[variant]["median_ms"] = statistics.median(times) * 1e3
    return row


def attention_special_value_sweep() -> dict:
    """In how many of 48 cases (a NaN, inf, -inf or 1e30 in q, k or v; bool, float, no and causal masks) the
    delegate's attention gives other NaN/inf positions or values than eager, decomposed and kept whole."""
    import itertools

    import executorch_openvino as exov
    from executorch_openvino.lowering import kept_operations

    attention = torch.nn.functional.scaled_dot_product_attention
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 6, 4, generator=g) for _ in range(3))
    bool_mask = torch.rand(1, 1, 6, 6, generator=g) > 0.3
    bool_mask[..., 2, :] = False
    float_mask = torch.randn(1, 1, 6, 6, generator=g)
    float_mask[..., 3, :] = float("-inf")
    masks = {"bool": (_Apply(lambda m, q, k, v, a: attention(q, k, v, attn_mask=a)), (bool_mask,)),
             "float": (_Apply(lambda m, q, k, v, a: attention(q, k, v, attn_mask=a)), (float_mask,)),
             "none": (_Apply(lambda m, q, k, v: attention(q, k, v)), ()),
             "causal": (_Apply(lambda m, q, k, v: attention(q, k, v, is_causal=True)), ())}
    saved = dict(kept_operations.KEPT)
    differ = {"decomposed": 0, "kept": 0}
    try:
        for variant in differ:
            kept_operations.KEPT.clear()
            if variant == "kept":
                kept_operations.KEPT.update(saved)
            for (module, extra), which, value in itertools.product(
                    masks.values(), range(3), [float("nan"), float("inf"), float("-inf"), 1e30]):
                inputs = [q.clone(), k.clone(), v.clone()]
                inputs[which][0, 0, 1, 0] = value
                inputs = tuple(inputs) + extra
                with torch.no_grad():
                    expected = module(*inputs)
                out = exov.load_method(exov.lower(module, inputs).buffer).execute(list(inputs))[0]
                error, same_special = _agreement(out, expected)
                differ[variant] += not same_special or error > 1e-5
    finally:
        kept_operations.KEPT.clear()
        kept_operations.KEPT.update(saved)
    return {"cases": 48, **differ}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per variant")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--markdown", type=Path, help="also write the table here, after the machine it ran on")
    args = parser.parse_args(argv)
    from bench import cpu_features, machine_info

    machine = machine_info() | {"cpu_features": cpu_features()}
    print(json.dumps(machine))
    rows = {}
    header = ("| candidate | op | IR ops decomposed / kept | ms decomposed / kept | kept/decomposed "
              "| max rel error decomposed / kept | special values as eager decomposed / kept |")
    lines = [header, "|---|---|---|---|---:|---|---|"]
    for name in args.ops:
        row = rows[name] = measure(name, args.seconds)
        d, k = row.get("decomposed", {}), row.get("kept", {})
        if "error" in d or "error" in k:
            lines.append(f"| {name} | `{row['op']}` | {d.get('error', '')} {k.get('error', '')} | | | | |")
        else:
            lines.append(f"| {name} | `{row['op']}` | {d['ir_operations']} / {k['ir_operations']} | "
                         f"{d['median_ms']:.3f} / {k['median_ms']:.3f} | {k['median_ms'] / d['median_ms']:.2f} | "
                         f"{d['max_rel_error']:.1e} / {k['max_rel_error']:.1e} | "
                         f"{'yes' if d['special_values_as_eager'] else 'NO'} / "
                         f"{'yes' if k['special_values_as_eager'] else 'NO'} |")
        print(lines[-1], flush=True)
    sweep = attention_special_value_sweep()
    lines += ["", f"Attention with a NaN, inf, -inf or 1e30 in q, k or v (bool, float, no and causal masks; "
              f"numerics=exact): other NaN/inf positions or values than eager's in {sweep['decomposed']} of "
              f"{sweep['cases']} cases decomposed, {sweep['kept']} kept whole."]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "rows": rows, "attention_sweep": sweep}, indent=1))
    if args.markdown:
        features = machine["cpu_features"]
        args.markdown.write_text(
            f"Measured {machine['date']} on {machine['cpu']}, {machine['cores']} cores "
            f"({', '.join(features['flags'])}; OpenVINO: {', '.join(features['openvino_capabilities'])}"
            + (f"; kernels limited to {features['onednn_max_cpu_isa']}" if features.get("onednn_max_cpu_isa") else "")
            + "), "
            f"OpenVINO {machine['openvino']}, numerics=exact:\n\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
