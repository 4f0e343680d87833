"""``python -m executorch_openvino export-llm`` and ``generate``: the language model commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def export_llm_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m executorch_openvino export-llm",
                                     description="Export a Hugging Face decoder-only model (folder or .gguf) to a "
                                                 ".pte with a static KV cache for the OpenVINO delegate.")
    parser.add_argument("--model", required=True, help="a Hugging Face model folder or a .gguf file")
    parser.add_argument("--out", required=True, help="the .pte to write (its tokenizer goes to <name>.tokenizer/)")
    parser.add_argument("--weights", choices=("f32", "int8", "int4", "gguf"), default=None,
                        help="gguf: a .gguf file's own Q4_0/Q4_1/Q8_0 blocks (the default for a .gguf file); "
                             "int8/int4: NNCF weight-only compression; f32: as read (the default for a folder)")
    parser.add_argument("--group-size", type=int, default=128,
                        help="int4: values per scale (default 128; rows it does not divide get the largest power "
                             "of two below it that does, e.g. 64)")
    parser.add_argument("--ratio", type=float, default=1.0,
                        help="int4: share of the weights in 4 bits, the rest in 8 (default 1.0)")
    parser.add_argument("--numerics", choices=("exact", "fast"), default="exact",
                        help="fast: OpenVINO quantizes activations to 8 bits inside compressed matmuls and keeps "
                             "the KV cache in f16 (faster, less accurate; default exact)")
    parser.add_argument("--max-context-len", "--max-seq-len", dest="context", type=int, default=512,
                        help="positions of the KV cache: prompt and new tokens together (default 512)")
    parser.add_argument("--quiet", action="store_true", help="no stage lines (shown on a terminal by default)")
    args = parser.parse_args(argv)
    folder = Path(args.out).absolute().parent
    if not folder.is_dir():  # before minutes of export, not after
        print(f"error: --out {args.out!r}: no folder {str(folder)!r} to write it in", file=sys.stderr)
        return 1
    from ..support.quiet import hide_known_noise

    hide_known_noise()
    from .export import export_llm

    try:
        program = export_llm(args.model, max_context_len=args.context, weights=args.weights,
                             group_size=args.group_size, ratio=args.ratio, numerics=args.numerics,
                             progress=False if args.quiet else None)
    except (OSError, ValueError, ImportError) as error:  # OSError: transformers found no such model
        print(f"error: {error}", file=sys.stderr)
        return 1
    folder = program.save(args.out)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 2**20:.1f} MiB, weights {program.weights}, "
          f"{program.max_context_len} positions) and its tokenizer in {folder}")
    return 0


def generate_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m executorch_openvino generate",
                                     description="Greedy text generation with a .pte written by export-llm.")
    parser.add_argument("pte", help="the .pte")
    parser.add_argument("--prompt", required=True, help="the text to continue (with --chat: a user message)")
    parser.add_argument("--tokenizer", help="a tokenizer folder or .gguf (default: <name>.tokenizer/ beside the .pte)")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="most tokens to generate (default 64)")
    parser.add_argument("--chat", action="store_true", help="wrap the prompt in the tokenizer's chat template")
    args = parser.parse_args(argv)
    if not Path(args.pte).is_file():
        print(f"error: no .pte at {args.pte!r}", file=sys.stderr)
        return 1
    from ..support.quiet import hide_known_noise

    hide_known_noise()
    from .generation import generate

    try:
        result = generate(args.pte, args.prompt, args.max_new_tokens, tokenizer=args.tokenizer, chat=args.chat)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(result.text)
    stop = "; stopped at end of sequence" if result.stopped_at_eos else ""
    decode = (f", decode {result.decode_tokens_per_second:.1f} tokens/s" if len(result.tokens) > 1 else "")
    # The first calls of a process include OpenVINO's one-time preparation of its kernels for each input shape.
    print(f"[prompt: {result.prompt_tokens} token(s); first token after {result.prefill_seconds * 1e3:.0f} ms "
          f"(prefill {result.prefill_tokens_per_second:.1f} tokens/s); {len(result.tokens)} new token(s){decode}"
          f"{stop}; a process's first prompt includes kernel preparation]")
    if not args.chat and result.stopped_at_eos and len(result.tokens) <= 1:
        print("(the model ended its answer at once: an instruction-tuned model answers a question with --chat)")
    return 0
