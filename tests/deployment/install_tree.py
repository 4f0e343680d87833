"""Lays the pip ``openvino`` package's real files out as an OpenVINO release archive (Linux x86_64).

    python install_tree.py TREE           # from the openvino package importable here

The archive layout (docs/design.md): ``runtime/include``, ``runtime/lib/intel64``,
``runtime/cmake`` and a ``setupvars.sh`` that sets ``INTEL_OPENVINO_DIR``,
``OpenVINO_DIR`` and ``LD_LIBRARY_PATH`` as the release's own script does. The
CMake package files are the pip package's, with their paths moved to the new
folders; the libraries, headers and plugins are copied unchanged. No Python
bindings are copied: a runtime environment that uses the tree has no
``openvino`` Python package.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

SETUPVARS = """\
#!/usr/bin/env bash
# Sets what OpenVINO's own setupvars.sh sets, for this tree (made by install_tree.py).
INTEL_OPENVINO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
export INTEL_OPENVINO_DIR
export OpenVINO_DIR="$INTEL_OPENVINO_DIR/runtime/cmake"
export LD_LIBRARY_PATH="$INTEL_OPENVINO_DIR/runtime/lib/intel64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "[setupvars.sh] OpenVINO environment initialized"
"""
# pip package paths -> archive paths, as the CMake files spell them after their prefix.
MOVED = {"/openvino/libs/": "/runtime/lib/intel64/", "/openvino/include": "/runtime/include",
         "/openvino/cmake": "/runtime/cmake"}


def pip_openvino_dir() -> Path:
    spec = importlib.util.find_spec("openvino")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the openvino package is not installed here; pip install openvino")
    return Path(spec.submodule_search_locations[0])


def make_install_tree(package: Path, tree: Path) -> Path:
    """Writes the tree; returns its setupvars.sh. An existing tree is replaced."""
    shutil.rmtree(tree, ignore_errors=True)
    runtime = tree / "runtime"
    shutil.copytree(package / "include", runtime / "include")
    shutil.copytree(package / "libs", runtime / "lib" / "intel64", symlinks=True)
    (runtime / "cmake").mkdir(parents=True)
    for cmake_file in sorted((package / "cmake").glob("*.cmake")):
        text = cmake_file.read_text()
        for old, new in MOVED.items():
            text = text.replace(old, new)
        (runtime / "cmake" / cmake_file.name).write_text(text)
    setupvars = tree / "setupvars.sh"
    setupvars.write_text(SETUPVARS)
    setupvars.chmod(0o755)
    return setupvars


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(make_install_tree(pip_openvino_dir(), Path(sys.argv[1]).resolve()))
