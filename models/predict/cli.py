"""``sparkdl predict RESULTS --response wall_clock_s``: fit every model, print the comparison:
the noise ceiling (``noise_ceiling_r2``, the R^2 of the cell means of replicated design points, or
"not known" without replicates), each model's R^2 also as a share of it, MAPE, MSE, the empirical
coverage of its CV+ prediction intervals at ``--level`` on the held-out rows, and a ``warning`` per
row (R^2 < 0, parameters on their bounds, one-level inputs, rows or predictions outside the training
ranges). The generic model's plain-language reading is withheld for a degenerate fit.

Exit codes (``sparkdl.errors``): 0 all models fitted; 3 some model failed on some split (its row
shows the error); 2 bad input (missing file or column, unknown model name, a column that cannot be
a factor).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from models.predict.compare import SPLITS, Comparison, ComparisonRow, compare, make_splits, parse_models
from models.predict.intervals import DEFAULT_FOLDS, DEFAULT_LEVEL, check_level
from models.predict.table import measured_columns, model_inputs, read_results
from models.results import factor_list, table_options, time_response
from sparkdl.errors import EXIT_RUNS_FAILED
from sparkdl.options import add_format, add_response, add_seed, renamed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparkdl predict", parents=[table_options()],
        description="Compare performance-prediction models on a campaign's results table.",
    )
    add_response(parser, "the results column to predict (default: the time column the campaign's manifest "
                         "records, else wall_clock_s)", None)
    renamed(parser, "--target", "--response")
    parser.add_argument("--models", default="all", help="all, or a comma list of linear,loglinear,rf,gb,generic,ernest")
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
    add_format(parser, ("text", "json"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    models = parse_models(args.models)
    check_level(args.level)
    args.response = args.response or time_response(args.results)
    results = read_results(args.results)
    measured = measured_columns(results, args.measured, args.response)
    table, choice = model_inputs(results, args.response, factor_list(args.factors), args.results, measured)
    if choice.source == "guessed":
        print(f"note: factors taken from the columns (no manifest.json, no --factors): "
              f"{', '.join(choice.factors) or 'none'}", file=sys.stderr)
    n_all = len(table)
    finite = np.isfinite(pd.to_numeric(table[args.response], errors="coerce").to_numpy(dtype=float))
    for column in measured:  # a run without the measurement (observation off, a failed sampler) is left out
        finite &= np.isfinite(pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float))
    table = table[finite].reset_index(drop=True)
    kinds = list(SPLITS) if args.split == "both" else [args.split]
    splits = make_splits(table, kinds, args.seed, args.extrapolate_by, args.test_fraction)
    result = compare(splits, args.response, models, args.seed, measured, choice.factors,
                     None if args.no_intervals else args.level, args.interval_folds)
    if n_all > len(table):
        what = " or measured input" if measured else ""
        print(f"note: dropped {n_all - len(table)} rows with no finite {args.response}{what}", file=sys.stderr)
    if measured:
        print(f"note: rf and gb also take the measured columns {', '.join(measured)}", file=sys.stderr)
    print(to_json(result) if args.format == "json" else to_text(result, len(table)))
    failed = [row for row in result.rows if row.error]
    for row in failed:
        print(f"error: {row.model} on the {row.split} split: {row.error}", file=sys.stderr)
    return EXIT_RUNS_FAILED if failed else 0


def readings(result: Comparison) -> dict[str, list[str]]:
    """The generic model's plain-language notes per split, withheld for a degenerate fit (the fit's own
    problems) or a split where it scored R^2 < 0."""
    r2 = {r.split: r.r2 for r in result.rows if r.model == "generic"}
    out = {}
    for kind, fit in result.generic_fits.items():
        if not fit.degenerate and kind in r2 and r2[kind] < 0:
            out[kind] = [f"reading withheld: R^2 {r2[kind]:.3g} < 0 on this split, the formula does not describe "
                         "the held-out rows"]
        else:
            out[kind] = fit.scaling_notes()
    return out


def _row_text(r: ComparisonRow) -> str:
    head = f"{r.model:<9} {r.split:<12} {r.n_train:>7} {r.n_test:>6}"
    if r.error:
        return f"{head}  failed: {r.error}"
    if not math.isfinite(r.r2_share_of_ceiling):
        share = f"{'-':>7}"
    else:
        share = f"{100 * r.r2_share_of_ceiling:>6.0f}%" if r.r2 >= 0 else f"{'<0':>7}"
    cover = f"{100 * r.coverage:>7.0f}%" if math.isfinite(r.coverage) else f"{'-':>8}"
    return (f"{head} {r.r2:>8.3f} {share} {100 * r.mape:>7.1f}% {r.mse:>11.4g} {cover} {r.fit_seconds:>7.2f}"
            f"{'  !' if r.warning else ''}")


def to_text(result: Comparison, n_rows: int) -> str:
    """The noise ceiling, the comparison as an aligned table (R^2 also as a share of the ceiling, interval
    coverage, ! for a warning), the warnings, then the generic model's fitted formula and its reading."""
    lines = [f"target {result.target}, {n_rows} rows"]
    lines += [f"  {kind} split: {description}" for kind, description in result.splits.items()]
    if result.ceiling is not None:
        lines.append(f"  {result.ceiling.describe()}")
    levels = {r.interval_level for r in result.rows if math.isfinite(r.interval_level)}
    cover = f"cov@{100 * levels.pop():.0f}%" if len(levels) == 1 else "coverage"
    header = (f"{'model':<9} {'split':<12} {'n_train':>7} {'n_test':>6} {'R^2':>8} {'%ceil':>7} {'MAPE':>8} "
              f"{'MSE':>11} {cover:>8} {'fit_s':>7}")
    lines += ["", header, "-" * len(header)]
    lines += [_row_text(r) for r in result.rows]
    if result.warnings:
        lines += ["", "warnings (! above):"] + [f"  {w}" for w in result.warnings]
    notes = readings(result)
    for kind, fit in result.generic_fits.items():
        how = (f"{fit.iterations} DE generations" if fit.search == "de"
               else f"normal-form exponents, {fit.iterations} coordinate sweeps, {fit.evaluations} CV evaluations")
        lines += ["", f"generic model, {kind} split ({how}, {fit.fit_seconds:.2f} s):", f"  {fit.formula()}"]
        lines += [f"  {note}" for note in notes[kind]]
        if fit.dropped:
            lines.append(f"  constant in training, left out: {', '.join(fit.dropped)}")
    return "\n".join(lines)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def to_json(result: Comparison) -> str:
    """The comparison as JSON (NaN becomes null)."""
    ceiling = result.ceiling
    notes = readings(result)
    payload = {
        "target": result.target,
        "noise_ceiling_r2": ceiling.r2 if ceiling is not None else None,
        "noise_ceiling": None if ceiling is None else {
            **asdict(ceiling), "known": ceiling.known, "text": ceiling.describe(),
        },
        "splits": result.splits,
        "rows": [asdict(r) for r in result.rows],
        "warnings": result.warnings,
        "generic": {
            kind: {**asdict(fit), "formula": fit.formula(), "notes": notes[kind], "degenerate": fit.degenerate}
            for kind, fit in result.generic_fits.items()
        },
    }
    return json.dumps(_finite(payload), indent=2)
