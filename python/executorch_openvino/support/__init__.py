"""Helpers of the package's own calls, not API: other libraries' known messages (``quiet.py``), stage lines
(``progress.py``), the executorch version check (``version_check.py``), NNCF's discovery (``nncf_library.py``),
OpenVINO's per-layer precisions of a lowered program (``compiled_layers.py``) and the ``doctor`` command
(``doctor.py``)."""
