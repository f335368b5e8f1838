"""The multi-objective search against the full-factorial grid and seed 001's rule, on real jobs.

    python bench/search.py --out runs/bench-search            # LeNet on the sample, ~20 min here
    python bench/search.py --out runs/bench-search --resume   # continue a stopped bench (finished jobs kept)

Three arms, each its own campaign folder under --out, with the same jobs (--job), the same job seed
(weight init) and the same local cluster:

* grid: every point of the space's full factorial (floats at --grid-points levels), no pruning;
* search: optimize.search (TPE, --seed, median pruning) with a cluster-time budget of
  --share (default 1/3) of the grid's;
* paper: seed 001's learning-rate rule (optimize.lr.search, cost T/A^2, one job per rate) from the
  space's lowest learning rate, the other factors at --job's values.

For each arm: jobs, how many were pruned, cluster time (the sum of the runs' elapsed_s) and the
hypervolume of its front of (wall_clock_s: min, accuracy: max) over its ok runs, all against one
reference point (the worst of every arm's ok runs, moved out by 10 % of the range). The goal of
issue 16: the search's hypervolume within 5 % of the grid's in at most a third of its cluster time.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cluster.local import LocalCluster  # noqa: E402
from models.cost import acc2  # noqa: E402
from optimize.lr import search  # noqa: E402
from optimize.objective import JobObjective  # noqa: E402
from optimize.pareto import (default_reference, hypervolume, minimisation_matrix, non_dominated, ok_runs,  # noqa: E402
                             parse_objectives, read_campaign)
from optimize.search.__main__ import parse_job  # noqa: E402
from optimize.search.pruning import make_rules  # noqa: E402
from optimize.search.space import Factor, SearchSpace, load_space  # noqa: E402
from optimize.search.study import MultiObjectiveSearch, SearchConfig, open_study  # noqa: E402
from optimize.session import ClusterOptions, JobConfig, open_session, submit_options  # noqa: E402
from sparkdl.cli import on_interrupt, run_cli  # noqa: E402
from sparkdl.options import cluster_options

OBJECTIVES = parse_objectives("wall_clock_s:min,accuracy:max")
DEFAULT_SPACE = SearchSpace((Factor("learning_rate", 0.01, 0.5, log=True), Factor("batch_size", choices=(32, 64)),
                             Factor("epochs", 1, 2)))
GOAL_HV, GOAL_TIME = 0.95, 1 / 3


@dataclass(frozen=True)
class ArmResult:
    """One arm's figures: jobs, pruned, cluster time, and its front's hypervolume against the common reference."""

    name: str
    jobs: int
    pruned: int
    cluster_time_s: float
    hypervolume: float
    front_size: int


def compare_arms(tables: dict[str, pd.DataFrame]) -> list[ArmResult]:
    """Each arm's figures, every hypervolume against one reference point from the union of the arms' ok runs."""
    oks = {name: ok_runs(t, OBJECTIVES)[0] for name, t in tables.items()}
    union = np.vstack([minimisation_matrix(r, OBJECTIVES) for r in oks.values() if len(r)])
    reference = default_reference(union)
    out = []
    for name, table in tables.items():
        matrix = minimisation_matrix(oks[name], OBJECTIVES) if len(oks[name]) else np.empty((0, 2))
        mask = non_dominated(matrix) if len(matrix) else np.zeros(0, bool)
        out.append(ArmResult(name, len(table), int((table["status"] == "pruned").sum()),
                             float(table["elapsed_s"].sum()), hypervolume(matrix[mask], reference) if len(matrix) else 0.0,
                             int(mask.sum())))
    return out


def arm_table(rows: Sequence[ArmResult], baseline: str = "grid") -> str:
    base = next(r for r in rows if r.name == baseline)
    lines = [f"{'arm':<8} {'jobs':>5} {'pruned':>7} {'cluster min':>12} {'time/grid':>10} {'front':>6} "
             f"{'hypervolume':>12} {'HV/grid':>8}"]
    for r in rows:
        lines.append(f"{r.name:<8} {r.jobs:>5} {r.pruned:>7} {r.cluster_time_s / 60:>12.2f} "
                     f"{r.cluster_time_s / base.cluster_time_s:>10.2f} {r.front_size:>6} {r.hypervolume:>12.5g} "
                     f"{r.hypervolume / base.hypervolume if base.hypervolume else math.nan:>8.3f}")
    return "\n".join(lines)


def goal_line(rows: Sequence[ArmResult]) -> str:
    grid, found = next(r for r in rows if r.name == "grid"), next(r for r in rows if r.name == "search")
    hv, time = found.hypervolume / grid.hypervolume, found.cluster_time_s / grid.cluster_time_s
    met = hv >= GOAL_HV and time <= GOAL_TIME + 1e-9
    return (f"goal (search's hypervolume >= {GOAL_HV:.0%} of the grid's in <= 1/3 of its cluster time): "
            f"{'MET' if met else 'NOT met'} ({hv:.1%} of the hypervolume in {time:.1%} of the time)")


# ---------------------------------------------------------------- the arms, on real jobs


def run_multi(out: Path, space: SearchSpace, job: JobConfig, args: argparse.Namespace, cluster: ClusterOptions,
              sampler: str, budget_s: float, pruner: str) -> None:
    config = SearchConfig(space, job, OBJECTIVES, sampler, args.seed, args.startup_trials, grid_points=args.grid_points)
    settings = {"bench": "search", "arm": sampler, "space": space.describe(), "job": job.__dict__, "seed": args.seed,
                "train_samples": args.train_samples, "test_samples": args.test_samples}
    options = submit_options(out, cluster, args.train_samples, args.test_samples, args.job_seed)
    shapes = [job.spec(1, 1, **combo) for combo in space.grid(1)]
    say = lambda msg: print(f"[{out.name}] {msg}", flush=True)  # noqa: E731
    with open_session(out, settings, options, cluster, shapes, args.resume, say) as session:
        MultiObjectiveSearch(session, open_study(out, config), config, make_rules(pruner, None), say).run(budget_s)


def run_paper(out: Path, space: SearchSpace, job: JobConfig, args: argparse.Namespace, cluster: ClusterOptions) -> None:
    lr = next((f for f in space.factors if f.name == "learning_rate"), None)
    start = float(lr.low if lr and lr.low else job.learning_rate)  # type: ignore[arg-type]
    settings = {"bench": "search", "arm": "paper", "start": start, "job": job.__dict__,
                "train_samples": args.train_samples, "test_samples": args.test_samples}
    options = submit_options(out, cluster, args.train_samples, args.test_samples, args.job_seed)
    say = lambda msg: print(f"[{out.name}] {msg}", flush=True)  # noqa: E731
    with open_session(out, settings, options, cluster, [job.spec(1, 1)], args.resume, say) as session:
        search(JobObjective(session, job, acc2()), start, replications=1, max_points=args.paper_points)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python bench/search.py", parents=[cluster_options()],
                                description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of the three campaigns")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--space", type=Path, help="space.toml (default: learning_rate 0.01..0.5 log, batch 32/64, "
                                              "epochs 1..2)")
    p.add_argument("--job", default="model=lenet,batch_size=64,epochs=1",
                   help="the other factors (and the paper rule's fixed ones)")
    p.add_argument("--share", type=float, default=GOAL_TIME, help="search budget as a share of the grid's time")
    p.add_argument("--grid-points", type=int, default=3, help="levels per float range in the grid (default 3)")
    p.add_argument("--seed", type=int, default=0, help="the search's sampler seed")
    p.add_argument("--job-seed", type=int, default=42, help="every job's weight-init seed")
    p.add_argument("--startup-trials", type=int, default=3, help="TPE's random trials first (default 3)")
    p.add_argument("--paper-points", type=int, default=10, help="the paper rule's most learning rates")
    p.add_argument("--train-samples", type=int, default=1024)
    p.add_argument("--test-samples", type=int, default=256)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    import optuna

    args = build_parser().parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = load_space(args.space) if args.space else DEFAULT_SPACE
    job = parse_job(args.job)
    args.keep_cluster = True  # one cluster for the three arms, stopped below if this bench started it
    cluster = ClusterOptions.from_args(args)
    local = None if args.master or args.cluster else LocalCluster(cluster.state_dir, port=cluster.port,
                                                                   webui_port=cluster.webui_port)
    started_here = local is not None and not local.status().running
    on_interrupt(f"finished jobs are kept under {args.out}; continue with --resume")
    try:
        run_multi(args.out / "grid", space, job, args, cluster, "grid", math.inf, "none")
        grid_time = float(read_campaign(args.out / "grid")["elapsed_s"].sum())
        run_multi(args.out / "search", space, job, args, cluster, "tpe", args.share * grid_time, "median")
        run_paper(args.out / "paper", space, job, args, cluster)
    finally:
        if local is not None and started_here:
            local.stop()
    rows = compare_arms({name: read_campaign(args.out / name) for name in ("grid", "search", "paper")})
    print()
    print(arm_table(rows))
    print(goal_line(rows))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
