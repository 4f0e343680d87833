"""At run time: what loading and calling a lowered program needs, without the lowering.

Nothing here imports :mod:`executorch_openvino.lowering` or OpenVINO's Python package:
:mod:`.library_discovery` finds the pip ``openvino`` package's libraries without importing it, and
:mod:`.runner` (the ``executorch-openvino-run`` command) needs neither torch nor executorch's Python
side; :mod:`.loaded_method` (``exov.load_method``) runs a ``.pte`` in ExecuTorch's runtime without importing
``executorch.runtime`` (:mod:`.method_metadata` holds its methods' signatures) and :mod:`.method_inputs`
checks the tensors given to it (both import torch).
"""
