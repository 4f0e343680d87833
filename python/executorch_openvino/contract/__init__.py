"""What the lowering and the runtime share: the compile specs (``compile_specs.py``, defined by
``compile_specs.json``), the processed blob (``processed_blob.py``, laid out by ``processed_blob_layout.json``;
the delegate's C++ gets both JSON files' facts generated at build time), the backend config
(``backend_config.py``) and the recorded input structure (``input_spec.py``)."""
