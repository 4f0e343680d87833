"""The JSON description of a fuzzed program, and the module, inputs and reproducer made from it.

A program (``spec``) is a plain JSON-able dict, so a failing one can be saved,
shrunk and rebuilt exactly::

    {"version": 1,
     "seed": 12,                                   # values of the module's tensors
     "dims": {"d0": {"min": 3, "max": 8, "example": 5}},   # dynamic sizes (torch.export Dim)
     "inputs": [{"name": "x0", "dtype": "float32", "shape": [4, "d0"], "low": -3.0, "high": 3.0}],
     "tensors": [{"name": "w0", "kind": "parameter", "dtype": "float32", "shape": [4], "low": -1.0, "high": 1.0}],
     "ops": [{"out": "v0", "op": "add", "args": ["x0", "w0"], "attrs": {}, "dtype": "float32"}],
     "outputs": ["v0", "x0"]}

An op's ``dtype`` is its result's, as generated (informative only).
``kind`` is ``parameter``, ``buffer`` (may be changed in place: state that
lives on in the program) or ``constant`` (a plain tensor attribute, lifted by
torch.export). An int input may carry ``"edges": true``: its first and last
elements are then ``low`` and ``high``. Each op is one line of Python whose
text comes from :mod:`.ops`; :func:`module_source` writes the whole ``forward``,
so eager PyTorch, torch.export and the standalone reproducer run the same code.
"""

from __future__ import annotations

import zlib

import torch

VERSION = 1

DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "float64": torch.float64,
    "int32": torch.int32, "int64": torch.int64, "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


def stable_seed(*parts) -> int:
    """A seed from any parts, the same in every process (``hash`` is salted per process)."""
    return zlib.crc32(":".join(map(str, parts)).encode())


def make_tensor(dtype: str, shape, low, high, seed: int, edges: bool = False) -> torch.Tensor:
    """Deterministic values: floats uniform in [low, high], ints uniform in low..high, bools fair.

    ``edges`` puts ``low`` and ``high`` themselves first and last (int32 edge
    values are what OpenVINO's float32 paths would get wrong).
    """
    generator = torch.Generator().manual_seed(seed)
    shape = tuple(shape)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype in ("int32", "int64"):
        value = torch.randint(int(low), int(high) + 1, shape, generator=generator, dtype=torch.int64)
        if edges and value.numel() >= 2:
            value.view(-1)[0], value.view(-1)[-1] = int(low), int(high)
        return value.to(DTYPES[dtype])
    value = torch.rand(shape, generator=generator, dtype=torch.float64) * (high - low) + low
    return value.to(DTYPES[dtype])


def concrete_shape(shape, sizes: dict) -> tuple:
    """A spec shape with each dynamic dimension's name replaced by its size in `sizes`."""
    return tuple(sizes[d] if isinstance(d, str) else d for d in shape)


def example_sizes(spec) -> dict:
    return {name: dim["example"] for name, dim in spec["dims"].items()}


def max_sizes(spec) -> dict:
    return {name: dim["max"] for name, dim in spec["dims"].items()}


def make_inputs(spec, sizes: dict, seed: int) -> list:
    """The program's inputs for one run, deterministic in `seed`."""
    return [make_tensor(x["dtype"], concrete_shape(x["shape"], sizes), x["low"], x["high"],
                        stable_seed(seed, x["name"]), x.get("edges", False)) for x in spec["inputs"]]


def make_module_tensors(spec) -> dict:
    """name -> (kind, tensor) of the module's parameters, buffers and constants."""
    return {t["name"]: (t["kind"], make_tensor(t["dtype"], t["shape"], t["low"], t["high"],
                                              stable_seed(spec["seed"], t["name"])))
            for t in spec["tensors"]}


def dynamic_shapes(spec):
    """torch.export ``dynamic_shapes`` for the spec's inputs, or None when every size is static."""
    if not spec["dims"]:
        return None
    from torch.export import Dim

    dims = {name: Dim(name, min=d["min"], max=d["max"]) for name, d in spec["dims"].items()}
    return tuple({axis: dims[d] for axis, d in enumerate(x["shape"]) if isinstance(d, str)} or None
                 for x in spec["inputs"])


def op_line(op) -> str:
    from .ops import OPS

    return f"{op['out']} = {OPS[op['op']].code(op['args'], op['attrs'])}"


MODULE_PRELUDE = '''\
class Program(torch.nn.Module):
    def __init__(self, tensors):
        super().__init__()
        for name, (kind, value) in tensors.items():
            if kind == "parameter":
                setattr(self, name, torch.nn.Parameter(value, requires_grad=value.dtype.is_floating_point))
            elif kind == "buffer":
                self.register_buffer(name, value)
            else:  # a plain tensor attribute: torch.export lifts it as a constant
                setattr(self, name, value)
'''


def module_source(spec) -> str:
    """Python source of the class ``Program`` whose ``forward`` is the spec's ops, one per line."""
    names = ", ".join(["self"] + [x["name"] for x in spec["inputs"]])
    body = [f"        {t['name']} = self.{t['name']}" for t in spec["tensors"]]
    body += [f"        {op_line(op)}" for op in spec["ops"]]
    outputs = "".join(f"{o}, " for o in spec["outputs"])
    body.append(f"        return ({outputs})")
    return MODULE_PRELUDE + f"\n    def forward({names}):\n" + "\n".join(body) + "\n"


def _namespace() -> dict:
    return {"torch": torch, "F": torch.nn.functional}


def build_module(spec) -> torch.nn.Module:
    """A fresh module (tensors at their initial values) running the spec's program."""
    namespace = _namespace()
    exec(compile(module_source(spec), "<fuzzed program>", "exec"), namespace)
    return namespace["Program"](make_module_tensors(spec)).eval()


def evaluate_op(op, env: dict):
    """Runs one op on the tensors of `env` (name -> tensor), as ``forward`` would."""
    from .ops import OPS

    return eval(OPS[op["op"]].code(op["args"], op["attrs"]), _namespace(), env)


def used_names(spec) -> set:
    used = {a for op in spec["ops"] for a in op["args"]}
    return used | set(spec["outputs"])


def reproducer(spec, *, path: str = "exov.lower", run_seed: int = 0) -> str:
    """A standalone script: the program, lowered by `path`, run on fresh inputs, compared with eager."""
    import inspect
    import json

    sizes = example_sizes(spec)
    lines = [
        "import json, tempfile, torch",
        "import executorch_openvino as exov",
        "",
        inspect.getsource(make_tensor).replace("DTYPES[dtype]", "getattr(torch, dtype)"),
        module_source(spec),
        f"SPEC = json.loads({json.dumps(json.dumps(spec))})",
        "tensors = {t['name']: (t['kind'], make_tensor(t['dtype'], t['shape'], t['low'], t['high'], s))",
        f"           for t, s in zip(SPEC['tensors'], {[stable_seed(spec['seed'], t['name']) for t in spec['tensors']]})}}",
        f"sizes = {sizes!r}",
        "shape = lambda x: [sizes[d] if isinstance(d, str) else d for d in x['shape']]",
        "inputs = [make_tensor(x['dtype'], shape(x), x['low'], x['high'], s, x.get('edges', False))",
        f"          for x, s in zip(SPEC['inputs'], {[stable_seed(run_seed, x['name']) for x in spec['inputs']]})]",
    ]
    if spec["dims"]:
        lines += [
            "from torch.export import Dim",
            "dims = {n: Dim(n, min=d['min'], max=d['max']) for n, d in SPEC['dims'].items()}",
            "dynamic_shapes = tuple({a: dims[d] for a, d in enumerate(x['shape']) if isinstance(d, str)} or None",
            "                       for x in SPEC['inputs'])",
        ]
    else:
        lines.append("dynamic_shapes = None")
    if path == "exov.lower":
        lines.append("pte = exov.lower(Program(tensors).eval(), tuple(x.clone() for x in inputs), "
                     "dynamic_shapes=dynamic_shapes).buffer")
    else:
        lines += [
            "from executorch.exir import to_edge_transform_and_lower",
            "exported = torch.export.export(Program(tensors).eval(), tuple(x.clone() for x in inputs), "
            "dynamic_shapes=dynamic_shapes)",
            "pte = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner()])"
            ".to_executorch().buffer",
        ]
    lines += [
        "file = tempfile.NamedTemporaryFile(suffix='.pte', delete=False); file.write(pte); file.close()",
        "got = exov.load_method(file.name).execute([x.clone() for x in inputs])",
        "with torch.no_grad():",
        "    want = Program(tensors).eval()(*[x.clone() for x in inputs])",
        "print('delegate:', got)",
        "print('eager:   ', want, '(a method returns the inputs it changes in place first)')",
    ]
    return "\n".join(lines) + "\n"
