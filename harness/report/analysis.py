"""The numbers a report shows: the fitted ANOVA and its checks, per-point summaries, queue metrics.

Model choice (:func:`choose_model`) makes the ANOVA fit whatever the campaign's size:

1. factors that do not vary among the analysed jobs are left out, and so is any main effect
   that is confounded with earlier ones in these jobs (kept: the first in column order);
2. the default model of :func:`models.anova.fit_anova` (main effects plus every estimable
   two-factor interaction) is used when it leaves residual degrees of freedom;
3. else main effects only, when they leave residual degrees of freedom;
4. else the main-effects fit is saturated: sums of squares and effects exist but F and p do
   not, and the report says so (Lenth's PSE judges the effects when there are enough of them).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from models.anova import AnovaResult, code_factors, default_terms, fit_anova, is_numeric
from models.diagnostics import (
    Diagnostics,
    KruskalRow,
    TransformComparison,
    check_assumptions,
    compare_transforms,
    kruskal_wallis,
)
from models.errors import ModelError
from models.plots import all_figures
from models.queueing import JobSizes, Plan, plan
from models.queueing.job_sizes import UNITS

UTILIZATIONS = (0.5, 0.8, 0.9)
SERVERS = (1, 2, 4)
SUMMARY_COLUMNS = ("wall_clock_s", "accuracy", "cost")


@dataclass(frozen=True)
class ModelChoice:
    """The right-hand side fitted, its factors, and why this model was chosen."""

    terms: str
    factors: tuple[str, ...]
    reason: str
    left_out: tuple[str, ...] = ()
    confounded: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def partners_of(self, factor: str) -> tuple[str, ...]:
        """The left-out factors whose main effect is confounded with ``factor``'s."""
        return tuple(f for f, with_ in self.confounded if factor in with_)


@dataclass(frozen=True, eq=False)
class Analysis:
    """The ANOVA and everything derived from it; ``unavailable`` says why there is no ANOVA."""

    anova: AnovaResult | None = None
    choice: ModelChoice | None = None
    unavailable: str | None = None
    diagnostics: Diagnostics | None = None
    log_comparison: TransformComparison | None = None
    kruskal: tuple[KruskalRow, ...] = ()
    figures: dict[str, Figure] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _term(factor: str, frame: pd.DataFrame) -> str:
    return factor if is_numeric(frame[factor]) else f"C({factor})"


def estimable_factors(frame: pd.DataFrame, factors: Sequence[str]) -> tuple[list[str], list[tuple[str, tuple[str, ...]]]]:
    """Factors whose main effects are estimable together (first come first kept), and each other
    varying factor with the kept factors its column is a combination of."""
    import patsy

    varying = [f for f in factors if frame[f].nunique(dropna=True) > 1]
    if not varying:
        return [], []
    pts = code_factors(frame[varying].drop_duplicates(), varying)
    dm = patsy.dmatrix(" + ".join(_term(f, frame) for f in varying), pts, return_type="dataframe")
    x = dm.to_numpy(dtype=float)
    slices = dm.design_info.term_name_slices
    cols = list(range(slices["Intercept"].stop))
    kept: list[str] = []
    kept_cols: dict[str, list[int]] = {}
    confounded: list[tuple[str, tuple[str, ...]]] = []
    for f in varying:
        s = slices[_term(f, frame)]
        new = list(range(s.start, s.stop))
        if np.linalg.matrix_rank(x[:, cols + new]) == len(cols) + len(new):
            cols += new
            kept.append(f)
            kept_cols[f] = new
            continue
        coef, *_ = np.linalg.lstsq(x[:, cols], x[:, s.start], rcond=None)
        scale = float(np.abs(coef).max()) or 1.0
        partners = tuple(k for k in kept if np.abs(coef[kept_cols[k]]).max() > 1e-8 * scale)
        confounded.append((f, partners))
    return kept, confounded


def _confounding_note(factor: str, partners: tuple[str, ...]) -> str:
    with_what = " and ".join(partners) if partners else "the mean"
    return (f"{factor} is confounded with {with_what} in the jobs analysed (its column is a combination of "
            f"theirs), so its main effect cannot be separated; it is left out of the model")


def choose_model(frame: pd.DataFrame, response: str, factors: Sequence[str], alpha: float = 0.05) -> tuple[ModelChoice, AnovaResult] | str:
    """The largest of default / main-effects models that fits (see the module docstring), fitted.

    Returns the reason as a string when no ANOVA is possible.
    """
    n = len(frame)
    if n < 2:
        return f"ANOVA is not possible with {n} usable job(s)"
    kept, confounded = estimable_factors(frame, factors)
    notes = [_confounding_note(f, p) for f, p in confounded]
    if not kept:
        return (f"ANOVA is not possible: all {n} usable jobs ran at one design point, so no factor varies "
                "among them")
    left = tuple(f for f in factors if f not in kept and frame[f].nunique(dropna=True) > 1)
    default = default_terms(frame, kept).rhs
    mains = " + ".join(_term(f, frame) for f in kept)
    tried = [(default, "main effects and every two-factor interaction this design can estimate")]
    if mains != default:
        tried.append((mains, "main effects only: with interactions the model would leave no residual degrees of "
                             "freedom"))
    last = None
    for rhs, why in tried:
        result = fit_anova(frame, response, rhs, factors=kept, alpha=alpha)
        last = (rhs, result)
        if result.summary.df_resid > 0:
            return ModelChoice(rhs, tuple(kept), "; ".join([why, *notes]), left, tuple(confounded)), result
    rhs, result = last  # type: ignore[misc]
    k = int(result.summary.df_model)
    why = (f"main effects only, and even these leave no residual degrees of freedom: {n} jobs and {k} model "
           f"terms plus the mean, so F tests and p-values are not possible; sums of squares and effects are shown")
    return ModelChoice(rhs, tuple(kept), "; ".join([why, *notes]), left, tuple(confounded)), result


def analyse(frame: pd.DataFrame, response: str, factors: Sequence[str], alpha: float = 0.05,
            plots: bool = True) -> Analysis:
    """Fit the chosen model and run the checks, the log-transform comparison and (if ``plots``) the plots."""
    if response not in frame.columns:
        return Analysis(unavailable=f"the response column {response!r} is not in the analysed table")
    try:
        chosen = choose_model(frame, response, factors, alpha)
    except ModelError as exc:
        return Analysis(unavailable=f"the ANOVA could not be fitted: {exc}")
    if isinstance(chosen, str):
        return Analysis(unavailable=chosen)
    choice, result = chosen
    diag = check_assumptions(result)
    comparison = None
    notes = []
    kw: tuple[KruskalRow, ...] = ()
    if not diag.all_hold and result.summary.df_resid > 0:
        kw = kruskal_wallis(result)
        if np.all(result.y > 0):
            logged = fit_anova(frame, response, choice.terms, factors=choice.factors, transform="log", alpha=alpha)
            comparison = compare_transforms(result, logged)
        else:
            notes.append(f"{response} has values <= 0, so the log transform cannot be shown")
    figures: dict[str, Figure] = {}
    if plots:
        try:
            figures = all_figures(result)
            if result.summary.df_resid <= 0:  # residuals are zero by construction: nothing to plot
                for name in ("qq_residuals", "residuals_vs_fitted"):
                    figures.pop(name, None)
        except (ModelError, ValueError) as exc:
            notes.append(f"plots not drawn: {exc}")
    else:
        notes.append("plots were not drawn (--no-plots)")
    return Analysis(result, choice, None, diag, comparison, kw, figures, tuple(notes))


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
        mean = statistics.fmean(x)
        return JobSizes(source, quantity, len(x), mean, statistics.variance(x) / mean**2)
    return "queue metrics need a wall_clock_s or cost column"


def queueing(frame: pd.DataFrame, source: str, utilizations: Sequence[float] = UTILIZATIONS,
             servers: Sequence[int] = SERVERS) -> Queueing | str:
    """M/M/k and M/G/k metrics at each utilization for jobs of the measured mean size."""
    sizes = job_sizes(frame, source)
    if isinstance(sizes, str):
        return sizes
    plans = tuple((u, tuple(plan(sizes, u, servers))) for u in utilizations)
    return Queueing(sizes, UNITS[sizes.quantity], plans)
