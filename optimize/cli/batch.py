"""Courier (Albo Martínez 2021): the batch size with the highest predicted accuracy whose predicted response time meets a
latency SLO; when no candidate does, say so and return the fastest.

    sparkdl batch runs/courier --slo 300 --cpus 4 --njobs 2 --job lenet
    sparkdl batch runs/courier --evaluate 200      # Courier vs a uniformly random batch

The parser, ``main`` and what ``sparkdl batch`` prints; the forests, the choice and the evaluation are
:mod:`optimize.batch`'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from harness.job import builtin_names
from optimize.batch import CANDIDATES, BatchChoice, Courier, Evaluation, evaluate, load_table
from optimize.concurrent import COURIER_COLUMNS
from optimize.errors import SearchOptionError
from sparkdl.cli import run_cli
from sparkdl.measurements import MAX_WALL_CLOCK_S
from sparkdl.options import LEVEL, CommandParser, add_campaign, add_job, add_seed, now_positional, number_in, renamed


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl batch", description=__doc__.split("\n")[0])
    add_campaign(p, "results.csv and concurrency.csv of sparkdl concurrent, or a CSV with "
                    + ", ".join(COURIER_COLUMNS))
    now_positional(p, "--campaign")
    p.add_argument("--slo", type=number_in(0, MAX_WALL_CLOCK_S, "an SLO in seconds", "slo", low_open=True),
                   help="latency SLO in seconds")
    p.add_argument("--cpus", type=int, help="CPUs of the job")
    p.add_argument("--njobs", type=int, help="concurrent jobs")
    add_job(p, builtin_names(), "the job whose batch size to choose (default: the campaign's, when it ran one)",
            default=None)
    renamed(p, "--network", "--job")
    p.add_argument("--batches", type=int, nargs="+", default=list(CANDIDATES), help="candidates (64 128 256 512)")
    p.add_argument("--cv-folds", type=int, default=5, help="cross-validation folds of the intervals (default 5)")
    p.add_argument("--trees", type=int, default=100, help="trees per random forest (default 100)")
    add_seed(p, "the random forests, the held-out split and the drawn SLOs")
    p.add_argument("--evaluate", type=int, metavar="TRIALS", help="Courier vs random batch on held-out rows")
    p.add_argument("--margin", type=number_in(0, 100, "a margin", "margin"), default=0.0,
                   help="require predicted time x (1 + margin) <= SLO (default 0: Courier's rule)")
    p.add_argument("--level", type=LEVEL, default=0.9,
                   help="nominal level of the prediction intervals of a single choice (default 0.9)")
    p.add_argument("--slo-mean", type=float, default=300.0,
                   help="--evaluate: mean of the normal distribution each trial's SLO is drawn from, seconds (default 300)")
    p.add_argument("--slo-sd", type=float, default=100.0,
                   help="--evaluate: its standard deviation, seconds (default 100)")
    return p


def print_evaluation(ev: Evaluation, args: argparse.Namespace) -> None:
    both = ev.accuracy_when_both_meet()
    print(f"held-out configurations of {args.campaign} ({len(ev.rows)} trials, SLO ~ N({args.slo_mean:g}, "
          f"{args.slo_sd:g}), margin {args.margin:g}; measured means, not fresh jobs):")
    print(f"  SLO met:  Courier {ev.courier_fulfilment:.0%}   random batch {ev.random_fulfilment:.0%}")
    print(f"  accuracy: Courier {ev.courier_accuracy:.4f}  random batch {ev.random_accuracy:.4f}")
    print(f"  accuracy where both meet the SLO ({both[2]} trials): Courier {both[0]:.4f}  random {both[1]:.4f}")


def _ends(interval: tuple[float, float] | None, digits: int) -> str:
    return "" if interval is None else f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def print_choice(choice: BatchChoice, slo: float, level: float | None = None) -> None:
    pi = f"{level:.0%} PI" if level is not None else ""
    print(f"{'batch':>6}  {'pred. time (s)':>14} {pi:>18}  {'pred. accuracy':>14} {pi:>18}  SLO {slo:g} s")
    for c in choice.candidates:
        mark = " <- chosen" if c.batch == choice.batch else ""
        print(f"{c.batch:>6}  {c.time:>14.1f} {_ends(c.time_interval, 1):>18}  {c.accuracy:>14.4f} "
              f"{_ends(c.accuracy_interval, 4):>18}  {'met' if c.meets_slo else 'missed'}{mark}")
    chosen = choice.chosen
    if choice.meets_slo and chosen.time_interval is not None and chosen.time_interval[1] > slo:
        print(f"note: the {level:.0%} interval of batch {choice.batch}'s time reaches {chosen.time_interval[1]:.1f} s, "
              f"above the SLO: it may be missed (raise --margin to guard against it)")
    if choice.meets_slo:
        print(f"batch {choice.batch}: highest predicted accuracy within the SLO")
    else:
        print(f"no batch size meets the SLO of {slo:g} s: batch {choice.batch} is the fastest "
              f"(predicted {choice.chosen.time:.1f} s)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    table = load_table(args.campaign)
    courier = Courier(seed=args.seed, cv_folds=args.cv_folds, n_estimators=args.trees)
    if args.evaluate:
        print_evaluation(evaluate(table, args.evaluate, args.slo_mean, args.slo_sd, seed=args.seed,
                                  batches=args.batches, courier=courier, margin=args.margin), args)
        return 0
    if args.slo is None or args.cpus is None or args.njobs is None:
        raise SearchOptionError("give --slo, --cpus and --njobs (or --evaluate TRIALS)")
    courier.level = args.level
    jobs = sorted(table["network"].astype(str).unique())
    job = args.job or (jobs[0] if len(jobs) == 1 else None)
    if job is None:
        raise SearchOptionError(f"the campaign ran the jobs {', '.join(jobs)}: name one with --job")
    choice = courier.fit(table).choose({"cpus": args.cpus, "njobs": args.njobs, "network": job}, args.slo,
                                       args.batches, args.margin)
    print_choice(choice, args.slo, args.level)
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
