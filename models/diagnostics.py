"""Assumption checks for an ANOVA fit, each read the right way round.

A test's null hypothesis is the assumption, so a small p (< alpha) means the assumption is
*violated*; a large p means the data give no evidence against it (not proof that it holds).

* Shapiro-Wilk on the residuals (normality).
* Equal variances on the analysed response grouped by design point (not on the factor
  columns): Bartlett when Shapiro-Wilk did not reject normality, else Levene with median
  centring (Brown-Forsythe), which does not assume normality.
* Breusch-Pagan (Koenker's studentized form) of the squared residuals on the model's regressors.
* VIF of every model column, with a constant, computed twice: for the columns as fitted
  (natural units, whose products of uncentred factors are correlated with their main effects by
  construction) and with coded, centred factors (the design's own orthogonality).

Remedies the CLI offers: ``--transform log|boxcox``, ``--robust hc3``, ``--kruskal``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.diagnostic import het_breuschpagan
from statsmodels.stats.outliers_influence import variance_inflation_factor

from models.anova import RESPONSE_COLUMN, AnovaResult, json_safe

VIF_LIMIT = 10.0


@dataclass(frozen=True)
class Check:
    """One assumption test: statistic, p, verdict and what it means for the p-values."""

    name: str
    assumption: str
    statistic: float
    p: float
    holds: bool | None
    meaning: str

    @property
    def verdict(self) -> str:
        return {True: "holds", False: "violated", None: "not tested"}[self.holds]


@dataclass(frozen=True)
class VifRow:
    """VIF of one model column as fitted and with coded, centred factors."""

    term: str
    vif: float
    vif_coded: float


@dataclass(frozen=True)
class KruskalRow:
    """Kruskal-Wallis H test of the response across one factor's levels."""

    factor: str
    H: float
    df: int
    p: float
    levels: int


@dataclass(frozen=True)
class Diagnostics:
    """The checks, the VIF table and the remedies worth trying."""

    checks: tuple[Check, ...]
    vif: tuple[VifRow, ...]
    remedies: tuple[str, ...]
    alpha: float

    @property
    def all_hold(self) -> bool:
        return all(c.holds is not False for c in self.checks)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return json_safe(
            {
                "alpha": self.alpha,
                "checks": [asdict(c) | {"verdict": c.verdict} for c in self.checks],
                "vif": [asdict(v) for v in self.vif],
                "remedies": list(self.remedies),
            }
        )

    def to_text(self) -> str:
        lines = [f"assumption checks (alpha = {self.alpha:g}; a test's null hypothesis is the assumption):"]
        for c in self.checks:
            stat = "-" if math.isnan(c.statistic) else f"{c.statistic:.4g}"
            p = "-" if not math.isfinite(c.p) else f"{c.p:.3g}"
            lines.append(f"  {c.name}: statistic = {stat}, p = {p} -> {c.assumption} {c.verdict}.")
            lines.append(f"    {c.meaning}")
        if self.vif:
            w = max(len(v.term) for v in self.vif)
            lines.append(f"  VIF (with a constant)   {'term'.ljust(w)}  as fitted  coded+centred")
            for v in self.vif:
                lines.append(f"                          {v.term.ljust(w)}  {v.vif:9.3f}  {v.vif_coded:13.3f}")
        if self.remedies:
            lines.append("remedies:")
            lines += [f"  {r}" for r in self.remedies]
        return "\n".join(lines)


# --- individual checks -----------------------------------------------------------------------


def shapiro_check(residuals: np.ndarray, alpha: float = 0.05) -> Check:
    """Shapiro-Wilk test of the residuals' normality."""
    r = np.asarray(residuals, dtype=float)
    if r.size < 3 or np.ptp(r) == 0:
        return Check("Shapiro-Wilk", "normality of residuals", math.nan, math.nan, None,
                     "Not enough distinct residuals to test normality.")
    w, p = stats.shapiro(r)
    if p < alpha:
        meaning = ("The residuals are not normal, so the F-test p-values above are only approximate: "
                   "mild departures matter little, but skew or outliers this strong can make them "
                   "badly wrong in either direction.")
    else:
        meaning = ("No evidence against normal residuals, so the F-test p-values above are not "
                   "undermined on this count.")
    return Check("Shapiro-Wilk", "normality of residuals", float(w), float(p), bool(p >= alpha), meaning)


def design_point_groups(result: AnovaResult) -> list[np.ndarray]:
    """The analysed response split by design point (unique factor combination), groups of 2+."""
    if not result.factors:
        return []
    grouped = result.data.groupby(list(result.factors), sort=False, dropna=False)[RESPONSE_COLUMN]
    return [g.to_numpy(dtype=float) for _, g in grouped if len(g) >= 2]


def variance_check(result: AnovaResult, normal: bool, alpha: float = 0.05) -> Check:
    """Bartlett (normal residuals) or median-centred Levene on the response by design point."""
    groups = design_point_groups(result)
    name = "Bartlett" if normal else "Levene (median)"
    assumption = "equal variances across design points"
    if len(groups) < 2:
        return Check(name, assumption, math.nan, math.nan, None,
                     "Needs two or more replicated design points; the design is not replicated.")
    if normal:
        variances = np.array([np.var(g, ddof=1) for g in groups])
        # Identical values can leave a variance of 1e-35 (rounding of the mean), not exactly 0.
        flat = int(np.sum(variances <= 1e-20 * max(float(variances.max()), 1e-300)))
        if flat:
            return Check(name, assumption, math.inf, 0.0, False,
                         f"{flat} design point(s) show no spread at all while others vary, so variances "
                         "are unequal and the F-test p-values above can be too small or too large.")
        stat, p = stats.bartlett(*groups)
    else:
        stat, p = stats.levene(*groups, center="median")
    if not math.isfinite(p):
        return Check(name, assumption, float(stat), math.nan, None,
                     "Every design point has zero spread, so equality of variances cannot be tested.")
    if p < alpha:
        meaning = ("The response's variance differs between design points, so the pooled residual "
                   "mean square misstates the noise at most points and the F-test p-values above "
                   "can be too small or too large.")
    else:
        meaning = ("No evidence that variances differ between design points, so the pooled residual "
                   "mean square behind the F tests is appropriate.")
    return Check(name, assumption, float(stat), float(p), bool(p >= alpha), meaning)


def breusch_pagan_check(result: AnovaResult, alpha: float = 0.05) -> Check:
    """Breusch-Pagan (studentized) test of residual variance against the model's regressors."""
    exog = np.asarray(result.fit.model.exog, dtype=float)
    if exog.shape[1] < 2 or result.summary.df_resid <= 0:
        return Check("Breusch-Pagan", "constant residual variance", math.nan, math.nan, None,
                     "Needs residual degrees of freedom and at least one regressor.")
    lm, lm_p, _, _ = het_breuschpagan(result.residuals, exog, robust=True)
    if lm_p < alpha:
        meaning = ("The residual variance changes with the factors, so ordinary standard errors and "
                   "the F-test p-values above are unreliable; HC3 tests (--robust hc3) allow for this.")
    else:
        meaning = ("No evidence that the residual variance changes with the factors, so ordinary "
                   "standard errors are appropriate on this count.")
    return Check("Breusch-Pagan", "constant residual variance", float(lm), float(lm_p), bool(lm_p >= alpha), meaning)


def _vifs(x: np.ndarray) -> np.ndarray:
    return np.array([variance_inflation_factor(x, j) for j in range(1, x.shape[1])])


def vif_table(result: AnovaResult) -> tuple[VifRow, ...]:
    """VIF of each non-intercept model column, with a constant: as fitted and coded+centred."""
    exog = np.asarray(result.fit.model.exog, dtype=float)
    names = list(result.fit.model.exog_names)
    if exog.shape[1] < 3 or names[0] != "Intercept":
        return ()
    x_coded = result.coded.x
    with np.errstate(divide="ignore", invalid="ignore"):
        raw, cod = _vifs(exog), _vifs(x_coded)
    if x_coded.shape[1] != exog.shape[1]:
        cod = np.full(len(raw), math.nan)
    return tuple(VifRow(n, float(a), float(b)) for n, a, b in zip(names[1:], raw, cod))


def vif_check(rows: tuple[VifRow, ...]) -> Check:
    """Multicollinearity judged on the coded, centred VIFs (the design's orthogonality)."""
    if not rows:
        return Check("VIF", "no multicollinearity", math.nan, math.nan, None,
                     "Needs two or more model columns besides the intercept.")
    worst = max(rows, key=lambda r: r.vif_coded)
    raw_worst = max(r.vif for r in rows)
    if worst.vif_coded > VIF_LIMIT:
        meaning = (f"With coded, centred factors {worst.term} still has VIF {worst.vif_coded:.3g} > {VIF_LIMIT:g}: "
                   "its effect is confounded with others in these data, so its separate sum of squares "
                   "and p-value are poorly determined (and Type I results depend on term order).")
        holds = False
    else:
        meaning = (f"With coded, centred factors every VIF is <= {worst.vif_coded:.3g}, so the terms are "
                   "(nearly) orthogonal and no p-value is weakened by collinearity")
        meaning += (f"; the natural-unit VIFs (up to {raw_worst:.3g}) come from uncentred interaction "
                    "columns and are a coding artefact, not a property of the design." if raw_worst > VIF_LIMIT else ".")
        holds = True
    return Check("VIF", "no multicollinearity", float(worst.vif_coded), math.nan, holds, meaning)


def _remedies(checks: list[Check], result: AnovaResult) -> tuple[str, ...]:
    failed = {c.name for c in checks if c.holds is False}
    out = []
    positive = bool(np.all(result.y > 0))
    normal_fail = "Shapiro-Wilk" in failed
    var_fail = bool(failed & {"Bartlett", "Levene (median)", "Breusch-Pagan"})
    if (normal_fail or var_fail) and result.summary.transform is None and positive:
        out.append("--transform log (or boxcox): a positive, right-skewed response whose spread grows "
                   "with its mean is usually normalised and stabilised by a log.")
    if var_fail and result.summary.robust is None:
        out.append("--robust hc3 (with --typ 2 or 3): F tests with heteroscedasticity-consistent "
                   "standard errors.")
    if normal_fail or var_fail:
        out.append("--kruskal: Kruskal-Wallis rank test per factor, free of the normality assumption "
                   "(one factor at a time, ignoring the others).")
    return tuple(out)


def check_assumptions(result: AnovaResult, alpha: float | None = None) -> Diagnostics:
    """Run every check on a fitted ANOVA and list the remedies that apply."""
    a = result.alpha if alpha is None else alpha
    if result.summary.df_resid <= 0:
        shapiro = Check("Shapiro-Wilk", "normality of residuals", math.nan, math.nan, None,
                        "No residual degrees of freedom: the residuals are zero by construction.")
    else:
        shapiro = shapiro_check(result.residuals, a)
    variance = variance_check(result, normal=shapiro.holds is not False, alpha=a)
    bp = breusch_pagan_check(result, a)
    vifs = vif_table(result)
    checks = [shapiro, variance, bp, vif_check(vifs)]
    return Diagnostics(tuple(checks), vifs, _remedies(checks, result), a)


# --- remedies --------------------------------------------------------------------------------


def kruskal_wallis(result: AnovaResult) -> tuple[KruskalRow, ...]:
    """Kruskal-Wallis test of the response across the levels of each factor, one at a time."""
    out = []
    for f in result.factors:
        groups = [g.to_numpy(dtype=float) for _, g in result.data.groupby(f, sort=True)[RESPONSE_COLUMN]]
        if len(groups) < 2:
            continue
        h, p = stats.kruskal(*groups)
        out.append(KruskalRow(f, float(h), len(groups) - 1, float(p), len(groups)))
    return tuple(out)


def format_kruskal(rows: tuple[KruskalRow, ...]) -> str:
    lines = ["Kruskal-Wallis per factor (ranks; each factor alone, other factors ignored):"]
    w = max((len(r.factor) for r in rows), default=6)
    for r in rows:
        lines.append(f"  {r.factor.ljust(w)}  H = {r.H:9.4g}  df = {r.df}  p = {r.p:.3g}")
    return "\n".join(lines)


@dataclass(frozen=True)
class TermChange:
    """One term's share of variation and p before and after a transform."""

    term: str
    pct_before: float
    pct_after: float
    p_before: float
    p_after: float


@dataclass(frozen=True)
class TransformComparison:
    """What a response transform changes: fit, assumption checks and per-term results."""

    before: str
    after: str
    r_squared: tuple[float, float]
    checks: tuple[tuple[Check, Check], ...]
    terms: tuple[TermChange, ...]
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        return json_safe(
            {
                "before": self.before,
                "after": self.after,
                "r_squared": list(self.r_squared),
                "checks": [{"before": asdict(b) | {"verdict": b.verdict},
                            "after": asdict(a) | {"verdict": a.verdict}} for b, a in self.checks],
                "terms": [asdict(t) for t in self.terms],
            }
        )

    def to_text(self) -> str:
        lines = [f"what analysing {self.after} instead of {self.before} changes:",
                 f"  R^2 {self.r_squared[0]:.4f} -> {self.r_squared[1]:.4f}"]
        for b, a in self.checks:
            if not (math.isfinite(b.p) or math.isfinite(a.p)):
                continue  # VIF depends on the design only; a transform cannot change it
            lines.append(f"  {b.name if b.name == a.name else b.name + ' / ' + a.name}: "
                         f"p {_p(b.p)} ({b.verdict}) -> {_p(a.p)} ({a.verdict})")
        flips = [t for t in self.terms if (t.p_before < self.alpha) != (t.p_after < self.alpha)]
        for t in flips:
            now = "significant" if t.p_after < self.alpha else "not significant"
            lines.append(f"  {t.term}: p {_p(t.p_before)} -> {_p(t.p_after)} (now {now}); "
                         f"% variation {t.pct_before:.2f} -> {t.pct_after:.2f}")
        if not flips:
            lines.append(f"  no term changes significance at alpha = {self.alpha:g}")
        return "\n".join(lines)


def _p(p: float) -> str:
    return "-" if not math.isfinite(p) else f"{p:.3g}"


def compare_transforms(before: AnovaResult, after: AnovaResult) -> TransformComparison:
    """Side by side: R^2, assumption checks and per-term p and % variation."""
    db, da = check_assumptions(before), check_assumptions(after)
    after_rows = {r.term: r for r in after.rows}
    terms = tuple(
        TermChange(r.term, r.pct_variation, after_rows[r.term].pct_variation, r.p, after_rows[r.term].p)
        for r in before.rows
        if r.term in after_rows and r.term != "Residual"
    )
    return TransformComparison(
        before.summary.response,
        after.summary.response,
        (before.summary.r_squared, after.summary.r_squared),
        tuple(zip(db.checks, da.checks)),
        terms,
        before.alpha,
    )
