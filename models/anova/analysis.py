"""One analysis of a results table, used by ``sparkdl anova`` and by the report.

:func:`analyse` fits the ANOVA, runs the assumption checks, and when an assumption fails
shows what a log transform changes (and, if asked, Kruskal-Wallis per factor); with
``plots=True`` it draws the effect and residual plots. With ``choose=True`` (the report) and no
explicit terms, the model is chosen to fit whatever the campaign's size (:func:`choose_model`):

1. factors that do not vary among the analysed jobs are left out, and so is any main effect
   that is confounded with earlier ones in these jobs (kept: the first in column order);
2. the default model (main effects plus every estimable two-factor interaction) is used when
   it leaves residual degrees of freedom;
3. else main effects only, when they leave residual degrees of freedom;
4. else the main-effects fit is saturated: sums of squares and effects exist but F and p do
   not, and the analysis says so (Lenth's PSE judges the effects when there are enough of them).

What cannot be analysed raises :class:`NotAnalysableError` with one line saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from models.anova.design import INTERCEPT, code_factors, estimable_terms, factor_term, model_matrix
from models.anova.fit import fit_anova
from models.anova.result import AnovaResult, json_safe
from models.anova.splitplot_result import SplitPlotResult
from models.anova.terms import default_terms
from models.diagnostics import (
    Diagnostics,
    KruskalRow,
    TransformComparison,
    check_assumptions,
    compare_transforms,
    kruskal_wallis,
)
from models.drift import DriftResult
from models.errors import InvalidTableError
from models.plots import all_figures

RESIDUAL_PLOTS = ("qq_residuals", "residuals_vs_fitted")


class NotAnalysableError(InvalidTableError):
    """The table cannot give an ANOVA: too few jobs, or no factor varies among them."""


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
    kruskal: tuple[KruskalRow, ...] | None = None
    figures: dict[str, Figure] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: the split-plot ANOVA, when the runs ran in whole plots: it, not ``anova``, tests the factors
    split_plot: SplitPlotResult | None = None
    #: the trend of the response over the campaign's run time
    drift: DriftResult | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ANOVA rows, summary and Lenth, with diagnostics, Kruskal-Wallis and the log preview."""
        doc = self.anova.to_dict() if self.anova is not None else {"rows": [], "summary": None, "lenth": None}
        doc["diagnostics"] = self.diagnostics.to_dict() if self.diagnostics else None
        doc["kruskal"] = [json_safe(asdict(k)) for k in self.kruskal] if self.kruskal is not None else None
        doc["log_transform_preview"] = self.log_comparison.to_dict() if self.log_comparison else None
        doc["split_plot"] = self.split_plot.to_dict() if self.split_plot is not None else None
        doc["drift"] = self.drift.to_dict() if self.drift is not None else None
        doc["notes"] = list(self.notes)
        return doc


def estimable_factors(frame: pd.DataFrame,
                      factors: Sequence[str]) -> tuple[list[str], list[tuple[str, tuple[str, ...]]]]:
    """Factors whose main effects are estimable together (first come first kept), and each other
    varying factor with the kept factors its column is a combination of."""
    varying = [f for f in factors if frame[f].nunique(dropna=True) > 1]
    if not varying:
        return [], []
    term_of = {factor_term(f, frame): f for f in varying}
    points = code_factors(frame[varying].drop_duplicates(), varying)
    split = estimable_terms(model_matrix(" + ".join(term_of), points), [INTERCEPT, *term_of])
    kept = [term_of[t] for t in split.kept if t != INTERCEPT]
    confounded = [(term_of[t], tuple(term_of[p] for p in partners)) for t, partners in split.aliased]
    return kept, confounded


def _confounding_note(factor: str, partners: tuple[str, ...]) -> str:
    with_what = " and ".join(partners) if partners else "the mean"
    return (f"{factor} is confounded with {with_what} in the jobs analysed (its column is a combination of "
            f"theirs), so its main effect cannot be separated; it is left out of the model")


def choose_model(frame: pd.DataFrame, response: str, factors: Sequence[str],
                 alpha: float = 0.05) -> tuple[ModelChoice, AnovaResult]:
    """The largest of default / main-effects models that fits (see the module docstring), fitted."""
    n = len(frame)
    if n < 2:
        raise NotAnalysableError(f"ANOVA is not possible with {n} usable job(s)")
    kept, confounded = estimable_factors(frame, factors)
    notes = [_confounding_note(f, p) for f, p in confounded]
    if not kept:
        raise NotAnalysableError(f"ANOVA is not possible: all {n} usable jobs ran at one design point, so no "
                                 "factor varies among them")
    left = tuple(f for f in factors if f not in kept and frame[f].nunique(dropna=True) > 1)
    default = default_terms(frame, kept).rhs
    mains = " + ".join(factor_term(f, frame) for f in kept)
    tried = [(default, "main effects and every two-factor interaction this design can estimate")]
    if mains != default:
        tried.append((mains, "main effects only: with interactions the model would leave no residual degrees of "
                             "freedom"))
    for rhs, why in tried:
        result = fit_anova(frame, response, rhs, factors=kept, alpha=alpha)
        if result.summary.df_resid > 0:
            return ModelChoice(rhs, tuple(kept), "; ".join([why, *notes]), left, tuple(confounded)), result
    k = int(result.summary.df_model)
    why = (f"main effects only, and even these leave no residual degrees of freedom: {n} jobs and {k} model "
           f"terms plus the mean, so F tests and p-values are not possible; sums of squares and effects are shown")
    return ModelChoice(rhs, tuple(kept), "; ".join([why, *notes]), left, tuple(confounded)), result


def _figures(result: AnovaResult, notes: list[str]) -> dict[str, Figure]:
    try:
        figures = all_figures(result)
    except ValueError as exc:
        notes.append(f"plots not drawn: {exc}")
        return {}
    if result.summary.df_resid <= 0:  # residuals are zero by construction: nothing to plot
        for name in RESIDUAL_PLOTS:
            figures.pop(name, None)
    return figures


def analyse(
    frame: pd.DataFrame,
    response: str,
    factors: Sequence[str],
    *,
    terms: str | None = None,
    typ: int = 2,
    transform: str | None = None,
    robust: str | None = None,
    aliases: Iterable[str] = (),
    alpha: float = 0.05,
    kruskal: bool | None = None,
    plots: bool = False,
    choose: bool = False,
) -> Analysis:
    """Fit, check and (optionally) plot; see the module docstring.

    ``kruskal``: True always, False never, None when an assumption fails. ``choose``: pick the
    model by :func:`choose_model` when no ``terms`` are given (else the default terms, strictly).
    """
    if choose and terms is None:
        choice, result = choose_model(frame, response, factors, alpha)
    else:
        result = fit_anova(frame, response, terms, typ=typ, transform=transform, robust=robust, factors=factors,
                           aliases=aliases, alpha=alpha)
        why = "the terms given" if terms is not None else "main effects and every estimable two-factor interaction"
        choice = ModelChoice(result.summary.terms, result.factors, why)
    diag = check_assumptions(result)
    notes: list[str] = []
    comparison = None
    failing = not diag.all_hold and result.summary.df_resid > 0
    if failing and transform is None:
        if np.all(result.y > 0):
            logged = fit_anova(frame, response, result.summary.terms, typ=result.summary.typ, transform="log",
                               robust=robust, factors=result.factors, alpha=alpha)
            comparison = compare_transforms(result, logged)
        else:
            notes.append(f"{response} has values <= 0, so the log transform cannot be shown")
    kw = kruskal_wallis(result) if kruskal or (kruskal is None and failing) else None
    figures = _figures(result, notes) if plots else {}
    return Analysis(result, choice, None, diag, comparison, kw, figures, tuple(notes))
