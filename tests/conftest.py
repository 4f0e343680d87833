"""Shared helpers: lower with the OpenVINO partitioner, run with executorch.runtime, compare with eager.

The tests import the *installed* executorch_openvino (the nox ``tests``
session runs pytest outside the source tree against the repaired wheel).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import executorch_openvino as exov
from executorch_openvino.api import delegation_summary

# tests/tooling/ tests the orchestration from the source tree (`nox -s tooling`), not the installed wheel.
collect_ignore = ["tooling"]

# float32 tolerances that OpenVINO's bf16 default on this CPU fails (bf16 keeps
# 8 mantissa bits: ~4e-3 relative error).
FLOAT32_TOLERANCE = dict(rtol=1e-5, atol=1e-5)


def require_all() -> bool:
    """Under nox every optional input (wheel path, other OpenVINO) must be present."""
    return os.environ.get("EXOV_REQUIRE_ALL") == "1"


def nox_provided(variable: str, what: str) -> str:
    """An environment variable the nox tests session sets: fails under nox, skips elsewhere when absent."""
    value = os.environ.get(variable)
    if not value:
        if require_all():
            pytest.fail(f"{variable} is not set: the nox tests session provides {what}")
        pytest.skip(f"{variable} not set (run through `nox -s tests`)")
    return value


class Fn(torch.nn.Module):
    """Wraps a function of positional tensors as a module to export."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class OneInput(Fn):
    """Fn with one named input, for ``dynamic_shapes`` given per input."""

    def forward(self, x):
        return self.fn(x)


class ThreadsModel(torch.nn.Module):
    """The thread tests' model: one float32 (4, 32) input, one float32 (4, 16) output
    (tests/native/delegate_threads.cpp is written for these shapes)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(32, 16)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2 + x[:, :16]


def lower(module: torch.nn.Module, inputs: tuple, *, partitioner=None):
    """Returns (.pte bytes, DelegationSummary) for `module` lowered with the OpenVINO partitioner."""
    from executorch.exir import to_edge_transform_and_lower

    exported = torch.export.export(module.eval(), inputs)
    edge = to_edge_transform_and_lower(exported, partitioner=[partitioner or exov.OpenvinoPartitioner()])
    summary = delegation_summary(edge.exported_program())
    return edge.to_executorch().buffer, summary


def run(pte: bytes | Path, inputs: tuple) -> list:
    """Executes the .pte's forward method through executorch.runtime."""
    return list(exov.load_method(pte).execute(list(inputs)))


def eager(module: torch.nn.Module, inputs: tuple) -> list:
    with torch.no_grad():
        out = module.eval()(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    # Flattened as ExecuTorch returns them (nested tuples, torch.return_types...).
    return torch.utils._pytree.tree_leaves(out)


def assert_matches_eager(actual: list, expected: list, **tolerance) -> None:
    """Integers and bools exactly (dtype included); floats within `tolerance` (default float32's)."""
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype, f"output {i}: dtype {a.dtype} != eager {e.dtype}"
        assert a.shape == e.shape, f"output {i}: shape {tuple(a.shape)} != eager {tuple(e.shape)}"
        if e.dtype.is_floating_point:
            torch.testing.assert_close(a, e, **(tolerance or FLOAT32_TOLERANCE), msg=lambda m: f"output {i}: {m}")
        else:
            assert torch.equal(a, e), f"output {i}: {a} != eager {e}"


def check_fully_delegated(module: torch.nn.Module, inputs: tuple, **tolerance) -> None:
    """Lowers, asserts that every operator went to OpenVINO, runs and compares with eager."""
    pte, summary = lower(module, inputs)
    assert summary.partitions >= 1 and summary.delegated == summary.total, (
        f"only {summary.delegated}/{summary.total} operators were delegated")
    assert_matches_eager(run(pte, inputs), eager(module, inputs), **tolerance)


@pytest.fixture(scope="session")
def pip_openvino_c_library() -> Path:
    """The C library of the pip openvino package installed with the tests."""
    from executorch_openvino.runtime.library_discovery import pip_openvino_library_dir

    libs = pip_openvino_library_dir()
    assert libs is not None, "the tests need the pip openvino package"
    found = sorted(libs.glob("libopenvino_c.so*")) + sorted(libs.glob("openvino_c.dll"))
    assert found, f"no OpenVINO C library in {libs}"
    return found[-1]


# Settings of the OpenVINO library search that the machine running the tests may have.
SEARCH_VARIABLES = ("OPENVINO_LIB_PATH", "INTEL_OPENVINO_DIR", "CONDA_PREFIX")
# Where a Linux OpenVINO install tree keeps its libraries on this machine (native/delegate/library_search.cpp).
INSTALL_TREE_LIB = "runtime/lib/" + ("aarch64" if os.uname().machine == "aarch64" else "intel64")


def run_python_json(code: str, env_updates: dict, tmp_path) -> dict:
    """Runs `code` in a fresh interpreter; it prints one JSON line that is returned."""
    env = {k: v for k, v in os.environ.items() if k not in SEARCH_VARIABLES}
    env.update(env_updates)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the interpreter died ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def resealed(pte: bytes) -> bytes:
    """`pte` with each processed blob's checksum recomputed, after a test changed its bytes on purpose."""
    import struct

    from executorch_openvino import processed_blob

    out = bytearray(pte)
    at = out.find(processed_blob.MAGIC)
    while at >= 0:
        weights_offset, weights_size = struct.unpack_from("<QQ", out, at + 32)
        blob = out[at : at + weights_offset + weights_size]
        processed_blob.seal(blob)
        out[at : at + len(blob)] = blob
        at = out.find(processed_blob.MAGIC, at + 1)
    return bytes(out)


def tiny_llama(seed: int = 0, vocab_size: int = 128):
    """A random-weight LlamaForCausalLM (2 layers, 128-token vocabulary, bos 1, eos 2) from a fixed seed: the
    language model of the CI tests (test_llm*.py); SmolLM2 runs by hand (nox -s llm_bench)."""
    import transformers

    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                      bos_token_id=1, eos_token_id=2)
    return transformers.LlamaForCausalLM(config).eval()


def eager_greedy(model, prompt: list, new_tokens: int) -> tuple[list, list]:
    """Greedy tokens and each step's last logits, recomputing from all tokens (no cache)."""
    tokens, logits = list(prompt), []
    with torch.no_grad():
        for _ in range(new_tokens):
            last = model(input_ids=torch.tensor([tokens])).logits[0, -1]
            logits.append(last)
            tokens.append(int(last.argmax()))
    return tokens[len(prompt):], logits


def tiny_tokenizer():
    """A byte-level BPE tokenizer trained here on a fixed ASCII text (every token decodes to whole characters),
    of the kind ExecuTorch's LLM runner reads (tokenizer.json), with <unk> 0, <s> 1 and </s> 2."""
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=128, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    backend.train_from_iterator(["the quick brown fox jumps over the lazy dog " * 20, "hello world " * 10], trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                                unk_token="<unk>")
