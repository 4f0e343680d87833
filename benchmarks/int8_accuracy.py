"""Measures the INT8 accuracy gates of tests/lowering/test_quantization.py and writes their figures (`nox -s bench`
publishes them in docs/benchmarks.md): MiniLM sentence-embedding cosines and a small CNN's top-1 agreement,
INT8 through this delegate against float32 eager PyTorch, and which layers OpenVINO ran in 8 bits.

    python benchmarks/int8_accuracy.py [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from exov_testing import int8_gates
from bench import cpu_features, machine_info

import executorch_openvino as exov


def eight_bit_layers(program) -> str:
    """'FullyConnected 36/36, Convolution 2/2': per layer type that ran in 8 bits anywhere, how many of all."""
    totals: dict = {}
    for counts in exov.runtime_precisions(program):
        for (kind, precision), count in counts.items():
            all_, eight = totals.get(kind, (0, 0))
            totals[kind] = (all_ + count, eight + (count if precision in ("i8", "u8") else 0))
    return ", ".join(f"{kind} {eight}/{all_}" for kind, (all_, eight) in totals.items()
                     if eight and kind in ("FullyConnected", "Convolution", "MatMul"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    machine = machine_info() | {"cpu_features": cpu_features()}

    model, example, tokenizer = int8_gates.minilm()
    program = int8_gates.minilm_quantized_program(model, example, tokenizer)
    cosines = int8_gates.minilm_cosines(model, tokenizer, program)
    minilm = {"min_cosine": min(cosines), "mean_cosine": statistics.fmean(cosines), "sentences": len(cosines),
              "gate": int8_gates.MINILM_COSINE_GATE, "eight_bit_layers": eight_bit_layers(program)}
    cnn_model = int8_gates.trained_cnn()
    calibration = int8_gates.cnn_calibration()
    cnn_program = exov.lower(exov.quantize(cnn_model, (calibration[0],), calibration), (calibration[0],))
    cnn = vars(int8_gates.cnn_figures(cnn_model, cnn_program)) | {
        "gate": int8_gates.CNN_AGREEMENT_GATE, "eight_bit_layers": eight_bit_layers(cnn_program)}

    lines = ["| model | held out | INT8 against float32 eager | gate | layers in 8 bits |", "|---|---:|---|---|---|",
             f"| MiniLM sentence embeddings | {minilm['sentences']} sentences | cosine min {minilm['min_cosine']:.4f}, "
             f"mean {minilm['mean_cosine']:.4f} | min >= {minilm['gate']} | {minilm['eight_bit_layers']} |",
             f"| small CNN (trained 150 steps) | {cnn['images']} images | top-1 agreement {cnn['agreement']:.1%} "
             f"(accuracy {cnn['float32_accuracy']:.1%} float32, {cnn['int8_accuracy']:.1%} INT8) | "
             f">= {cnn['gate']:.0%} | {cnn['eight_bit_layers']} |"]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "minilm": minilm, "cnn": cnn}, indent=1))
    if args.markdown:
        import nncf

        args.markdown.write_text(
            f"Measured {machine['date']} on {machine['cpu']} with OpenVINO {machine['openvino']} and nncf "
            f"{nncf.__version__} (exov.quantize defaults; MiniLM as a transformer; "
            "tests/support/exov_testing/int8_gates.py):\n\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
