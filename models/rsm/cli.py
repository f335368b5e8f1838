"""``sparkdl rsm RESULTS --response R --factors A,B,C [--goal max|min] [--transform log]
[--format text|json|csv] [--plots DIR] [--whole-plot FACTORS|none] [--block COLUMN]``.

When the table has a ``whole_plot`` column (a split-plot campaign), or with ``--whole-plot``, the terms
are tested by the split-plot REML fit (:mod:`models.rsm.splitplot`) instead of least squares.

``--format json`` prints the whole result, ``--format csv`` its coefficients (one row per term: natural, coded,
se, t, p)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from models.anova.splitplot import add_split_plot_options, split_plot_request
from models.errors import SurfaceError
from models.results import load_results
from models.rsm.analysis import analyse
from models.rsm.plots import save_all
from sparkdl.options import CommandParser, add_campaign, add_format, add_seed


class _Parser(CommandParser):
    def error(self, message: str) -> None:  # one line and exit code 2, like every input error
        raise SurfaceError(f"{message} (see sparkdl rsm --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="sparkdl rsm",
                description="Fit a full second-order response surface to a campaign's ok jobs: coefficients in "
                            "coded and natural units, ANOVA with lack of fit, stationary point and canonical "
                            "analysis, ridge analysis, contour and surface plots.")
    add_campaign(p, "the runs to fit the surface to", dest="results")
    p.add_argument("--response", metavar="COLUMN", required=True, help="the results column to fit, e.g. wall_clock_s or accuracy")
    p.add_argument("--factors", required=True, help="comma-separated numeric factor columns, e.g. learning_rate,batch_size")
    p.add_argument("--goal", choices=("max", "min"), default="max",
                   help="which way is better, for the best setting and the ridge (default max)")
    p.add_argument("--transform", choices=("none", "log"), default="none",
                   help="log: fit log(response) (positive responses with multiplicative noise, e.g. times); "
                        "predictions are back-transformed")
    add_format(p)
    p.add_argument("--plots", metavar="DIR", help="write contour and surface PNGs for every pair of factors here")
    add_seed(p, "the search over the region")
    add_split_plot_options(p, "tests")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    factors = tuple(f.strip() for f in args.factors.split(",") if f.strip())
    table = load_results(args.results, compute_cost=False, factors=factors).say()
    frame = table.frame
    if args.response in frame.columns:
        frame = frame[frame[args.response].notna()].reset_index(drop=True)
    split = split_plot_request(args.whole_plot, args.block, frame, factors, SurfaceError)
    if split is None:
        result = analyse(frame, args.response, factors, args.goal, args.seed, args.transform)
    else:
        result = analyse(frame, args.response, factors, args.goal, args.seed, args.transform,
                         whole_plot_factors=split[0], whole_plot=split[1], block=args.block)
    written = save_all(result.fit, args.plots, mark=result.best.natural) if args.plots else []
    summary = result.summary()
    if args.format == "json":
        summary = replace(summary, doc={**summary.doc, "source": table.source, "rows": table.describe_dropped(),
                                        "plots": [str(p) for p in written]})
    elif args.format == "text":
        summary = replace(summary, lines=(table.describe_dropped(), *summary.lines, *(f"wrote {p}" for p in written)))
    print(summary.render(args.format))
    return 0
