"""The entry points hide exactly the known messages of other libraries, nothing else (quiet.py)."""

from __future__ import annotations

import pytest
import logging
import warnings

from executorch_openvino.quiet import hide_known_noise

pytestmark = [pytest.mark.own_runtime]

TORCHAO_NOISE = ("Failed to load /venv/site-packages/torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so: "
                 "Could not load this library")


def test_known_messages_are_dropped_and_others_kept(caplog):
    hide_known_noise()
    hide_known_noise()  # idempotent: one filter per logger
    assert len(logging.getLogger("torchao").filters) == 1
    with caplog.at_level(logging.WARNING):
        logging.getLogger("torchao").warning(TORCHAO_NOISE)
        logging.getLogger("torchao").warning("Failed to load /venv/site-packages/torchao/_C_cutlass_90a.abi3.so: x")
        logging.getLogger("torch.utils._pytree").warning(
            "%s is an Enum subclass and is now natively supported by torch.compile as an opaque value type.", "E")
        logging.getLogger("torchao").warning("Failed to load the calibration data")  # not a kernel library
        logging.getLogger("torch.utils._pytree").warning("another pytree warning")
        logging.getLogger("executorch_openvino").warning("our own")
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to load the calibration data", "another pytree warning", "our own"]


def test_only_the_known_future_warning_is_ignored():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        hide_known_noise()
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use ...", FutureWarning, stacklevel=1)
        warnings.warn("something else is deprecated", FutureWarning, stacklevel=1)
        warnings.warn("OpenVINO's CPU plugin flushes subnormal and -0.0 constant values to 0.0", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == [
        "something else is deprecated", "OpenVINO's CPU plugin flushes subnormal and -0.0 constant values to 0.0"]
