"""How long ``sparkdl predict`` takes on a 500-row study, with its default CV+ intervals (90 %, both splits, all
models), against an older commit's code on the same table, in one run.

    .venv/bin/python bench/predict_speed.py --make DIR            # write the 500-row study (never commit it)
    .venv/bin/python bench/predict_speed.py DIR [--old COMMIT] [--repeats 1]

The study is bench/predict.py's 48-run factorial (network x nodes x executors x cores x batch size, times from a
compute + synchronization law with 5 % lognormal noise), replicated 10 times, plus a 11th replicate of its first
20 runs: 500 ok runs, with a manifest.json naming the factors as the harness does. It is made up, not data.

Each arm runs ``python -m models.predict DIR`` in a fresh process (imports included, as a user waits for them),
stdout to /dev/null: the new code as a user gets it (``--fit-processes`` at its default, the CPUs it may use), the
new code in one process (``--fit-processes 1``), and with ``--old COMMIT`` COMMIT's code, checked out into a
temporary git worktree and run with PYTHONPATH set to it (the worktree is removed at the end). The arms alternate
over ``--repeats`` rounds so that none always runs on a cooler machine. Beside each wall time: the CPU seconds of the
process and its workers (user + system; less sensitive to other people's load than the wall time) and the 1-minute
load average before and after.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
FACTORS = ["model", "nodes", "executors", "executor_cores", "batch_size", "epochs", "learning_rate"]
REPLICATES = 10
EXTRA = 20  # runs of the 11th replicate: 10 x 48 + 20 = 500


def _bench_predict():
    """bench/predict.py, whose synthetic time law the study shares (loaded when a study is made)."""
    spec = importlib.util.spec_from_file_location("bench_predict", ROOT / "bench" / "predict.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def study(directory: Path, seed: int = 0) -> Path:
    """Write the 500-row study (results.csv and manifest.json) into ``directory``; return the results path."""
    synthetic_wall_clock = _bench_predict().synthetic_wall_clock
    rng = np.random.default_rng(seed)
    design = pd.DataFrame(list(itertools.product(["lenet", "birnn"], [1, 2, 4], [1, 2], [1, 2], [64, 256])),
                          columns=["model", "nodes", "executors", "executor_cores", "batch_size"])
    design["epochs"], design["learning_rate"] = 3, 0.01
    blocks = [design.assign(replicate=r) for r in range(1, REPLICATES + 1)]
    blocks.append(design.head(EXTRA).assign(replicate=REPLICATES + 1))
    df = pd.concat(blocks, ignore_index=True)
    df.insert(0, "run", np.arange(1, len(df) + 1))
    df["status"] = "ok"
    df["wall_clock_s"] = synthetic_wall_clock(df, rng)
    df = df[["run", "replicate", *FACTORS, "status", "wall_clock_s"]]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "results.csv"
    df.to_csv(path, index=False)
    manifest = {"version": 1, "factors": FACTORS, "responses": ["wall_clock_s"], "identifiers": ["run", "replicate"],
                "time": "wall_clock_s"}
    (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def timed(code: Path, study_dir: Path, extra: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, workers included) of ``python -m models.predict study_dir`` run from
    ``code`` (a fresh process)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "models.predict", str(study_dir), *extra], cwd=code, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{code}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    sys.path[:1] = [str(ROOT)]
    from sparkdl.options import CommandParser

    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", nargs="?", type=Path, help="the study directory (written by --make)")
    parser.add_argument("--make", type=Path, metavar="DIR", help="write the 500-row study to DIR and stop")
    parser.add_argument("--old", metavar="COMMIT", help="also time COMMIT's code on the same study, as a ratio")
    parser.add_argument("--repeats", type=int, default=1, help="rounds of (new, old) (default 1)")
    args, extra = parser.parse_known_args(argv)
    if args.make:
        print(f"wrote {study(args.make)} ({len(pd.read_csv(args.make / 'results.csv'))} runs; do not commit it)")
        return 0
    if args.study is None:
        parser.error("give the study directory (or --make DIR)")
    table = pd.read_csv(args.study / "results.csv")
    ok = int((table["status"] == "ok").sum()) if "status" in table else len(table)
    print(f"sparkdl predict {args.study} {' '.join(extra)}: {ok} ok rows, {len(os.sched_getaffinity(0))} CPUs, "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    arms = [("new", ROOT, extra), ("new, 1 process", ROOT, [*extra, "--fit-processes", "1"])]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in arms}
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch) / "old"
        if args.old:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(old), args.old], check=True)
            arms.append((f"old {args.old[:10]}", old, extra))
            times[arms[-1][0]] = []
        try:
            for round_ in range(args.repeats):
                for name, code, flags in arms if round_ % 2 == 0 else arms[::-1]:
                    before = load()
                    wall, cpu = timed(code, args.study, flags)
                    times[name].append((wall, cpu))
                    print(f"  {name:<16} {wall:6.1f} s wall, {cpu:6.1f} s CPU  (load average {before} before, "
                          f"{load()} after)")
        finally:
            if args.old:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)], check=True)
    best = {name: (min(w for w, _ in t), min(c for _, c in t)) for name, t in times.items()}
    for name, (wall, cpu) in best.items():
        print(f"{name:<16} best of {args.repeats}: {wall:5.1f} s wall, {cpu:5.1f} s CPU")
    wall = best["new"][0]
    print(f"goal <= 10 s wall with intervals: {'met' if wall <= 10 else 'not met'} ({wall:.1f} s)")
    if args.old:
        old_wall, old_cpu = best[arms[-1][0]]
        print(f"old / new: {old_wall / wall:.1f}x wall, {old_cpu / best['new'][1]:.1f}x CPU; "
              f"old / new in 1 process: {old_wall / best['new, 1 process'][0]:.1f}x wall, "
              f"{old_cpu / best['new, 1 process'][1]:.1f}x CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
