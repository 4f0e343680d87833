"""What the nox sessions (noxfile.py) do, as importable functions.

The noxfile keeps the sessions and the version pins; the tool logic they call
(building and repairing wheels, the release's index and checks, the Windows,
sanitizer and fuzzing helpers) lives here, one concern per module. Modules here
run inside nox's own interpreter: standard library and nox only.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: sources the helpers build from
