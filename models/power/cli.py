"""``sparkdl plan DESIGN --effect 5%`` (``sparkdl plan``): replicates, power and detectable effects.

``DESIGN`` is a design CSV (``harness.design`` output), a results CSV or a campaign folder. A table
holding the response is a pilot: its replicates give the noise (``--noise replicates``, the pooled
SD within design points; or ``--noise residual``, the model's root MSE) and its run times the
cluster time. Else give the noise (``--cv 10%``, or ``--sd`` in units) or a ``--pilot``. Output,
per factor: the power the design has now, the smallest effect it detects at ``--power``, the
replicates of every design point needed, and the cluster time those would take.
``--format json`` writes ``PowerPlan.to_dict()``; ``--format csv`` the per-factor rows.

``sparkdl plan --scaling --machines 1..8 --cores-per-machine 4 --fractions 1/64..1/8 --budget 20m --base-time 30s
--out design.csv``: before any run, the first runs of a scaling campaign (models.power.scaling: the A-optimal design
for Ernest's model under the cluster-time budget), their weights and cost, and how precisely they predict the full
data at the largest machines (``--at``); ``--out`` writes them as a design CSV for ``sparkdl submit`` (a machine is a
node with one executor; the fraction in the ``--work`` column, ``input_fraction`` by default, which the built-in MNIST
jobs read; ``--fixed`` the job's other columns).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Sequence

import pandas as pd

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
from models.power.format import format_csv, format_scaling_csv, format_scaling_text, format_text
from models.power.scaling import DESIGN_COLUMNS, design_rows, plan_scaling
from models.power.inputs import read_inputs
from models.results import factor_list, time_response
from sparkdl.numbers import json_safe
from sparkdl.options import LEVEL, CommandParser, add_budget, add_format, add_out, add_response, add_work, duration_s


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(
        prog="sparkdl plan",
        description="Power and sample size per factor: the replicates needed to detect an effect, the power the "
                    "design has, and the smallest effect it detects.",
    )
    p.add_argument("design", nargs="?",
                   help="design CSV (harness.design output), results CSV, or campaign directory (a pilot when it "
                        "holds the response); none with --scaling")
    p.add_argument("--effect",
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
    _scaling_options(p)
    add_format(p)
    return p


def _scaling_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scaling design (--scaling: the first runs of a campaign that predicts the full data at "
                             "the largest machines, Ernest's way)")
    g.add_argument("--scaling", action="store_true",
                   help="choose the runs (machines, data fraction) of an A-optimal design for Ernest's model under "
                        "--budget, with their weights, cost and the precision at --at; no DESIGN")
    g.add_argument("--machines", metavar="MIN..MAX", help="with --scaling: the machine counts a run may use, e.g. 1..8")
    g.add_argument("--cores-per-machine", type=int, default=1, metavar="N",
                   help="with --scaling: the cores of a machine (its one executor's; default 1)")
    g.add_argument("--fractions", metavar="MIN..MAX",
                   help="with --scaling: the data fractions a run may use, above 0 and at most 1, e.g. 1/64..1/8 or "
                        "0.0156..0.125 (with --partitions, Ernest's parts: 4/256..32/256)")
    g.add_argument("--partitions", type=int, metavar="N",
                   help="with --scaling: the full data's partitions; a run then needs one partition per core "
                        "(Ernest's rule; default: no such rule)")
    add_budget(g, "with --scaling: cluster time the runs may take (the sum of their times), each run's time taken as "
                  "--base-time x (fraction / smallest fraction) / machines")
    g.add_argument("--base-time", metavar="DURATION", default="1s",
                   help="with --scaling: the time of one run on the smallest fraction on one machine, e.g. 45s (a "
                        "pilot's or a guess; default 1s: --budget is then in Ernest's units, that run's time)")
    g.add_argument("--at", metavar="M[,M...]",
                   help="with --scaling: the machine counts to predict the full data at (default the largest "
                        "--machines)")
    g.add_argument("--level", type=LEVEL, default=0.9,
                   help="with --scaling and --cv: level of the prediction interval at --at (default 0.9)")
    add_work(g, "with --scaling: the design column that holds each run's amount of work (default input_fraction, "
                "which the built-in lenet and birnn jobs read); with =VALUE, the full data's amount, the column "
                "then holding fraction x VALUE (e.g. samples=60000 for a job of your own)")
    g.add_argument("--fixed", help="with --scaling: the design's other columns, the same in every run: key=value,..., "
                                   "e.g. model=lenet,epochs=1,learning_rate=0.05,batch_size=96")
    add_out(g, "with --scaling: the design CSV to write (sparkdl submit runs it); nothing is written on bad input")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.scaling:
        return _scaling(args)
    given_scaling = [f for f, v in (("--machines", args.machines), ("--fractions", args.fractions),
                                    ("--partitions", args.partitions), ("--at", args.at), ("--fixed", args.fixed),
                                    ("--work", args.work), ("--out", args.out), ("--budget", args.budget)) if v]
    if given_scaling:
        raise PlanError(f"{given_scaling[0]} belongs to a scaling design: add --scaling")
    if args.design is None or args.effect is None:
        raise PlanError("sparkdl plan needs DESIGN and --effect (e.g. sparkdl plan runs/c --effect 5%), or --scaling")
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


#: A number or a ratio (1/64), an end of a --machines or --fractions range.
_NUMBER = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+)\s*(?:/\s*([0-9]+(?:\.[0-9]*)?)\s*)?",
                     re.ASCII)


def _end(text: str, flag: str, example: str) -> float:
    m = _NUMBER.fullmatch(text)
    if not m or (m.group(2) is not None and float(m.group(2)) == 0):
        raise PlanError(f"{flag} {text[:40]!r} is not a number or a ratio; write e.g. {flag} {example}")
    return float(m.group(1)) / (float(m.group(2)) if m.group(2) else 1.0)


def parse_range(text: str | None, flag: str, example: str) -> tuple[float, float]:
    """``'1..8'`` -> (1, 8), ``'1/64..1/8'`` -> (0.015625, 0.125); min above max, or not two ends, refused."""
    if text is None:
        raise PlanError(f"--scaling needs {flag} MIN..MAX, e.g. {flag} {example}")
    low, sep, high = str(text)[:100].partition("..")
    if not sep:
        raise PlanError(f"{flag} {text[:40]!r}: give a range MIN..MAX, e.g. {flag} {example}")
    lo, hi = _end(low, flag, example), _end(high, flag, example)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise PlanError(f"{flag} {text[:40]!r}: the smallest must be below the largest, e.g. {flag} {example}")
    return lo, hi


def parse_fixed(text: str | None, taken: Sequence[str]) -> dict[str, str]:
    """``'model=lenet,epochs=1'`` -> {'model': 'lenet', 'epochs': '1'}; a column the design writes itself refused."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "")[:10_000].split(","))):
        key, sep, value = (v.strip() for v in part.partition("="))
        if not sep or not _COLUMN.fullmatch(key) or not value:
            raise PlanError(f"--fixed {part[:40]!r} is not key=value; write e.g. --fixed model=lenet,epochs=1")
        if key in taken or key in out:
            raise PlanError(f"--fixed {key}: the scaling design writes that column itself (or --fixed names it "
                            "twice); leave it out")
        out[key] = value
    return out


_COLUMN = re.compile(r"[A-Za-z_][\w.-]{0,99}", re.ASCII)


def _scaling(args: argparse.Namespace) -> int:
    """``plan --scaling``: every input checked before the solve, the design written only when all went well."""
    if args.design is not None:
        raise PlanError(f"--scaling makes a design: give no DESIGN ({args.design!r}), only the ranges and --budget")
    if args.effect is not None:
        raise PlanError("--effect is a power plan's; --scaling takes --machines, --fractions and --budget")
    lo_m, hi_m = parse_range(args.machines, "--machines", "1..8")
    if not (lo_m.is_integer() and hi_m.is_integer() and lo_m >= 1):
        raise PlanError(f"--machines {args.machines!r}: give whole machine counts of at least 1, e.g. --machines 1..8")
    lo_s, hi_s = parse_range(args.fractions, "--fractions", "1/64..1/8")
    if not (0 < lo_s and hi_s <= 1):
        raise PlanError(f"--fractions {args.fractions!r}: a fraction of the data is above 0 and at most 1, e.g. "
                        "--fractions 1/64..1/8")
    if not 1 <= args.cores_per_machine <= 10_000:
        raise PlanError(f"--cores-per-machine {args.cores_per_machine}: give 1 to 10000 cores")
    if args.partitions is not None and not 1 <= args.partitions <= 10**9:
        raise PlanError(f"--partitions {args.partitions}: give the full data's partitions, 1 or more")
    if args.budget is None:
        raise PlanError("--scaling needs --budget, the cluster time the runs may take, e.g. --budget 20m")
    try:
        base = duration_s(args.base_time)
    except ValueError:
        raise PlanError(f"--base-time {args.base_time[:40]!r} is not a positive duration: write e.g. 45s, 2m") from None
    if not 0.5 <= args.level < 1:
        raise PlanError(f"--level {args.level:g}: give a level from 0.5 to below 1, e.g. 0.9")
    cv = parse_percent(args.cv, "--cv") if args.cv is not None else None
    at = None
    if args.at is not None:
        at = tuple(_end(v, "--at", "16,32") for v in str(args.at)[:1000].split(",") if v.strip())
        if not at or any(not (math.isfinite(v) and v >= 1) for v in at) or len(set(at)) < len(at):
            raise PlanError(f"--at {args.at[:40]!r}: give distinct machine counts of at least 1, e.g. --at 8,16")
    work, total = "input_fraction", None
    if args.work is not None:
        column, _, value = args.work.partition("=")
        if not _COLUMN.fullmatch(column.strip()):
            raise PlanError(f"--work {args.work[:40]!r}: give a column name, e.g. --work input_fraction")
        work = column.strip()
        if value:
            total = _end(value, "--work", f"{work}=60000")
            if not 0 < total <= 1e12:
                raise PlanError(f"--work {args.work[:40]!r}: the full data's amount is above 0 and at most 1e12")
    if work in DESIGN_COLUMNS:
        raise PlanError(f"--work {work}: the design writes that column itself; name the work column another way")
    fixed = parse_fixed(args.fixed, (*DESIGN_COLUMNS, work))
    plan = plan_scaling((int(lo_m), int(hi_m)), args.cores_per_machine, (lo_s, hi_s), args.budget, base,
                        args.partitions, at, cv, args.level)
    if args.out is not None:
        if args.out.is_dir():
            raise PlanError(f"--out {args.out} is a folder; give the design CSV's path, e.g. {args.out}/design.csv")
        rows = design_rows(plan, work, total, fixed)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(args.out.name + ".tmp")
        pd.DataFrame(rows).to_csv(tmp, index=False)
        tmp.replace(args.out)
        print(f"note: wrote {len(rows)} runs to {args.out}: sparkdl submit {args.out} --dry-run", file=sys.stderr)
    if args.format == "json":
        json.dump(json_safe(plan.to_dict()), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.format == "csv":
        sys.stdout.write(format_scaling_csv(plan))
    else:
        print(format_scaling_text(plan))
    return 0
