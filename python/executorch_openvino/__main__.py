"""``python -m executorch_openvino <command>``; the one command is ``doctor``."""

import sys

COMMANDS = ("doctor",)


def main(argv: list[str]) -> int:
    commands = [a for a in argv if not a.startswith("-")]
    if len(commands) != 1 or commands[0] not in COMMANDS:
        print(f"usage: python -m executorch_openvino {{{','.join(COMMANDS)}}} [--json]\n"
              "  doctor  checks that the delegate can run here and which OpenVINO it uses", file=sys.stderr)
        return 2
    from .quiet import hide_known_noise

    hide_known_noise()
    from .doctor import main as doctor

    return doctor([a for a in argv if a != commands[0]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
