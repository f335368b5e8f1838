"""The Pareto front of a campaign: the configurations (or runs) no other beats on every objective, and its hypervolume.

The fronts ``sparkdl pareto`` prints; its command line, which chooses among them, is :mod:`optimize.cli.pareto`.

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

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from optimize import harvest as harvesting
# dominance, hypervolume and the ok runs live in optimize.dominance (optimize.fronts uses them too); their names
# are still importable from here
from optimize.dominance import (FACTOR_COLUMNS, REFERENCE_MARGIN, SENSES, ObjectiveSpec, default_reference, hypervolume,
                                minimisation_matrix, non_dominated, ok_runs, parse_objectives, point_label)  # noqa: F401
from optimize.errors import CampaignDataError, SearchOptionError
from optimize.figures import pareto_figure
from sparkdl.cli import run_cli

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


def front_csv(front: ParetoFront) -> str:
    """The per-run (or per-epoch) front as CSV: run key, objectives, then the point and factor columns present."""
    columns = [c for c in (*KEY_COLUMNS, *(o.column for o in front.objectives)) if c in front.runs.columns]
    extra = [c for c in front.runs.columns if c not in columns and c in POINT_COLUMNS + front.factor_columns]
    return front.front[columns + extra].to_csv(index=False)


if __name__ == "__main__":
    from optimize.cli.pareto import main
    sys.exit(run_cli(main))
