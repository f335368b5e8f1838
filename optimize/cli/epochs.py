"""Max epochs under a time budget (Schouten and Mukherjee, section V).

    sparkdl epochs runs/NAME --budget 120 --job lenet --fixed batch_size=64
    sparkdl epochs ... --confirm --out runs/NAME-confirm     # one real job at the answer

The parser, ``main``, the confirming job and what ``sparkdl epochs`` prints; the time model and the choice are
:mod:`optimize.epochs`'.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from models.predict import read_results
from optimize.epochs import EpochChoice, EpochTimeModel, max_epochs, parse_config, per_epoch_table
from optimize.errors import JobFailedError, SearchOptionError
from optimize.session import ClusterOptions, JobConfig, check_job, open_session, optimizer_jobs, submit_options
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.options import (LEVEL, SAMPLES, CommandParser, add_budget, add_campaign, add_job, add_out, add_seed,
                             cluster_options, now_positional, renamed)


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl epochs", description=__doc__.split("\n")[0],
                      parents=[cluster_options()])
    add_campaign(p, "the runs to learn each epoch count's time from")
    now_positional(p, "--campaign")
    add_budget(p, "the time one job may take", required=True)
    add_job(p, optimizer_jobs(), "the job whose epochs to choose (default: the campaign's, when it ran one)", default=None)
    p.add_argument("--fixed", default="", help="the job's other factors, fixed: key=value,... (nodes, batch_size...)")
    renamed(p, "--config", "--fixed")
    p.add_argument("--time", default="elapsed_s", help="time column (default elapsed_s; or wall_clock_s)")
    p.add_argument("--per-epoch", action="store_true",
                   help="learn from every validated epoch of each run's log (needs --time wall_clock_s)")
    p.add_argument("--lower", type=int, default=1, help="the fewest epochs to consider (default 1)")
    p.add_argument("--upper", type=int, default=20, help="the most epochs to consider (default 20)")
    p.add_argument("--step", type=int, default=1, help="the step between epoch counts (default 1)")
    p.add_argument("--level", type=LEVEL, default=0.9, help="interval level (default 0.9)")
    p.add_argument("--safe", action="store_true", help="choose by the interval's upper end")
    p.add_argument("--cv-folds", type=int, default=5, help="cross-validation folds of the intervals (default 5)")
    p.add_argument("--trees", type=int, default=100, help="trees per random forest (default 100)")
    add_seed(p, "the random forest and the cross-validation folds")
    p.add_argument("--confirm", action="store_true", help="run one real job at the answer and report its time")
    add_out(p, "with --confirm: the campaign folder of the confirming job")
    p.add_argument("--train-samples", type=SAMPLES, help="with --confirm: train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="with --confirm: validate on the first N digits only")
    return p


def _confirm(args: argparse.Namespace, config: dict[str, object], epochs: int) -> float:
    if args.out is None:
        raise SearchOptionError("--confirm needs --out DIR for the confirming job's campaign")
    fields = {k: config[k] for k in ("model", "nodes", "executors", "executor_cores", "batch_size", "learning_rate")
              if k in config}
    job = JobConfig(**{**fields, "epochs": epochs})  # type: ignore[arg-type]
    cluster = ClusterOptions.from_args(args)
    settings = {"optimizer": "epochs-confirm", "job": job.settings(), "budget": args.budget,
                "train_samples": args.train_samples, "test_samples": args.test_samples}
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    on_interrupt(f"the confirming job's campaign is {args.out}; run the same command again to resume it")
    with open_session(args.out, settings, options, cluster, [job.spec(1, 1)], True, say) as session:
        result = session.run(job.spec(1, 1))
    if result.status != "ok":
        raise JobFailedError(f"the confirming job {result.status}: {result.reason} (log: {args.out / result.execution.log})")
    return float(getattr(result, args.time))


def print_choice(choice: EpochChoice, args: argparse.Namespace) -> None:
    print(f"{'epochs':>6}  {'predicted s':>11}  {'forest':>8}  {'regression':>10}  {f'{args.level:.0%} interval':>17}")
    for p in choice.predictions:
        mark = " <- chosen" if p.epochs == choice.epochs else ""
        print(f"{p.epochs:>6}  {p.time:>11.1f}  {p.forest:>8.1f}  {p.regression:>10.1f}  "
              f"{p.low:>7.1f} .. {p.high:>7.1f}  {'fits' if p.fits else 'over'}{mark}")
    chosen = choice.chosen
    if chosen is None:
        print(f"no epoch count from {args.lower} fits a budget of {args.budget:g} s")
        return
    print(f"max epochs within {args.budget:g} s: {choice.epochs} (predicted {chosen.time:.1f} s, "
          f"{args.level:.0%} interval {chosen.low:.1f} .. {chosen.high:.1f} s)")
    if choice.extrapolated:
        print(f"note: the campaign's largest epoch count is {choice.largest_trained}; beyond it the forest "
              "cannot extrapolate and the answer rests on the regression")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = parse_config(args.fixed)
    if "model" in config:
        raise SearchOptionError(f"--fixed model={config['model']}: the job is named by --job; write --job "
                                f"{config['model']} and drop model= from --fixed")
    if args.per_epoch and args.time != "wall_clock_s":
        raise SearchOptionError("--per-epoch splits BigDL's wall clock by epoch only: add --time wall_clock_s")
    table = per_epoch_table(args.campaign) if args.per_epoch else read_results(args.campaign)
    if args.job is not None:
        config["model"] = check_job(args.job)
    model = EpochTimeModel(target=args.time, seed=args.seed, cv_folds=args.cv_folds, n_estimators=args.trees).fit(table)
    choice = max_epochs(model, config, args.budget, args.lower, args.upper, args.step, args.level, args.safe)
    print_choice(choice, args)
    if args.confirm and choice.epochs is not None:
        measured = _confirm(args, choice.config, choice.epochs)
        verdict = "within" if measured <= args.budget else "OVER"
        print(f"confirming job: {args.time} = {measured:.1f} s, {verdict} the budget of {args.budget:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
