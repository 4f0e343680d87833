"""The fuzzer's command line: generate, check in worker processes, shrink failures, print a summary.

    cd tools && python -m program_fuzz.run                # the fixed CI range (seeds 0..CI_PROGRAMS-1)
    cd tools && python -m program_fuzz.run --seconds 1800 # as many programs as fit in 30 minutes
    cd tools && python -m program_fuzz.run --programs 50 --seed 1000 --jobs 2

(``nox -s program_fuzz -- ARGS`` runs it against the installed, repaired wheel.)
Exits with status 1 when any program failed. A failure is shrunk (unless
``--no-shrink``), saved under ``tools/program_fuzz/regressions/`` (``--save-to``)
and printed with a standalone reproducer.
"""

from __future__ import annotations

import argparse
import collections
import json
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path

from program_fuzz import regressions
from program_fuzz.check import PATHS
from program_fuzz.generator import PATTERNS, GeneratorConfig, generate
from program_fuzz.ops import OPS
from program_fuzz.pool import Worker
from program_fuzz.shrink import shrink, size_of
from program_fuzz.spec import reproducer

# The fixed range CI runs: about 3 minutes on 2 cores (64 programs took 206 s at load 2-4; these 56 took 314 s
# at load 5-8, while other jobs ran).
CI_PROGRAMS = 56


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, help="how many programs (default: the CI range, "
                        f"{CI_PROGRAMS}, unless --seconds is given)")
    parser.add_argument("--seconds", type=float, help="generate programs until this much time has passed")
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed (programs use seed, seed+1, ...)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes checking programs in parallel")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS), help="lowering paths to check")
    parser.add_argument("--exclude", default="", help="comma-separated ops or patterns left out of generation: "
                        + ", ".join(f"{k} ({v[0]})" for k, v in PATTERNS.items()))
    parser.add_argument("--no-shrink", action="store_true", help="report failures as generated")
    parser.add_argument("--max-shrinks", type=int, default=5, help="failures shrunk per run (one per kind)")
    parser.add_argument("--shrink-seconds", type=float, default=600, help="time budget per shrink")
    parser.add_argument("--save-to", type=Path, default=regressions.REGRESSIONS_DIR,
                        help="folder for the regression files of shrunk failures ('' to save none)")
    parser.add_argument("--report", type=Path, help="write every outcome to this JSON file")
    parser.add_argument("--workdir", type=Path, help="the workers' folder (.pte files, logs); default: a temporary one")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per program before its worker is killed")
    parser.add_argument("--verbose", action="store_true", help="print every program's outcome")
    args = parser.parse_args(argv)
    unknown = [n for n in filter(None, args.exclude.split(",")) if n not in OPS and n not in PATTERNS]
    if unknown:
        parser.error(f"--exclude: unknown {unknown}; ops are {sorted(OPS)}, patterns {sorted(PATTERNS)}")
    if args.programs is None and args.seconds is None:
        args.programs = CI_PROGRAMS
    return args


def failure_kind(outcome: dict):
    """(path, category) of the first failed path, the signature shrinking keeps."""
    for path, result in outcome["paths"].items():
        if result["status"] == "failed":
            return path, result["category"]
    return None, "harness-error" if outcome.get("harness_error") else None


class Stats:
    """Counts for the summary table."""

    def __init__(self, paths):
        self.paths = paths
        self.programs = 0
        self.status = collections.Counter()
        self.per_path = {p: collections.Counter() for p in paths}
        self.refusals = {p: collections.Counter() for p in paths}
        self.failures = {p: collections.Counter() for p in paths}
        self.executorch = {p: collections.Counter() for p in paths}
        self.invalid = collections.Counter()
        self.op_programs = collections.Counter()
        self.op_passed = collections.Counter()
        self.delegated = collections.Counter()
        self.with_partition = 0
        self.seconds = 0.0

    def add(self, spec, outcome) -> None:
        self.programs += 1
        self.status[outcome["status"]] += 1
        self.seconds += outcome.get("seconds", 0.0)
        if outcome["status"] == "invalid":
            self.invalid[(outcome.get("detail") or "")[:90]] += 1
        names = {op["op"] for op in spec["ops"]}
        for name in names:
            self.op_programs[name] += 1
            if outcome["status"] == "passed":
                self.op_passed[name] += 1
        partitioned = False
        for path, result in outcome["paths"].items():
            counts = self.per_path[path]
            if result["stage"] != "lower" or result["status"] == "passed":
                counts["lowered"] += 1
            counts[result["status"]] += 1
            if result["status"] == "refused":
                self.refusals[path][result["category"]] += 1
            elif result["status"] == "failed":
                self.failures[path][result["category"]] += 1
            elif result["status"] == "executorch":
                self.executorch[path][result["category"]] += 1
            elif result["status"] == "invalid":
                self.invalid[result["category"]] += 1
            if path == self.paths[0]:
                for name in set(result.get("delegated", [])):
                    self.delegated[name] += 1
                partitioned |= result.get("partitions", 0) > 0
        self.with_partition += partitioned

    def table(self, elapsed: float, workers: int, restarts: int, first_seed: int) -> str:
        width = max(len(p) for p in self.paths) + 2
        rows = [f"programs generated: {self.programs} (seeds {first_seed}..{first_seed + self.programs - 1}), "
                f"{elapsed:.0f} s with {workers} worker(s), {restarts} worker restart(s)",
                f"programs: passed {self.status['passed']}, refused {self.status['refused']}, "
                f"failed {self.status['failed']}, ExecuTorch's own failure {self.status['executorch']}, "
                f"invalid (not a program) {self.status['invalid']}; "
                f"with an OpenVINO partition ({self.paths[0]}): {self.with_partition}", ""]
        label = 44
        rows.append(" " * label + "".join(p.rjust(width) for p in self.paths))
        labels = {"executorch": "fails without the delegate too"}
        for key in ("lowered", "refused", "passed", "executorch", "failed", "invalid"):
            rows.append(labels.get(key, key).ljust(label)
                        + "".join(str(self.per_path[p][key]).rjust(width) for p in self.paths))
            table = {"refused": self.refusals, "failed": self.failures, "executorch": self.executorch}.get(key)
            if table:
                for reason in sorted({r for p in self.paths for r in table[p]}):
                    rows.append(f"  {reason[:label - 3]}".ljust(label)
                                + "".join(str(table[p][reason]).rjust(width) for p in self.paths))
        if self.invalid:
            rows += ["", "invalid programs (eager, torch.export or ExecuTorch alone rejected them):"]
            rows += [f"  {n} x {reason}" for reason, n in self.invalid.most_common(8)]
        rows += ["", "ops covered (op: programs with it / of them passed):"]
        cells = [f"{name} {self.op_programs[name]}/{self.op_passed[name]}" for name in sorted(OPS)
                 if self.op_programs[name]]
        rows += _columns(cells, 4)
        never = [name for name in sorted(OPS) if not self.op_programs[name]]
        if never:
            rows.append(f"never generated: {', '.join(never)}")
        rows += ["", f"edge ops inside OpenVINO partitions ({self.paths[0]}; programs):"]
        rows += _columns([f"{name} {n}" for name, n in sorted(self.delegated.items())], 3)
        return "\n".join(rows)


def _columns(cells, n: int) -> list:
    width = max((len(c) for c in cells), default=0) + 2
    return ["  " + "".join(c.ljust(width) for c in cells[i:i + n]) for i in range(0, len(cells), n)]


def run(args) -> int:
    config = GeneratorConfig(exclude=frozenset(filter(None, args.exclude.split(","))))
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="program-fuzz-"))
    workers = [Worker(workdir / f"worker{i}") for i in range(max(1, args.jobs))]
    stats = Stats(args.paths)
    outcomes, failures = [], []
    lock = threading.Lock()
    seeds = queue.Queue()
    limit = args.programs if args.programs is not None else 10**9
    for seed in range(args.seed, args.seed + min(limit, 100000)):
        seeds.put(seed)
    start = time.monotonic()
    deadline = start + args.seconds if args.seconds is not None else None

    errors = []

    def work(worker: Worker) -> None:
        try:
            check_seeds(worker)
        except BaseException as exc:  # noqa: BLE001 - a worker that cannot start ends the run
            errors.append(exc)

    def check_seeds(worker: Worker) -> None:
        while (deadline is None or time.monotonic() < deadline) and not errors:
            try:
                seed = seeds.get_nowait()
            except queue.Empty:
                return
            spec = generate(seed, config)
            outcome = worker.check(spec, paths=args.paths, timeout=args.timeout)
            with lock:
                outcome["seed"] = seed
                stats.add(spec, outcome)
                outcomes.append(outcome)
                if outcome["status"] == "failed":
                    failures.append((seed, spec, outcome))
                if args.verbose or outcome["status"] == "failed":
                    print(_one_line(seed, spec, outcome), flush=True)

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    if errors:
        for w in workers:
            w.close()
        raise errors[0]
    restarts = sum(w.restarts for w in workers)
    for w in workers[1:]:
        w.close()

    saved = []
    if failures and not args.no_shrink:
        saved = shrink_failures(failures, workers[0], args)
    workers[0].close()

    first = min((o["seed"] for o in outcomes), default=args.seed)
    print()
    print(stats.table(elapsed, len(workers), restarts, first))
    if failures:
        print(f"\n{len(failures)} program(s) FAILED: seeds {sorted(s for s, _, _ in failures)}")
        for file in saved:
            print(f"  regression written: {file}")
    if args.report:
        args.report.write_text(json.dumps({"outcomes": outcomes, "seconds": elapsed}, indent=1))
    return 1 if failures else 0


def _one_line(seed, spec, outcome) -> str:
    parts = [f"seed {seed}: {outcome['status']} ({len(spec['ops'])} ops, {outcome.get('seconds', 0):.1f} s)"]
    for path, result in outcome["paths"].items():
        if result["status"] != "passed":
            parts.append(f"{path}: {result['status']} at {result['stage']}: {result['category']}: "
                         f"{(result['detail'] or '')[:300]}")
    if outcome.get("detail"):
        parts.append(outcome["detail"][:300])
    return "\n    ".join(parts)


def shrink_failures(failures, worker: Worker, args) -> list:
    """Shrinks one failure per (path, category), saves each as a regression, prints its reproducer."""
    saved, done = [], set()
    for seed, spec, outcome in failures:
        path, category = failure_kind(outcome)
        if (path, category) in done or len(done) >= args.max_shrinks:
            continue
        done.add((path, category))
        paths = [path] if path else args.paths
        print(f"\nshrinking seed {seed} ({path}: {category}), size {size_of(spec)} ...", flush=True)

        def still_fails(candidate):
            result = worker.check(candidate, paths=paths, timeout=args.timeout)
            return failure_kind(result) == (path, category)

        small, checks = shrink(spec, still_fails, max_seconds=args.shrink_seconds, log=print)
        final = worker.check(small, paths=paths, timeout=args.timeout)
        result = final["paths"].get(path, {}) if path else {}
        found = {"seed": seed, "path": path, "stage": result.get("stage"), "category": category,
                 "detail": (result.get("detail") or final.get("detail") or "")[:3000]}
        print(f"shrunk to {size_of(small)} in {checks} checks; failure: {found['detail'][:500]}")
        print("reproducer:\n" + reproducer(small, path=path or PATHS[0]))
        if str(args.save_to):
            file = regressions.save(small, found=found, paths=paths, xfail=f"untriaged {category} ({path})",
                                    note="written by the fuzzer; triage and name the finding",
                                    folder=args.save_to)
            saved.append(file)
    return saved


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
