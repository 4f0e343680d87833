"""Ahead of time: a program's way from ``torch.export`` to the processed blob of each partition.

In pipeline order:

- :mod:`.partitioner`: ExecuTorch's ``Partitioner``. It runs the graph passes of stage 1
  (:mod:`.passes`), names the operations kept out of the edge decomposition
  (:mod:`.kept_operations`) and tags what :mod:`.operator_support` accepts, which relies on
  :mod:`.integer_ranges` for integer results OpenVINO computes in float32.
- :mod:`.preprocess`: ExecuTorch's ``BackendDetails`` (backend id ``ExecutorchOpenvinoBackend``):
  each tagged partition through :mod:`.conversion` (OpenVINO's PyTorch frontend, after the passes
  of stage 3) into a processed blob (:mod:`executorch_openvino.contract.processed_blob`).
- :mod:`.ops`: the operation names and tables they share (a leaf).

Everything here imports torch and executorch; OpenVINO's Python package only where a partition is
converted. The runtime side (:mod:`executorch_openvino.runtime`) imports nothing from here.
"""
