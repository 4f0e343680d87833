"""Seeded random programs drawn from the operator catalog (:mod:`.ops`).

``generate(seed)`` always gives the same program for the same seed and
configuration. A program is built op by op while it runs on two samples of
real tensors: one at the example sizes, one with every dynamic size at its
maximum. An op is kept only when eager PyTorch runs it on both, its result is
finite and small, and its int results stay within the bounds the catalog
computes; shapes, dtypes, dynamic dimensions, exactness and aliasing come from
those samples, so the generator needs no shape rules of its own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from . import ops as catalog
from .ops import FLOATS, INT32_RANGE, INTS, OPS, ValueInfo, is_exact, result_error
from .spec import DTYPE_NAMES, VERSION, concrete_shape, example_sizes, make_inputs, make_module_tensors, \
    max_sizes, stable_seed, evaluate_op

MAX_ELEMENTS = 4096
MAX_MAGNITUDE = 1e4
MAX_RANK = 4
INT64_SAFE_RANGE = (-(2**62), 2**62)


@dataclass(frozen=True)
class GeneratorConfig:
    """What programs may contain. ``exclude`` names ops (:data:`ops.OPS`) or patterns (:data:`PATTERNS`)
    left out, e.g. to keep fuzzing past a known finding that would flood the results."""

    max_ops: int = 10
    max_inputs: int = 4
    dynamic: float = 0.5            # probability that a program has dynamic sizes
    inplace: bool = True            # in-place updates of inputs and buffers
    float16: bool = True
    float64: bool = True
    huge_int64: float = 0.15        # probability that an int64 input holds values outside int32
    exclude: frozenset = frozenset()


DEFAULT = GeneratorConfig()

# Named patterns a run may exclude (``--exclude NAME``): a program matching one is generated again.
PATTERNS = {
    "output_is_input": (
        "an output that is an input itself (returned as is, or through an alias op that returns it)",
        lambda spec: _outputs_reaching_inputs(spec),
    ),
    "dynamic": ("any dynamic size", lambda spec: bool(spec["dims"])),
    "bool_select": ("where or masked_fill whose values are bool (finding F4: fails to load)",
                    lambda spec: _bool_select(spec)),
    "inplace_input": ("an in-place update of an input",
                      lambda spec: any(OPS[o["op"]].inplace and o["args"][0] in _input_versions(spec)
                                       for o in spec["ops"])),
}


def _bool_select(spec) -> bool:
    """Whether a where/masked_fill picks bool values (its result is bool)."""
    return any(o["op"] in ("where", "masked_fill") and o.get("dtype") == "bool" for o in spec["ops"])


def _input_versions(spec) -> set:
    """Names that denote an input (its own name, and later versions after in-place updates)."""
    names = {x["name"] for x in spec["inputs"]}
    for o in spec["ops"]:
        if OPS[o["op"]].inplace and o["args"][0] in names:
            names.add(o["out"])
    return names


def _outputs_reaching_inputs(spec) -> bool:
    same = _input_versions(spec)
    for o in spec["ops"]:
        if o["op"] in ("to_same", "contiguous", "detach") and o["args"][0] in same:
            same.add(o["out"])
    return any(name in same for name in spec["outputs"])


def generate(seed: int, config: GeneratorConfig = DEFAULT) -> dict:
    """The program of `seed`: regenerated with derived seeds while it matches an excluded pattern."""
    for attempt in range(100):
        spec = _Generation(stable_seed("program", seed, attempt) if attempt else seed, config).run()
        if not any(PATTERNS[name][1](spec) for name in config.exclude if name in PATTERNS):
            return spec
    raise RuntimeError(f"no program for seed {seed} avoids the excluded patterns {sorted(config.exclude)}")


class _Generation:
    def __init__(self, seed: int, config: GeneratorConfig):
        self.rng = random.Random(seed)
        self.config = config
        self.spec = {"version": VERSION, "seed": seed, "dims": {}, "inputs": [], "tensors": [], "ops": [],
                     "outputs": []}
        self.infos: dict = {}       # name -> ValueInfo (alive and stale)
        self.alive: list = []       # names usable by later ops, oldest first
        self.errs: dict = {}        # name -> error bound in sample A
        self.env_a: dict = {}
        self.env_b: dict = {}
        self.counter = 0
        self.used: set = set()      # names some op reads

    # -- the program's inputs and tensors
    def run(self) -> dict:
        rng = self.rng
        if rng.random() < self.config.dynamic:
            for i in range(rng.choice([1, 1, 2])):
                high = rng.choice([5, 6, 8, 12, 16])
                self.spec["dims"][f"d{i}"] = {"min": 3, "max": high, "example": rng.randint(3, high - 1)}
        for _ in range(rng.choice([1, 1, 2, 2, 3])):
            self._add_input(self._input_entry())
        if rng.random() < 0.3:
            self._add_tensor(self._tensor_entry(rng.choice(["parameter", "buffer", "constant"]),
                                                self._float_dtype(), self._shape_like_existing(static=True)))
        n_ops = rng.randint(1, self.config.max_ops)
        attempts = 0
        while len(self.spec["ops"]) < n_ops and attempts < 20 * n_ops:
            attempts += 1
            self._try_step()
        self._choose_outputs()
        used = {d for x in self.spec["inputs"] for d in x["shape"] if isinstance(d, str)}
        self.spec["dims"] = {k: v for k, v in self.spec["dims"].items() if k in used}
        return self.spec

    def _float_dtype(self) -> str:
        options = ["float32"] * 8 + (["float16"] if self.config.float16 else []) + \
                  (["float64"] if self.config.float64 else [])
        return self.rng.choice(options)

    def random_shape(self, max_rank: int = 3, min_rank: int = 0, static: bool = False) -> tuple:
        rng = self.rng
        rank = rng.choice([r for r in (0, 1, 1, 2, 2, 2, 3, 3) if min_rank <= r <= max_rank] or [min_rank])
        shape = [rng.choice([1, 2, 3, 4, 4, 5, 6, 8]) for _ in range(rank)]
        dims = list(self.spec["dims"])
        if dims and not static and rank and rng.random() < 0.6:
            for axis in rng.sample(range(rank), min(rank, rng.choice([1, 1, 2]))):
                shape[axis] = rng.choice(dims)
        return tuple(shape)

    def _shape_like_existing(self, static: bool = False) -> tuple:
        candidates = [x["shape"] for x in self.spec["inputs"]
                      if not static or all(isinstance(d, int) for d in x["shape"])]
        if candidates and self.rng.random() < 0.6:
            return tuple(self.rng.choice(candidates))
        return self.random_shape(static=static)

    def _input_entry(self, dtype: str | None = None, shape=None, low=None, high=None) -> dict:
        rng = self.rng
        if dtype is None:
            dtype = rng.choice(["float32"] * 11 + ["int32"] * 2 + ["int64"] * 3 + ["bool"] * 2 +
                               (["float16"] if self.config.float16 else []) +
                               (["float64"] if self.config.float64 else []))
        if shape is None:
            shape = self._shape_like_existing() if self.spec["inputs"] else self.random_shape(min_rank=1)
        entry = {"name": f"x{len(self.spec['inputs'])}", "dtype": dtype, "shape": list(shape)}
        if low is not None:
            entry.update(low=low, high=high)
        elif dtype in FLOATS:
            entry["low"], entry["high"] = rng.choice([(-1.0, 1.0), (-3.0, 3.0), (0.0, 2.0), (-10.0, 10.0)])
        elif dtype == "bool":
            entry["low"], entry["high"] = 0, 1
        elif dtype == "int64" and rng.random() < self.config.huge_int64:
            entry.update(low=-(2**40), high=2**40, edges=True)
        elif rng.random() < 0.12:
            entry.update(low=INT32_RANGE[0], high=INT32_RANGE[1], edges=True)
        else:
            entry["low"], entry["high"] = rng.choice([(-5, 5), (0, 9), (-100, 100), (0, 63), (2**24 - 2, 2**24 + 2)])
        return entry

    def _tensor_entry(self, kind: str, dtype: str, shape) -> dict:
        low, high = (-1.0, 1.0) if dtype in FLOATS else (0, 1) if dtype == "bool" else (-9, 9)
        return {"name": f"w{len(self.spec['tensors'])}", "kind": kind, "dtype": dtype, "shape": list(shape),
                "low": low, "high": high}

    def _add_input(self, entry: dict) -> ValueInfo:
        self.spec["inputs"].append(entry)
        sizes_a, sizes_b = example_sizes(self.spec), max_sizes(self.spec)
        spec_one = {**self.spec, "inputs": [entry]}
        self.env_a[entry["name"]] = make_inputs(spec_one, sizes_a, stable_seed(self.spec["seed"], "A"))[0]
        self.env_b[entry["name"]] = make_inputs(spec_one, sizes_b, stable_seed(self.spec["seed"], "B"))[0]
        info = ValueInfo(entry["name"], entry["dtype"], concrete_shape(entry["shape"], sizes_a),
                         concrete_shape(entry["shape"], sizes_b), exact=True,
                         bound=float(max(abs(entry["low"]), abs(entry["high"]))),
                         range=(entry["low"], entry["high"]) if entry["dtype"] in INTS else
                         (0, 1) if entry["dtype"] == "bool" else None,
                         root=entry["name"] if self.config.inplace else None, kind="input")
        self._register(info)
        return info

    def _add_tensor(self, entry: dict) -> ValueInfo:
        self.spec["tensors"].append(entry)
        value = make_module_tensors({**self.spec, "tensors": [entry]})[entry["name"]][1]
        self.env_a[entry["name"]], self.env_b[entry["name"]] = value, value.clone()
        info = ValueInfo(entry["name"], entry["dtype"], tuple(entry["shape"]), tuple(entry["shape"]), exact=True,
                         bound=float(max(abs(entry["low"]), abs(entry["high"]))),
                         range=(entry["low"], entry["high"]) if entry["dtype"] in INTS else (0, 1),
                         root=entry["name"] if entry["kind"] == "buffer" and self.config.inplace else None,
                         kind=entry["kind"])
        self._register(info)
        return info

    def _register(self, info: ValueInfo) -> None:
        self.infos[info.name] = info
        self.alive.append(info.name)
        self.errs[info.name] = catalog.EXACT

    # -- one step: an op, or a new input or tensor
    def _try_step(self) -> None:
        rng = self.rng
        if rng.random() < 0.06 and len(self.spec["inputs"]) < self.config.max_inputs:
            self._add_input(self._input_entry())
            return
        if rng.random() < 0.04:
            self._add_tensor(self._tensor_entry(rng.choice(["parameter", "buffer", "constant"]),
                                                self._float_dtype(), self._shape_like_existing(static=True)))
            return
        choices = [d for d in OPS.values() if d.name not in self.config.exclude
                   and (self.config.inplace or not d.inplace)]
        opdef = rng.choices(choices, weights=[d.weight for d in choices])[0]
        self.try_op(opdef)

    def try_op(self, opdef) -> bool:
        """Adds one `opdef` op if the catalog can pick operands and the samples accept its result."""
        snapshot = (len(self.spec["inputs"]), len(self.spec["tensors"]), list(self.alive))
        picker = Picker(self)
        try:
            picked = opdef.pick(picker)
        except (IndexError, ValueError):
            picked = None
        if picked is not None:
            args, attrs = picked
            op = {"out": f"v{self.counter}", "op": opdef.name, "args": list(args), "attrs": _plain(attrs)}
            if self._accept(opdef, op):
                self.counter += 1
                return True
        self._rollback(*snapshot)
        return False

    def _rollback(self, n_inputs: int, n_tensors: int, alive: list) -> None:
        for entry in self.spec["inputs"][n_inputs:] + self.spec["tensors"][n_tensors:]:
            for store in (self.infos, self.errs, self.env_a, self.env_b):
                store.pop(entry["name"], None)
        del self.spec["inputs"][n_inputs:], self.spec["tensors"][n_tensors:]
        self.alive = alive

    def _replay(self, ops: list) -> tuple:
        """Fresh sample environments after `ops` (in-place candidates must not touch the kept ones)."""
        envs = []
        for sizes, sample in ((example_sizes(self.spec), "A"), (max_sizes(self.spec), "B")):
            env = {}
            for x in self.spec["inputs"]:
                env[x["name"]] = make_inputs({**self.spec, "inputs": [x]}, sizes,
                                             stable_seed(self.spec["seed"], sample))[0]
            env.update({k: v for k, (_, v) in make_module_tensors(self.spec).items()})
            with torch.no_grad():
                for o in ops:
                    env[o["out"]] = evaluate_op(o, env)
            envs.append(env)
        return envs[0], envs[1]

    def _accept(self, opdef, op) -> bool:
        if opdef.inplace:
            env_a, env_b = self._replay(self.spec["ops"])
        else:
            env_a, env_b = self.env_a, self.env_b
        try:
            with torch.no_grad():
                out_a, out_b = evaluate_op(op, env_a), evaluate_op(op, env_b)
        except Exception:  # noqa: BLE001 - eager PyTorch refused these operands: not a program
            return False
        if not self._acceptable(out_a) or not self._acceptable(out_b) or out_a.dim() != out_b.dim():
            return False
        operands = [self.infos[a] for a in op["args"]]
        ins = [env_a[a] for a in op["args"]]
        err = result_error(opdef, ins, [self.errs[a] for a in op["args"]], out_a, op["attrs"])
        dtype = DTYPE_NAMES[out_a.dtype]
        int_range = None
        if dtype in INTS:
            int_range = opdef.int_range([o.range for o in operands], op["attrs"], ins)
            if int_range is None or not _covers(int_range, out_a) or not _covers(int_range, out_b):
                return False
            # int32 results stay within int32 (no wrapping to argue about); int64 ones may leave it (the
            # delegate must then refuse them at run time, or leave them to ExecuTorch), but not overflow.
            limit = INT32_RANGE if dtype == "int32" else INT64_SAFE_RANGE
            if opdef.computes and not (limit[0] <= int_range[0] and int_range[1] <= limit[1]):
                return False
        elif dtype == "bool":
            int_range = (0, 1)
        exact = is_exact(err)
        info = ValueInfo(op["out"], dtype, tuple(out_a.shape), tuple(out_b.shape), exact=exact,
                         bound=self._bound(exact, operands, op["attrs"], out_a, out_b), range=int_range)
        if opdef.inplace:
            target = self.infos[op["args"][0]]
            info.root, target.root = target.root, None
            self.alive.remove(target.name)
            self.env_a, self.env_b = env_a, env_b
            self._update_aliases(out_a, info, err)
        op["dtype"] = dtype  # for reading and for PATTERNS; the code does not use it
        self.spec["ops"].append(op)
        self.used.update(op["args"])
        self.env_a[op["out"]], self.env_b[op["out"]] = out_a, out_b
        self.infos[op["out"]] = info
        self.errs[op["out"]] = err
        self.alive.append(op["out"])
        return True

    @staticmethod
    def _acceptable(out) -> bool:
        if not isinstance(out, torch.Tensor) or out.dtype not in DTYPE_NAMES or out.dim() > MAX_RANK:
            return False
        if out.numel() > MAX_ELEMENTS:
            return False
        if out.dtype.is_floating_point and out.numel():
            return bool(torch.isfinite(out).all()) and catalog.magnitude(out) <= MAX_MAGNITUDE
        return True

    @staticmethod
    def _bound(exact, operands, attrs, out_a, out_b) -> float:
        """|value| bound: sound for exact values (every exact op keeps values within what it was given), an
        estimate from the samples otherwise."""
        seen = max(catalog.magnitude(out_a), catalog.magnitude(out_b))
        if not exact:
            return 2 * seen
        given = [o.bound for o in operands] + [max(abs(r[0]), abs(r[1])) for o in operands if o.range for r in [o.range]]
        given += [abs(v) for k, v in attrs.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        given += [abs(v) for v in catalog._flatten(attrs.get("values", [])) if not isinstance(v, bool)]
        return max(given + [seen, 1.0]) + 1

    def _update_aliases(self, mutated: torch.Tensor, info: ValueInfo, err) -> None:
        """Views of a tensor changed in place change with it: widen what is known about them."""
        storage = mutated.untyped_storage().data_ptr()
        for name in self.alive:
            value = self.env_a.get(name)
            other = self.infos[name]
            if isinstance(value, torch.Tensor) and value.untyped_storage().data_ptr() == storage:
                other.exact = other.exact and info.exact
                other.bound = max(other.bound, info.bound)
                if other.range is not None and info.range is not None:
                    other.range = (min(other.range[0], info.range[0]), max(other.range[1], info.range[1]))
                self.errs[name] = catalog.max_err([self.errs[name], err])

    # -- outputs
    def _choose_outputs(self) -> None:
        rng = self.rng
        outputs = []
        used = {a for o in self.spec["ops"] for a in o["args"]}
        computed = [n for n in self.alive if self.infos[n].kind == "value"]
        sinks = [n for n in computed if n not in used]
        for _ in range(rng.choice([1, 2, 2, 3, 3, 4, 5])):
            r = rng.random()
            roots = [n for n in self.alive if self.infos[n].root is not None or self.infos[n].kind == "input"]
            if r < 0.12 and roots:
                outputs.append(rng.choice(roots))
            elif r < 0.22 and outputs:
                outputs.append(rng.choice(outputs))
            elif r < 0.4:
                alias = rng.choice(["to_same", "contiguous", "alias_view", "detach", "slice", "unsqueeze",
                                    "reshape_flat"])
                if alias not in self.config.exclude and self.try_op(OPS[alias]):
                    outputs.append(self.spec["ops"][-1]["out"])
            elif sinks and rng.random() < 0.85:
                fresh = [n for n in sinks if n not in outputs]
                outputs.append(fresh[-1] if fresh and rng.random() < 0.6 else rng.choice(sinks))
            else:
                outputs.append(rng.choice(self.alive))
        if not any(self.infos[o].kind == "value" for o in outputs):
            outputs.append(rng.choice(sinks or computed or self.alive))
        self.spec["outputs"] = outputs


class Picker:
    """What an op's ``pick`` sees: the values of the program so far, and ways to add inputs and tensors."""

    def __init__(self, generation: _Generation):
        self._g = generation
        self.rng = generation.rng
        self.dims = generation.spec["dims"]

    def values(self) -> list:
        return [self._g.infos[n] for n in self._g.alive]

    def choose(self, pred):
        """A value satisfying `pred`; later values, and values nothing reads yet, more likely (so that
        programs grow deep rather than wide, and little of them is dead code)."""
        candidates = [v for v in self.values() if pred(v)]
        if not candidates:
            return None
        weights = [(1 + i) * (1 if v.name in self._g.used else 8) for i, v in enumerate(candidates)]
        return self.rng.choices(candidates, weights=weights)[0]

    def same(self, v: ValueInfo) -> list:
        """Values of v's dtype and shape (v included)."""
        return [w for w in self.values() if w.dtype == v.dtype and w.shape == v.shape and w.shape_max == v.shape_max]

    def with_shape(self, v: ValueInfo) -> list:
        """Values of any dtype with v's shape."""
        return [w for w in self.values() if w.shape == v.shape and w.shape_max == v.shape_max]

    def broadcastable(self, v: ValueInfo) -> list:
        """Values of v's dtype whose shape is a shorter suffix of v's (0-d included)."""
        return [w for w in self.values() if w.dtype == v.dtype and w.rank < v.rank
                and w.shape == v.shape[v.rank - w.rank:] and w.shape_max == v.shape_max[v.rank - w.rank:]]

    def scalar(self, dtype: str):
        if dtype in FLOATS:
            return self.rng.choice([0.5, -1.5, 2.0, 3.0, -0.25, 1.0])
        if dtype == "bool":
            return self.rng.random() < 0.5
        return self.rng.choice([-3, -1, 1, 2, 5, 7])

    def random_shape(self, max_rank: int = 3, min_rank: int = 0, static: bool = False) -> tuple:
        return self._g.random_shape(max_rank, min_rank, static)

    def new_input(self, dtype: str, shape, low, high) -> ValueInfo:
        return self._g._add_input(self._g._input_entry(dtype, shape, low, high))

    def new_tensor(self, kind: str, dtype: str, shape) -> ValueInfo:
        return self._g._add_tensor(self._g._tensor_entry(kind, dtype, shape))


def _covers(int_range, value: torch.Tensor) -> bool:
    if value.numel() == 0:
        return True
    return int_range[0] <= int(value.min()) and int(value.max()) <= int_range[1]


def _plain(attrs: dict) -> dict:
    """Attributes as JSON keeps them (tuples become lists; the code templates print both alike)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items()}
