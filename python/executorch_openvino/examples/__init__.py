"""Runnable examples: ``python -m executorch_openvino.examples.minilm``."""
