"""Greedy text generation with an exported language model (:func:`generate`)."""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path

import torch


@dataclasses.dataclass
class GenerationResult:
    """What :func:`generate` produced: the new tokens (ids and text) and the time each phase took, in seconds
    (wall clock, ``time.perf_counter``). Prefill is the call on the prompt, which also gives the first token."""

    text: str
    tokens: list
    prompt_tokens: int
    prefill_seconds: float
    decode_seconds: float
    stopped_at_eos: bool
    start_position: int = 0

    @property
    def time_to_first_token(self) -> float:
        return self.prefill_seconds

    @property
    def decode_tokens_per_second(self) -> float:
        """Tokens after the first, per second of the calls that made them (0.0 when there were none)."""
        steps = len(self.tokens) - 1
        return steps / self.decode_seconds if steps > 0 and self.decode_seconds > 0 else 0.0

    @property
    def next_position(self) -> int:
        """Where a continuation starts: the last new token has not been fed to the cache yet, so continue with
        ``generate(method, [result.tokens[-1], *more_ids], start_position=result.next_position)``."""
        return self.start_position + self.prompt_tokens + len(self.tokens) - 1

    @property
    def prefill_tokens_per_second(self) -> float:
        return self.prompt_tokens / self.prefill_seconds if self.prefill_seconds > 0 else 0.0


def generate(program, prompt, max_new_tokens: int = 64, *, tokenizer=None, chat: bool = False,
             start_position: int = 0) -> GenerationResult:
    """Generates up to `max_new_tokens` tokens greedily (the most likely token each step), stopping at an
    end-of-sequence token of the program (``get_eos_ids``).

    `program`: a ``.pte`` path (written by ``export_llm(...).save``), its bytes, or an
    :class:`~executorch_openvino.OpenVINOMethod` of its ``forward``. `prompt`: text, or token ids
    (a list of ints or a 1-d int64 tensor). `tokenizer`: a transformers tokenizer or a folder holding one;
    by default the folder saved beside the ``.pte`` (``model.tokenizer/``, also for a method
    ``load_method`` loaded from a path). `chat`: wrap the text in the tokenizer's chat template as one user
    message. `start_position`: where in the KV cache the prompt starts; 0 begins a new sequence (entries
    after the prompt's are never read), :attr:`GenerationResult.next_position` continues the previous one
    in this method (feed the previous result's last token first: it has not been fed yet).

    The prompt is fed in one call when it fits ``get_max_seq_len``, else in pieces. Raises ``ValueError``
    when prompt and new tokens exceed the KV cache (``get_max_context_len``; the last new token needs no
    position), the prompt is empty, `max_new_tokens` is below 1 or `start_position` negative, and
    ``FileNotFoundError`` when no tokenizer is found for text.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens is {max_new_tokens}; give 1 or more")
    if start_position < 0:
        raise ValueError(f"start_position is {start_position}; positions start at 0")
    from ..runtime.loaded_method import OpenVINOMethod, load_method

    method = program if isinstance(program, OpenVINOMethod) else load_method(program)
    metadata = _metadata(method)
    tokenizer = _tokenizer(tokenizer, program)
    ids = _prompt_ids(prompt, tokenizer, chat)
    if not ids:
        raise ValueError("the prompt has no tokens")
    context = metadata.get("get_max_context_len", metadata.get("get_max_seq_len"))
    needed = start_position + len(ids) + max_new_tokens - 1  # the last new token is never fed
    if needed > context:
        raise ValueError(f"the prompt's {len(ids)} token(s) from position {start_position} and {max_new_tokens} new "
                         f"token(s) need positions {start_position}..{needed - 1} (the last new token is not fed "
                         f"back); the program's KV cache holds {context}: shorten them or export with a larger "
                         "max_context_len (--max-context-len)")
    eos = set(metadata.get("get_eos_ids", []))
    piece = metadata.get("get_max_seq_len", len(ids))
    position = start_position
    with torch.no_grad():
        started = time.perf_counter()
        for begin in range(0, len(ids), piece):
            chunk = ids[begin:begin + piece]
            logits = method.execute([torch.tensor([chunk], dtype=torch.long),
                                     torch.arange(position, position + len(chunk), dtype=torch.long)])[0]
            position += len(chunk)
        token = int(logits[0, -1].argmax())
        prefill = time.perf_counter() - started
        tokens, stopped = [token], token in eos
        started = time.perf_counter()
        while not stopped and len(tokens) < max_new_tokens:
            logits = method.execute([torch.tensor([[token]], dtype=torch.long),
                                     torch.tensor([position], dtype=torch.long)])[0]
            position += 1
            token = int(logits[0, -1].argmax())
            tokens.append(token)
            stopped = token in eos
        decode = time.perf_counter() - started
    text = tokenizer.decode(tokens, skip_special_tokens=True) if tokenizer is not None else ""
    return GenerationResult(text=text, tokens=tokens, prompt_tokens=len(ids), prefill_seconds=prefill,
                            decode_seconds=decode, stopped_at_eos=stopped, start_position=start_position)


def _metadata(method) -> dict:
    """The LLM metadata methods of the method's program (the ``get_*`` and ``use_*`` constants)."""
    program = method._program  # (same package) the executorch.runtime Program the method came from
    found = {}
    names = ("get_max_seq_len", "get_max_context_len", "get_eos_ids", "get_bos_id", "get_vocab_size")
    for name in names:
        try:
            values = program.load_method(name).execute([])
        except Exception:  # noqa: BLE001 - a program without the method: not an exported LLM
            continue
        values = [v.item() if isinstance(v, torch.Tensor) else v for v in values]
        found[name] = values if name == "get_eos_ids" else values[0]
    if "get_max_seq_len" not in found:
        raise ValueError("this program has no get_max_seq_len method: it was not exported as a language model "
                         "(executorch_openvino.export_llm writes the metadata methods generate reads)")
    return found


def _tokenizer(tokenizer, program):
    if tokenizer is not None and not isinstance(tokenizer, (str, Path)):
        return tokenizer
    from .export import tokenizer_folder

    source = program if isinstance(program, (str, Path)) else getattr(program, "source", None)
    folder = Path(tokenizer) if tokenizer is not None else (tokenizer_folder(source) if source else None)
    if folder is None or not folder.exists():
        return None
    if folder.is_dir() and not any((folder / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json")):
        return None  # a folder save() wrote without a tokenizer (metadata only)
    files = list(folder.iterdir()) if folder.is_dir() else [folder]
    return _load_tokenizer(str(folder), max(f.stat().st_mtime_ns for f in files))


@functools.lru_cache(maxsize=8)
def _load_tokenizer(path: str, changed: int):
    """A tokenizer read once per folder or .gguf file and version of it (`changed`: the newest file's
    mtime): generate is called once per prompt."""
    from transformers import AutoTokenizer

    folder = Path(path)
    if folder.suffix == ".gguf":
        return AutoTokenizer.from_pretrained(str(folder.parent), gguf_file=folder.name)
    return AutoTokenizer.from_pretrained(str(folder))


def _prompt_ids(prompt, tokenizer, chat: bool) -> list:
    if isinstance(prompt, torch.Tensor):
        return [int(t) for t in prompt.reshape(-1).tolist()]
    if isinstance(prompt, (list, tuple)):
        return [int(t) for t in prompt]
    if tokenizer is None:
        raise FileNotFoundError("a text prompt needs a tokenizer and none was found beside the .pte: give one "
                                "(generate --tokenizer DIR|GGUF, or tokenizer= a folder, a .gguf file or a "
                                "transformers tokenizer), or keep the <name>.tokenizer folder export-llm wrote "
                                "beside the .pte; token ids need none")
    if chat:
        return list(tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                                  tokenize=True, return_dict=False))
    return list(tokenizer(prompt)["input_ids"])

