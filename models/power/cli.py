"""``sparkdl plan DESIGN --effect 5%`` (``sparkdl plan``): replicates, power and detectable effects.

``DESIGN`` is a design CSV (``harness.design`` output), a results CSV or a campaign folder. A table
holding the response is a pilot: its replicates give the noise (``--noise replicates``, the pooled
SD within design points; or ``--noise residual``, the model's root MSE) and its run times the
cluster time. Else give the noise (``--cv 10%``, or ``--sd`` in units) or a ``--pilot``. Output,
per factor: the power the design has now, the smallest effect it detects at ``--power``, the
replicates of every design point needed, and the cluster time those would take.
``--format json`` writes ``PowerPlan.to_dict()``; ``--format csv`` the per-factor rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from models.errors import PlanError
from models.power.compute import (
    MAX_REPLICATES,
    SCALES,
    default_scale,
    given_noise,
    parse_effect,
    parse_percent,
    pilot_noise,
    plan_power,
    point_times,
    with_whole_plot_noise,
)
from models.anova.terms import default_terms
from models.power.format import format_csv, format_text
from models.power.inputs import read_inputs
from models.results import factor_list, time_response
from sparkdl.options import CommandParser, add_format, add_response


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(
        prog="sparkdl plan",
        description="Power and sample size per factor: the replicates needed to detect an effect, the power the "
                    "design has, and the smallest effect it detects.",
    )
    p.add_argument("design", help="design CSV (harness.design output), results CSV, or campaign directory (a pilot "
                                  "when it holds the response)")
    p.add_argument("--effect", required=True,
                   help="effect to detect between each factor's extreme levels: in %% of the response (5%%, a ratio, "
                        "analysed on the log scale) or in the response's units (0.3)")
    p.add_argument("--power", type=float, default=0.8, help="power to reach (default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the F tests (default 0.05)")
    add_response(p, "the pilot's results column (default: the time column the campaign's manifest records, else "
                    "wall_clock_s)", None)
    p.add_argument("--factors", help="comma-separated factor columns (default: the campaign's manifest.json, or the "
                                     "design's columns)")
    p.add_argument("--terms", help="right-hand side of the model the tests are made in, e.g. 'a + b*c'; default: "
                                   "main effects plus estimable two-factor interactions")
    p.add_argument("--cv", help="the replicate noise as a coefficient of variation, e.g. 10%% (instead of a pilot's)")
    p.add_argument("--sd", type=float, help="the replicate noise as an SD in the response's units (linear scale)")
    p.add_argument("--pilot", help="campaign directory or results CSV whose replicates give the noise and run times "
                                   "for a design CSV")
    p.add_argument("--noise", choices=("replicates", "residual"), default="replicates",
                   help="a pilot's noise: pooled SD within design points (default) or the model's residual")
    p.add_argument("--scale", choices=SCALES,
                   help="analysis scale (default: log for an effect in %%, linear for one in units)")
    p.add_argument("--whole-plot", metavar="FACTORS",
                   help="comma-separated hard-to-change factors set once per whole plot (split-plot design)")
    p.add_argument("--whole-plot-cv", help="SD of the whole-plot error as a CV, e.g. 15%% (with --whole-plot)")
    p.add_argument("--variance-ratio", type=float,
                   help="whole-plot error variance over the run noise variance (with --whole-plot)")
    p.add_argument("--max-replicates", type=int, default=MAX_REPLICATES,
                   help=f"look for the replicates needed up to this many (default {MAX_REPLICATES})")
    add_format(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    effect = parse_effect(args.effect)
    scale = args.scale or default_scale(effect)
    if args.max_replicates < 1:
        raise PlanError(f"--max-replicates {args.max_replicates} must be 1 or more")
    given = args.cv is not None or args.sd is not None
    args.response = args.response or time_response(args.design)
    inp = read_inputs(args.design, response=args.response, factors=factor_list(args.factors), pilot=args.pilot)
    for line in inp.notices:
        print(f"note: {line}", file=sys.stderr)
    factors = [f for f in inp.factors if inp.design[f].nunique(dropna=True) > 1]
    if inp.pilot is not None and not given:
        rhs = args.terms or default_terms(inp.pilot, [f for f in factors if inp.pilot[f].nunique() > 1]).rhs
        noise = pilot_noise(inp.pilot, args.response, factors, scale, args.noise, rhs)
    elif given:
        mean = float(inp.pilot[args.response].astype(float).mean()) if inp.pilot is not None else None
        noise = given_noise(scale, cv=parse_percent(args.cv, "--cv") if args.cv is not None else None, sd=args.sd,
                            mean=mean)
    else:
        raise PlanError(f"no noise: {args.design} holds no {args.response!r} (it is a design, not a pilot); give "
                        "--cv 10%, --sd, or --pilot CAMPAIGN")
    wp = factor_list(args.whole_plot, "--whole-plot") or ()
    if wp:
        noise = with_whole_plot_noise(noise, scale, ratio=args.variance_ratio,
                                      cv=parse_percent(args.whole_plot_cv, "--whole-plot-cv")
                                      if args.whole_plot_cv is not None else None)
    elif args.whole_plot_cv is not None or args.variance_ratio is not None:
        raise PlanError("--whole-plot-cv and --variance-ratio need --whole-plot FACTORS")
    plan = plan_power(inp.design, factors, effect=effect, noise=noise, scale=scale, response=args.response,
                      source=inp.source, terms=args.terms, alpha=args.alpha, power=args.power,
                      whole_plot_factors=wp, times=point_times(inp.pilot, factors),
                      max_replicates=args.max_replicates)
    if args.format == "json":
        json.dump(plan.to_dict(), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.format == "csv":
        sys.stdout.write(format_csv(plan))
    else:
        print(format_text(plan))
    return 0
