"""What several test modules share: programs to lower and compare (programs.py), the machine and session
they run in (environment.py), case tables (cases.py), the runner (runner_tools.py), the C++ harnesses
(compile_harness.py), language models (llm_models.py), INT8 gates and the lifecycle models.

Importable by every test through pytest's `pythonpath` (pyproject.toml), and installable
(tests/support/pyproject.toml): the nox sessions that run tests or benchmarks install it, editable.
"""
from pathlib import Path

# The source tree these helpers belong to: they read its tests/CMakeLists.txt, docs/ and wheels/.
REPOSITORY = Path(__file__).resolve().parents[3]
if not (REPOSITORY / "tests" / "CMakeLists.txt").is_file():
    raise ImportError(f"exov_testing was imported from {Path(__file__).parent}, a copy outside executorch-openvino's "
                      "source tree, which its helpers read: install it editable (pip install -e tests/support)")
