"""``sparkdl predict RESULTS --response wall_clock_s``: fit every model, print the comparison:
the noise ceiling (``noise_ceiling_r2``, the R^2 of the cell means of replicated design points, or
"not known" without replicates), each model's R^2 also as a share of it, MAPE, MSE, the empirical
coverage of its CV+ prediction intervals at ``--level`` on the held-out rows, and a ``warning`` per
row (R^2 < 0, parameters on their bounds, one-level inputs, rows or predictions outside the training
ranges). The generic model's plain-language reading is withheld for a degenerate fit. ``--format json`` prints the
whole comparison, ``--format csv`` one row per model and split.

Speed: the (model, split) pairs are fitted in ``--fit-processes`` worker processes at once (default: the CPUs this
process may use), the slow ones first; on a terminal (``--progress auto``) a line on stderr says which model starts
on which split and what it does (a tree's grid search, the power law's exponent search, the CV+ refits), and when
the scale-out analysis starts. stdout holds the result alone.

Exit codes (``sparkdl.errors``): 0 all models fitted; 3 some model failed on some split (its row
shows the error); 2 bad input (missing file or column, unknown model name, a column that cannot be
a factor).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from collections.abc import Callable

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, TooFewRowsError
from models.predict import parallelism as scale
from models.predict import work as amount
from models.predict.compare import SPLITS, compare, default_size_column, make_splits, parse_models, scale_covariates
from models.predict.splits import extrapolation_split
from models.predict.scaleout import advise, analyse
from models.predict.result import Comparison
from models.predict.intervals import DEFAULT_FOLDS, DEFAULT_LEVEL, check_level
from models.predict.table import measured_columns, model_inputs, read_results
from models.results import factor_list, factor_notes, table_options, time_response
from sparkdl.errors import EXIT_RUNS_FAILED
from sparkdl.numbers import json_safe
from sparkdl.options import CommandParser, add_format, add_parallelism, add_response, add_seed, add_work, renamed

MAX_RUNS_PER_SHAPE = 100
MAX_FIT_PROCESSES = 64


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="sparkdl predict", parents=[table_options()],
        description="Compare performance-prediction models on a campaign's results table.",
    )
    add_response(parser, "the results column to predict (default: the time column the campaign's manifest "
                         "records, else wall_clock_s)", None)
    renamed(parser, "--target", "--response")
    parser.add_argument("--models", default="all",
                        help="all, or a comma list of linear,loglinear,rf,gb,generic,ernest,amdahl,usl")
    add_parallelism(parser)
    add_work(parser)
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both", help="evaluation split (default: both)")
    parser.add_argument("--extrapolate-by", default=None,
                        help="size column of the extrapolation split (default: parallelism m)")
    parser.add_argument("--test-fraction", type=float, default=0.2, help="held-out fraction (default: 0.2)")
    add_seed(parser, "the random split and the models")
    parser.add_argument("--measured", metavar="all|COLS",
                        help="also give the tree models (rf, gb) columns measured during each run: all (every "
                             "spark_*/host_* column) or a comma list, e.g. host_cpu_busy_mean,spark_gc_share; they "
                             "explain a run, they are not known before it")
    parser.add_argument("--level", type=float, default=DEFAULT_LEVEL,
                        help="nominal level of the CV+ prediction intervals whose coverage is reported (default 0.9)")
    parser.add_argument("--interval-folds", type=int, default=DEFAULT_FOLDS,
                        help="CV+ folds: each costs one more fit per model and split (default 5)")
    parser.add_argument("--no-intervals", action="store_true", help="skip the intervals (faster)")
    parser.add_argument("--fit-processes", type=int, default=None, metavar="N",
                        help="fit N (model, split) pairs at once in worker processes (default: the CPUs this process "
                             "may use; 1 fits them one after another here); the figures do not depend on it")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="a line on stderr as each model starts on each split: auto (when stderr is a terminal), "
                             "always, never")
    scale_out = parser.add_argument_group("scale-out (the scaling curves amdahl, usl, ernest and the power law)")
    scale_out.add_argument("--at", metavar="M[,M...]",
                           help="predict at these parallelisms, beyond the runs (every setting of the other factors; "
                                "with --work COLUMN=VALUE at that amount of work, from the smallest parallelism run "
                                "up), with the interval over the scaling curves that fit")
    scale_out.add_argument("--next", action="store_true",
                           help="with --at: rank the affordable shapes by how much their runs would narrow the "
                                "interval at M (the largest --at), with the expected interval and the cost")
    scale_out.add_argument("--candidates", metavar="M1,M2,...",
                           help="with --next: the parallelisms you can run (default: the training levels and the "
                                "whole numbers between the largest and --at)")
    scale_out.add_argument("--replications", type=int, default=2,
                           help="with --next: runs per candidate shape (default 2)")
    add_format(parser)
    return parser


def _no_extrapolation(table: pd.DataFrame, by: str | None) -> str | None:
    """Why the default splits cannot hold an extrapolate split (its column has one level: the runs share one scale),
    None when they can; any other problem with the column is left to the split itself."""
    try:
        extrapolation_split(table, by or default_size_column(table))
    except TooFewRowsError as exc:
        return str(exc)
    except InvalidTableError:
        return None
    return None


def _numbers(text: str, flag: str, example: str) -> list[float]:
    """A comma list of numbers (``--at``, ``--candidates``), at most 10,000 characters and 1,000 values."""
    if len(text) > 10_000:
        raise InvalidTableError(f"{flag} is {len(text)} characters long; give a few parallelisms, e.g. {example}")
    try:
        return [float(v) for v in text.split(",") if v.strip()][:1000]
    except ValueError:
        raise InvalidTableError(f"{flag} {text[:60]!r}: give parallelisms as numbers, e.g. {example}") from None


def _candidates(text: str | None) -> list[float] | None:
    if text is None:
        return None
    values = _numbers(text, "--candidates", "3,4,6")
    if not values or not all(math.isfinite(v) for v in values):
        raise InvalidTableError(f"--candidates {text[:60]!r}: give finite parallelisms, e.g. 3,4,6")
    return values


def _scales(text: str | None) -> list[float] | None:
    """``--at 16,32,48,64`` -> [16.0, 32.0, 48.0, 64.0]; one line naming the fix for anything else."""
    if text is None:
        return None
    values = _numbers(text, "--at", "16,32,48,64")
    if not values:
        raise InvalidTableError(f"--at {text[:60]!r}: give parallelisms as numbers, e.g. 16,32,48,64")
    for value in values:
        if not (math.isfinite(value) and value >= 1):
            raise InvalidTableError(f"--at {value:g}: give a parallelism of at least 1, larger than the runs reach")
    if len(set(values)) < len(values):
        twice = next(v for v in values if values.count(v) > 1)
        raise InvalidTableError(f"--at names parallelism {twice:g} twice; give each scale once")
    return values


def _check_scale_options(args: argparse.Namespace) -> None:
    args.at = _scales(args.at)
    if (args.next or args.candidates is not None) and args.at is None:
        raise InvalidTableError("--next needs --at M, the parallelism you want to know about")
    if not 1 <= args.replications <= MAX_RUNS_PER_SHAPE:
        raise InvalidTableError(f"--replications {args.replications}: give 1 to {MAX_RUNS_PER_SHAPE} runs per shape")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    models = parse_models(args.models)
    check_level(args.level)
    if args.fit_processes is not None and not 1 <= args.fit_processes <= MAX_FIT_PROCESSES:
        raise InvalidTableError(f"--fit-processes {args.fit_processes}: give 1 to {MAX_FIT_PROCESSES} processes")
    _check_scale_options(args)
    candidates = _candidates(args.candidates)
    args.response = args.response or time_response(args.results)
    results = read_results(args.results, also=[args.response])
    found = _parallelism(results, args.parallelism, needed=args.at is not None)
    work = amount.resolve(results, args.work)
    measured = measured_columns(results, args.measured, args.response)
    table, choice = model_inputs(results, args.response, factor_list(args.factors), args.results, measured)
    for line in factor_notes(choice):
        print(f"note: {line}", file=sys.stderr)
    if found is not None:
        table = scale.with_parallelism(table.assign(**{c: results[c] for c in found.columns if c not in table}),
                                       found)
        if found.source != "harness":
            print(f"note: {found.note}", file=sys.stderr)
    if work is not None and work.column not in table:
        table = table.assign(**{work.column: results[work.column]})
    n_all = len(table)
    finite = np.isfinite(pd.to_numeric(table[args.response], errors="coerce").to_numpy(dtype=float))
    for column in measured:  # a run without the measurement (observation off, a failed sampler) is left out
        finite &= np.isfinite(pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float))
    table = table[finite].reset_index(drop=True)
    kinds = list(SPLITS) if args.split == "both" else [args.split]
    if args.split == "both" and (why := _no_extrapolation(table, args.extrapolate_by)) is not None:
        print(f"note: the extrapolate split is left out ({why}): the random split alone", file=sys.stderr)
        kinds = ["random"]
    splits = make_splits(table, kinds, args.seed, args.extrapolate_by, args.test_fraction)
    scale_columns = found.columns if found is not None else None
    say = _progress(args.progress)
    result = compare(splits, args.response, models, args.seed, measured, choice.factors,
                     None if args.no_intervals else args.level, args.interval_folds, scale_columns, args.level,
                     progress=say, jobs=args.fit_processes or available_cpus(), work=work)
    if args.at is not None:
        covariates = scale_covariates(table, choice.factors, scale_columns, work)
        shown = ", ".join(f"{v:g}" for v in args.at)
        say(f"predict: the interval at parallelism {shown} over the scaling curves ({len(table)} rows)")
        result = dataclasses.replace(result, at=analyse(table, args.response, covariates, at=args.at, level=args.level,
                                                        work=work))
        if args.next:
            say("predict: which shapes' runs would narrow that interval most (--next)")
            result = dataclasses.replace(result, advice=advise(table, args.response, covariates, max(args.at),
                                                               candidates, args.replications, args.level, work=work))
    if n_all > len(table):
        what = " or measured input" if measured else ""
        print(f"note: dropped {n_all - len(table)} rows with no finite {args.response}{what}", file=sys.stderr)
    if measured:
        print(f"note: rf and gb also take the measured columns {', '.join(measured)}", file=sys.stderr)
    print(result.summary(len(table)).render(args.format))
    failed = [row for row in result.rows if row.error]
    for row in failed:
        print(f"error: {row.model} on the {row.split} split: {row.error}", file=sys.stderr)
    return EXIT_RUNS_FAILED if failed else 0


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _progress(when: str) -> Callable[[str], None]:
    """Where the progress lines go: stderr (always, or when it is a terminal under auto), else nowhere; stdout
    stays the result's alone (--format json/csv)."""
    if when == "never" or (when == "auto" and not sys.stderr.isatty()):
        return lambda _: None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _parallelism(results: pd.DataFrame, spec: str | None, needed: bool) -> scale.Parallelism | None:
    """The parallelism of the table: ``spec``'s (every value checked), else the default; a default whose values
    cannot be a scale is dropped with a note (the non-scaling models do not need it) unless ``needed``."""
    found = scale.resolve(results, spec)
    if found is None:
        if needed:
            raise InvalidTableError("--at: the table has no resource column (nodes, executors, executor_cores, cpus); "
                                    "name the scale with --parallelism COLUMN")
        return None
    if spec is None:
        try:
            found.values(results)
        except InvalidTableError as exc:
            if needed:
                raise
            print(f"note: no parallelism for the scaling models: {exc}", file=sys.stderr)
            return None
    return found


def to_text(result: Comparison, n_rows: int) -> str:
    """The comparison as text (:meth:`Comparison.text`)."""
    return result.text(n_rows)


def to_json(result: Comparison) -> str:
    """The comparison as JSON (:meth:`Comparison.to_dict`; NaN becomes null)."""
    return json.dumps(json_safe(result.to_dict()), indent=2)
