"""Loading a Hugging Face decoder-only model and its tokenizer, from a folder or a GGUF file, in float32."""

from __future__ import annotations

from pathlib import Path


def load_model(source):
    """``(model, tokenizer)`` of `source`: a folder of a Hugging Face model (``config.json`` and weights), a
    ``.gguf`` file (read by transformers with the ``gguf`` package: quantized weights come back
    dequantized, float32), or a model name transformers finds in its local cache (nothing is downloaded
    unless transformers is allowed to). The model is in eval mode with float32 weights.

    Raises ``FileNotFoundError`` for a path that does not exist (an absolute or relative path, not a name),
    ``OSError`` (transformers') for a name it cannot find, and ``ImportError`` naming the pip command
    when reading a GGUF file needs a package that is missing (``gguf``, ``accelerate``).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(source)
    kwargs = {"dtype": torch.float32}
    if path.suffix == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {str(path)!r}")
        _require("gguf", "reading a GGUF file")
        _require("accelerate", "reading a GGUF file (transformers loads GGUF weights through it)")
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


def _require(package: str, why: str) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is None:
        raise ImportError(f"{why} needs the {package!r} package: pip install {package}")
