"""The Pareto front of a campaign: the configurations (or runs) no other beats on every objective, and its hypervolume.

    sparkdl pareto runs/NAME --objectives wall_clock_s:min,accuracy:max
    sparkdl pareto runs/NAME --objectives wall_clock_s:min,accuracy:max,cost:min --plot front.svg
    sparkdl pareto runs/NAME --format json --reference-point wall_clock_s=120,accuracy=0
    sparkdl pareto runs/NAME --front-threshold 0.8 --seed 1 --format csv
    sparkdl pareto runs/NAME --per-run        # the front of the individual runs, replicates apart
    sparkdl pareto runs/NAME --per-epoch      # every validated epoch of the ok and pruned runs

On replicated data (some design point has two or more ok runs) the points are the design points
(:mod:`optimize.fronts`): each objective's mean over the point's ok runs with a t interval (--level,
default 0.95), and the probability that the point is non-dominated, the share of --resamples (2,000)
bootstrap resamples of each point's runs (--seed, default 0) in which no other point's means dominate
it. The front is the points with a probability above --front-threshold (0.5); the hypervolume of the
means comes with its bootstrap percentile interval. A design point is one combination of the
manifest's factors (else one ``run`` number). Unreplicated data, or ``--per-run``, give the front of
the individual runs described below (with a note when it was not asked for).

Only runs with status ``ok`` count (failed, incomplete and pruned runs have no final figures).
With ``--per-epoch`` the points are the validated epochs of the ok and pruned runs instead, read from
the campaign's logs (:mod:`optimize.harvest`): a run of E epochs gives E points, named
``<run>-<replicate>@<epoch>``, and only wall_clock_s, accuracy and cost are objectives.
An objective is a column of results.csv with ``min`` or ``max``; ``cost`` is computed per run from
``wall_clock_s`` and ``accuracy`` with ``--cost`` (:mod:`sparkdl.cost`; by default T/(100 A)^2, the
cost the report, the ANOVA and MLflow show) when the
table has no such column.

Run a dominates run b when a is no worse on every objective and better on one. The front is the
set of non-dominated runs (duplicates of a front point are all on it). The hypervolume is the
measure of the region dominated by the front and bounded by a reference point: exact, by a sweep
in 2-D and by slicing along the last objective in 3-D or more (fine for the hundreds of runs a
campaign has). Unless ``--reference-point`` gives it, the reference point is the worst value of each
objective among the ok runs moved out by 10 % of its range (so a front point at the worst value
still counts); two fronts are only comparable with the same reference, which bench/search.py fixes.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from optimize import fronts
from optimize import harvest as harvesting
# dominance, hypervolume and the ok runs live in optimize.dominance (optimize.fronts uses them too); their names
# are still importable from here
from optimize.dominance import (FACTOR_COLUMNS, REFERENCE_MARGIN, SENSES, ObjectiveSpec, default_reference, hypervolume,
                                minimisation_matrix, non_dominated, ok_runs, parse_objectives, point_label)  # noqa: F401
from optimize.errors import CampaignDataError, SearchOptionError
from optimize.figures import pareto_figure, save
from sparkdl.cli import run_cli
from sparkdl.options import add_campaign, add_cost, add_format, add_seed, renamed

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KEY_COLUMNS = ("run", "replicate")
#: Columns that name a harvested point (optimize.harvest), kept in the JSON front when present.
POINT_COLUMNS = ("point", "epoch", "run_epochs", "run_status")


# ---------------------------------------------------------------- a campaign's front


@dataclass(frozen=True)
class ParetoFront:
    """The ok runs of a campaign with their objective values, which are on the front, and its hypervolume."""

    objectives: tuple[ObjectiveSpec, ...]
    runs: pd.DataFrame  # the ok runs, in results.csv order, with every objective column
    on_front: np.ndarray  # bool per row of runs
    reference: tuple[float, ...]  # in the objectives' own units
    hypervolume: float
    excluded: int  # rows not ok (failed, incomplete, pruned)
    factors: tuple[str, ...] = ()  # the design's columns shown beside each point (default FACTOR_COLUMNS)

    @property
    def factor_columns(self) -> tuple[str, ...]:
        return self.factors or FACTOR_COLUMNS

    @property
    def front(self) -> pd.DataFrame:
        """The non-dominated runs, sorted by the first objective (best first)."""
        first = self.objectives[0]
        return self.runs[self.on_front].sort_values(first.column, ascending=first.sense == "min")

    def as_json(self) -> dict[str, object]:
        columns = [c for c in (*KEY_COLUMNS, *(o.column for o in self.objectives)) if c in self.runs.columns]
        extra = [c for c in self.runs.columns if c not in columns and c in POINT_COLUMNS + self.factor_columns]
        return {"objectives": [str(o) for o in self.objectives],
                "reference": {o.column: r for o, r in zip(self.objectives, self.reference)},
                "hypervolume": self.hypervolume, "ok_runs": int(len(self.runs)),
                "front_size": int(self.on_front.sum()), "excluded_not_ok": self.excluded,
                "front": json.loads(self.front[columns + extra].to_json(orient="records"))}


def pareto_front(table: pd.DataFrame, objectives: Sequence[ObjectiveSpec], reference: Sequence[float] | None = None,
                 cost: str | None = None) -> ParetoFront:
    """The front of the ok runs of ``table``; ``reference`` in the objectives' own units (default: see module doc)."""
    runs, excluded = ok_runs(table, objectives, cost)
    if runs.empty:
        raise CampaignDataError("no ok run with finite objective values: nothing to put on a front")
    matrix = minimisation_matrix(runs, objectives)
    signs = np.array([o.sign for o in objectives])
    ref_min = default_reference(matrix) if reference is None else signs * np.asarray(reference, float)
    if len(ref_min) != len(objectives):
        raise SearchOptionError(f"the reference has {len(ref_min)} value(s) for {len(objectives)} objectives")
    mask = non_dominated(matrix)
    volume = hypervolume(matrix[mask], ref_min)
    return ParetoFront(tuple(objectives), runs, mask, tuple(float(v) for v in signs * ref_min), volume, excluded)


def per_epoch_front(campaign: Path, objectives: Sequence[ObjectiveSpec], reference: Sequence[float] | None = None,
                    cost: str | None = None) -> tuple[ParetoFront, harvesting.Harvest]:
    """The front of every validated epoch of the campaign's ok and pruned runs (optimize.harvest).

    The front's ``excluded`` counts the runs left out (failed, incomplete), not points."""
    harvesting.check_objectives(objectives)
    if not campaign.is_dir():
        raise CampaignDataError(f"{campaign} is not a campaign directory: --per-epoch reads the runs' logs beside "
                                "results.csv, give the folder")
    harvest = harvesting.harvest(read_campaign(campaign), campaign)
    if not harvest.points:
        raise CampaignDataError(f"no validated epoch in the logs of the {harvest.runs} ok or pruned run(s) of "
                                f"{campaign}: nothing to put on a front")
    front = pareto_front(harvest.table(), objectives, reference, cost)
    return replace(front, excluded=harvest.excluded), harvest


def read_campaign(path: Path) -> pd.DataFrame:
    """results.csv of a campaign directory (or a CSV file given directly)."""
    from models.results import read_csv

    csv = path / "results.csv" if path.is_dir() else path
    if not csv.exists():
        raise CampaignDataError(f"{csv} does not exist: give a campaign directory holding results.csv")
    return read_csv(csv)[1]


def manifest_factors(path: Path) -> tuple[str, ...]:
    """The factors a campaign folder's manifest declares (e.g. an ingested study's), else () for the defaults."""
    from sparkdl.errors import CampaignError
    from sparkdl.campaign import CampaignDir

    if not path.is_dir():
        return ()
    try:
        manifest = CampaignDir(path).read_manifest()
    except CampaignError:
        return ()
    return () if manifest is None else tuple(manifest.factors)


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


def front_table(front: ParetoFront) -> str:
    """The front as aligned text: run key, each objective, then the factors that vary."""
    rows = front.front
    factors = [c for c in front.factor_columns if c in rows.columns and front.runs[c].nunique() > 1]
    head = ["run", *(str(o) for o in front.objectives), *factors]
    body = [[point_label(r), *(f"{r[o.column]:.6g}" for o in front.objectives),
             *(str(r[c]) for c in factors)] for _, r in rows.iterrows()]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def front_figure(front: ParetoFront, what: str = "ok runs") -> "Figure":
    """The front over the first two objectives (a third colours the points), dominated runs faded."""
    values = front.runs[[o.column for o in front.objectives]].to_numpy(float)
    title = (f"{int(front.on_front.sum())} of {len(front.runs)} {what} on the front; "
             f"hypervolume {front.hypervolume:.4g}")
    return pareto_figure(values, front.on_front, [o.column for o in front.objectives],
                         [o.sense == "max" for o in front.objectives], title)


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sparkdl pareto", description=__doc__.split("\n")[0])
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


def front_csv(front: ParetoFront) -> str:
    """The per-run (or per-epoch) front as CSV: run key, objectives, then the point and factor columns present."""
    columns = [c for c in (*KEY_COLUMNS, *(o.column for o in front.objectives)) if c in front.runs.columns]
    extra = [c for c in front.runs.columns if c not in columns and c in POINT_COLUMNS + front.factor_columns]
    return front.front[columns + extra].to_csv(index=False)


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
