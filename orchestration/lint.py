"""`nox -s lint`: ruff on every Python file ([tool.ruff] in pyproject.toml), clang-format on the C++
(.clang-format), mypy on the package's public modules and on orchestration/ ([tool.mypy])."""

from __future__ import annotations

import nox

from orchestration import ROOT, pins

CPP_FOLDERS = ("native/delegate", "native/python", "native/runner", "native/glibc_2_28", "tests/native", "tests/fuzz",
               "tests/sanitizers", "tests/windows", "benchmarks")


def cpp_files() -> list[str]:
    return sorted(str(p) for folder in CPP_FOLDERS for p in (ROOT / folder).glob("*")
                  if p.suffix in (".cpp", ".h", ".c"))


def session_steps(session: nox.Session) -> None:
    """Seconds: no build, no torch. `-- --fix` lets ruff and clang-format rewrite the files instead."""
    session.install(*pins.LINT_TOOLS, "packaging", "nox")  # typed requirements that mypy reads
    fix = "--fix" in session.posargs
    session.run("ruff", "check", *(["--fix"] if fix else []), str(ROOT))
    cpp = cpp_files()
    session.run("clang-format", *(["-i"] if fix else ["--dry-run", "--Werror"]), *cpp)
    with session.chdir(ROOT):
        session.run("mypy")
    session.log(f"lint: ruff, clang-format on {len(cpp)} C++ files, mypy: clean")
