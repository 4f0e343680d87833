"""The language model commands (``export-llm``, ``generate``) and ``exov.lower``'s ExportedProgram and strict
export, on the tiny Llama of the CI tests (our code around OpenVINO: the newest release runs them)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch

import executorch_openvino as exov
from exov_testing.llm_models import eager_greedy, tiny_llama, tiny_tokenizer

pytestmark = [pytest.mark.own_runtime]

transformers = pytest.importorskip("transformers")
LOGITS_TOLERANCE = dict(rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def model():
    return tiny_llama(vocab_size=len(tiny_tokenizer()))


def test_lower_takes_exported_programs_and_names_strict_export(model):
    from executorch_openvino.llm.export import _LastLogits

    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

    model.generation_config.cache_implementation = "static"
    decoder = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=16).model
    model.generation_config.cache_implementation = None
    inputs = {"input_ids": torch.tensor([[4, 5]]), "cache_position": torch.arange(2)}
    exported = torch.export.export(_LastLogits(decoder), (), inputs, strict=True)
    program = exov.lower(exported)
    expected = _LastLogits(decoder)(**inputs)
    torch.testing.assert_close(exov.load_method(program.buffer).execute(list(inputs.values()))[0], expected,
                               **LOGITS_TOLERANCE)
    with pytest.raises(TypeError, match="has its inputs"):
        exov.lower(exported, (torch.zeros(1),))
    try:  # torch 2.13 fails on the non-strict export of this module; if a later torch does not, nothing to name
        exov.lower(_LastLogits(decoder), tuple(inputs.values()))
    except RuntimeError as error:
        assert "strict=True" in str(error)




@pytest.fixture(scope="module")
def saved(model, tmp_path_factory):
    """The tiny model and its tokenizer as a Hugging Face folder, exported by the command line."""
    folder = tmp_path_factory.mktemp("llm")
    tokenizer = tiny_tokenizer()
    model.save_pretrained(folder / "hf")
    tokenizer.save_pretrained(folder / "hf")
    done = subprocess.run([sys.executable, "-m", "executorch_openvino", "export-llm", "--model", str(folder / "hf"),
                           "--out", str(folder / "tiny.pte"), "--max-context-len", "96"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "tiny.pte", tokenizer


def expected_text(model, tokenizer, prompt: str, new_tokens: int) -> str:
    tokens = eager_greedy(model, tokenizer(prompt)["input_ids"], new_tokens)[0]
    return tokenizer.decode(tokens[:tokens.index(2) + 1] if 2 in tokens else tokens, skip_special_tokens=True)


def test_command_line_exports_and_generates(model, saved, tmp_path):
    pte, tokenizer = saved
    run = [sys.executable, "-m", "executorch_openvino"]
    done = subprocess.run([*run, "generate", str(pte), "--prompt", "the quick fox", "--max-new-tokens", "8"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert expected_text(model, tokenizer, "the quick fox", 8) in done.stdout
    assert "tokens/s" in done.stdout
    done = subprocess.run([*run, "generate", str(tmp_path / "missing.pte"), "--prompt", "w5"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "missing.pte" in done.stderr
    done = subprocess.run([*run, "export-llm", "--model", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.pte")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "nothing" in done.stderr and "Traceback" not in done.stderr


def _tiny_gguf(path, architecture: str) -> None:
    """A GGUF file with `architecture`'s name and one small tensor."""
    import numpy as np
    from exov_testing.gguf_files import write_gguf

    write_gguf(path, {"token_embd.weight": np.arange(4096, dtype=np.float32).reshape(64, 64)}, architecture)


def test_export_llm_names_a_bad_gguf_file_and_writes_nothing(tmp_path):
    pytest.importorskip("gguf")
    run = [sys.executable, "-m", "executorch_openvino", "export-llm", "--out", str(tmp_path / "x.pte"), "--model"]
    truncated, embedding = tmp_path / "truncated.gguf", tmp_path / "embedding.gguf"
    _tiny_gguf(truncated, "llama")
    truncated.write_bytes(truncated.read_bytes()[:-2000])
    _tiny_gguf(embedding, "bert")
    for path, expected in ((truncated, r"could not be read as a GGUF file .* truncated or damaged"),
                           (embedding, r"holds a 'bert' model, which transformers does not read from GGUF files")):
        done = subprocess.run([*run, str(path)], capture_output=True, text=True)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert re.search(expected, done.stderr) and path.name in done.stderr, done.stderr
        assert not (tmp_path / "x.pte").exists() and not (tmp_path / "x.tokenizer").exists()
    # A folder that does not exist is named before the export, not after minutes of it.
    out = tmp_path / "missing" / "x.pte"
    done = subprocess.run([*run[:4], "--out", str(out), "--model", str(truncated)], capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"no folder {str(out.parent)!r} to write it in" in done.stderr, done.stderr


RUNNER = """
import sys
import executorch_openvino  # registers the delegate with the runtime the runner links
from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

pieces = []
runner = TextLLMRunner(sys.argv[1], sys.argv[2])
runner.generate("the quick fox", GenerationConfig(max_new_tokens=8, temperature=0.0, echo=False),
                token_callback=pieces.append)
print("TEXT:" + "".join(pieces))
"""


def test_executorch_llm_runner_runs_the_program(model, saved):
    pytest.importorskip("executorch.extension.llm.runner")
    pte, tokenizer = saved
    tokenizer_json = pte.with_name("tiny.tokenizer") / "tokenizer.json"
    done = subprocess.run([sys.executable, "-c", RUNNER, str(pte), str(tokenizer_json)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "TEXT:" + expected_text(model, tokenizer, "the quick fox", 8) in done.stdout


def test_input_ranges_name_integer_inputs():
    from executorch.exir import to_edge_transform_and_lower

    class Add(torch.nn.Module):
        def forward(self, x, position):
            return x + position

    exported = torch.export.export(Add(), (torch.zeros(3), torch.tensor([1, 2, 3])))
    with pytest.raises(ValueError, match="input_ranges names 'x', which is not an int32/int64 input"):
        to_edge_transform_and_lower(exported, partitioner=[exov.OpenvinoPartitioner(input_ranges={"x": (0, 4)})])
    with pytest.raises(ValueError, match="give \\[low, high\\]"):
        exov.OpenvinoPartitioner(input_ranges={"position": (4, 0)})
    program = to_edge_transform_and_lower(
        exported, partitioner=[exov.OpenvinoPartitioner(input_ranges={"position": (0, 9)})]).to_executorch()
    method = exov.load_method(program.buffer)
    torch.testing.assert_close(method.execute([torch.ones(3), torch.tensor([0, 9, 5])])[0],
                               torch.tensor([1.0, 10.0, 6.0]))
    with pytest.raises(RuntimeError, match="input 'position' was given a value outside 0..9"):
        method.execute([torch.ones(3), torch.tensor([0, 10, 5])])


def test_generate_finds_the_tokenizer_and_checks_its_arguments(model, saved):
    pte, tokenizer = saved
    method = exov.load_method(pte)  # from a path: the tokenizer beside it is found
    first = exov.generate(method, "the quick fox", 4)
    assert first.text == expected_text(model, tokenizer, "the quick fox", 4)
    # Continuing: the last token first, from next_position, as one longer generation would.
    more = exov.generate(method, [first.tokens[-1]], 4, start_position=first.next_position)
    whole = exov.generate(method, "the quick fox", 7)
    assert first.tokens + more.tokens[:3] == whole.tokens[:7] or first.stopped_at_eos
    for bad, match in (({"max_new_tokens": 0}, "max_new_tokens is 0"), ({"start_position": -1}, "start_position")):
        with pytest.raises(ValueError, match=match):
            exov.generate(method, "the quick fox", **{"max_new_tokens": 4, **bad})
    # The last new token needs no position: 94 prompt tokens and 3 new ones fit 96 positions.
    assert len(exov.generate(method, [5] * 94, 3).tokens) <= 3
    with pytest.raises(ValueError, match=r"need positions 0\.\.96 \(the last new token is not fed back\); the "
                                         r"program's KV cache holds 96"):
        exov.generate(method, [5] * 94, 4)
    assert exov.export_llm(model, max_context_len=2).max_context_len == 2
