"""The models `nox -s bench` measures, each with deterministic example inputs.

Imported in the main benchmark environment and in the one holding
executorch's bundled OpenVINO delegate (``bundled_worker.py``): both build the
same weights and inputs from the same seed with the same torch (2.13.0).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

MINILM_SEQ_LEN = 128


@dataclass
class Case:
    """One benchmarked model: ``module(*inputs)`` in eval mode, float32 weights."""

    name: str
    module: torch.nn.Module
    inputs: tuple
    description: str


class TinyAdd(torch.nn.Module):
    """x + y on 16 float32 values: the work is negligible, so its latency is per-call overhead."""

    def forward(self, x, y):
        return x + y


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(784, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 10),
    )


def _cnn() -> torch.nn.Module:
    def block(cin, cout):
        return [torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]

    layers = [*block(3, 32), torch.nn.MaxPool2d(2), *block(32, 64), torch.nn.MaxPool2d(2), *block(64, 128),
              torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(128, 10)]
    model = torch.nn.Sequential(*layers)
    # Batch-norm statistics other than the initial 0/1, so the folding is exercised.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model


def _minilm(batch: int) -> Case:
    # The package's own example model: the wheel is installed in both environments.
    from executorch_openvino.examples.minilm import load_model_and_inputs

    module, (ids, mask) = load_model_and_inputs(MINILM_SEQ_LEN)  # 4 sentences
    repeats = -(-batch // ids.shape[0])
    inputs = tuple(t.repeat(repeats, 1)[:batch].contiguous() for t in (ids, mask))
    return Case(f"minilm_b{batch}", module, inputs,
                f"all-MiniLM-L6-v2 sentence embeddings, batch {batch}, {MINILM_SEQ_LEN} tokens (int64 ids and mask)")


CASE_NAMES = ["tiny_add", "mlp", "cnn", "minilm_b1", "minilm_b8"]


def make_case(name: str) -> Case:
    """Builds the named case (one of CASE_NAMES); raises ``KeyError`` for another name."""
    torch.manual_seed(0)
    if name == "tiny_add":
        return Case(name, TinyAdd().eval(), (torch.randn(16), torch.randn(16)), "x + y, two float32 (16,) tensors")
    if name == "mlp":
        return Case(name, _mlp().eval(), (torch.randn(32, 784),), "Linear 784-1024-1024-10 with ReLU, batch 32")
    if name == "cnn":
        return Case(name, _cnn().eval(), (torch.randn(4, 3, 64, 64),),
                    "3 x (conv3x3, batch norm, ReLU), 2 max pools, global average pool, linear; (4, 3, 64, 64)")
    if name.startswith("minilm_b"):
        return _minilm(int(name.removeprefix("minilm_b")))
    raise KeyError(f"unknown benchmark case {name!r}; known: {', '.join(CASE_NAMES)}")
