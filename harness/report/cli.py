"""``python -m harness.report RUNS_DIR [-o report.html] [--response cost] [--cost EXPR]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.report.build import build_report
from models.errors import FitError, ModelError

DEFAULT_NAME = "report.html"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m harness.report",
        description="Write a campaign's self-contained HTML report: design and aliasing, run status, results, "
                    "ANOVA with assumption checks and plots, queue metrics, and what the data say.",
    )
    p.add_argument("results", help="campaign directory (runs/NAME) or a results CSV")
    p.add_argument("-o", "--output", type=Path,
                   help=f"HTML file to write (default RUNS_DIR/{DEFAULT_NAME}, or NAME-report.html in the current directory for a CSV)")
    p.add_argument("--response", default="cost", help="response column to analyse (default: cost)")
    p.add_argument("--cost", help="cost from wall_clock_s and accuracy: pct2 (default, T/(A*100)^2), acc2, time, "
                                  "tta:TARGET, or an expression of T and A")
    p.add_argument("--no-plots", action="store_true", help="skip the figures (faster; tables and text only)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    return p


def default_output(results: Path) -> Path:
    return results / DEFAULT_NAME if results.is_dir() else Path(f"{results.stem}-report.html")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source = Path(args.results)
    if not 0 < args.alpha < 1:
        print(f"error: --alpha {args.alpha} must be between 0 and 1, e.g. 0.05", file=sys.stderr)
        return 2
    out = args.output or default_output(source)
    try:
        report = build_report(source, response=args.response, cost=args.cost, alpha=args.alpha,
                              plots=not args.no_plots)
        written = report.write(out)
    except FitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (ModelError, HarnessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {out}: {exc.strerror}; choose another -o", file=sys.stderr)
        return 1
    n, kept = len(report.campaign.raw), len(report.campaign.frame)
    print(f"wrote {written} ({kept} of {n} jobs analysed; {len(report.analysis.figures)} plot(s))")
    return 0
