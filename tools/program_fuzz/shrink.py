"""Makes a failing program smaller while it keeps failing the same way.

Greedy: each round tries the candidates of :func:`candidates` (drop an output,
bypass an op, drop an in-place update, make a dynamic size static, smaller
sizes) in order and keeps the first that still fails; it stops when no
candidate does or the budget is spent. "The same way" is the caller's
predicate (the pool's: same lowering path, same failure category). A candidate
that eager PyTorch or torch.export rejects is simply not kept.
"""

from __future__ import annotations

import copy
import json
import time

from .ops import OPS


def prune(spec) -> dict:
    """Drops ops whose results nothing uses (in-place updates stay), then unused inputs, tensors and dims."""
    spec = copy.deepcopy(spec)
    live = set(spec["outputs"])
    kept = []
    for op in reversed(spec["ops"]):
        if op["out"] in live or OPS[op["op"]].inplace:
            kept.append(op)
            live.update(op["args"])
    spec["ops"] = kept[::-1]
    spec["inputs"] = [x for x in spec["inputs"] if x["name"] in live]
    spec["tensors"] = [t for t in spec["tensors"] if t["name"] in live]
    used_dims = {d for x in spec["inputs"] for d in x["shape"] if isinstance(d, str)}
    spec["dims"] = {k: v for k, v in spec["dims"].items() if k in used_dims}
    return spec


def _rename(spec, old: str, new: str) -> None:
    for op in spec["ops"]:
        op["args"] = [new if a == old else a for a in op["args"]]
    spec["outputs"] = [new if o == old else o for o in spec["outputs"]]


def candidates(spec):
    """Smaller variants of `spec`, roughly the biggest cuts first."""
    yield prune(spec)
    for i in range(len(spec["outputs"])):
        if len(spec["outputs"]) > 1:
            smaller = copy.deepcopy(spec)
            del smaller["outputs"][i]
            yield prune(smaller)
    for k in reversed(range(len(spec["ops"]))):
        op = spec["ops"][k]
        for arg in dict.fromkeys(op["args"]):
            smaller = copy.deepcopy(spec)
            del smaller["ops"][k]
            _rename(smaller, op["out"], arg)
            yield prune(smaller)
        if not op["args"]:
            smaller = copy.deepcopy(spec)
            del smaller["ops"][k]
            smaller["outputs"] = [o for o in smaller["outputs"] if o != op["out"]] or smaller["outputs"]
            yield prune(smaller)
    for name, dim in spec["dims"].items():
        static = copy.deepcopy(spec)
        for x in static["inputs"]:
            x["shape"] = [dim["example"] if d == name else d for d in x["shape"]]
        del static["dims"][name]
        yield static
        if dim["max"] > dim["min"] + 1:
            smaller = copy.deepcopy(spec)
            high = max(dim["min"] + 1, dim["max"] // 2)
            smaller["dims"][name] = {"min": dim["min"], "max": high, "example": min(dim["example"], high - 1)}
            yield smaller
    for group in ("inputs", "tensors"):
        for i, entry in enumerate(spec[group]):
            for axis, size in enumerate(entry["shape"]):
                if not isinstance(size, int) or size <= 1:
                    continue
                for smaller_size in dict.fromkeys([1, size // 2, size - 1]):
                    if 1 <= smaller_size < size:
                        smaller = copy.deepcopy(spec)
                        smaller[group][i]["shape"][axis] = smaller_size
                        yield smaller


def size_of(spec) -> tuple:
    """What shrinking minimises: ops, outputs, inputs and tensors, dynamic dims, elements."""
    elements = 0
    for entry in spec["inputs"] + spec["tensors"]:
        n = 1
        for d in entry["shape"]:
            n *= spec["dims"][d]["max"] if isinstance(d, str) else d
        elements += n
    return (len(spec["ops"]), len(spec["outputs"]), len(spec["inputs"]) + len(spec["tensors"]),
            len(spec["dims"]), elements)


def shrink(spec, still_fails, *, max_checks: int = 150, max_seconds: float = 900.0, log=lambda message: None):
    """(the smallest variant of `spec` found for which ``still_fails(variant)`` holds, checks made)."""
    deadline = time.monotonic() + max_seconds
    checks = 0
    seen = {json.dumps(spec, sort_keys=True)}
    current = spec
    improved = True
    while improved and checks < max_checks and time.monotonic() < deadline:
        improved = False
        for candidate in candidates(current):
            key = json.dumps(candidate, sort_keys=True)
            if key in seen or size_of(candidate) >= size_of(current):
                continue
            seen.add(key)
            checks += 1
            if still_fails(candidate):
                log(f"shrink: kept {size_of(candidate)} (ops, outputs, inputs+tensors, dims, elements)")
                current, improved = candidate, True
                break
            if checks >= max_checks or time.monotonic() >= deadline:
                break
    return current, checks
