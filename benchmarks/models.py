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
    dynamic_shapes: tuple | None = None  # torch.export's, for the engines that export the module

    def export(self, inputs: tuple | None = None) -> torch.export.ExportedProgram:
        """``torch.export.export`` of the module with these (or `inputs`) and the case's dynamic shapes."""
        return torch.export.export(self.module, self.inputs if inputs is None else inputs,
                                   dynamic_shapes=self.dynamic_shapes)


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


class VitBlock(torch.nn.Module):
    """A small vision transformer: 16x16 patches of a 224x224 image, 2 pre-norm encoder layers
    (torch's own, whose attention calls scaled_dot_product_attention), mean pool, a linear head."""

    def __init__(self, width: int = 192, heads: int = 3, layers: int = 2):
        super().__init__()
        self.patches = torch.nn.Conv2d(3, width, 16, stride=16)
        self.position = torch.nn.Parameter(torch.randn(1, 196, width) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, 10)

    def forward(self, image):
        tokens = self.patches(image).flatten(2).transpose(1, 2) + self.position
        return self.head(self.norm(self.encoder(tokens)).mean(dim=1))


def _encoder() -> torch.nn.Module:
    # batch_first=True with a batch above 1: MultiheadAttention projects a transposed input, which ExecuTorch's
    # decomposition writes as a bmm with the weight broadcast over the batch (a tester's model, issue 36).
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


class UNet(torch.nn.Module):
    """A small U-Net as diffusion models build them: (conv, group norm, SiLU) blocks, two max-pool
    downsamplings, nearest-neighbour upsampling, skip connections joined by concatenation."""

    def __init__(self, base: int = 32):
        super().__init__()

        def block(cin, cout):
            return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, padding=1), torch.nn.GroupNorm(8, cout),
                                       torch.nn.SiLU(), torch.nn.Conv2d(cout, cout, 3, padding=1),
                                       torch.nn.GroupNorm(8, cout), torch.nn.SiLU())

        self.down1, self.down2, self.middle = block(3, base), block(base, 2 * base), block(2 * base, 4 * base)
        self.up2, self.up1 = block(6 * base, 2 * base), block(3 * base, base)
        self.out = torch.nn.Conv2d(base, 3, 1)

    def forward(self, x):
        pool, up = torch.nn.functional.max_pool2d, torch.nn.functional.interpolate
        d1 = self.down1(x)
        d2 = self.down2(pool(d1, 2))
        m = self.middle(pool(d2, 2))
        u2 = self.up2(torch.cat([up(m, scale_factor=2.0, mode="nearest"), d2], dim=1))
        return self.out(self.up1(torch.cat([up(u2, scale_factor=2.0, mode="nearest"), d1], dim=1)))


class Recurrent(torch.nn.Module):
    """A 2-layer LSTM over a sequence, then a linear layer on its last step."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(64, 256, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.lstm(x)[0][:, -1])


def _minilm(name: str, batch: int, seq_len: int) -> Case:
    # The package's own example model: the wheel is installed in both environments.
    from executorch_openvino.examples.minilm import load_model_and_inputs

    module, (ids, mask) = load_model_and_inputs(seq_len)  # 4 sentences
    repeats = -(-batch // ids.shape[0])
    inputs = tuple(t.repeat(repeats, 1)[:batch].contiguous() for t in (ids, mask))
    return Case(name, module, inputs, f"all-MiniLM-L6-v2 sentence embeddings (transformers' default SDPA "
                                      f"attention), batch {batch}, {seq_len} tokens (int64 ids and mask)")


# Issue 50: one encoder exported with a dynamic number of tokens (2..128), called with few and with many
# (name -> tokens): OpenVINO's own conversion of the same export has the same dynamic dimension.
DYNAMIC_ENCODER_CASES = {"encoder_dynamic_s7": 7, "encoder_dynamic_s128": 128}


def _dynamic_encoder(name: str, tokens: int) -> Case:
    tokens_dim = torch.export.Dim("tokens", min=2, max=128)
    return Case(name, _encoder().eval(), (torch.randn(1, tokens, 256),),
                f"the encoder above exported with a dynamic token count (2..128), called with 1 x {tokens} tokens",
                dynamic_shapes=({1: tokens_dim},))


# name -> (batch, tokens)
MINILM_CASES = {"minilm_b1": (1, MINILM_SEQ_LEN), "minilm_b8": (8, MINILM_SEQ_LEN),
                "minilm_s32_b1": (1, 32), "minilm_s32_b8": (8, 32)}
CASE_NAMES = ["tiny_add", "mlp", "cnn", "vit", "encoder", *DYNAMIC_ENCODER_CASES, "unet", "lstm", *MINILM_CASES]


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
    if name == "vit":
        return Case(name, VitBlock().eval(), (torch.randn(1, 3, 224, 224),),
                    "vision transformer: 16x16 patches of (1, 3, 224, 224), 2 encoder layers of width 192, 3 heads")
    if name == "encoder":
        return Case(name, _encoder().eval(), (torch.randn(4, 64, 256),),
                    "2 post-norm transformer encoder layers (torch's, batch_first=True), width 256, 4 heads, "
                    "feed-forward 1024, ReLU; batch 4 of 64 tokens")
    if name == "unet":
        return Case(name, UNet().eval(), (torch.randn(1, 3, 128, 128),),
                    "U-Net: conv/group norm/SiLU blocks of 32-128 channels, 2 downsamplings, nearest upsampling, "
                    "(1, 3, 128, 128)")
    if name == "lstm":
        return Case(name, Recurrent().eval(), (torch.randn(8, 64, 64),),
                    "2-layer LSTM, 256 hidden, over 64 steps of 64 features, batch 8; linear on the last step")
    if name in DYNAMIC_ENCODER_CASES:
        return _dynamic_encoder(name, DYNAMIC_ENCODER_CASES[name])
    if name in MINILM_CASES:
        return _minilm(name, *MINILM_CASES[name])
    raise KeyError(f"unknown benchmark case {name!r}; known: {', '.join(CASE_NAMES)}")
