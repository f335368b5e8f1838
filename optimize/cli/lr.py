"""``sparkdl lr``: a learning-rate search on real jobs through the harness, resumable.

    sparkdl lr --job lenet --replications 2 --train-samples 512 --out runs/lr-lenet
    sparkdl lr --method adaptive --job lenet --replications 5 --out runs/lr-lenet-adaptive

The parser, ``main`` and what the command prints; the searches are :mod:`optimize.lr`'s, each learning rate's
cost the mean of real jobs (:class:`optimize.objective.JobObjective`) in the campaign folder ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from optimize.figures import lr_cost_figure, save
from optimize.lr import METHODS, LRSearchResult, check_options, trajectory_table, write_csv
from optimize.objective import JobObjective
from optimize.session import ClusterOptions, JobConfig, add_optimizer_job, check_job, open_session, submit_options
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.cost import parse_cost
from sparkdl.options import CommandParser, SAMPLES, add_cost, add_out, add_seed, cluster_options, renamed


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl lr", parents=[cluster_options()],
                      description="Learning-rate search on real jobs through the harness (Marinos 2021, V).")
    add_out(p, "the campaign folder the search's jobs go to, e.g. runs/lr-lenet", required=True)
    p.add_argument("--resume", action="store_true", help="continue the search in --out (finished jobs are reused)")
    p.add_argument("--method", choices=sorted(METHODS), default="paper",
                   help="paper heuristic (default), golden (bracketing + Brent), adaptive (golden, sequential replication)")
    p.add_argument("--start", type=float, default=0.002, help="first learning rate (default 0.002)")
    p.add_argument("--replications", type=int, default=5,
                   help="jobs per learning rate (default 5; adaptive: at most, the answer always gets all)")
    p.add_argument("--max-points", type=int, default=40, help="stop after this many learning rates (default 40)")
    p.add_argument("--max-lr", type=float, help="never try a learning rate above this")
    add_cost(p, "the search minimises its mean")
    add_optimizer_job(p)
    renamed(p, "--model", "--job")
    for name, default in (("nodes", 1), ("executors", 1), ("executor-cores", 1), ("batch-size", 256), ("epochs", 1)):
        p.add_argument(f"--{name}", type=int, default=default, help=f"default {default}")
    p.add_argument("--train-samples", type=SAMPLES, help="train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="validate on the first N digits only")
    add_seed(p, "the jobs' weights at replicate 1 (replicate r: seed+r-1)", default=42)
    return p


def print_result(result: LRSearchResult, formula: str, reused: int) -> None:
    print()
    print(trajectory_table(result))
    print(f"\n{result.method}: best learning rate {result.best_lr!r} (mean cost {result.best.mean:.5g} = "
          f"{formula}); {len(result.points)} points, {result.jobs} jobs ({reused} reused from the store); "
          f"stopped: {result.stop_reason}")
    print("every job's learning rate was read back from its log and matched the one asked")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    cost = parse_cost(args.cost)
    config = JobConfig(model=check_job(args.job), nodes=args.nodes, executors=args.executors,
                       executor_cores=args.executor_cores, batch_size=args.batch_size, epochs=args.epochs,
                       learning_rate=args.start)
    settings = {"optimizer": "lr", "method": args.method, "start": args.start, "replications": args.replications,
                "max_points": args.max_points, "max_lr": args.max_lr, "cost": cost.formula,
                "config": config.settings(), "train_samples": args.train_samples,
                "test_samples": args.test_samples, "seed": args.seed}
    cluster = ClusterOptions.from_args(args)
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.seed)
    check_options(args.start, args.replications, args.max_points, args.max_lr)
    on_interrupt(f"finished jobs are kept in {args.out}; continue with --resume")
    with open_session(args.out, settings, options, cluster, [config.spec(1, 1)], args.resume, say) as session:
        objective = JobObjective(session, config, cost)
        result = METHODS[args.method](objective, args.start, args.replications, max_points=args.max_points,
                                      max_lr=args.max_lr)
        reused = len(objective.results) - session.executed
    print_result(result, cost.formula, reused)
    csv_path = write_csv(result, args.out / "lr_search.csv")
    png = save(lr_cost_figure(result, cost.formula), args.out / "lr_search.png")
    print(f"wrote {csv_path} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
