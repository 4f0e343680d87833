"""``python -m executorch_openvino <command>``: ``doctor``, ``cache FOLDER [--clear]``, ``export-llm``, ``generate``."""

import sys

USAGE = """usage: python -m executorch_openvino doctor [PROGRAM.pte] [--json]
       python -m executorch_openvino cache FOLDER [--clear]
       python -m executorch_openvino export-llm --model DIR|GGUF --out model.pte [--weights f32|int8|int4]
       python -m executorch_openvino generate model.pte --prompt TEXT [--max-new-tokens N] [--chat]
  doctor      checks that the delegate can run here and which OpenVINO it uses; with a .pte, also
              which backends its methods were delegated to and whether they can run here
  cache       reports what the model cache FOLDER (the one given to set_cache_dir) holds;
              --clear removes the delegate's files from it
  export-llm  exports a Hugging Face decoder-only model with a static KV cache (--help for options)
  generate    generates text greedily with a .pte export-llm wrote, and prints tokens/s"""


def _cache(argv: list[str]) -> int:
    from .runtime import model_cache

    folders = [a for a in argv if not a.startswith("-")]
    unknown = [a for a in argv if a.startswith("-") and a != "--clear"]
    if len(folders) != 1 or unknown:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if "--clear" in argv:
            freed = model_cache.clear(folders[0])
            print(f"removed {freed / 2**20:.1f} MiB of cached models from {folders[0]!r}")
        else:
            print(model_cache.report(folders[0]))
    except NotADirectoryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if command == "cache":
        return _cache(argv[1:])
    if command in ("export-llm", "generate"):
        from .llm import cli

        return (cli.export_llm_main if command == "export-llm" else cli.generate_main)(argv[1:])
    if command != "doctor":
        said = f"unknown command {command!r}" if command else "no command given"
        print(f"error: {said}; the commands are doctor, cache, export-llm and generate\n{USAGE}", file=sys.stderr)
        return 2
    if sum(not a.startswith("-") for a in argv[1:]) > 1:
        print(f"error: doctor checks one program at a time\n{USAGE}", file=sys.stderr)
        return 2
    from .support.quiet import hide_known_noise

    hide_known_noise()
    from .support.doctor import main as doctor

    return doctor(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
