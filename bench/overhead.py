"""What the harness adds to a run: `python -m harness.submit` end to end vs the same spark-submit by hand.

    .venv/bin/python bench/overhead.py [--repeats 3] [--train-samples 1024]

Starts a local standalone cluster on free ports, then alternates (to cancel drift) a
one-row campaign through the harness CLI (interpreter start, design checks, cluster
check, the job, log parsing, the SQLite store and results.csv) with a direct
spark-submit of the identical argv. Prints both medians and their ratio; the target
is at most 1.05.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

# bench/logparse.py would shadow the logparse package: the project root goes first
sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

from cluster.local import LocalCluster, free_port
from cluster.runtime import discover
from harness.command import SubmitOptions, submit_argv
from harness.designfile import read_design
from sparkdl.cli import run_cli
from sparkdl.options import CommandParser
from bench.workdir import work_folder

ROW = "run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n1,lenet,1,1,2,1,0.05,64\n"


def timed(argv: list[str], env: dict[str, str] | None, out: Path) -> float:
    started = time.monotonic()
    with open(out, "wb") as f:
        code = subprocess.run(argv, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    elapsed = time.monotonic() - started
    if code != 0:
        raise SystemExit(f"error: {argv[0]} exited {code}; see {out}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--train-samples", type=int, default=1024)
    args = p.parse_args(argv)
    with work_folder("overhead-") as work:
        return run(args, work)


def run(args: argparse.Namespace, work: Path) -> int:
    design = work / "design.csv"
    design.write_text(ROW)
    cluster = LocalCluster(work / "cluster", port=free_port(), webui_port=free_port(), env=discover())  # BigDL's
    cluster.start(workers=1, cores=2, memory="700m")
    try:
        env = discover()
        spec = read_design(design)[0]
        options = SubmitOptions(master_url=cluster.master_url, train_samples=args.train_samples, test_samples=256)
        direct = submit_argv(spec, options, env)
        harness = [sys.executable, "-m", "harness.submit", str(design), "--local", "--state-dir",
                   str(cluster.state_dir), "--train-samples", str(args.train_samples), "--test-samples", "256"]
        timed(direct, env.environ(), work / "warmup.log")  # JVM/page-cache warm-up, not counted
        h_times, d_times = [], []
        for i in range(args.repeats):
            h_times.append(timed([*harness, "--out", str(work / f"h{i}")], None, work / f"h{i}.log"))
            d_times.append(timed(direct, env.environ(), work / f"d{i}.log"))
            print(f"repeat {i + 1}: harness {h_times[-1]:.1f} s, direct spark-submit {d_times[-1]:.1f} s", flush=True)
    finally:
        cluster.stop()
    h, d = statistics.median(h_times), statistics.median(d_times)
    print(f"median over {args.repeats}: harness {h:.1f} s, direct {d:.1f} s, ratio {h / d:.3f} "
          f"(target <= 1.05: {'met' if h / d <= 1.05 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
