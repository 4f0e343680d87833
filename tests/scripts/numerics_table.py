"""Measures what OpenVINO's CPU plugin computes where PyTorch's answer is exact: prints a Markdown table.

Each case is exported with torch.export, converted with ``openvino.convert_model``
(no partitioner policy in between), compiled for CPU with an f32 inference
precision hint and run twice; the table gives eager PyTorch's result and
OpenVINO's second one. Run by ``nox -s numerics``; docs/user-guide/numerics.md quotes the table.

    python tests/scripts/numerics_table.py [FILE]   # FILE: also written there
"""

from __future__ import annotations

import math

import numpy as np
import torch


class _Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


I32, I64, U8 = torch.int32, torch.int64, torch.uint8
SUB = 1e-40  # subnormal in float32 (smallest normal: 1.18e-38)

# (op, dtype, input text, function, inputs)
CASES = [
    ("add", "int64", "[2**31-1] + 1", lambda i: i + 1, (torch.tensor([2**31 - 1]),)),
    ("mul", "int64", "[70000] * 100000", lambda i: i * 100000, (torch.tensor([70000]),)),
    # Odd int32 values above 2**24 have no float32: wrong here means computed in float32.
    ("add", "int32", "[2**24+1] + [2]", lambda a, b: a + b,
     (torch.tensor([2**24 + 1], dtype=I32), torch.tensor([2], dtype=I32))),
    ("sub", "int32", "[2**25+1] - [2]", lambda a, b: a - b,
     (torch.tensor([2**25 + 1], dtype=I32), torch.tensor([2], dtype=I32))),
    ("mul", "int32", "[4097] * [4097]", lambda a, b: a * b,
     (torch.tensor([4097], dtype=I32), torch.tensor([4097], dtype=I32))),
    ("maximum", "int32", "maximum([2**24+1], [0])", torch.maximum,
     (torch.tensor([2**24 + 1], dtype=I32), torch.tensor([0], dtype=I32))),
    ("sum", "int32", "[2**24, 1]", lambda i: i.sum(), (torch.tensor([2**24, 1], dtype=I32),)),
    ("sum", "int64", "[2**30] * 4", lambda i: i.sum(), (torch.full((4,), 2**30),)),
    ("amax", "int32", "[2**24+1, 0]", lambda i: i.amax(), (torch.tensor([2**24 + 1, 0], dtype=I32),)),
    ("amin", "int32", "[-(2**24+1), 0]", lambda i: i.amin(), (torch.tensor([-(2**24 + 1), 0], dtype=I32),)),
    ("max", "int32", "[2**24+1, 3]", lambda i: i.max(), (torch.tensor([2**24 + 1, 3], dtype=I32),)),
    ("min(dim)", "int32", "[[2**24+1, 2**24+3]]", lambda i: i.min(1)[0],
     (torch.tensor([[2**24 + 1, 2**24 + 3]], dtype=I32),)),
    ("cumsum", "bool", "300 x True", lambda b: b.cumsum(0)[-1:], (torch.ones(300, dtype=torch.bool),)),
    ("cumsum", "int32", "ones(4) constant, 2nd run", lambda i: i + torch.ones(4, dtype=I32).cumsum(0),
     (torch.zeros(4, dtype=I32),)),
    ("cumsum", "int32", "ones_like(x) (static shape), 2nd run", lambda i: torch.ones_like(i).cumsum(0) + i,
     (torch.zeros(4, dtype=I32),)),
    ("cumsum", "int64", "ones_like(x) (static shape), 2nd run", lambda i: torch.ones_like(i).cumsum(0) * i,
     (torch.ones(6, dtype=I64),)),
    ("prod", "int32", "[1000, 1000, 1000]", lambda i: i.prod(), (torch.tensor([1000, 1000, 1000], dtype=I32),)),
    ("add", "uint8", "[250] + 200", lambda u: u + 200, (torch.tensor([250], dtype=U8),)),
    ("floor_divide", "int32", "[-7] // 2", lambda i: i // 2, (torch.tensor([-7], dtype=I32),)),
    ("mul", "float64", "[1e300] * [1.0000001]", lambda x, y: x * y,
     (torch.tensor([1e300], dtype=torch.float64), torch.tensor([1.0000001], dtype=torch.float64))),
    ("add constant", "float32", f"0 + {SUB:g}", lambda x: x + torch.tensor([SUB]), (torch.zeros(1),)),
    ("mul constant", "float32", f"1 * {SUB:g}", lambda x: x * torch.tensor([SUB]), (torch.ones(1),)),
    ("add constant", "float32", "-0.0 + (-0.0)", lambda x: x + torch.tensor([-0.0]), (torch.tensor([-0.0]),)),
    ("where constant", "float32", "where(x>0, x, -0.0)", lambda x: torch.where(x > 0, x, torch.tensor(-0.0)),
     (torch.tensor([-1.0]),)),
    ("mul constant", "float32", "1 * (-0.0)", lambda x: x * torch.tensor([-0.0]), (torch.ones(1),)),
]


def _text(value: np.ndarray) -> str:
    flat = np.asarray(value).reshape(-1)
    items = []
    for v in flat[:3]:
        if isinstance(v, (float, np.floating)):
            items.append("-0.0" if v == 0 and math.copysign(1, v) < 0 else f"{float(v):.9g}")
        else:
            items.append(str(v.item() if hasattr(v, "item") else v))
    return f"[{', '.join(items)}{', ...' if flat.size > 3 else ''}] {np.asarray(value).dtype}"


def measure():
    import openvino as ov

    core = ov.Core()
    rows = []
    for op, dtype, text, fn, inputs in CASES:
        module = _Fn(fn).eval()
        with torch.no_grad():
            expected = module(*[x.clone() for x in inputs]).numpy()
        try:
            model = ov.convert_model(torch.export.export(module, inputs))
            compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            request = compiled.create_infer_request()
            for _ in range(2):
                request.infer([x.numpy() for x in inputs])
            actual = request.get_output_tensor(0).data.copy()
            same = (actual.dtype == expected.dtype and actual.shape == expected.shape
                    and np.array_equal(actual, expected)
                    and (actual.dtype.kind != "f" or np.array_equal(np.signbit(actual), np.signbit(expected))))
            got = _text(actual)
        except Exception as exc:  # a rejected case is a row too
            got, same = f"error: {' '.join(str(exc).split())[:80]}", False
        rows.append((op, dtype, text, _text(expected), got, "yes" if same else "**no**"))
    return rows


def main() -> None:
    import platform
    import sys

    import openvino as ov

    lines = [f"OpenVINO {ov.__version__.split('-')[0]} on {platform.machine()}, CPU, INFERENCE_PRECISION_HINT=f32, "
             "second inference", "", "| op | dtype | input | eager | OpenVINO | equal |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in measure()]
    print("\n".join(lines))
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
