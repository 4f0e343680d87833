"""OpenVINO's per-node time of one decode step: this delegate's partition against the
model OpenVINO GenAI builds from the same GGUF (``nox -s llm_bench``; issue 49 asks for it so that the next gap
is visible).

Both models are compiled through OpenVINO's Python API with ``PERF_COUNT`` and the f32 precision hint, on one
thread: the delegate's partition is the IR inside the ``.pte`` (its first processed blob), GenAI's the IR its
``LLMPipeline`` writes with ``enable_save_ov_model`` (openvino-genai 2026.4). Times are OpenVINO's own
counters (``real_time`` of each executed node), summed by node type, per step; ``wall`` is ``infer()`` with
the inputs already set. GenAI's IR also gives its perplexity (:func:`genai_logits`): its pipeline runs that
model.
"""

from __future__ import annotations

import collections
import statistics
import time
from pathlib import Path

STEPS, ROUNDS = 24, 3


def partition_ir(pte: Path, folder: Path) -> Path:
    """Writes the first processed blob's IR of `pte` to `folder` / ``<name>.xml`` and ``.bin``; returns the xml."""
    from executorch_openvino.contract import processed_blob

    data = pte.read_bytes()
    at = data.find(processed_blob.MAGIC)
    header = processed_blob.read_header(data, at)
    ir = processed_blob.unpack(data[at:at + header.weights_offset + header.weights_size])
    xml = folder / f"{pte.stem}.xml"
    xml.write_bytes(ir.xml)
    xml.with_suffix(".bin").write_bytes(ir.weights)
    return xml


def genai_ir(gguf: Path, folder: Path) -> Path:
    """GenAI's model of `gguf` as an IR in `folder` / ``genai-ir``: its pipeline writes it beside the file it reads."""
    import openvino_genai

    where = folder / "genai-ir"
    xml = where / "openvino_model.xml"
    if not xml.is_file():
        where.mkdir(parents=True, exist_ok=True)
        link = where / gguf.name
        if not link.exists():
            link.symlink_to(gguf)
        openvino_genai.LLMPipeline(str(link), "CPU", enable_save_ov_model=True)
    return xml


def _feeds(compiled, genai: bool):
    """``feed(tokens, position) -> {input: array}`` for GenAI's model or the delegate's partition (positions in
    the input that restarts the state, token ids in the 2-D one, each scalar a sequence length)."""
    import numpy as np

    from executorch_openvino.contract.processed_blob import RESTART_STATE_PREFIX

    def feed(tokens, position):
        count, found = len(tokens), {}
        positions = np.arange(position, position + count, dtype=np.int64)
        for port in compiled.inputs:
            name, rank = port.get_any_name(), port.get_partial_shape().rank.get_length()
            if genai:
                found[port] = {"input_ids": np.array([tokens], np.int64), "position_ids": positions[None],
                               "attention_mask": np.ones((1, position + count), np.int64),
                               "beam_idx": np.zeros(1, np.int32)}[name]
            elif name.startswith(RESTART_STATE_PREFIX):
                found[port] = positions
            elif rank == 2:
                found[port] = np.array([tokens], np.int64)
            else:
                found[port] = np.array(count, port.get_element_type().to_dtype())
        return found
    return feed


def profile(xml: Path, genai: bool, prompt: list, without_minimums: bool = False) -> dict:
    """Per node type, ms per decode step (context 32 to 56); the ms of the nodes that compute the GGUF's exact
    minimums (named ``gguf_*`` by ``gguf_weights``); executed nodes per step; median wall ms of a step and of the
    32-token prompt; over :data:`ROUNDS` rounds on one infer request (the first a warm-up). The prompt's own
    counters are left out: OpenVINO 2026.4.1 reports stale times for a call whose shape differs from the last
    one's (38 ms of counters for a 45 ms prompt after a step, 59 after the same prompt).

    GenAI's model gets its pipeline's last-position logits first (:func:`last_position_logits`); with
    `without_minimums`, the delegate's partition loses the minimums' term (:func:`drop_minimums`): wrong logits,
    for what the term costs."""
    import openvino as ov

    core = ov.Core()
    model = core.read_model(xml)
    if genai:
        last_position_logits(model)
    if without_minimums:
        drop_minimums(model)
    compiled = core.compile_model(model, "CPU", {
        "PERF_COUNT": True, "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1,
        "PERFORMANCE_HINT": "LATENCY"})
    feed = _feeds(compiled, genai)
    request = compiled.create_infer_request()  # one: OpenVINO 2026.4.1's Python API crashed with a second
    step_ms, walls, prompt_walls, nodes, minimums = collections.Counter(), [], [], 0, 0.0
    for round_ in range(ROUNDS):
        request.reset_state()
        started = time.perf_counter()
        request.infer(feed(prompt, 0))
        if round_:
            prompt_walls.append(1e3 * (time.perf_counter() - started))
        for step in range(STEPS):
            inputs = feed([prompt[step % len(prompt)]], len(prompt) + step)
            started = time.perf_counter()
            request.infer(inputs)
            if round_:
                walls.append(1e3 * (time.perf_counter() - started))
                step_ms.update(_by_type(request.profiling_info))
                minimums += sum(node.real_time.total_seconds() * 1e3 for node in request.profiling_info
                                if node.status == node.Status.EXECUTED and "/gguf_" in node.node_name)
                nodes += sum(1 for p in request.profiling_info if p.status == p.Status.EXECUTED)
    steps = (ROUNDS - 1) * STEPS
    return {"step_ms": {k: v / steps for k, v in step_ms.items()}, "minimums_ms": minimums / steps,
            "nodes": nodes / steps, "wall_ms": statistics.median(walls),
            "prompt_wall_ms": statistics.median(prompt_walls)}


def drop_minimums(model) -> None:
    """Removes, in place, each ``x @ A.T + blocksums(x) @ M.T``'s second term (``gguf_weights``' exact Q4_1
    form): what is left runs like an integer zero point's matmul, GenAI's form."""
    for node in model.get_ordered_ops():
        if node.get_type_name() == "Add" and node.input_value(1).get_node().get_friendly_name().endswith("/gguf_minimums"):
            node.output(0).replace(node.input_value(0))
    model.validate_nodes_and_infer_types()


def last_position_logits(model) -> None:
    """Makes GenAI's saved model (in place) compute the logits of the last position only, as its pipeline does
    before compiling (the saved IR computes every position's: 11 ms of a 60 ms 32-token prompt, one core)."""
    import numpy as np
    import openvino.opset13 as ops

    result = next(r for r in model.get_results() if "logits" in r.output(0).get_names()
                  or "logits" in r.input_value(0).get_names())
    matmul = result.input_value(0).get_node()
    while matmul.get_type_name() != "MatMul":
        matmul = matmul.input_value(0).get_node()
    hidden = matmul.input_value(0)
    last = ops.slice(hidden, ops.constant(np.array([-1], np.int64)), ops.constant(np.array([2**62], np.int64)),
                     ops.constant(np.array([1], np.int64)), ops.constant(np.array([1], np.int64)))
    matmul.input(0).replace_source_output(last.output(0))
    model.validate_nodes_and_infer_types()


def _by_type(info) -> collections.Counter:
    found: collections.Counter = collections.Counter()
    for node in info:
        if node.status == node.Status.EXECUTED:
            found[node.node_type] += node.real_time.total_seconds() * 1e3
    return found


def genai_logits(xml: Path):
    """``logits(window) -> [len(window), vocabulary]`` torch tensor of GenAI's model of the GGUF, f32 hint."""
    import numpy as np
    import openvino as ov
    import torch

    compiled = ov.Core().compile_model(xml, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    feed = _feeds(compiled, genai=True)

    def logits(window):
        request = compiled.create_infer_request()
        request.infer(feed(list(window), 0))
        return torch.from_numpy(np.array(request.get_output_tensor(0).data[0]))
    return logits


def table(profiles: dict) -> list:
    """Markdown lines: per node type, ms per decode step of each profile, the largest first, then the totals,
    the exact minimums' nodes and the wall times of a step and of the 32-token prompt."""
    types = sorted({t for p in profiles.values() for t in p["step_ms"]},
                   key=lambda t: -max(p["step_ms"].get(t, 0) for p in profiles.values()))
    lines = ["", "OpenVINO's per-node time of a decode step at context 32 to 56 (`PERF_COUNT`, one thread, f32 hint; "
             "GenAI's model with its pipeline's last-position logits; benchmarks/llm_profile.py), ms:", "",
             f"| node type | {' | '.join(profiles)} |", "|---|" + "---:|" * len(profiles)]
    for kind in types[:14]:
        lines.append(f"| {kind} | " + " | ".join(f"{p['step_ms'].get(kind, 0):.2f}" for p in profiles.values()) + " |")
    rows = (("all nodes", lambda p: f"{sum(p['step_ms'].values()):.2f}"),
            ("of which the exact minimums (nodes `gguf_*`)", lambda p: f"{p['minimums_ms']:.2f}"),
            ("executed nodes", lambda p: f"{p['nodes']:.0f}"),
            ("wall, median", lambda p: f"{p['wall_ms']:.2f}"),
            ("wall of the 32-token prompt, median", lambda p: f"{p['prompt_wall_ms']:.2f}"))
    lines += [f"| {label} | " + " | ".join(value(p) for p in profiles.values()) + " |" for label, value in rows]
    return lines
