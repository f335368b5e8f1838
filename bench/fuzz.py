"""Thousands of bad inputs through every command: how many tracebacks, hangs and silent changes.

    python bench/fuzz.py                      # the 20 classes' seed cases, then 3,000 generated inputs
    python bench/fuzz.py --inputs 10000 --seed 7 --kinds job,space,results

Every kind of file a command reads (tests/inputs.py ``KINDS``: job descriptions, designs, search
spaces, results tables, manifests, a json job's metrics, BigDL logs, Spark event logs, runtimes,
inventories, factors files, command-line options) is taken from a good example and damaged one to
three times (a token replaced by one of the values the 20 classes were made of, a line repeated
or dropped, a value nested 2,000 deep, a stray byte, a cut, UTF-16). Each input runs in this
process through ``sparkdl.cli.run_cli`` with ``--dry-run`` or a reading command: nothing starts.

The surfaces of tests/surface_inputs.py are generated too: MLflow tracking URIs (hosts, ports of thousands of
digits, passwords, SQLite and file stores), ``--max-artifact-mb`` values, an ingested campaign's results.csv as
the export reads it, runtime files whose requirements or lock is a FIFO, /dev/zero, a loop, a folder or a name
over 255 bytes or not UTF-8, ``runtime lock --out`` targets, argv of the ``sparkdl`` dispatcher, real Spark 4 JSON
log events ending a real BigDL log (judged against the same event in log4j's layout), and ``harness.ingest`` on study
folders (huge and non-finite values in folder names, owned group names, dangling links, FIFO logs, non-UTF-8
names, a catastrophic regex, ``--factors`` values; each row's groups checked against ``re.search``). Each case
runs in a forked child killed at ``--timeout`` (``--in-process`` runs them here), and ``--keep`` holds each
failure's files and a ``case.txt`` with its command and the judge's finding.

An outcome is right when it is a one-line input error (exit 2), or a success whose values are the
input's own (tests/inputs.py says per kind what that means: the argv keeps the design's cells,
no ok row keeps an impossible accuracy or learning rate...). Otherwise it is counted as a
traceback (exit 1 or a printed traceback), a hang (over ``--timeout`` seconds) or a silent
change; the first few of each are printed with the file that caused them (kept under ``--keep``).
"""

from __future__ import annotations

import collections
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import analysis_inputs, inputs, surface_inputs  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402

#: Every kind: the files of tests/inputs.py, the surfaces of tests/surface_inputs.py (MLflow URIs, sizes and
#: results tables, runtime files with special requirements and locks, ``runtime lock --out``, the dispatcher), then the
#: newer surfaces of tests/analysis_inputs.py (predict's scaling options, plan, pareto --objectives, submit --until and
#: the Kubernetes dry run, batch --slo, epochs --budget, concurrent, damaged tables), judged on their values.
ALL_KINDS = (*inputs.KINDS, *surface_inputs.KINDS, *analysis_inputs.KINDS)


def generated(kind: inputs.Kind, folder: Path, rng: random.Random) -> inputs.Case:
    if kind in surface_inputs.KINDS:
        return surface_inputs.generated_case(kind, folder, rng)
    if kind in analysis_inputs.KINDS:
        return analysis_inputs.generated_case(kind, folder, rng)
    return inputs.generated_case(kind, folder, rng)


def keep_case(keep: Path, case: inputs.Case, verdict: str, problem: str) -> None:
    """What reproduces a failure beside its files: the command, its argv (shell-quoted) and the judge's finding."""
    import shlex

    keep.mkdir(parents=True, exist_ok=True)
    main = f"{case.main.__module__}.{case.main.__name__}"
    argv = shlex.join(a.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") for a in case.argv)
    (keep / "case.txt").write_text(f"{verdict}: {problem}\nmain: {main}\nargv: {argv}\n")


def classify(problem: str | None) -> str:
    if problem is None:
        return "right"
    if problem == "hang":
        return "hang"
    if problem.startswith("traceback"):
        return "traceback"
    return "silent"


def keep_files(folder: Path, keep: Path, limit: int = 16 << 20) -> None:
    """Copy the regular files of ``folder`` (no FIFO, no link, none over ``limit`` bytes) under ``keep``."""
    for path in folder.rglob("*"):
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > limit:
                continue
            target = keep / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        except OSError:
            continue


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--inputs", type=int, default=3000, help="generated inputs (default 3000), besides the seeds")
    p.add_argument("--seed", type=int, default=1, help="seed of the generator (default 1)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds before a run counts as a hang (default 30)")
    p.add_argument("--kinds", help="comma-separated kinds (default: all of " +
                   ", ".join(k.name for k in ALL_KINDS) + ")")
    p.add_argument("--keep", type=Path, default=Path("fuzz-failures"),
                   help="where the inputs that failed are copied (default ./fuzz-failures)")
    p.add_argument("--in-process", action="store_true",
                   help="run each case in this process (default: each in a forked child, killed at --timeout, so a "
                        "hang in C code or a half-done import stays with its case)")
    p.add_argument("--memory-gb", type=float, default=6.0,
                   help="address-space limit of this process, so an input asking for too much fails (default 6)")
    args = p.parse_args(argv)
    kinds = [k for k in ALL_KINDS if args.kinds is None or k.name in args.kinds.split(",")]
    keep_root = args.keep.resolve()  # before the chdir below (a relative --keep is the caller's folder)
    limit = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    rng = random.Random(args.seed)
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    examples: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="sparkdl-fuzz-"))
    os.chdir(root)  # a command's default output folder lands here
    start = time.monotonic()

    run = inputs.run_main if args.in_process else surface_inputs.run_forked
    if not args.in_process:
        surface_inputs.warm_up()  # imported once here; every forked case inherits them
        for name in analysis_inputs.WARM:
            __import__(name)

    def record(kind: str, case: inputs.Case, folder: Path) -> None:
        outcome = run(case.main, case.argv, timeout=args.timeout)
        problem = case.judge(outcome)
        verdict = classify(problem)
        counts[kind][verdict] += 1
        counts[kind]["input error" if outcome.input_error else "accepted"] += verdict == "right"
        if verdict != "right":
            keep = keep_root / f"{kind}-{sum(counts[kind].values())}"
            keep_files(folder, keep)
            keep_case(keep, case, verdict, problem or "")
            if len(examples) < 30:
                examples.append(f"{verdict} [{kind}] {case.name} {' '.join(case.argv)[:200]}: "
                                f"{case.judge(outcome)[:300]} (kept in {keep})")

    try:
        for name, build in inputs.SEEDS.items():
            folder = root / "seed" / name
            folder.mkdir(parents=True)
            for case in build(folder):
                record("seed", case, folder)
            shutil.rmtree(folder, ignore_errors=True)
        for i in range(args.inputs):
            kind = kinds[i % len(kinds)]
            folder = root / f"{i}"
            folder.mkdir()
            case = generated(kind, folder, random.Random(rng.getrandbits(64)))
            record(kind.name, case, folder)
            shutil.rmtree(folder, ignore_errors=True)
            if (i + 1) % 500 == 0:  # a long run says how it goes
                bad = {v: sum(c[v] for c in counts.values()) for v in ("traceback", "hang", "silent")}
                print(f"{i + 1}/{args.inputs} generated inputs, {time.monotonic() - start:.0f} s: "
                      f"{bad['traceback']} tracebacks, {bad['hang']} hangs, {bad['silent']} silent", file=sys.stderr,
                      flush=True)
    finally:
        os.chdir(ROOT)
        shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - start
    head = ("kind", "inputs", "input error", "accepted", "traceback", "hang", "silent")
    rows = [(k, sum(c[v] for v in ("right", "traceback", "hang", "silent")), c["input error"], c["accepted"],
             c["traceback"], c["hang"], c["silent"]) for k, c in counts.items()]
    total = ("total", *(sum(r[i] for r in rows) for i in range(1, len(head))))
    width = [max(len(str(x)) for x in col) for col in zip(head, *rows, total)]
    for line in (head, *rows, total):
        print("  ".join(str(x).rjust(w) for x, w in zip(line, width)))
    print(f"\n{total[1]} inputs in {elapsed:.0f} s (seed {args.seed}): {total[4]} tracebacks, {total[5]} hangs, "
          f"{total[6]} silent changes")
    for e in examples:
        print(e)
    return 0 if total[4] == total[5] == total[6] == 0 else 1


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    sys.exit(run_cli(main))
