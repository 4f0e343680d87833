"""One spelling of OpenVINO in identifiers: "OpenVINO", except the names ExecuTorch's own OpenVINO backend uses,
which this package answers to as well (docs/development.md, "Names")."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OTHER_SPELLING = re.compile(r"\b\w*(?:Openvino|OpenVino)\w*\b")
# Upstream's names: its partitioner (an alias of OpenVINOPartitioner here), its backend id and quantizer, and
# this package's backend id, which ExecuTorch matches against the preprocess class's name and .pte files hold.
UPSTREAM = {"OpenvinoPartitioner", "OpenvinoBackend", "OpenvinoQuantizer", "ExecutorchOpenvinoBackend"}
CODE = (".py", ".cpp", ".h", ".c")


def test_identifiers_spell_openvino_one_way():
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = {}
    for name in names:
        if name.endswith(CODE) and name != "tests/tooling/test_names.py":  # this file names the other spellings
            other = set(OTHER_SPELLING.findall((ROOT / name).read_text(errors="replace"))) - UPSTREAM
            if other:
                found[name] = sorted(other)
    assert not found, found
