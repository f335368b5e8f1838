"""``sparkdl report CAMPAIGN [--out report.html] [--response cost] [--cost COST] [--factors a,b]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from report.build import build_report
from models.errors import AnalysisOptionError
from models.results import factor_list, table_options
from sparkdl.errors import ToolError
from sparkdl.options import CommandParser, add_cost, add_out, add_response, renamed

DEFAULT_NAME = "report.html"


class ReportWriteError(ToolError):
    """The report file cannot be written."""


def _parser() -> argparse.ArgumentParser:
    p = CommandParser(
        prog="sparkdl report", parents=[table_options()],
        description="Write a campaign's self-contained HTML report: design and aliasing, run status, results, "
                    "ANOVA with assumption checks and plots, queue metrics, and what the data say.",
    )
    add_out(p, f"the HTML file to write (default CAMPAIGN/{DEFAULT_NAME}, or NAME-report.html in the current "
               "directory for a CSV)")
    renamed(p, "--output", "--out")
    renamed(p, "-o", "--out")
    add_response(p, "the results column to analyse", "cost")
    add_cost(p, "recomputed from wall_clock_s and accuracy (without it, a cost column in the table is used as given)")
    p.add_argument("--no-plots", action="store_true", help="skip the figures (faster; tables and text only)")
    p.add_argument("--target-accuracy", type=float,
                   help="the accuracy to find the fastest run for, in 'Time against accuracy' (default: the best seen)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    return p


def default_output(results: Path) -> Path:
    return results / DEFAULT_NAME if results.is_dir() else Path(f"{results.stem}-report.html")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source = Path(args.results)
    if not 0 < args.alpha < 1:
        raise AnalysisOptionError(f"--alpha {args.alpha} must be between 0 and 1, e.g. 0.05")
    if args.target_accuracy is not None and not 0 < args.target_accuracy <= 1:
        raise AnalysisOptionError(f"--target-accuracy {args.target_accuracy} must be a fraction in (0, 1], e.g. 0.95")
    out = args.out or default_output(source)
    report = build_report(source, response=args.response, cost=args.cost, alpha=args.alpha,
                          plots=not args.no_plots, factors=factor_list(args.factors),
                          target_accuracy=args.target_accuracy)
    for line in report.campaign.notices:
        print(f"note: {line}", file=sys.stderr)
    try:
        written = report.write(out)
    except OSError as exc:
        raise ReportWriteError(f"cannot write {out}: {exc.strerror}; choose another -o") from None
    n, kept = len(report.campaign.raw), len(report.campaign.frame)
    print(f"wrote {written} ({kept} of {n} jobs analysed; {len(report.analysis.figures)} plot(s))")
    return 0
