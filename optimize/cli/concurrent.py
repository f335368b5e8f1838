"""``sparkdl concurrent``: ``njobs`` copies of a job submitted at once to the same cluster, one group per batch size.

    sparkdl concurrent --out runs/courier --job lenet --cpus 1 --njobs 2 --batch-sizes 64 128

The parser, ``main`` and what the command prints (Courier's table of the campaign); the groups are run and
recorded by :mod:`optimize.concurrent`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace

from optimize.concurrent import courier_table, run_group
from optimize.errors import SearchOptionError
from optimize.session import ClusterOptions, JobConfig, add_optimizer_job, check_job, open_session, submit_options
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.options import CommandParser, SAMPLES, add_out, add_seed, cluster_options, renamed


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl concurrent", parents=[cluster_options()],
                      description="Run njobs copies of a job at once, per batch size (Albo Martínez 2021's factor).")
    add_out(p, "the campaign folder the groups' jobs go to (results.csv and concurrency.csv)", required=True)
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out, skipping finished groups")
    add_optimizer_job(p)
    renamed(p, "--model", "--job")
    p.add_argument("--cpus", type=int, default=1, help="executors (of one core) per job")
    p.add_argument("--njobs", type=int, default=2, help="copies submitted at once")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 128, 256, 512],
                   help="one group of --njobs copies per batch size (default 64 128 256 512)")
    p.add_argument("--learning-rate", type=float, default=0.05, help="every job's learning rate (default 0.05)")
    p.add_argument("--epochs", type=int, default=1, help="every job's epochs (default 1)")
    p.add_argument("--train-samples", type=SAMPLES, help="train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="validate on the first N digits only")
    add_seed(p, "every job's weights", default=42)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    if args.cpus < 1 or args.njobs < 1:
        raise SearchOptionError("--cpus and --njobs must be >= 1")
    config = JobConfig(model=check_job(args.job), nodes=1, executors=args.cpus, executor_cores=1, epochs=args.epochs,
                       learning_rate=args.learning_rate, batch_size=args.batch_sizes[0])
    settings = {"optimizer": "concurrent", **vars(args), "out": str(args.out), "state_dir": str(args.state_dir)}
    settings.pop("resume")
    cluster = ClusterOptions.from_args(args)
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.seed)
    # one worker big enough for all copies side by side
    shape = replace(config.spec(1, 1), executors=args.cpus * args.njobs)
    on_interrupt(f"finished groups are kept in {args.out}; continue with --resume")
    with open_session(args.out, settings, options, cluster, [shape], args.resume, say) as session:
        for g, batch in enumerate(args.batch_sizes, start=1):
            specs = [config.spec(run=(g - 1) * args.njobs + i, replicate=1, batch_size=batch)
                     for i in range(1, args.njobs + 1)]
            run_group(session, g, specs)
    table = courier_table(args.out)
    print()
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
