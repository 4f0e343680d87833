"""A .pte lowered with this OpenVINO runs with the other tested release, through OPENVINO_LIB_PATH.

The nox tests session unpacks the other release (EXOV_OTHER_OPENVINO_DIR);
the session for 2025.4.1 checks 2025 -> 2026 and the one for 2026.4.1 checks
2026 -> 2025. The run happens in a fresh interpreter that never imports the
openvino Python package, as a deployment would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from exov_testing.environment import nox_provided
from exov_testing.programs import lower

pytestmark = [pytest.mark.older_openvino]


@pytest.fixture(scope="module")
def other_openvino_c_library() -> Path:
    folder = nox_provided("EXOV_OTHER_OPENVINO_DIR", "the other OpenVINO release")
    found = sorted((Path(folder) / "openvino" / "libs").glob("libopenvino_c.so*"))
    assert found, f"no OpenVINO C library under {folder}"
    return found[-1]


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.linear = torch.nn.Linear(32, 32)
        self.embed = torch.nn.Embedding(20, 32)

    def forward(self, ids, x):
        h = self.norm(self.embed(ids) + x)
        return torch.nn.functional.gelu(self.linear(h)), ids * 2


def test_pte_runs_with_the_other_openvino_release(tmp_path, other_openvino_c_library):
    import executorch_openvino as exov

    torch.manual_seed(0)
    model = Block().eval()
    inputs = (torch.tensor([[1, 5, 19], [0, 2, 3]]), torch.randn(2, 3, 32))
    pte, _ = lower(model, inputs)
    (tmp_path / "block.pte").write_bytes(pte)
    with torch.no_grad():
        expected = model(*inputs)
    torch.save({"inputs": inputs, "expected": expected}, tmp_path / "io.pt")
    made_with = exov.library_info()["version"]

    code = """
        import json, sys, torch, executorch_openvino as exov
        io = torch.load("io.pt")
        out = exov.load_method("block.pte").execute(list(io["inputs"]))
        info = exov.library_info()
        print(json.dumps({
            "version": info["version"], "path": info["path"],
            "max_error": (out[0] - io["expected"][0]).abs().max().item(),
            "ints_equal": bool(torch.equal(out[1], io["expected"][1]) and out[1].dtype == torch.int64),
            "openvino_python_imported": "openvino" in sys.modules,
        }))
    """
    env = dict(os.environ, OPENVINO_LIB_PATH=str(other_openvino_c_library))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["path"] == str(other_openvino_c_library)
    assert result["version"].split("-")[0] != made_with.split("-")[0], (made_with, result["version"])
    assert not result["openvino_python_imported"]
    assert result["max_error"] < 1e-5
    assert result["ints_equal"]


def test_an_ir_this_openvino_cannot_read_names_both_releases():
    """An operation set this OpenVINO does not know stands for an IR from a newer release."""
    import executorch_openvino as exov
    from exov_testing.programs import resealed
    from executorch_openvino.contract.processed_blob import LOWERED_WITH_KEY

    pte, _ = lower(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval(), (torch.randn(1, 4),))
    recorded = f'<{LOWERED_WITH_KEY} value="'.encode()
    assert pte.count(recorded) == 1, "preprocess records the lowering OpenVINO in the IR"
    start = pte.index(recorded) + len(recorded)
    this_release = pte[start:pte.index(b'"', start)].decode()
    assert this_release == exov.library_info()["version"] or not exov.library_info()["version"]
    future = pte.replace(b'version="opset1"', b'version="opsetX"')  # same length: offsets stay
    future = future.replace(recorded + this_release.encode(), recorded + b"2099.1.0-future".ljust(len(this_release), b"0"))
    with pytest.raises(RuntimeError) as info:
        exov.load_method(resealed(future))
    message = str(info.value)
    assert f"init: OpenVINO {exov.library_info()['version']} could not read the model in the processed blob, " \
           "which was lowered with OpenVINO 2099.1.0-future" in message
    assert "Run it with OpenVINO 2099.1.0, or lower the model again with this one" in message
    assert "opsetX" in message  # OpenVINO's own reason follows


def test_an_unreadable_ir_without_a_recorded_release_says_so():
    import executorch_openvino as exov
    from exov_testing.programs import resealed
    from executorch_openvino.contract.processed_blob import LOWERED_WITH_KEY

    pte, _ = lower(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval(), (torch.randn(1, 4),))
    # Same lengths, so every offset in the blob stays valid.
    unrecorded = (pte.replace(LOWERED_WITH_KEY.encode(), b"x" * len(LOWERED_WITH_KEY))
                  .replace(b'"OpenVINO Runtime"', b'"XXXXXXXX Runtime"').replace(b"<Runtime_version", b"<XXXXXXXXXXXXXXX")
                  .replace(b'version="opset1"', b'version="opsetX"'))
    with pytest.raises(RuntimeError, match=r"which was lowered with OpenVINO \(not recorded\)\. It may come from "
                                           r"another OpenVINO release: lower the model again with this one"):
        exov.load_method(resealed(unrecorded))
