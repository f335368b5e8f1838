"""``python -m models.predict RESULTS --target wall_clock_s``: fit every model, print the comparison.

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

from models.predict.compare import SPLITS, Comparison, compare, make_splits, parse_models
from models.predict.table import measured_columns, model_inputs, read_results
from models.results import factor_list, table_options
from sparkdl.errors import EXIT_RUNS_FAILED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m models.predict", parents=[table_options()],
        description="Compare performance-prediction models on a campaign's results table.",
    )
    parser.add_argument("--target", default="wall_clock_s", help="column to predict (default: wall_clock_s)")
    parser.add_argument("--models", default="all", help="all, or a comma list of linear,rf,gb,generic,ernest")
    parser.add_argument("--split", choices=(*SPLITS, "both"), default="both", help="evaluation split (default: both)")
    parser.add_argument("--extrapolate-by", default=None,
                        help="size column of the extrapolation split (default: parallelism m)")
    parser.add_argument("--test-fraction", type=float, default=0.2, help="held-out fraction (default: 0.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the random split and the models")
    parser.add_argument("--measured", metavar="all|COLS",
                        help="also give the tree models (rf, gb) columns measured during each run: all (every "
                             "spark_*/host_* column) or a comma list, e.g. host_cpu_busy_mean,spark_gc_share; they "
                             "explain a run, they are not known before it")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    models = parse_models(args.models)
    results = read_results(args.results)
    measured = measured_columns(results, args.measured, args.target)
    table, choice = model_inputs(results, args.target, factor_list(args.factors), args.results, measured)
    if choice.source == "guessed":
        print(f"note: factors taken from the columns (no manifest.json, no --factors): "
              f"{', '.join(choice.factors) or 'none'}", file=sys.stderr)
    n_all = len(table)
    finite = np.isfinite(pd.to_numeric(table[args.target], errors="coerce").to_numpy(dtype=float))
    for column in measured:  # a run without the measurement (observation off, a failed sampler) is left out
        finite &= np.isfinite(pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float))
    table = table[finite].reset_index(drop=True)
    kinds = list(SPLITS) if args.split == "both" else [args.split]
    splits = make_splits(table, kinds, args.seed, args.extrapolate_by, args.test_fraction)
    result = compare(splits, args.target, models, args.seed, measured)
    if n_all > len(table):
        what = " or measured input" if measured else ""
        print(f"note: dropped {n_all - len(table)} rows with no finite {args.target}{what}", file=sys.stderr)
    if measured:
        print(f"note: rf and gb also take the measured columns {', '.join(measured)}", file=sys.stderr)
    print(to_json(result) if args.format == "json" else to_text(result, len(table)))
    failed = [row for row in result.rows if row.error]
    for row in failed:
        print(f"error: {row.model} on the {row.split} split: {row.error}", file=sys.stderr)
    return EXIT_RUNS_FAILED if failed else 0


def to_text(result: Comparison, n_rows: int) -> str:
    """The comparison as an aligned table, then the generic model's fitted formula and exponents."""
    lines = [f"target {result.target}, {n_rows} rows"]
    lines += [f"  {kind} split: {description}" for kind, description in result.splits.items()]
    header = f"{'model':<8} {'split':<12} {'n_train':>7} {'n_test':>6} {'R^2':>8} {'MAPE':>8} {'MSE':>11} {'fit_s':>7}"
    lines += ["", header, "-" * len(header)]
    for r in result.rows:
        if r.error:
            lines.append(f"{r.model:<8} {r.split:<12} {r.n_train:>7} {r.n_test:>6}  failed: {r.error}")
        else:
            lines.append(
                f"{r.model:<8} {r.split:<12} {r.n_train:>7} {r.n_test:>6} {r.r2:>8.3f} "
                f"{100 * r.mape:>7.1f}% {r.mse:>11.4g} {r.fit_seconds:>7.2f}"
            )
    for kind, fit in result.generic_fits.items():
        lines += ["", f"generic model, {kind} split ({fit.iterations} DE generations, {fit.fit_seconds:.2f} s):",
                  f"  {fit.formula()}"]
        lines += [f"  {note}" for note in fit.scaling_notes()]
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
    payload = {
        "target": result.target,
        "splits": result.splits,
        "rows": [asdict(r) for r in result.rows],
        "generic": {
            kind: {**asdict(fit), "formula": fit.formula(), "notes": fit.scaling_notes()}
            for kind, fit in result.generic_fits.items()
        },
    }
    return json.dumps(_finite(payload), indent=2)
