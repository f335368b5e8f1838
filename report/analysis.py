"""The numbers a report shows besides the ANOVA: per-point summaries, the best point, queue metrics.

The ANOVA itself (model choice, fit, checks, plots) is :func:`models.anova.analysis.analyse`, the
same analysis ``python -m models.anova`` prints; :func:`analyse_campaign` calls it and turns what
cannot be analysed into the sentence the report shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.anova.analysis import Analysis, NotAnalysableError, analyse
from models.errors import ModelError
from models.queueing import JobSizes, Plan, plan
from models.queueing.job_sizes import UNITS, size_moments

UTILIZATIONS = (0.5, 0.8, 0.9)
SERVERS = (1, 2, 4)
SUMMARY_COLUMNS = ("wall_clock_s", "accuracy", "cost")


def analyse_campaign(frame: pd.DataFrame, response: str, factors: Sequence[str], alpha: float = 0.05,
                     plots: bool = True) -> Analysis:
    """The report's ANOVA: :func:`analyse` with the model chosen to fit; a reason instead of an error."""
    if response not in frame.columns:
        return Analysis(unavailable=f"the response column {response!r} is not in the analysed table")
    try:
        analysis = analyse(frame, response, factors, alpha=alpha, plots=plots, choose=True)
    except NotAnalysableError as exc:
        return Analysis(unavailable=str(exc))
    except ModelError as exc:
        return Analysis(unavailable=f"the ANOVA could not be fitted: {exc}")
    if not plots:
        return Analysis(analysis.anova, analysis.choice, None, analysis.diagnostics, analysis.log_comparison,
                        analysis.kruskal, {}, (*analysis.notes, "plots were not drawn (--no-plots)"))
    return analysis


# --- summaries -------------------------------------------------------------------------------


def point_summary(frame: pd.DataFrame, factors: Sequence[str]) -> pd.DataFrame:
    """Per design point: jobs, and mean and sd (ddof 1) of wall clock, accuracy and cost where present."""
    facs = [f for f in factors if f in frame.columns]
    measures = [c for c in SUMMARY_COLUMNS if c in frame.columns and frame[c].notna().any()]
    if not facs or frame.empty:
        return pd.DataFrame()
    grouped = frame.groupby(facs, sort=True, dropna=False)
    out = grouped.size().rename("n").to_frame()
    for c in measures:
        values = pd.to_numeric(frame[c], errors="coerce").groupby([frame[f] for f in facs], sort=True, dropna=False)
        out[f"{c} mean"] = values.mean()
        out[f"{c} sd"] = values.std(ddof=1)
    return out.reset_index()


@dataclass(frozen=True)
class Best:
    """The design point with the lowest mean of a measure."""

    measure: str
    point: dict[str, object]
    mean: float
    n: int
    others: dict[str, float]


def best_point(summary: pd.DataFrame, factors: Sequence[str], measure: str = "cost") -> Best | None:
    """The point with the lowest mean ``measure`` (ties: the first in sorted order)."""
    col = f"{measure} mean"
    if summary.empty or col not in summary.columns or summary[col].notna().sum() == 0:
        return None
    i = int(np.nanargmin(summary[col].to_numpy(dtype=float)))
    others = {c.removesuffix(" mean"): float(summary[c].iloc[i]) for c in summary.columns
              if c.endswith(" mean") and c != col and math.isfinite(float(summary[c].iloc[i]))}
    point = {f: summary[f].iloc[i] for f in factors if f in summary.columns}
    return Best(measure, point, float(summary[col].iloc[i]), int(summary["n"].iloc[i]), others)


@dataclass(frozen=True)
class Queueing:
    """Queue metrics for jobs of the measured sizes at a few utilizations and server counts."""

    sizes: JobSizes
    unit: str
    plans: tuple[tuple[float, tuple[Plan, ...]], ...]


def job_sizes(frame: pd.DataFrame, source: str) -> JobSizes | str:
    """Wall clock in seconds when measured, else the cost (seed 001's choice); a reason if neither works."""
    for quantity, column in (("time", "wall_clock_s"), ("cost", "cost")):
        if column not in frame.columns:
            continue
        x = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        if len(x) < 2:
            return f"queue metrics need 2 or more measured jobs; there are {len(x)}"
        if np.any(x <= 0):
            return f"queue metrics need positive job sizes; {column} has values <= 0"
        try:
            mean, scv = size_moments([float(v) for v in x])
        except ModelError as exc:
            return f"queue metrics not computed: {exc}"
        return JobSizes(source, quantity, len(x), mean, scv)
    return "queue metrics need a wall_clock_s or cost column"


def queueing(frame: pd.DataFrame, source: str, utilizations: Sequence[float] = UTILIZATIONS,
             servers: Sequence[int] = SERVERS) -> Queueing | str:
    """M/M/k and M/G/k metrics at each utilization for jobs of the measured mean size."""
    sizes = job_sizes(frame, source)
    if isinstance(sizes, str):
        return sizes
    plans = tuple((u, tuple(plan(sizes, u, servers))) for u in utilizations)
    return Queueing(sizes, UNITS[sizes.quantity], plans)
