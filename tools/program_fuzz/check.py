"""One program, checked: eager reference, both lowering paths, save, load, three runs, comparison.

``check_program`` returns a JSON-able outcome::

    {"status": "passed" | "refused" | "failed" | "invalid",
     "paths": {"exov.lower": {"status": ..., "stage": ..., "category": ..., "detail": ...,
                              "delegated": [...], "partitions": N}, ...},
     "seconds": ...}

``invalid`` means eager PyTorch, torch.export or ExecuTorch without any
delegate rejected the program (a generator problem, not the delegate's).
``executorch``: the same lowering with a partitioner that takes nothing
(for ``exov.lower``, with its own passes and memory planning) fails the same
way: ExecuTorch's problem, reported (and worth a refusal or a workaround),
but not counted as a failure of the delegate. For a silent wrong result (value,
dtype, shape, count) of ``exov.lower`` the baseline is ExecuTorch's standard
lowering (planned inputs and outputs), not exov.lower's own settings: issue 17
item 1 came from those, and lowering must then work around it or refuse. Per path, ``stage`` is where it
stopped: lower, save, load, run1, run2 or run3; ``category`` is a refusal or
one of lowering-error, load-error, run-error, wrong-count, wrong-type,
wrong-dtype, wrong-shape, wrong-value, input-changed, output-overwritten (and
crash or timeout, from the pool). The runs: fresh inputs each time; dynamic
sizes differ between runs 1 and 2, and run 3 goes back to run 1's sizes.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import torch

from .compare import compare
from .ops import EXACT, OPS, max_err, result_error
from .refusals import refusal_reason
from .spec import build_module, dynamic_shapes, evaluate_op, example_sizes, make_inputs, stable_seed

PATHS = ("exov.lower", "to_edge_transform_and_lower")


def run_sizes(spec, run_seed: int) -> list:
    """Sizes of the dynamic dimensions for the runs: random within range, the second different from the
    first, the third the first's again (a method must shrink back as well as grow; fresh values each run)."""
    rng = random.Random(stable_seed(run_seed, spec["seed"], "sizes"))
    first, second = {}, {}
    for name, dim in spec["dims"].items():
        first[name] = rng.randint(dim["min"], dim["max"])
        others = [s for s in range(dim["min"], dim["max"] + 1) if s != first[name]]
        second[name] = rng.choice(others) if others else first[name]
    return [first, second, dict(first)]


class Reference:
    """Eager PyTorch on the runs' inputs: outputs, final inputs, and the error bound of each."""

    def __init__(self, spec, run_seed: int):
        self.spec = spec
        self.example = make_inputs(spec, example_sizes(spec), stable_seed(run_seed, "example"))
        self.inputs = [make_inputs(spec, sizes, stable_seed(run_seed, "run", i))
                       for i, sizes in enumerate(run_sizes(spec, run_seed))]
        module, tracked = build_module(spec), build_module(spec)
        self.outputs, self.final_inputs, self.output_errs, self.input_errs = [], [], [], []
        for inputs in self.inputs:
            given = [x.clone() for x in inputs]
            with torch.no_grad():
                outputs = module(*given)
            errs, env = _tracked_run(spec, tracked, [x.clone() for x in inputs])
            for o, out in zip(spec["outputs"], outputs):
                if not _same(env[o], out):
                    raise AssertionError(f"eager forward and the op-by-op run differ at {o}")
            # Copies: an output may be a buffer (or a view of one) that the next run changes.
            self.outputs.append([o.detach().clone() for o in outputs])
            self.final_inputs.append([x.clone() for x in given])
            self.output_errs.append([errs[o] for o in spec["outputs"]])
            self.input_errs.append([errs[_latest_version(spec, x["name"])] for x in spec["inputs"]])


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b) or torch.allclose(
        a.double(), b.double(), rtol=0, atol=0, equal_nan=True))


def _latest_version(spec, name: str) -> str:
    for op in spec["ops"]:
        if OPS[op["op"]].inplace and op["args"][0] == name:
            name = op["out"]
    return name


def _tracked_run(spec, module, inputs) -> tuple:
    """Runs the ops one by one on `module`'s own tensors (so buffer updates persist between runs),
    keeping each value's error bound."""
    env = {x["name"]: v for x, v in zip(spec["inputs"], inputs)}
    env.update({t["name"]: getattr(module, t["name"]) for t in spec["tensors"]})
    errs = {name: EXACT for name in env}
    with torch.no_grad():
        for op in spec["ops"]:
            opdef = OPS[op["op"]]
            ins = [env[a] for a in op["args"]]
            out = evaluate_op(op, env)
            err = result_error(opdef, ins, [errs[a] for a in op["args"]], out, op["attrs"])
            if opdef.inplace:  # every view of the changed tensor may now hold its rounding
                storage = out.untyped_storage().data_ptr()
                for name, value in env.items():
                    if isinstance(value, torch.Tensor) and value.untyped_storage().data_ptr() == storage:
                        errs[name] = max_err([errs[name], err])
            env[op["out"]], errs[op["out"]] = out, err
    return errs, env


def _lower(path: str, spec, example, options: dict):
    """The ExecutorchProgramManager of `spec` lowered by `path`."""
    import executorch_openvino as exov

    module = build_module(spec)
    example = tuple(x.clone() for x in example)
    if path == "exov.lower":
        return exov.lower(module, example, dynamic_shapes=dynamic_shapes(spec), **options)
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(module, example, dynamic_shapes=dynamic_shapes(spec))
    edge = to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner(**options)])
    return edge.to_executorch()


def delegated_ops(program) -> tuple:
    """(names of the ops inside OpenVINO partitions, number of partitions) of a lowered program."""
    from executorch_openvino.lowering.preprocess import BACKEND_ID

    names, partitions = [], 0
    module = program.exported_program().graph_module
    for node in module.graph.nodes:
        if node.op == "call_function" and "executorch_call_delegate" in str(node.target):
            lowered = getattr(module, node.args[0].target)
            if lowered.backend_id != BACKEND_ID:
                continue
            partitions += 1
            names += [getattr(n.target, "__name__", str(n.target)) for n in lowered.original_module.graph.nodes
                      if n.op == "call_function" and "getitem" not in str(n.target)]
    return names, partitions


def method_outputs(program, spec) -> list:
    """What the method returns, in order: ("input", i) for an input it changes in place (ExecuTorch returns
    those first), ("output", j) for the module's j-th output; buffer updates stay inside."""
    signature = program.exported_program().graph_signature
    user_inputs = list(signature.user_inputs)
    layout, j = [], 0
    for out in signature.output_specs:
        kind = out.kind.name
        if kind == "USER_INPUT_MUTATION":
            layout.append(("input", user_inputs.index(out.target)))
        elif kind == "USER_OUTPUT":
            layout.append(("output", j))
            j += 1
    return layout


def check_path(path: str, spec, reference: Reference, workdir: Path, options: dict, progress) -> dict:
    import executorch_openvino as exov

    result = {"status": "failed", "stage": "lower", "category": None, "detail": None, "delegated": [],
              "partitions": 0}

    def stop(stage, exc=None, category=None, detail=None):
        reason = refusal_reason(stage, exc) if exc is not None else None
        if reason:
            result.update(status="refused", stage=stage, category=reason, detail=_describe(exc))
        else:
            result.update(status="failed", stage=stage, category=category, detail=detail or _describe(exc))
        return result

    progress(f"{path}:lower")
    try:
        program = _lower(path, spec, reference.example, options)
    except Exception as exc:  # noqa: BLE001 - classified below
        if not refusal_reason("lower", exc) and _fails_without_delegate(path, spec, reference, workdir,
                                                                        "lowering-error"):
            result.update(status="executorch", category="ExecuTorch alone: lowering-error",
                          detail=f"{_describe(exc)} (ExecuTorch fails to lower it with no partitioner too)")
            return result
        return stop("lower", exc, "lowering-error")
    result["delegated"], result["partitions"] = delegated_ops(program)
    layout = method_outputs(program, spec)

    progress(f"{path}:save")
    file = workdir / ("exov_lower.pte" if path == "exov.lower" else "to_edge.pte")
    file.write_bytes(program.buffer)
    progress(f"{path}:load")
    try:
        method = exov.load_method(str(file))
    except Exception as exc:  # noqa: BLE001
        if MISSING_KERNEL in str(exc) and not _loads_without_delegate(path, spec, reference, workdir):
            result.update(status="invalid", stage="load", category="no ExecuTorch kernel",
                          detail=f"{_describe(exc)} (the program fails to load without the delegate too)")
            return result
        return stop("load", exc, "load-error")

    problems = _run_and_compare(method, spec, layout, reference, lambda stage: progress(f"{path}:{stage}"))
    if not problems:
        result.update(status="passed", stage=f"run{len(reference.inputs)}")
        return result
    stage, category, detail, key, exc = problems[0]
    if exc is not None and refusal_reason(stage, exc):
        return stop(stage, exc)
    # A silent wrong result of exov.lower is its own failure unless ExecuTorch's standard lowering with no
    # delegate gives it too (a wrong kernel); exov.lower's own settings (unplanned inputs, issue 17 item 1)
    # are its responsibility.
    baseline = "to_edge_transform_and_lower" if category != "run-error" else path
    if _fails_without_delegate(baseline, spec, reference, workdir, (stage, category, key)):
        # ExecuTorch gets this wrong with no delegate at all: not the delegate's doing.
        result.update(status="executorch", stage=stage, category=f"ExecuTorch alone: {category}",
                      detail=f"{detail} (the same program lowered with no partitioner fails the same way)")
        return result
    return stop(stage, None, category, detail)


def _run_and_compare(method, spec, layout, reference: Reference, progress, *, first_only: bool = True) -> list:
    """What differs from eager, as (stage, category, detail, key, exception or None); empty when every run
    matches. `key` says which value: ("output", j), ("input", i), ... . With ``first_only`` the first
    problem only, else every problem of every run (a run that raises ends the list).

    Outputs of earlier runs must also stay as they were returned (no later run may write into them)."""
    earlier, found = [], []
    for run, inputs in enumerate(reference.inputs):
        stage = f"run{run + 1}"
        progress(stage)
        given = [x.clone() for x in inputs]
        try:
            got = list(method.execute(given))
        except Exception as exc:  # noqa: BLE001
            return found + [(stage, "run-error", _describe(exc), ("error",), exc)]
        problems = _compare_run(spec, layout, got, given, inputs, reference, run)
        for before, (returned, copies) in enumerate(earlier):
            for i, (value, copy) in enumerate(zip(returned, copies)):
                if isinstance(value, torch.Tensor) and not torch.equal(value, copy):
                    problems.append(("output-overwritten",
                                     f"value {i} returned by run {before + 1} changed in run {run + 1}",
                                     ("overwritten", before, i)))
        found += [(stage, category, detail, key, None) for category, detail, key in problems]
        if found and first_only:
            return found[:1]
        earlier.append((got, [g.clone() if isinstance(g, torch.Tensor) else g for g in got]))
    return found


def _lower_without_delegate(path: str, spec, example):
    """`spec` lowered along `path` with a partitioner that takes nothing: ExecuTorch's kernels only, and
    for ``exov.lower`` the same passes and memory planning that it applies."""
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.backend.partitioner import Partitioner, PartitionResult

    class NoPartitioner(Partitioner):
        def partition(self, exported_program):
            return PartitionResult(tagged_exported_program=exported_program, partition_tags={})

    example = tuple(x.clone() for x in example)
    if path == "exov.lower":
        from executorch_openvino import api

        exported = api.export(build_module(spec), example, dynamic_shapes=dynamic_shapes(spec))
        return api.lower_exported(exported, NoPartitioner(), plan_outputs=not spec["dims"])
    exported = torch.export.export(build_module(spec), example, dynamic_shapes=dynamic_shapes(spec))
    return to_edge_transform_and_lower(exported, partitioner=[NoPartitioner()]).to_executorch()


def _fails_without_delegate(path: str, spec, reference: Reference, workdir: Path, problem) -> bool:
    """Whether the same lowering with no delegate at all fails the same way (ExecuTorch's own problem).

    `problem` is "lowering-error", "load-error", or (stage, category, key) of a run: an error must come
    in the same run; a wrong value, dtype, shape, count or change must hit the same value in the same run."""
    import executorch_openvino as exov

    try:
        program = _lower_without_delegate(path, spec, reference.example)
    except Exception:  # noqa: BLE001
        return problem == "lowering-error"
    try:
        file = workdir / "no_delegate.pte"
        file.write_bytes(program.buffer)
        method = exov.load_method(str(file))
    except Exception:  # noqa: BLE001
        return problem in ("lowering-error", "load-error")
    if isinstance(problem, str):
        return False
    found = _run_and_compare(method, spec, method_outputs(program, spec), reference, lambda stage: None,
                             first_only=False)
    stage, category, key = problem
    if category == "run-error":
        return any(s == stage and c == "run-error" for s, c, _, _, _ in found)
    return any((s, c, k) == (stage, category, key) for s, c, _, k, _ in found)


# ExecuTorch's error code when an operator has no kernel (the log names it: "Missing operator").
MISSING_KERNEL = "error: 0x:14"


def _loads_without_delegate(path: str, spec, reference: Reference, workdir: Path) -> bool:
    """Whether ExecuTorch alone (no delegate) can load the program: if not, an op left outside the
    delegate has no ExecuTorch kernel (torch.sort, torch.all(x, dim)...): not a delegate problem."""
    import executorch_openvino as exov

    file = workdir / "no_delegate.pte"
    file.write_bytes(_lower_without_delegate(path, spec, reference.example).buffer)
    try:
        exov.load_method(str(file))
    except RuntimeError as exc:
        return MISSING_KERNEL not in str(exc)
    return True


def _compare_run(spec, layout, got, given, inputs, reference: Reference, run: int) -> list:
    """Every difference of one run from eager, as (category, detail, key)."""
    outputs, finals = reference.outputs[run], reference.final_inputs[run]
    if len(got) != len(layout) or sum(1 for k, _ in layout if k == "output") != len(outputs):
        return [("wrong-count", (f"the method returned {len(got)} values; expected {len(layout)} "
                                 f"({len(outputs)} outputs and the inputs changed in place first)"), ("count",))]
    problems = []
    for position, ((kind, index), value) in enumerate(zip(layout, got)):
        if kind == "input":
            problem = compare(value, finals[index], reference.input_errs[run][index],
                              f"run {run + 1}: returned value {position} (input {index} after the call)")
        else:
            problem = compare(value, outputs[index], reference.output_errs[run][index],
                              f"run {run + 1}: output {index} ({spec['outputs'][index]})")
        if problem:
            problems.append((*problem, (kind, index)))
    changed_in_place = {index for kind, index in layout if kind == "input"}
    for index, (after, before) in enumerate(zip(given, inputs)):
        if torch.equal(after, before) or (index in changed_in_place and torch.equal(after, finals[index])):
            continue
        problems.append(("input-changed", f"run {run + 1}: the method changed input {index} "
                         f"({spec['inputs'][index]['name']})", ("changed", index)))
    return problems


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def check_program(spec, *, run_seed: int = 0, paths=PATHS, workdir: Path, options: dict | None = None,
                  progress=lambda stage: None) -> dict:
    """Checks one program along `paths`; never raises for a problem of the program itself."""
    start = time.monotonic()
    options = dict(options or {})
    progress("reference")
    try:
        reference = Reference(spec, run_seed)
        torch.export.export(build_module(spec), tuple(x.clone() for x in reference.example),
                            dynamic_shapes=dynamic_shapes(spec))
    except Exception as exc:  # noqa: BLE001 - eager or torch.export rejected it: not a program
        return {"status": "invalid", "detail": _describe(exc), "paths": {}, "seconds": time.monotonic() - start}
    results = {path: check_path(path, spec, reference, Path(workdir), options, progress) for path in paths}
    statuses = {r["status"] for r in results.values()}
    status = next(s for s in ("failed", "invalid", "executorch", "refused", "passed") if s in statuses)
    return {"status": status, "paths": results, "seconds": time.monotonic() - start}
