"""Modules for the OpenVINOBackend tests, importable by the child processes those tests start."""

from __future__ import annotations

import dataclasses

import torch


@dataclasses.dataclass
class Heads:
    scores: torch.Tensor
    labels: torch.Tensor


# A serialised type name lets a checkpoint name this output type in another process.
torch.export.register_dataclass(Heads, serialized_type_name="lifecycle_models.Heads")


class Classifier(torch.nn.Module):
    """Nested inputs and outputs: a dict holding a dataclass, a tuple, an int64 result and a keyword argument."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.encoder = torch.nn.Linear(16, 8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x, pair, steps: int = 2, *, scale):
        hidden = torch.tanh(self.encoder(x)) * steps
        scores = torch.softmax(self.head(hidden), dim=-1)
        return {"heads": Heads(scores, scores.argmax(dim=-1)),
                "extra": (pair[0] * pair[1] + scale, hidden.sum(dim=-1))}


def classifier_inputs(batch: int = 3, seed: int = 0):
    """Positional and keyword arguments of :class:`Classifier` (float32)."""
    g = torch.Generator().manual_seed(seed)
    return ((torch.randn(batch, 16, generator=g), (torch.randn(5, generator=g), torch.randn(5, generator=g)), 2),
            {"scale": torch.randn(5, generator=g)})


class Counter(torch.nn.Module):
    """Stateful twice over: a Python attribute and a buffer that each call changes."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.register_buffer("total", torch.zeros(4))

    def forward(self, x):
        self.calls += 1
        self.total.add_(x)
        return self.total * 2
