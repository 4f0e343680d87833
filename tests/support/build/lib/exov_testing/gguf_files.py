"""GGUF files written for tests with the ``gguf`` package."""

from __future__ import annotations


def write_gguf(path, tensors: dict, architecture: str = "llama") -> None:
    """A GGUF file at `path` naming `architecture` (and one block), holding `tensors`: name -> a float32
    array, or ``(quantized bytes, GGMLQuantizationType)`` as ``gguf.quants.quantize`` returns them."""
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), architecture)
    writer.add_block_count(1)
    for name, tensor in tensors.items():
        if isinstance(tensor, tuple):
            writer.add_tensor(name, tensor[0], raw_dtype=tensor[1])
        else:
            writer.add_tensor(name, tensor)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
