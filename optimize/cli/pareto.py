"""The Pareto front of a campaign: the configurations (or runs) no other beats on every objective, and its hypervolume.

    sparkdl pareto runs/NAME --objectives wall_clock_s:min,accuracy:max
    sparkdl pareto runs/NAME --objectives wall_clock_s:min,accuracy:max,cost:min --plot front.svg
    sparkdl pareto runs/NAME --format json --reference-point wall_clock_s=120,accuracy=0
    sparkdl pareto runs/NAME --front-threshold 0.8 --seed 1 --format csv
    sparkdl pareto runs/NAME --per-run        # the front of the individual runs, replicates apart
    sparkdl pareto runs/NAME --per-epoch      # every validated epoch of the ok and pruned runs

The parser, ``main`` and what ``sparkdl pareto`` prints; the fronts and hypervolumes are computed by
:mod:`optimize.pareto` (runs and epochs) and :mod:`optimize.fronts` (replicated design points).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from optimize import fronts
from optimize.dominance import ObjectiveSpec, ok_runs, parse_objectives
from optimize.errors import SearchOptionError
from optimize.figures import save
from models.results import runs_of
from optimize.pareto import (front_csv, front_figure, front_table, manifest_factors, pareto_front, per_epoch_front,
                             read_campaign)
from sparkdl.cli import run_cli
from sparkdl.options import CommandParser, add_campaign, add_cost, add_format, add_seed, renamed


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl pareto", description=__doc__.split("\n")[0])
    add_campaign(p, "the runs to put on the front")
    p.add_argument("--objectives", default="wall_clock_s:min,accuracy:max",
                   help="COLUMN:min|max,... (default wall_clock_s:min,accuracy:max; add cost:min for --cost)")
    add_cost(p, "the cost column when results.csv has none")
    p.add_argument("--reference-point", metavar="COLUMN=VALUE,...",
                   help="hypervolume reference point, one value per objective (default: see the module doc)")
    renamed(p, "--reference", "--reference-point")
    add_format(p)
    p.add_argument("--plot", type=Path, help="figure path (.png or .svg; default CAMPAIGN/pareto.png)")
    p.add_argument("--no-plot", action="store_true", help="write no figure")
    p.add_argument("--per-epoch", action="store_true",
                   help="one point per validated epoch of the ok and pruned runs (read from logs/), not one per ok run")
    p.add_argument("--per-run", action="store_true",
                   help="the front of the individual ok runs, even when design points are replicated")
    p.add_argument("--front-threshold", type=float, default=fronts.DEFAULT_THRESHOLD,
                   help=f"replicated data: a design point is on the front when its probability of being "
                        f"non-dominated is above this (default {fronts.DEFAULT_THRESHOLD:g})")
    p.add_argument("--resamples", type=int, default=fronts.DEFAULT_RESAMPLES,
                   help=f"replicated data: bootstrap resamples over each point's replicates "
                        f"(default {fronts.DEFAULT_RESAMPLES})")
    add_seed(p, "the bootstrap over replicated design points", default=fronts.DEFAULT_SEED)
    p.add_argument("--level", type=float, default=fronts.DEFAULT_LEVEL,
                   help=f"replicated data: level of the means' t intervals and of the hypervolume's bootstrap "
                        f"interval (default {fronts.DEFAULT_LEVEL:g})")
    return p


def parse_reference(text: str, objectives: Sequence[ObjectiveSpec]) -> list[float]:
    """``wall_clock_s=120,accuracy=0`` -> one value per objective, in their order."""
    given: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        try:
            given[name] = float(value)
        except ValueError:
            raise SearchOptionError(f"--reference-point item {part!r} is not COLUMN=NUMBER, e.g. wall_clock_s=120") from None
    missing = [o.column for o in objectives if o.column not in given]
    if missing or len(given) != len(objectives):
        raise SearchOptionError(f"--reference-point must give exactly the objectives {', '.join(o.column for o in objectives)}"
                                f" (missing: {', '.join(missing) or 'none'})")
    return [given[o.column] for o in objectives]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    objectives = parse_objectives(args.objectives)
    reference = parse_reference(args.reference_point, objectives) if args.reference_point else None
    fronts.compute.check_options(args.resamples, args.front_threshold, args.level)
    if args.per_epoch and args.per_run:
        raise SearchOptionError("--per-epoch and --per-run are two kinds of point: give one")
    factors = manifest_factors(args.campaign)
    harvest, note = None, None
    if args.per_epoch:
        front, harvest = per_epoch_front(args.campaign, objectives, reference, args.cost)
    else:
        table = read_campaign(args.campaign)
        runs_of(table, ok_only=True, also=[o.column for o in objectives]).say()  # the one note on set-aside rows
        if not args.per_run:
            if fronts.is_replicated(ok_runs(table, objectives, args.cost)[0], factors):
                found = fronts.configuration_front(table, objectives, factors, reference, args.cost, args.resamples,
                                                   args.seed, args.front_threshold, args.level)
                return show_configurations(found, args)
            note = fronts.UNREPLICATED_NOTE
        front = pareto_front(table, objectives, reference, args.cost)
    front = replace(front, factors=factors)
    what = "ok runs" if harvest is None else "validated epochs"
    figure_path = None if args.no_plot else save(front_figure(front, what), figure_target(args))
    if args.format == "csv":
        print(front_csv(front), end="")
        return 0
    if args.format == "json":
        extra = {} if harvest is None else {"per_epoch": True, "harvested_runs": harvest.runs,
                                            "points": len(harvest.points)}
        print(json.dumps({**front.as_json(), "per": "run" if harvest is None else "epoch", **extra,
                          "notes": [note] if note else [],
                          "figure": None if figure_path is None else str(figure_path)}, indent=2))
        return 0
    print(front_table(front))
    ref = ", ".join(f"{o.column}={r:.6g}" for o, r in zip(objectives, front.reference))
    if harvest is None:
        counted = f"{len(front.runs)} ok runs on the front ({front.excluded} not ok, left out)"
    else:
        counted = (f"{len(front.runs)} validated epochs of {harvest.runs} ok or pruned runs on the front "
                   f"({front.excluded} failed or incomplete runs left out)")
    print(f"\n{int(front.on_front.sum())} of {counted}; hypervolume {front.hypervolume:.6g} (reference {ref})")
    if note:
        print(f"note: {note}")
    if figure_path is not None:
        print(f"wrote {figure_path}")
    return 0


def figure_target(args: argparse.Namespace) -> Path:
    """--plot, else pareto.png in the campaign folder (or here for a CSV file); .png or .svg."""
    target = args.plot or (args.campaign / "pareto.png" if args.campaign.is_dir() else Path("pareto.png"))
    if target.suffix not in (".png", ".svg"):
        raise SearchOptionError(f"--plot {target} must end in .png or .svg")
    return target


def show_configurations(found: fronts.ConfigurationFront, args: argparse.Namespace) -> int:
    """Print the front of design points in --format and write its figure unless --no-plot."""
    figure_path = None if args.no_plot else save(fronts.front_figure(found), figure_target(args))
    if args.format == "json":
        print(json.dumps({**found.to_dict(), "figure": None if figure_path is None else str(figure_path)}, indent=2))
    elif args.format == "csv":
        print(fronts.format_csv(found), end="")
    else:
        print(fronts.format_text(found))
        if figure_path is not None:
            print(f"wrote {figure_path}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
