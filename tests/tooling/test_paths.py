"""Every repository path that a source, build file or document names exists (a moved file leaves no stale name)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = ("native", "python", "orchestration", "tests", "wheels", "cmake", "docs", "benchmarks", "tools")
# A path from the repository root, ending in a file name with one of these suffixes.
PATH = re.compile(r"(?:(?<![\w/.$}-])|(?<=<repo>/))((?:" + "|".join(TOP)
                  + r")/[\w/.-]*\.(?:py|cpp|h|c|cmake|in|md|txt|json|toml|yml))\b")
SCANNED = (".py", ".md", ".txt", ".cmake", ".toml", ".yml", ".cpp", ".h", ".c", ".in")
# Paths that name what a session writes or a user's file, not a file of the repository.
GENERATED = re.compile(r"^(docs/(benchmarks|loading|demo|llm-benchmark)\.md|tools/program_fuzz/regressions/.+)$")


def _tracked() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / n for n in names if n.endswith(SCANNED) or Path(n).name == "CMakeLists.txt"
            or (n.startswith(".ci/") and "." not in Path(n).name)]  # .ci/run


def test_named_paths_exist():
    missing = []
    for path in _tracked():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for named in PATH.findall(line):
                known = (ROOT / named).exists() or (path.parent / named).exists()  # from the root or the file
                if "*" not in named and "<" not in named and not GENERATED.match(named) and not known:
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {named}")
    assert not missing, "\n".join(missing)


def test_the_pattern_reads_paths_after_a_placeholder_and_not_inside_other_paths():
    assert PATH.findall("run <repo>/tests/numerics/test_shapes.py") == ["tests/numerics/test_shapes.py"]
    assert PATH.findall("see build/tests/x.py") == []
