"""The numbers a report shows besides the ANOVA: per-point summaries, the best point, queue metrics.

The ANOVA itself (model choice, fit, checks, plots) is :func:`models.anova.analysis.analyse`, the
same analysis ``sparkdl anova`` prints; :func:`analyse_campaign` calls it and turns what
cannot be analysed into the sentence the report shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from matplotlib.figure import Figure

from models.anova import AnovaResult
from models.anova.analysis import Analysis, NotAnalysableError, analyse
from models.anova.splitplot import WHOLE_PLOT_COLUMN, fit_split_plot, split_plot_structure
from models.anova.splitplot_result import SplitPlotResult
from models.drift import MIN_REFERENCE_RUNS, adjust_for_drift, run_hours, table_drift
from models.errors import ModelError
from models.queueing import JobSizes, Plan, plan
from models.queueing.job_sizes import UNITS, size_moments

UTILIZATIONS = (0.5, 0.8, 0.9)
SERVERS = (1, 2, 4)
SUMMARY_COLUMNS = ("wall_clock_s", "accuracy", "cost")


def analyse_campaign(frame: pd.DataFrame, response: str, factors: Sequence[str], alpha: float = 0.05,
                     plots: bool = True, reference: pd.DataFrame | None = None) -> Analysis:
    """The report's ANOVA: :func:`analyse` with the model chosen to fit; a reason instead of an error.

    When the runs ran in whole plots (a ``whole_plot`` column), the split-plot ANOVA is fitted too and is
    the one that tests the factors. Every analysis checks drift over the campaign's run time, from the
    reference runs when there are at least 3 (a significant trend of theirs is adjusted out first)."""
    if response not in frame.columns:
        return Analysis(unavailable=f"the response column {response!r} is not in the analysed table")
    reference = reference if reference is not None else frame.iloc[0:0]
    notes: list[str] = []
    reference_drift = None
    if len(reference) >= MIN_REFERENCE_RUNS and response in reference.columns:
        reference_drift = table_drift(frame, reference, response, alpha=alpha)
        frame, note = adjust_for_drift(frame, response, reference_drift)
        notes += [note] if note else []
    factors = [f for f in factors if f != WHOLE_PLOT_COLUMN]
    try:
        analysis = analyse(frame, response, factors, alpha=alpha, plots=plots, choose=True)
    except NotAnalysableError as exc:
        return Analysis(unavailable=str(exc))
    except ModelError as exc:
        return Analysis(unavailable=f"the ANOVA could not be fitted: {exc}")
    split = _split_plot(frame, response, analysis, notes)
    column = WHOLE_PLOT_COLUMN if split is not None else None
    terms = analysis.anova.summary.terms if analysis.anova is not None else None
    drift = reference_drift
    if drift is None:
        try:
            drift = table_drift(frame, reference, response, terms, whole_plot=column, alpha=alpha)
        except ModelError as exc:
            notes.append(f"drift not checked: {exc}")
    figures = dict(analysis.figures) if plots else {}
    if plots and analysis.anova is not None and drift is not None and drift.tested:
        figure = residuals_vs_run_order(frame, analysis.anova)
        if figure is not None:
            figures["residuals_vs_run_order"] = figure
    if not plots:
        notes.append("plots were not drawn (--no-plots)")
    return replace(analysis, figures=figures, notes=(*analysis.notes, *notes), split_plot=split, drift=drift)


def _split_plot(frame: pd.DataFrame, response: str, analysis: Analysis, notes: list[str]) -> SplitPlotResult | None:
    """The split-plot ANOVA of the chosen model when the runs ran in whole plots, else None."""
    if analysis.anova is None or analysis.choice is None:
        return None
    structure = split_plot_structure(frame, analysis.choice.factors)
    if structure is None:
        return None
    try:
        return fit_split_plot(frame, response, analysis.choice.factors, whole_plot_factors=None,
                              whole_plot=WHOLE_PLOT_COLUMN, terms=analysis.choice.terms, alpha=analysis.anova.alpha)
    except ModelError as exc:
        notes.append(f"the runs ran in whole plots, but the split-plot ANOVA could not be fitted ({exc}); the "
                     "ordinary ANOVA's tests of the whole-plot factors treat the runs as randomized and overstate "
                     "their significance")
        return None


def residuals_vs_run_order(frame: pd.DataFrame, result: AnovaResult) -> Figure | None:
    """The ANOVA's residuals against each run's start (hours into the campaign), with the zero line."""
    hours = run_hours(frame)
    if hours is None or len(hours) != len(result.residuals):
        return None
    fig = Figure(figsize=(5.2, 3.4))
    ax = fig.subplots()
    ax.scatter(hours, result.residuals, s=12, color="tab:blue", zorder=3)
    ax.axhline(0.0, color="tab:gray", linestyle="--")
    ax.set_xlabel("hours since the campaign's first run")
    ax.set_ylabel("residual")
    ax.set_title(f"Residuals vs run order ({result.summary.response})")
    fig.tight_layout()
    return fig


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
    """Wall clock in seconds when measured, else the cost (Marinos 2021's choice); a reason if neither works."""
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
