"""Load time and memory per model, in fresh processes: this delegate, XNNPACK and OpenVINO's own API.

For each model (``LOAD_CASES``) the same program is lowered for this delegate
and for XNNPACK, and the delegate's partition is written as an OpenVINO IR file (the same IR, for OpenVINO's API).
Each round then runs, one fresh process each (``load_probe.py``), in this order:
the delegate with an empty cache folder (first load), with that folder again
(second load), without a cache; XNNPACK; OpenVINO's ``compile_model`` of the IR
file without a cache, with an empty cache folder, and with it again. Figures
are medians over rounds: load time (``load_program`` + ``load_method``, or
``compile_model``), and peak resident memory above the imports after the load
and 3 calls, also as a ratio to the model's float32 weights (its parameters
and buffers).

``python loading.py --out DIR`` prints the table and writes ``loading.json`` and
``loading.md``; ``bench.py`` runs the same measurement for its report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

LOAD_CASES = ("minilm_b1", "cnn", "lstm")
ROUNDS = 3
# (key, engine, cache): cache "first" is an empty folder of this round, "second" the same folder again.
PROBES = (("delegate_cache_first", "pte:delegate", "first"), ("delegate_cache_second", "pte:delegate", "second"),
          ("delegate_no_cache", "pte:delegate", None), ("xnnpack", "pte:xnnpack", None),
          ("openvino_no_cache", "openvino", None), ("openvino_cache_first", "openvino", "first"),
          ("openvino_cache_second", "openvino", "second"))
# Issue 50: from after `import torch` to the first result in a fresh process, by each door (no cache).
FIRST_RESULT_DOORS = (("load_method", "delegate"), ("executorch.runtime", "delegate"), ("openvino", "openvino"))
LABELS = {"delegate_no_cache": "this delegate, no cache", "delegate_cache_first": "this delegate, cache, first load",
          "delegate_cache_second": "this delegate, cache, second load", "xnnpack": "XNNPACK",
          "openvino_no_cache": "OpenVINO API, no cache", "openvino_cache_first": "OpenVINO API, cache, first load",
          "openvino_cache_second": "OpenVINO API, cache, second load"}


def cpu_description() -> str:
    """The CPU's name, the instruction sets that decide OpenVINO's kernels, and OpenVINO's own capabilities."""
    import openvino as ov

    text = Path("/proc/cpuinfo").read_text()
    name = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), "?")
    flags = set(next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []))
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16") if f in flags]
    capabilities = ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return f"{name}, {os.cpu_count()} cores, {'/'.join(isa)}; OpenVINO CPU: {', '.join(capabilities)}"


def prepare(name: str, workdir: Path) -> dict:
    """Writes the case's delegate and XNNPACK programs, IR and inputs to `workdir`; returns their paths and weights."""
    import numpy as np
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    import executorch_openvino as exov
    from executorch_openvino.contract import processed_blob
    from executorch_openvino.lowering.preprocess import BACKEND_ID
    from models import make_case

    case = make_case(name)
    files = {"delegate": workdir / f"{name}.load.delegate.pte", "xnnpack": workdir / f"{name}.load.xnnpack.pte",
             "openvino": workdir / f"{name}.load.xml", "inputs": workdir / f"{name}.load.inputs.pt",
             "openvino_inputs": workdir / f"{name}.load.ir-inputs.pt"}
    torch.save(list(case.inputs), files["inputs"])
    program = exov.lower(case.module, case.inputs)
    files["delegate"].write_bytes(program.buffer)
    # OpenVINO's own API loads the same IR as the delegate's partition (issue 50: "OpenVINO's compile of the same
    # IR"; numerics="exact" adds operations that a conversion of its own would not have: the CNN's IR has 42
    # against 27, a 38 ms compile against 27).
    (ir,) = [processed_blob.unpack(m.processed_bytes) for _, m in program.exported_program().graph_module.named_children()
             if getattr(m, "backend_id", None) == BACKEND_ID]
    edge = to_edge_transform_and_lower(torch.export.export(case.module, case.inputs),
                                       partitioner=[XnnpackPartitioner()])
    files["xnnpack"].write_bytes(edge.to_executorch().buffer)
    files["openvino"].write_bytes(ir.xml)
    files["openvino"].with_suffix(".bin").write_bytes(ir.weights)
    # The partition's parameters are not the program's inputs (MiniLM's also takes its position-id buffer):
    # zeros of each parameter's static shape and type, enough for the calls after a load.
    import openvino as ov

    parameters = ov.Core().read_model(files["openvino"]).get_parameters()
    torch.save([torch.from_numpy(np.zeros(p.get_shape(), p.get_element_type().to_dtype())) for p in parameters],
               files["openvino_inputs"])
    weights = sum(t.numel() * t.element_size() for t in case.module.state_dict().values())
    return {"files": {k: str(v) for k, v in files.items()}, "weights_bytes": weights}


def _probe(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, str(HERE / "load_probe.py"), *args], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[-3000:], file=sys.stderr)
        return {"error": f"exit status {out.returncode}: {(out.stderr.strip().splitlines() or [''])[-1][:300]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(cases: tuple[str, ...], workdir: Path, rounds: int = ROUNDS) -> dict:
    """Per case: ``weights_bytes`` and, per probe key, the medians of ``load_s``, ``peak_above_imports_mib``
    and ``after_calls_above_imports_mib`` (or ``error``)."""
    prepared = {name: prepare(name, workdir) for name in cases}
    runs: dict = {name: {key: [] for key, _, _ in PROBES} for name in cases}
    for r in range(rounds):
        for name in cases:  # models interleaved within a round, engines within a model
            files = prepared[name]["files"]
            caches = {engine: tempfile.mkdtemp(prefix=f"cache-{engine.replace(':', '-')}-", dir=workdir)
                      for engine in ("pte:delegate", "openvino")}
            for key, engine, cache in PROBES:
                kind, _, program = engine.partition(":")
                args = [kind, files[program or "openvino"], files["inputs" if program else "openvino_inputs"]]
                runs[name][key].append(_probe(args + (["--cache-dir", caches[engine]] if cache else [])))
            for door, program in FIRST_RESULT_DOORS:
                runs[name].setdefault(f"first_{door}", []).append(
                    _probe([f"first-{door}", files[program], files["inputs" if program != "openvino" else
                                                                         "openvino_inputs"]]))
            print(f"   round {r + 1}/{rounds} {name}: " + ", ".join(
                f"{key} {runs[name][key][-1].get('load_s', float('nan')) * 1e3:.0f} ms" for key, _, _ in PROBES),
                flush=True)
    result = {"cpu": cpu_description(), "rounds": rounds, "cases": {}}
    for name in cases:
        entry = {"weights_bytes": prepared[name]["weights_bytes"]}
        for key, _, _ in PROBES:
            failed = [r for r in runs[name][key] if "error" in r]
            entry[key] = failed[0] if failed else {
                "load_s": statistics.median(r["load_s"] for r in runs[name][key]),
                "peak_above_imports_mib": statistics.median(r["peak_rss_mib"] - r["rss_before_load_mib"]
                                                            for r in runs[name][key]),
                "after_calls_above_imports_mib": statistics.median(
                    r["rss_after_calls_mib"] - r["rss_before_load_mib"] for r in runs[name][key]),
            }
        for door, _ in FIRST_RESULT_DOORS:
            found = runs[name][f"first_{door}"]
            failed = [r for r in found if "error" in r]
            entry[f"first_{door}"] = failed[0] if failed else {
                "first_result_s": statistics.median(r["first_result_s"] for r in found)}
        result["cases"][name] = entry
    return result


def markdown(result: dict) -> str:
    """The table of `measure`'s result, with the ratios the goals are stated in."""
    lines = [f"Loading in fresh processes ({result['cpu']}; medians of {result['rounds']} interleaved rounds; "
             "`benchmarks/loading.py`). Peak and after-calls RSS are above the imports and OpenVINO's CPU "
             "plugin (loaded in every process before the baseline), after loading and 3 calls; x weights: over the "
             "model's float32 weights.", "",
             "| model (weights) | process | load ms | peak RSS MiB | x weights | RSS after calls MiB | x weights |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for name, entry in result["cases"].items():
        weights_mib = entry["weights_bytes"] / 2**20
        for key, label in LABELS.items():
            r = entry[key]
            if "error" in r:
                lines.append(f"| {name} ({weights_mib:.1f} MiB) | {label} | failed: {r['error']} | | | | |")
                continue
            peak, after = r["peak_above_imports_mib"], r["after_calls_above_imports_mib"]
            lines.append(f"| {name} ({weights_mib:.1f} MiB) | {label} | {r['load_s'] * 1e3:.0f} | {peak:.1f} | "
                         f"{peak / weights_mib:.2f} | {after:.1f} | {after / weights_mib:.2f} |")
    lines += ["", "| model | no-cache load / OpenVINO API's | second-cache-load speed-up | second cache load / "
                  "XNNPACK's load |", "|---|---:|---:|---:|"]
    for name, entry in result["cases"].items():
        def load(key):
            return entry[key].get("load_s")
        if None in (load("delegate_no_cache"), load("openvino_no_cache"), load("delegate_cache_second"),
                    load("xnnpack")):
            continue
        lines.append(f"| {name} | {load('delegate_no_cache') / load('openvino_no_cache'):.2f} | "
                     f"{load('delegate_no_cache') / load('delegate_cache_second'):.1f}x | "
                     f"{load('delegate_cache_second') / load('xnnpack'):.1f} |")
    lines += ["", "From after `import torch` to the first result in a fresh process, no cache (seconds; issue 50's goal: "
                  "at most 1.5 s for a small program):", "",
              "| model | " + " | ".join(door for door, _ in FIRST_RESULT_DOORS) + " |",
              "|---|" + "---:|" * len(FIRST_RESULT_DOORS)]
    for name, entry in result["cases"].items():
        cells = [f"{entry[f'first_{door}']['first_result_s']:.2f}" if "first_result_s" in entry[f"first_{door}"]
                 else "failed" for door, _ in FIRST_RESULT_DOORS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for loading.json and loading.md")
    parser.add_argument("--cases", nargs="+", default=list(LOAD_CASES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="loading-") as tmp:
        result = measure(tuple(args.cases), Path(tmp), args.rounds)
    (args.out / "loading.json").write_text(json.dumps(result, indent=1))
    table = markdown(result)
    (args.out / "loading.md").write_text(table)
    print("\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
