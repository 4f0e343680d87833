"""Loading a Hugging Face decoder-only model and its tokenizer, from a folder or a GGUF file, in float32."""

from __future__ import annotations

from pathlib import Path


def load_model(source):
    """``(model, tokenizer)`` of `source`: a folder of a Hugging Face model (``config.json`` and weights), a
    ``.gguf`` file (read by transformers with the ``gguf`` package: quantized weights come back
    dequantized, float32), or a model name transformers finds in its local cache (nothing is downloaded
    unless transformers is allowed to). The model is in eval mode with float32 weights.

    Raises ``FileNotFoundError`` for a path that does not exist (an absolute or relative path, not a name),
    ``OSError`` (transformers') for a name it cannot find, ``ImportError`` naming the pip command
    when reading a GGUF file needs a package that is missing (``gguf``, ``accelerate``), and ``ValueError``
    naming the file for a GGUF file that is truncated or damaged, or whose architecture transformers does
    not read (an embedding model, say).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(source)
    kwargs = {"dtype": torch.float32}
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {str(path)!r}")
        _require("gguf", "reading a GGUF file")
        _require("accelerate", "reading a GGUF file (transformers loads GGUF weights through it)")
        _check_gguf(path)
        folder, kwargs["gguf_file"] = str(path.parent), path.name
    elif not path.exists() and (path.is_absolute() or str(source).startswith((".", "~"))):
        raise FileNotFoundError(f"no model folder or .gguf file at {str(path)!r}")
    elif path.is_file():
        raise ValueError(f"{str(path)!r} is a file but not a .gguf one: give a Hugging Face model folder or a .gguf "
                         "file (a .pte is already exported: run it with generate)")
    elif path.exists():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{str(path)!r} has no config.json: give a Hugging Face model folder or a "
                                    f".gguf file")
        folder = str(path)
    else:
        folder = str(source)
    model = AutoModelForCausalLM.from_pretrained(folder, **kwargs).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder, **({"gguf_file": kwargs["gguf_file"]}
                                                         if "gguf_file" in kwargs else {}))
    return model, tokenizer


def _check_gguf(path: Path) -> None:
    """Reads the GGUF file's header and tensor table (the ``gguf`` package, as transformers does) and its
    architecture, so that a damaged file or an unsupported model is named before transformers reads it."""
    from gguf import GGUFReader
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    try:
        reader = GGUFReader(str(path))
        field = reader.fields.get("general.architecture")
        architecture = bytes(field.parts[field.data[0]]).decode() if field is not None else None
    except Exception as exc:  # noqa: BLE001 - numpy and the reader raise several types for a damaged file
        raise ValueError(f"{str(path)!r} could not be read as a GGUF file ({exc}): it is truncated or damaged "
                         f"({path.stat().st_size} bytes); download or copy it again") from exc
    if architecture is None:
        raise ValueError(f"{str(path)!r} names no model architecture (general.architecture): it is not a language "
                         "model's GGUF file")
    readable = sorted(set(GGUF_SUPPORTED_ARCHITECTURES) - {"general", "tokenizer"})  # (sections, not models)
    if architecture not in readable:
        raise ValueError(f"{str(path)!r} holds a {architecture!r} model, which transformers does not read from "
                         f"GGUF files (it reads {', '.join(readable)}); export the model from its Hugging Face "
                         "folder instead")


def _require(package: str, why: str) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is None:
        raise ImportError(f"{why} needs the {package!r} package: pip install {package}")
