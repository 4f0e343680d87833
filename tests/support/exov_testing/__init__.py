"""What several test modules share: programs to lower and compare (programs.py), the machine and session
they run in (environment.py), case tables (cases.py), the runner (runner_tools.py), the C++ harnesses
(compile_harness.py), language models (llm_models.py), INT8 gates and the lifecycle models.

Importable by every test through pytest's `pythonpath` (pyproject.toml), and installable
(tests/support/pyproject.toml): the nox sessions that run tests or benchmarks install it.
"""
