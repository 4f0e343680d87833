"""The commands README.md and docs/user-guide/*.md show, and which of them no test runs, with why (issue 37: the
docs showed commands that no session ran).

Every fenced block of those documents names its language. The commands are each logical line of an ``sh``
block (``\\`` continuations joined, comments dropped) and each ``python`` block whole; ``text`` and the like are
shown, not run. Each command is one of:

- a nox session (``python3 -m nox -s NAME``): the session runs it; tests/packaging/test_doc_commands.py checks
  that noxfile.py defines NAME;
- in NOT_RUN, keyed by ``<document>: <its first line>``, with the reason no test runs it here and what runs the
  same thing instead;
- otherwise run by tests/packaging/test_doc_examples.py against the installed wheel, each document's commands in
  order in a folder of its own. The python blocks run as the continuation of the README's Quickstart
  (``torch``, ``exov``, ``model``, ``x`` defined), whose ``model.pte`` the folder holds, with an ``ov-cache/``
  that loading it with ``exov.set_cache_dir("ov-cache")`` filled (docs/user-guide/model-cache.md).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from exov_testing import REPOSITORY

DOCUMENTS = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs" / "user-guide").glob("*.md"))]
COMMAND_LANGUAGES = ("sh", "python")
SHOWN_LANGUAGES = ("text", "cpp", "cmake", "json", "toml")  # output, listings and code that is read, not run
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
NOX_SESSION = re.compile(r"^(?:python3 -m pip install 'nox==[^']+' && )?python3 -m nox -s (['\"]?)([^'\"\s]+)\1(?: |$)")

_NO_NETWORK = ("download.pytorch.org is not reachable from the project's machines; the sessions install the same "
               "torch from pip's configured indexes, and from this index when EXOV_TORCH_INDEX_URL names it")
_NOT_ON_PYPI = ("the name is not on PyPI yet; `nox -s index` and `nox -s release` install executorch-openvino by "
                "name from an index of wheels built here")
_AARCH64 = "a Linux aarch64 machine; `nox -s aarch64_emulated` installs the aarch64 wheel and runs doctor under qemu"
_INSTALL_TREE = ("needs an OpenVINO install tree; `nox -s install_tree` sources its tree's setupvars.sh and runs "
                 "recorded programs with it")
_GGUF = ("needs the SmolLM2 GGUF file, which no test environment holds; tests/llm/test_llm_commands.py runs "
         "export-llm and generate on a tiny Llama, and `nox -s llm_bench` exports SmolLM2 from its GGUF")
_SDIST = "`<v>` stands for a release's version; `nox -s sdist_install` installs a fresh sdist this way"

NOT_RUN = {
    "README.md: pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu": _NO_NETWORK,
    "README.md: pip install executorch-openvino openvino": _NOT_ON_PYPI,
    "README.md: pip install 'executorch-openvino[llm]'": _NOT_ON_PYPI,
    "README.md: python -m executorch_openvino export-llm --model SmolLM2-135M-Instruct.Q4_1.gguf --out smollm2.pte":
        _GGUF,
    "README.md: python -m executorch_openvino generate smollm2.pte --chat --prompt \"What is the capital of France?\"":
        _GGUF,
    "docs/user-guide/aarch64.md: pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu":
        _AARCH64,
    "docs/user-guide/aarch64.md: pip install executorch-openvino openvino": _AARCH64,
    "docs/user-guide/aarch64.md: pip install executorch==1.5.1 packaging": _AARCH64,
    "docs/user-guide/aarch64.md: pip install --no-deps executorch-openvino": _AARCH64,
    "docs/user-guide/aarch64.md: source /opt/intel/openvino/setupvars.sh": _INSTALL_TREE,
    "docs/user-guide/deployment.md: source /opt/intel/openvino/setupvars.sh": _INSTALL_TREE,
    "docs/user-guide/deployment.md: python -c \"import executorch_openvino as exov; "
    "print(exov.load_method('model.pte').execute([...]))\"":
        "`[...]` stands for the program's inputs; `nox -s install_tree` runs recorded programs with their inputs",
    "docs/user-guide/deployment.md: pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu":
        _NO_NETWORK,
    "docs/user-guide/deployment.md: pip install executorch==1.5.1":
        "installs into the environment, whose executorch the tests must not change; `nox -s sdist_install` "
        "installs it before the sdist",
    "docs/user-guide/deployment.md: pip install --no-cache-dir executorch_openvino-<v>.tar.gz": _SDIST,
    "docs/user-guide/llm.md: python -m executorch_openvino export-llm --model SmolLM2-135M-Instruct.Q4_1.gguf "
    "--out smollm2.pte": _GGUF,
    "docs/user-guide/llm.md: import executorch_openvino as exov": _GGUF,
    "docs/user-guide/llm.md: python -m executorch_openvino generate smollm2.pte --chat --prompt "
    "\"What is the capital of France?\"": _GGUF,
    "docs/user-guide/llm.md: result = exov.generate(\"smollm2.pte\", \"What is the capital of France?\", "
    "max_new_tokens=64, chat=True)": _GGUF,
    "docs/user-guide/llm.md: import executorch_openvino  # registers the delegate":
        "needs a language model's .pte and tokenizer; tests/llm/test_llm_commands.py runs TextLLMRunner on the tiny "
        "Llama's",
    "docs/user-guide/quantization.md: pip install 'executorch-openvino[quantize]'": _NOT_ON_PYPI,
    "docs/user-guide/quantization.md: import executorch_openvino as exov":
        "`loader` stands for the reader's calibration data; tests/lowering/test_quantization.py runs exov.quantize, "
        "exov.lower and exov.runtime_precisions on its own",
    "docs/user-guide/runner-and-cpp.md: executorch-openvino-run model.pte --input ids.npy --input mask.npy "
    "--output-dir out --iterations 50":
        "needs a program of two inputs and their .npy files; tests/runtime/test_runner.py runs --input, --output-dir "
        "and --iterations",
    "docs/user-guide/runner-and-cpp.md: g++ -std=c++17 app.cpp -DC10_USING_CUSTOM_GENERATED_MACROS -I$ET/include":
        "app.cpp is the reader's program; tests/support/exov_testing/compile_harness.py compiles the test programs "
        "with the same defines, include folders and libraries (the document says so)",
}


@dataclass(frozen=True)
class Block:
    document: str  # relative to the repository
    line: int  # the opening fence's
    language: str
    text: str


@dataclass(frozen=True)
class Command:
    document: str
    line: int  # where it starts
    language: str
    text: str  # a shell command on one line, or a Python block
    first_line: str  # as the document shows it (a shell command's without its continuation and comment)

    @property
    def key(self) -> str:
        """How NOT_RUN names it: the document and the command's first line."""
        return f"{self.document}: {self.first_line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file (fences at the start of a line, as these documents write them)."""
    found, lines, i = [], path.read_text().splitlines(), 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(opening.group(1))
                    and not lines[j].strip(opening.group(1)[0]).strip()), len(lines))
        found.append(Block(str(path.relative_to(REPOSITORY)), i + 1, opening.group(2), "\n".join(lines[i + 1:end])))
        i = end + 1
    return found


def _without_comment(line: str) -> str:
    """`line` up to a `#` that starts a word outside quotes (the shell's comment)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def shell_commands(block: Block) -> list[Command]:
    found: list[Command] = []
    pending, start, first = "", 0, ""
    for number, line in enumerate(block.text.splitlines(), block.line + 1):
        code = _without_comment(line)
        if not pending:
            start, first = number, code.removesuffix("\\").strip()
        if code.endswith("\\"):
            pending += code[:-1].rstrip() + " "
            continue
        text = (pending + code.strip()).strip()
        pending = ""
        if text:
            found.append(Command(block.document, start, block.language, text, first))
    return found


def commands() -> list[Command]:
    """Every command the documents show, in document order."""
    found: list[Command] = []
    for document in DOCUMENTS:
        for block in blocks(document):
            if block.language == "sh":
                found += shell_commands(block)
            elif block.language == "python":
                found.append(Command(block.document, block.line + 1, "python", block.text,
                                     block.text.splitlines()[0]))
    return found


def nox_session(command: Command) -> str | None:
    """The session a `python3 -m nox -s NAME` command runs (NAME without its parameters), else None."""
    match = NOX_SESSION.match(command.text) if command.language == "sh" else None
    return re.split(r"[(-]", match.group(2))[0] if match else None


def nox_sessions() -> set[str]:
    """The names of noxfile.py's sessions (read, not imported: the tests' environment has no nox)."""
    tree = ast.parse((REPOSITORY / "noxfile.py").read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and any("nox.session" in ast.unparse(d) for d in node.decorator_list)}


def to_run() -> list[Command]:
    """What tests/packaging/test_doc_examples.py runs: neither a session nor in NOT_RUN, and each command once
    (where it is first shown: `doctor` appears in three documents)."""
    found: dict[tuple[str, str], Command] = {}
    for c in commands():
        if nox_session(c) is None and c.key not in NOT_RUN:
            found.setdefault((c.language, c.text), c)
    return list(found.values())
