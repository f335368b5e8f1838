"""``sparkdl anova RESULTS --response cost``: ANOVA with assumption checks, as text, JSON or CSV.

``RESULTS`` is a campaign directory (its results.csv, factors from its manifest.json) or a CSV;
for a bare CSV give ``--factors a,b,c`` (else the columns taken as factors are named on stderr,
and a column that cannot be a factor is refused). Other options: ``--terms RHS``,
``--typ 1|2|3``, ``--format text|json|csv``, ``--transform log|boxcox``, ``--robust hc3``,
``--kruskal``, ``--plots DIR``.

Split-plot: when the table has a ``whole_plot`` column (a campaign of a split-plot design), or with
``--whole-plot FACTORS [--block COLUMN]``, the split-plot model is fitted instead
(:mod:`models.anova.splitplot`): REML, each term tested in its stratum. ``--whole-plot none`` forces
the ordinary ANOVA. Its JSON is ``SplitPlotResult.to_dict()`` plus ``"input"``. Otherwise JSON output
is ``{"rows": [{"term", "df", "sum_sq", "mean_sq",
"F", "p", "pct_variation", "effect", "coefficient"}, ...], "summary": {...}, "lenth": {...} |
null, "shares": {...} | null, "diagnostics": {...}, "kruskal": [...] | null, "log_transform_preview":
{...} | null, "input": {...}}``; NaN is written as null. CSV output is the rows alone, plus an ``lmg_pct``
column when the design is not orthogonal (see :mod:`models.anova.shares`).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from models.anova.analysis import Analysis, analyse
from models.anova.fit import ROBUST, TRANSFORMS
from models.anova.format import format_csv, format_split_plot, format_split_plot_csv, format_summary, format_table
from models.anova.splitplot import WHOLE_PLOT_COLUMN, add_split_plot_options, fit_split_plot, split_plot_request
from models.anova.splitplot_result import SplitPlotResult
from models.diagnostics import format_kruskal
from models.drift import MIN_REFERENCE_RUNS, DriftResult, adjust_for_drift, table_drift
from models.errors import AnalysisOptionError
from models.plots import save_figures
from models.results import ResultsTable, factor_list, load_results, table_options
from sparkdl.options import CommandParser, add_cost, add_format, add_response


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(
        prog="sparkdl anova", parents=[table_options()],
        description="ANOVA with assumption checks on a results table (CSV or campaign directory).",
    )
    add_response(p, "the results column to analyse", "cost")
    p.add_argument("--terms", help="right-hand side of the model formula, e.g. 'a + b*c'; default: "
                   "main effects plus estimable two-factor interactions")
    p.add_argument("--typ", type=int, choices=(1, 2, 3), help="sums of squares type (default 2; the split-plot "
                   "analysis always uses Type III Wald tests)")
    add_format(p)
    p.add_argument("--transform", choices=("none", *TRANSFORMS), default="none",
                   help="analyse y (none, the default), log(y) or Box-Cox(y)")
    p.add_argument("--robust", choices=ROBUST, help="HC3 robust F tests (with --typ 2 or 3)")
    p.add_argument("--kruskal", action="store_true", help="add a Kruskal-Wallis test per factor")
    add_cost(p, "recomputed from wall_clock_s and accuracy (without it, a cost column in the table is used as given)")
    p.add_argument("--include-failed", action="store_true", help="keep rows whose status is not ok")
    p.add_argument("--exclude-runs", default="", help="comma-separated run numbers to leave out")
    p.add_argument("--alias", action="append", default=[], metavar="GROUP",
                   help="alias group such as 'a:b = c:d' (repeatable)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--plots", metavar="DIR", help="also write the effect and residual plots as PNG files")
    add_split_plot_options(p, "analysis")
    return p


#: Options of the ordinary ANOVA that test whole-plot factors as if the runs were randomized.
RANDOMIZED_ONLY = (("robust", "--robust"), ("kruskal", "--kruskal"), ("plots", "--plots"), ("typ", "--typ"))


def check_split_plot_options(args: argparse.Namespace) -> None:
    for attr, flag in RANDOMIZED_ONLY:
        if getattr(args, attr):
            raise AnalysisOptionError(f"{flag} is not available with the split-plot analysis (it would treat the "
                                      "runs as fully randomized); drop it, or give --whole-plot none for the "
                                      "ordinary ANOVA")


def split_plot_text(table: ResultsTable, result: SplitPlotResult, response: str) -> str:
    what = f"cost = {table.cost_name}" if response == "cost" else f"response = {response}"
    return "\n".join([f"input: {table.source}: {table.describe_dropped()}; {what}", "", format_split_plot(result)])


def run_split_plot(args: argparse.Namespace, table: ResultsTable, factors: Sequence[str],
                   request: tuple[tuple[str, ...] | None, str | None], reference_drift: DriftResult | None) -> None:
    check_split_plot_options(args)
    whole_plot_factors, column = request
    result = fit_split_plot(table.frame, args.response, factors, whole_plot_factors=whole_plot_factors,
                            whole_plot=column, block=args.block, terms=args.terms, transform=args.transform,
                            aliases=args.alias, alpha=args.alpha)
    if whole_plot_factors is None:
        print(f"note: split-plot analysis: {result.whole_plots.count} whole plots from the {column!r} column; "
              f"whole-plot factors (constant within every whole plot): "
              f"{', '.join(result.whole_plots.factors) or 'none'} (--whole-plot none for the ordinary ANOVA)",
              file=sys.stderr)
    rhs = result.formula.split("~", 1)[1].strip()
    drift = reference_drift or table_drift(table.frame, table.reference, args.response, rhs, whole_plot=column,
                                           alpha=args.alpha)
    render(args.format, table, drift, csv=lambda: format_split_plot_csv(result), doc=result.to_dict,
           text=lambda: split_plot_text(table, result, args.response))


def render(fmt: str, table: ResultsTable, drift: DriftResult, *, csv: Callable[[], str],
           doc: Callable[[], dict], text: Callable[[], str]) -> None:
    """Print one analysis (ordinary or split-plot) with its drift check and input, as CSV, JSON or text."""
    if fmt == "csv":
        sys.stdout.write(csv())
    elif fmt == "json":
        out = {**doc(), "drift": drift.to_dict(), "input": table.to_dict()}
        json.dump(out, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(text() + "\n\n" + drift.to_text())


def run_numbers(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise AnalysisOptionError(f"--exclude-runs {text!r}: give run numbers like 2,3") from None


def to_text(table: ResultsTable, analysis: Analysis, response: str, written: Sequence[Path]) -> str:
    assert analysis.anova is not None and analysis.diagnostics is not None
    what = f"cost = {table.cost_name}" if response == "cost" else f"response = {response}"
    out = [f"input: {table.source}: {table.describe_dropped()}; {what}", "",
           format_table(analysis.anova), "", format_summary(analysis.anova), "", analysis.diagnostics.to_text()]
    if analysis.kruskal is not None:
        out += ["", format_kruskal(analysis.kruskal)]
    if analysis.log_comparison is not None:
        out += ["", analysis.log_comparison.to_text()]
    out += [f"note: {n}" for n in analysis.notes]
    if written:
        out += ["", "plots: " + ", ".join(str(w) for w in written)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.transform == "none":
        args.transform = None
    if not 0 < args.alpha < 1:
        raise AnalysisOptionError(f"--alpha {args.alpha} must be between 0 and 1, e.g. 0.05")
    table = load_results(args.results, cost=args.cost, include_failed=args.include_failed,
                         exclude_runs=run_numbers(args.exclude_runs), factors=factor_list(args.factors),
                         response=args.response)
    for line in table.notices():
        print(f"note: {line}", file=sys.stderr)
    table.require_rows()
    factors = [f for f in table.factors if f not in (args.response, args.block, WHOLE_PLOT_COLUMN)]
    table, reference_drift = with_reference_drift(table, args.response, args.alpha)
    request = split_plot_request(args.whole_plot, args.block, table.frame, factors, AnalysisOptionError)
    if request is not None:
        run_split_plot(args, table, factors, request, reference_drift)
        return 0
    analysis = analyse(table.frame, args.response, factors,
                       terms=args.terms, typ=args.typ or 2, transform=args.transform, robust=args.robust,
                       aliases=args.alias, alpha=args.alpha, kruskal=args.kruskal, plots=bool(args.plots))
    written = save_figures(analysis.figures, args.plots) if args.plots else []
    assert analysis.anova is not None
    drift = reference_drift or table_drift(table.frame, table.reference, args.response, analysis.anova.summary.terms,
                                           alpha=args.alpha)
    anova = analysis.anova
    render(args.format, table, drift, csv=lambda: format_csv(anova), doc=analysis.to_dict,
           text=lambda: to_text(table, analysis, args.response, written))
    return 0


def with_reference_drift(table: ResultsTable, response: str, alpha: float) -> tuple[ResultsTable, DriftResult | None]:
    """The table with a significant drift of its reference runs taken out of ``response`` (said on stderr), and
    that drift; the table unchanged and None when it has fewer than 3 reference runs."""
    if len(table.reference) < MIN_REFERENCE_RUNS or response not in table.reference.columns:
        return table, None
    drift = table_drift(table.frame, table.reference, response, alpha=alpha)
    frame, note = adjust_for_drift(table.frame, response, drift)
    if note:
        print(f"note: {note}", file=sys.stderr)
        table = replace(table, frame=frame)
    return table, drift
