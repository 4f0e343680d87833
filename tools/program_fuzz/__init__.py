"""A differential fuzzer over whole programs for the OpenVINO delegate (issue 17, item 6).

It generates small random PyTorch programs, lowers each one both ways
(``exov.lower`` and ExecuTorch's ``to_edge_transform_and_lower`` with
``OpenvinoPartitioner``), saves the ``.pte``, loads it back from the file,
runs it twice with fresh inputs and compares every output, and every input
the program changes in place, with eager PyTorch.

Modules, in the order data flows through them:

- :mod:`.spec`: the JSON description of a program and the ``torch.nn.Module``
  (generated Python source) rebuilt from it; also standalone reproducers.
- :mod:`.ops`: the operator catalog (what each op computes, when it applies,
  how much float32 rounding it may add).
- :mod:`.generator`: seeded random programs drawn from the catalog.
- :mod:`.check`: lower, save, load, run, compare; one program, one process.
- :mod:`.refusals`: the documented refusals that do not count as failures.
- :mod:`.worker` / :mod:`.pool`: the check in a subprocess, restarted after a
  crash (SIGSEGV) or a hang, so one bad program does not end a run.
- :mod:`.shrink`: makes a failing program smaller while it fails the same way.
- :mod:`.regressions`: shrunk failures saved as JSON under ``regressions/``.
- :mod:`.run`: the command line (``nox -s program_fuzz``) and its summary table.
"""
