"""Dominance, hypervolume and the ok runs' objective values: what every Pareto front of the tool is made of.

Every function here works on objectives turned into ones to minimise (``ObjectiveSpec.sign``). The
front of a campaign's runs (:mod:`optimize.pareto`) and the front of its design points
(:mod:`optimize.fronts`) are both built on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from logparse import Status
from models.results import set_aside_invalid
from sparkdl.cost import parse_cost
from optimize.errors import CampaignDataError, SearchOptionError

SENSES = ("min", "max")
#: The reference point's margin beyond the worst value of each objective, as a share of its range.
REFERENCE_MARGIN = 0.1


@dataclass(frozen=True)
class ObjectiveSpec:
    """One objective: a column and whether smaller (``min``) or larger (``max``) is better."""

    column: str
    sense: str

    @property
    def sign(self) -> float:
        """Multiplier that turns the objective into one to minimise."""
        return 1.0 if self.sense == "min" else -1.0

    def __str__(self) -> str:
        return f"{self.column}:{self.sense}"


def parse_objectives(text: str) -> tuple[ObjectiveSpec, ...]:
    """``wall_clock_s:min,accuracy:max`` -> objectives; at least two, each named once."""
    out: list[ObjectiveSpec] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        column, _, sense = part.partition(":")
        if sense not in SENSES or not column:
            raise SearchOptionError(f"objective {part!r} is not COLUMN:min or COLUMN:max, e.g. wall_clock_s:min")
        if any(o.column == column for o in out):
            raise SearchOptionError(f"objective {column!r} is named twice in {text!r}: name each column once")
        out.append(ObjectiveSpec(column, sense))
    if len(out) < 2:
        raise SearchOptionError(f"--objectives {text!r} names {len(out)} objective(s): a front needs at least two, "
                                "e.g. wall_clock_s:min,accuracy:max")
    return tuple(out)


# ---------------------------------------------------------------- pure functions on minimisation arrays


def non_dominated(points: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of ``points`` (n x k, every column minimised) that no other row dominates."""
    pts = np.asarray(points, dtype=float)
    n = len(pts)
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        no_worse = np.all(pts <= pts[i], axis=1)
        better = np.any(pts < pts[i], axis=1)
        keep[i] = not np.any(no_worse & better)
    return keep


def hypervolume(points: np.ndarray, reference: Sequence[float]) -> float:
    """Exact measure of the region dominated by ``points`` (every column minimised) and bounded by ``reference``.

    Points not strictly better than the reference on every objective add nothing. 2-D: a sweep over the
    front sorted by the first objective; k-D: slices between consecutive values of the last objective,
    each slice the (k-1)-D hypervolume of the points below it."""
    ref = np.asarray(reference, dtype=float)
    pts = np.asarray(points, dtype=float).reshape(-1, len(ref))
    pts = pts[np.all(pts < ref, axis=1)]
    if len(pts) == 0:
        return 0.0
    if len(ref) == 1:
        return float(ref[0] - pts[:, 0].min())
    if len(ref) == 2:
        return _sweep_2d(pts, ref)
    order = np.argsort(pts[:, -1], kind="stable")
    pts = pts[order]
    total = 0.0
    for i in range(len(pts)):
        upper = pts[i + 1, -1] if i + 1 < len(pts) else ref[-1]
        depth = upper - pts[i, -1]
        if depth > 0:
            total += depth * hypervolume(pts[: i + 1, :-1], ref[:-1])
    return float(total)


def _sweep_2d(pts: np.ndarray, ref: np.ndarray) -> float:
    """2-D hypervolume: sort by the first objective; each point adds the strip down to the best second value so far."""
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
    total, best_y = 0.0, ref[1]
    for x, y in pts:
        if y < best_y:
            total += (ref[0] - x) * (best_y - y)
            best_y = y
    return float(total)


def default_reference(points: np.ndarray, margin: float = REFERENCE_MARGIN) -> np.ndarray:
    """The worst value of each (minimised) objective moved out by ``margin`` of its range (1 when the range is 0)."""
    pts = np.asarray(points, dtype=float)
    worst, best = pts.max(axis=0), pts.min(axis=0)
    span = np.where(worst > best, worst - best, np.maximum(np.abs(worst), 1.0))
    return worst + margin * span


# ---------------------------------------------------------------- the ok runs of a table


FACTOR_COLUMNS = ("model", "nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size")


def minimisation_matrix(runs: pd.DataFrame, objectives: Sequence[ObjectiveSpec]) -> np.ndarray:
    """The objective columns of ``runs`` as floats, each multiplied by its sign so that smaller is better."""
    return np.column_stack([o.sign * runs[o.column].to_numpy(float) for o in objectives])


def ok_runs(table: pd.DataFrame, objectives: Sequence[ObjectiveSpec], cost: str | None = None) -> tuple[pd.DataFrame, int]:
    """The rows with status ok and finite objective values (``cost`` computed when asked and absent)."""
    if "status" not in table.columns:
        raise CampaignDataError("the table has no status column: give a campaign's results.csv")
    runs = table[table["status"] == Status.OK]
    # the one rule for what a measurement is (models.results): the rows that break it are left out here, and the
    # command says so once (optimize.cli.pareto: models.results.set_aside_note)
    runs = set_aside_invalid(runs, {}, also=[o.column for o in objectives]).copy()
    excluded = len(table) - len(runs)
    if any(o.column == "cost" for o in objectives) and "cost" not in runs.columns:
        if not {"wall_clock_s", "accuracy"} <= set(runs.columns):
            raise CampaignDataError("objective cost: results.csv has no cost column, nor the wall_clock_s and accuracy "
                                    "it is computed from")
        with np.errstate(all="ignore"):
            runs["cost"] = parse_cost(cost)(pd.to_numeric(runs["wall_clock_s"], errors="coerce").to_numpy(float),
                                            pd.to_numeric(runs["accuracy"], errors="coerce").to_numpy(float))
    missing = [o.column for o in objectives if o.column not in runs.columns]
    if missing:
        raise CampaignDataError(f"results.csv has no column(s) {', '.join(missing)}: objectives are columns such as "
                                "wall_clock_s, accuracy, elapsed_s, or cost")
    for o in objectives:
        numbers = pd.to_numeric(runs[o.column], errors="coerce")
        words = runs[o.column][numbers.isna() & runs[o.column].notna()]
        if len(words):
            raise CampaignDataError(f"objective {o.column} holds text ({str(words.iloc[0])[:40]!r}) in an ok run: "
                                    "objectives are numeric columns such as wall_clock_s, accuracy or cost")
        runs[o.column] = numbers
    finite = np.all(np.isfinite(minimisation_matrix(runs, objectives)), axis=1) if len(runs) else np.ones(0, bool)
    return runs[finite].reset_index(drop=True), excluded + int((~finite).sum())


def point_label(row: pd.Series) -> str:
    """``<run>-<replicate>``, or a harvested point's ``<run>-<replicate>@<epoch>``."""
    if "point" in row and isinstance(row["point"], str):
        return row["point"]
    return f"{row.get('run', '?')}-{row.get('replicate', '?')}"
