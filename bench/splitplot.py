"""Split-plot against one block per level and complete randomization, on the Marinos 2021 design.

    .venv/bin/python bench/splitplot.py [--replications 2] [--seeds 20] [--repeats 3] [--run-s 30]

Three arms order the same jobs: the 2^(6-1) design of Marinos 2021 (F=ABCDE), ``--replications``
replicates, with ``nodes`` hard to change:

* ``split-plot``: harness.design's default, one whole plot per replicate and nodes level, whole plots in
  random order, and a cluster reset at every whole-plot boundary (a rescale when nodes changes);
* ``one block per level``: the former default, the jobs grouped by nodes (the cluster rescaled once);
  nodes has one whole plot per level, so its effect cannot be tested;
* ``complete randomization``: every job in one random order, a rescale whenever nodes changes.

For each arm it counts, over ``--seeds`` seeds, the rescales (nodes changes) and restarts (resets of a
whole plot at the same nodes level), and the whole-plot error df that nodes is tested on. It then
measures on a real local cluster (cluster.local, the BigDL runtime) what a rescale from 1 to 4 workers,
a rescale from 4 to 1, and a restart at 4 workers cost, ``--repeats`` times each (medians), and prints each
arm's campaign time: the jobs' time (``--run-s`` a job, the same in every arm) plus its cluster changes
at the measured costs. The jobs' time is the same in every arm, so the differences are the changes'.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

from cluster.local import LocalCluster, free_port  # noqa: E402
from cluster.runtime import discover  # noqa: E402
from sparkdl.options import CommandParser, renamed  # noqa: E402
from harness.design import fractional, load_factors, parse_generators, schedule  # noqa: E402

FACTORS = Path(__file__).resolve().parent.parent / "examples" / "marinos2021" / "factors.toml"
CORES, MEMORY_MB = 4, 2800  # a worker of the design's largest node: 4 executors x 700 MB, 4 cores


def arm_counts(arm: str, replications: int, seed: int) -> tuple[int, int, int, int]:
    """(rescales, restarts, nodes' whole-plot error df, jobs) of one arm's order."""
    fs = load_factors(FACTORS)
    design = fractional(fs, parse_generators("F=ABCDE", fs))
    if arm == "split-plot":
        plan = schedule(design, replications, seed, hard_to_change=("nodes",))
        nodes = plan.level_sequence("nodes")
        plots = [j.whole_plot for j in plan.jobs]
        boundaries = [i for i in range(1, len(plots)) if plots[i] != plots[i - 1]]
        rescales = sum(nodes[i] != nodes[i - 1] for i in boundaries)
        return rescales, len(boundaries) - rescales, plan.whole_plot_error_df, len(plan.jobs)
    plan = schedule(design, replications, seed)
    if arm == "one block per level":
        jobs = sorted(plan.jobs, key=lambda j: j.values[0])  # grouped by nodes, random inside (a stable sort)
        nodes = [j.values[0] for j in jobs]
        return sum(a != b for a, b in zip(nodes, nodes[1:])), 0, 0, len(jobs)
    return plan.changes("nodes"), 0, len(plan.jobs) - 2, len(plan.jobs)  # residual df of a randomized design, at most


def measure(repeat: int) -> dict[str, float]:
    """Median seconds of a rescale 1 -> 4 workers, 4 -> 1, and a restart at 4 workers, on a real cluster."""
    env = discover(runtime="bigdl")
    times: dict[str, list[float]] = {"up": [], "down": [], "restart": []}
    with tempfile.TemporaryDirectory() as root:
        cluster = LocalCluster(Path(root) / "cluster", port=free_port(), webui_port=free_port(), env=env)
        try:
            cluster.start(1, CORES, MEMORY_MB)
            for _ in range(repeat):
                t = time.monotonic()
                cluster.scale(4, CORES, MEMORY_MB)
                times["up"].append(time.monotonic() - t)
                t = time.monotonic()
                cluster.stop()
                cluster.start(4, CORES, MEMORY_MB)
                times["restart"].append(time.monotonic() - t)
                t = time.monotonic()
                cluster.scale(1, CORES, MEMORY_MB)
                times["down"].append(time.monotonic() - t)
        finally:
            cluster.stop()
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--replications", type=int, default=2, help="replicates of the 32-run design (default 2)")
    p.add_argument("--seeds", type=int, default=20, help="seeds of the random orders (default 20)")
    p.add_argument("--repeats", type=int, default=3, help="real measurements of each cluster change (default 3)")
    renamed(p, "--repeat", "--repeats")
    p.add_argument("--run-s", type=float, default=30.0, help="seconds a job takes, the same in every arm (default 30)")
    args = p.parse_args(argv)
    cost = measure(args.repeats)
    rescale = (cost["up"] + cost["down"]) / 2
    print(f"measured on a real local cluster (medians of {args.repeats}): rescale 1->4 workers {cost['up']:.1f} s, "
          f"4->1 {cost['down']:.1f} s, restart at 4 workers {cost['restart']:.1f} s")
    print(f"Marinos 2021 design, 32 runs x {args.replications} replicates, {args.seeds} seeds; jobs {args.run_s:g} s each")
    head = f"{'arm':<24}{'rescales':>10}{'restarts':>10}{'nodes df':>10}{'campaign h':>12}{'changes s':>11}"
    print(head)
    for arm in ("split-plot", "one block per level", "complete randomization"):
        counts = [arm_counts(arm, args.replications, seed) for seed in range(args.seeds)]
        rescales = statistics.median(c[0] for c in counts)
        restarts = statistics.median(c[1] for c in counts)
        df, jobs = counts[0][2], counts[0][3]
        changes_s = rescales * rescale + restarts * cost["restart"]
        hours = (jobs * args.run_s + changes_s) / 3600
        df_text = str(df) if arm != "complete randomization" else f"<={df}"
        print(f"{arm:<24}{rescales:>10.0f}{restarts:>10.0f}{df_text:>10}{hours:>12.2f}{changes_s:>11.0f}")
    print("nodes df: the error df nodes is tested on (0: one whole plot per level, its effect is confounded "
          "with drift and cannot be tested)")
    return 0


if __name__ == "__main__":
    from sparkdl.cli import run_cli  # SIGTERM and SIGHUP unwind: the temporary folders go

    sys.exit(run_cli(main))
