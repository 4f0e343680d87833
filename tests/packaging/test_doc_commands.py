"""Every command README.md and the user guide show is run: by a nox session it names, by
tests/packaging/test_doc_examples.py, or not here, for the reason exov_testing.doc_commands.NOT_RUN gives
(issue 37). Reads the documents and noxfile.py only."""

from __future__ import annotations

from exov_testing import doc_commands
from exov_testing.doc_commands import Block


def test_every_block_names_its_language():
    unnamed = [f"{b.document}:{b.line} ({b.language or 'no language'})" for path in doc_commands.DOCUMENTS
               for b in doc_commands.blocks(path)
               if b.language not in doc_commands.COMMAND_LANGUAGES + doc_commands.SHOWN_LANGUAGES]
    assert not unnamed, f"name each block's language, so that its commands are found: {unnamed}"


def test_the_sessions_commands_name_exist():
    named = {session for c in doc_commands.commands() if (session := doc_commands.nox_session(c))}
    assert {"demo", "ci"} <= named
    assert named <= doc_commands.nox_sessions(), named - doc_commands.nox_sessions()


def test_every_command_left_out_is_shown_and_has_a_reason():
    shown = {c.key for c in doc_commands.commands()}
    stale = [key for key in doc_commands.NOT_RUN if key not in shown]
    assert not stale, f"NOT_RUN names commands the documents no longer show: {stale}"
    assert all(len(reason.split()) >= 5 for reason in doc_commands.NOT_RUN.values())


def test_the_readme_quickstart_and_shell_commands_are_run():
    run = doc_commands.to_run()
    assert [c.first_line for c in run if c.document == "README.md"] == [
        "import torch", "from executorch.exir import to_edge_transform_and_lower"]
    assert {c.language for c in run} == {"sh", "python"}


def test_shell_lines_are_read_as_the_shell_reads_them():
    block = Block("x.md", 1, "sh", 'a --b \\\n    c   # a note\necho "#1" x#y  # x\n# a comment only\n\n')
    found = doc_commands.shell_commands(block)
    assert [(c.line, c.text, c.first_line) for c in found] == [(2, "a --b c", "a --b"), (4, 'echo "#1" x#y', 'echo "#1" x#y')]


def test_a_nox_command_names_its_session():
    def named(text):
        return doc_commands.nox_session(doc_commands.Command("x.md", 1, "sh", text, text))

    assert named("python3 -m pip install 'nox==1' && python3 -m nox -s demo") == "demo"
    assert named('python3 -m nox -s "tests(2026.4.1)" -- -k x') == "tests"
    assert named("python3 -m nox -s release_wheel-3.12") == "release_wheel"
    assert named("python -m executorch_openvino doctor") is None
