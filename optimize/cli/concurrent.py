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
from sparkdl.options import (CommandParser, SAMPLES, add_out, add_seed, cluster_options, renamed,
                             whole_number)
from sparkdl.schemas import SPACE_LIMITS


def learning_rate(text: str) -> float:
    """An argparse type: a learning rate inside the search spaces' limits (sparkdl.schemas.SPACE_LIMITS)."""
    low, high = SPACE_LIMITS["learning_rate"]
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number: give a learning rate from {low:g} to {high:g}") from None
    if not low <= value <= high:  # nan and inf too
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is out of range: give a learning rate from {low:g} to {high:g}")
    return value


def _whole(factor: str, what: str) -> object:
    low, high = SPACE_LIMITS[factor]
    return whole_number(int(low), int(high), what, factor)


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl concurrent", parents=[cluster_options()],
                      description="Run njobs copies of a job at once, per batch size (Albo Martínez 2021's factor).")
    add_out(p, "the campaign folder the groups' jobs go to (results.csv and concurrency.csv)", required=True)
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out, skipping finished groups")
    add_optimizer_job(p)
    renamed(p, "--model", "--job")
    p.add_argument("--cpus", type=_whole("executors", "executors"), default=1, help="executors (of one core) per job")
    p.add_argument("--njobs", type=whole_number(1, 1000, "copies", "njobs"), default=2,
                   help="copies submitted at once")
    p.add_argument("--batch-sizes", type=_whole("batch_size", "a batch size"), nargs="+", default=[64, 128, 256, 512],
                   help="one group of --njobs copies per batch size (default 64 128 256 512)")
    p.add_argument("--learning-rate", type=learning_rate, default=0.05, help="every job's learning rate (default 0.05)")
    p.add_argument("--epochs", type=_whole("epochs", "epochs"), default=1, help="every job's epochs (default 1)")
    p.add_argument("--train-samples", type=SAMPLES, help="train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="validate on the first N digits only")
    add_seed(p, "every job's weights", default=42)
    return p


def planned_groups(args: argparse.Namespace) -> list[tuple[int, list]]:
    """The groups ``main`` runs, as (group number, its runs' specs), from options checked before anything starts."""
    if args.cpus < 1 or args.njobs < 1:
        raise SearchOptionError("--cpus and --njobs must be >= 1")
    config = JobConfig(model=check_job(args.job), nodes=1, executors=args.cpus, executor_cores=1, epochs=args.epochs,
                       learning_rate=args.learning_rate, batch_size=args.batch_sizes[0])
    return [(g, [config.spec(run=(g - 1) * args.njobs + i, replicate=1, batch_size=batch)
                 for i in range(1, args.njobs + 1)]) for g, batch in enumerate(args.batch_sizes, start=1)]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    groups = planned_groups(args)
    settings = {"optimizer": "concurrent", **vars(args), "out": str(args.out), "state_dir": str(args.state_dir)}
    settings.pop("resume")
    cluster = ClusterOptions.from_args(args)
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.seed)
    # one worker big enough for all copies side by side
    shape = replace(groups[0][1][0], executors=args.cpus * args.njobs)
    on_interrupt(f"finished groups are kept in {args.out}; continue with --resume")
    with open_session(args.out, settings, options, cluster, [shape], args.resume, say) as session:
        for g, specs in groups:
            run_group(session, g, specs)
    table = courier_table(args.out)
    print()
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
