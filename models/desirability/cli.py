"""``sparkdl desirability RESULTS --factors A,B,C --objective NAME:GOAL[:LIMITS][:w=S][:i=R] ...``

Prints the recommended setting with the overall desirability, and for each response its prediction, intervals,
desirability and sacrifice (``--format json``: the result with the trade-off and the check below; ``--format csv``:
one row per response); ``--out FILE`` writes the confirmation runs for ``sparkdl submit FILE``; ``--check
CONFIRM_RESULTS`` tests the jobs of that confirmation campaign against the prediction intervals (exit 3 when a mean
falls outside).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from models.desirability.check import check_confirmation
from models.desirability.confirm import confirmation_design, design_columns, steps_of
from models.desirability.functions import parse_goal
from models.desirability.optimum import DEFAULT_CONFIRMATION_JOBS, compromise
from models.desirability.tradeoff import TradeoffPoint, tradeoff_front
from models.errors import DesirabilityError
from models.results import load_results
from sparkdl.errors import EXIT_RUNS_FAILED
from sparkdl.options import CommandParser, add_campaign, add_format, add_out, add_seed, renamed


class _Parser(CommandParser):
    def error(self, message: str) -> None:
        raise DesirabilityError(f"{message} (see sparkdl desirability --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="sparkdl desirability",
                description="Best compromise between several responses (Derringer-Suich desirability) searched "
                            "over their fitted second-order surfaces, with prediction intervals, sacrifice and "
                            "a confirmation-runs design.")
    add_campaign(p, "the runs whose responses to trade off", dest="results")
    p.add_argument("--factors", required=True, help="comma-separated numeric factor columns")
    p.add_argument("--objective", action="append", required=True, metavar="SPEC",
                   help="NAME:GOAL[:LOW:HIGH][:w=S][:i=R][:t=log], GOAL max|min; or NAME:target:LOW:TARGET:HIGH[:w=S]"
                        "[:w2=T][:i=R][:t=log]; limits default to the observed range; t=log fits log(NAME). "
                        "Repeat per response.")
    renamed(p, "--response", "--objective")
    p.add_argument("--confirmation-jobs", type=int, default=DEFAULT_CONFIRMATION_JOBS,
                   help=f"replicates at the recommendation (default {DEFAULT_CONFIRMATION_JOBS}); sets the interval too")
    add_out(p, "the confirmation-runs design CSV to write (run it with sparkdl submit)")
    renamed(p, "--confirm", "--out")
    p.add_argument("--check", metavar="CONFIRM_RESULTS",
                   help="confirmation campaign (directory or results CSV): is each response's mean inside its "
                        "prediction interval at the setting those jobs ran? Exit 3 if not")
    p.add_argument("--tradeoff", type=int, metavar="STEPS",
                   help="with one max and one min goal: the best fitted min-response for STEPS floors of the "
                        "max-response (what one more point of accuracy costs in time)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    add_format(p)
    add_seed(p, "the search over the region")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 < args.level < 1:
        raise DesirabilityError(f"--level {args.level:g} must be between 0 and 1, e.g. 0.95")
    factors = tuple(f.strip() for f in args.factors.split(",") if f.strip())
    table = load_results(args.results, compute_cost=False, factors=factors).say()
    frame = table.frame
    goals = []
    for spec in args.objective:
        name = spec.split(":", 1)[0].strip()
        observed = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float) if name in frame.columns else None
        goals.append(parse_goal(spec, observed))
    result = compromise(frame, goals, factors, args.seed, args.confirmation_jobs, args.level, steps_of(frame))
    design = (confirmation_design(frame, result.setting(), args.confirmation_jobs, design_columns(args.results))
              if args.out else None)
    written = design.write(args.out) if design is not None else None
    front = tradeoff_front(result, args.tradeoff, args.seed) if args.tradeoff else None
    checked = None
    if args.check:
        checked = check_confirmation(result.fits, load_results(args.check, compute_cost=False, factors=factors).frame, args.level)
    summary = result.summary()
    if args.format == "csv":
        print(summary.render("csv"))
    elif args.format == "json":
        d = dict(summary.doc)
        if front is not None:
            keep, other, points = front
            d["tradeoff"] = {"floor_of": keep, "best": other, "points": [
                {"floor": p.floor, "best": p.best if p.reachable else None,
                 "setting": dict(zip(factors, p.natural)) if p.reachable else None} for p in points]}
        if checked is not None:
            d["confirmation_check"] = {"setting": dict(zip(factors, checked[0])),
                                       "responses": [c.to_dict() for c in checked[1]]}
        d["source"] = table.source
        d["rows"] = table.describe_dropped()
        d["goals"] = [g.describe() for g in goals]
        d["confirmation_design"] = str(written) if written else None
        d["confirmation_notes"] = list(design.notes) if design else []
        print(replace(summary, doc=d).render("json"))
    else:
        lines = [table.describe_dropped(), "goals: " + "; ".join(g.describe() for g in goals), *summary.lines]
        if written is not None:
            lines += [*(f"note: {n}" for n in design.notes),  # type: ignore[union-attr]
                      f"wrote {written}: run it with sparkdl submit {written} --out runs/confirm"]
        if front is not None:
            lines += ["", *_tradeoff_lines(front, factors)]
        if checked is not None:
            at = ", ".join(f"{f} = {v:g}" for f, v in zip(factors, checked[0]))
            lines += ["", f"confirmation runs at {at}:", *(f"  {c.describe()}" for c in checked[1])]
        print("\n".join(lines))
    return EXIT_RUNS_FAILED if checked is not None and not all(c.inside for c in checked[1]) else 0


def _tradeoff_lines(front: tuple[str, str, tuple[TradeoffPoint, ...]], factors: tuple[str, ...]) -> list[str]:
    keep, other, points = front
    lines = [f"trade-off on the fitted surfaces: the lowest {other} with {keep} >= floor",
             f"{keep + ' >=':>16} {other:>14} {'extra per step':>15}  setting"]
    prev = None
    for p in points:
        if not p.reachable:
            lines.append(f"{p.floor:>16.4g} {'out of reach':>14}")
            continue
        extra = f"{p.best - prev:+.4g}" if prev is not None else ""
        at = ", ".join(f"{f} = {v:.4g}" for f, v in zip(factors, p.natural))
        lines.append(f"{p.floor:>16.4g} {p.best:>14.4g} {extra:>15}  {at}")
        prev = p.best
    return lines
