"""``python -m models.desirability RESULTS --factors A,B,C --response NAME:GOAL[:LIMITS][:w=S][:i=R] ...``

Prints (or ``--format json``) the recommended setting with the overall desirability, and for each
response its prediction, intervals, desirability and sacrifice; ``--confirm FILE`` writes the
confirmation runs for ``python -m harness.submit FILE``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import pandas as pd

from models.desirability.confirm import confirmation_design, steps_of
from models.desirability.functions import parse_goal
from models.desirability.optimum import DEFAULT_CONFIRMATION_JOBS, compromise
from models.errors import DesirabilityError
from models.results import load_results


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise DesirabilityError(f"{message} (see python -m models.desirability --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m models.desirability",
                description="Best compromise between several responses (Derringer-Suich desirability) searched "
                            "over their fitted second-order surfaces, with prediction intervals, sacrifice and "
                            "a confirmation-runs design.")
    p.add_argument("results", help="results CSV or campaign directory")
    p.add_argument("--factors", required=True, help="comma-separated numeric factor columns")
    p.add_argument("--response", action="append", required=True, metavar="SPEC",
                   help="NAME:GOAL[:LOW:HIGH][:w=S][:i=R][:t=log], GOAL max|min; or NAME:target:LOW:TARGET:HIGH[:w=S]"
                        "[:w2=T][:i=R][:t=log]; limits default to the observed range; t=log fits log(NAME). "
                        "Repeat per response.")
    p.add_argument("--confirmation-jobs", type=int, default=DEFAULT_CONFIRMATION_JOBS,
                   help=f"replicates at the recommendation (default {DEFAULT_CONFIRMATION_JOBS}); sets the interval too")
    p.add_argument("--confirm", metavar="CSV", help="write the confirmation-runs design here (harness.submit format)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 < args.level < 1:
        raise DesirabilityError(f"--level {args.level:g} must be between 0 and 1, e.g. 0.95")
    factors = tuple(f.strip() for f in args.factors.split(",") if f.strip())
    table = load_results(args.results, compute_cost=False)
    frame = table.frame
    goals = []
    for spec in args.response:
        name = spec.split(":", 1)[0].strip()
        observed = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float) if name in frame.columns else None
        goals.append(parse_goal(spec, observed))
    result = compromise(frame, goals, factors, args.seed, args.confirmation_jobs, args.level, steps_of(frame))
    design = confirmation_design(frame, result.setting(), args.confirmation_jobs) if args.confirm else None
    written = design.write(args.confirm) if design is not None else None
    if args.format == "json":
        d = result.to_dict()
        d["source"] = table.source
        d["rows"] = table.describe_dropped()
        d["goals"] = [g.describe() for g in goals]
        d["confirmation_design"] = str(written) if written else None
        d["confirmation_notes"] = list(design.notes) if design else []
        print(json.dumps(d, indent=2))
    else:
        lines = [table.describe_dropped(), "goals: " + "; ".join(g.describe() for g in goals), *result.text()]
        if written is not None:
            lines += [*(f"note: {n}" for n in design.notes),  # type: ignore[union-attr]
                      f"wrote {written}: run it with python -m harness.submit {written} --out runs/confirm"]
        print("\n".join(lines))
    return 0
