"""The ANOVA fit: OLS of ``response ~ terms``, sums of squares per term, effects and the summary.

``fit_anova(frame, "cost", "nodes + epochs*learning_rate")`` fits the statsmodels formula
``cost ~ nodes + epochs*learning_rate`` and returns an :class:`~models.anova.result.AnovaResult`:

* one row per term plus ``Residual``: df, sum of squares, mean square, F, p and
  ``pct_variation`` = 100 * SS / SST, where SST is the corrected total sum of squares of the
  (transformed) response. For Type I the rows sum to 100; for Types II/III in an unbalanced
  design they need not, because the terms' sums of squares then overlap.
* Type II by default (``typ`` 1, 2 or 3); Type I is sequential, so term order matters.
* factors enter as numbers unless wrapped in ``C()``; Types I and II use the levels as given
  (for a hierarchical model they do not depend on the origin of the levels). Type III codes
  every numeric factor to ``(x - centre) / half-range`` and gives categorical factors
  sum-to-zero contrasts, so its main-effect tests are at the design centre.
* R^2, adjusted R^2 and predicted R^2 = 1 - PRESS / SST, PRESS = sum (e_i / (1 - h_ii))^2;
* Lenth's PSE of the coded effects when the design is unreplicated.

``robust="hc3"`` replaces F and p with heteroscedasticity-consistent (HC3) Wald tests (Types
II/III); sums of squares and % of variation stay those of the ordinary fit. ``transform`` "log"
or "boxcox" analyses log(y) or the Box-Cox transform whose lambda minimises the residual sum of
squares of the geometric-mean-scaled response for this model (Box & Cox 1964).

The factors are declared (``factors=``) or, with explicit ``terms``, the columns the terms name;
they are never guessed here. A response that is missing, non-finite, beyond +-1e100 or constant
is refused with one line.
"""

from __future__ import annotations

import keyword
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.anova import anova_lm
import statsmodels.formula.api as smf
from scipy import optimize, special

from models.anova.design import (
    RESPONSE_COLUMN,
    ModelMatrix,
    code_factors,
    estimable_terms,
    is_numeric,
    model_matrix,
    two_level_numeric,
)
from models.anova.effects import coded_effects, lenth
from models.anova.result import RESIDUAL, Alias, AnovaResult, AnovaRow, Effect, LenthResult, ModelSummary
from models.anova.shares import lmg_shares
from models.anova.terms import default_terms, named_columns, sum_coding
from models.errors import AnalysisOptionError, FitError, FormulaError, InvalidTableError, MissingColumnError

TRANSFORMS = ("log", "boxcox")
ROBUST = ("hc3",)
#: Responses beyond this magnitude are refused: their squares overflow a float's range.
MAX_ABS_RESPONSE = 1e100
#: A response whose range is below this fraction of its magnitude is constant (rounding noise).
CONSTANT_RTOL = 1e-12


def check_options(typ: int, robust: str | None) -> None:
    if typ not in (1, 2, 3):
        raise AnalysisOptionError(f"typ {typ!r} is not 1, 2 or 3")
    if robust is not None and robust not in ROBUST:
        raise AnalysisOptionError(f"robust {robust!r} is not supported; use hc3")
    if robust and typ == 1:
        raise AnalysisOptionError("robust (HC3) tests need --typ 2 or 3; sequential Type I has none")


def response_values(frame: pd.DataFrame, response: str) -> np.ndarray:
    """The response as floats; refused when missing, non-finite, absurdly large or constant."""
    if response not in frame.columns:
        raise MissingColumnError(f"response column {response!r} is not in the table; pick one of {list(frame.columns)}")
    y = pd.to_numeric(frame[response], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        bad = int((~np.isfinite(y)).sum())
        raise InvalidTableError(f"response {response!r} has {bad} missing or non-numeric values")
    if y.size < 2:
        raise InvalidTableError(f"response {response!r} has {y.size} usable value(s); an ANOVA needs 2 or more")
    if np.abs(y).max() > MAX_ABS_RESPONSE:
        raise InvalidTableError(f"response {response!r} has {int((np.abs(y) > MAX_ABS_RESPONSE).sum())} value(s) "
                                f"beyond +-{MAX_ABS_RESPONSE:g}; fix or drop those rows")
    if np.ptp(y) <= CONSTANT_RTOL * np.abs(y).max():
        raise InvalidTableError(f"response {response!r} is constant ({y.size} values, all {y[0]:g}): there is no "
                                "variation to analyse; pick a response that varies")
    return y


def resolve_factors(frame: pd.DataFrame, response: str, terms: str | None,
                    factors: Sequence[str] | None) -> tuple[str, ...]:
    """The declared factors, or the columns explicit terms name; never guessed from the table."""
    if factors is None:
        if terms is None:
            raise FormulaError("no factors declared: give factors (--factors a,b,c) or the model terms (--terms)")
        factors = named_columns(terms, [c for c in frame.columns if c != response])
    missing = [f for f in factors if f not in frame.columns]
    if missing:
        raise MissingColumnError(f"factor column(s) {missing} are not in the table")
    odd = [f for f in factors if not str(f).isidentifier() or keyword.iskeyword(str(f))]
    if odd:
        raise FormulaError(f"factor {str(odd[0])[:60]!r} is not a plain name (letters, digits and _, not starting with "
                           "a digit), so a model formula cannot hold it: rename the column, or leave it out with "
                           "--factors")
    return tuple(factors)


def resolve_terms(frame: pd.DataFrame, factors: Sequence[str], terms: str | None,
                  aliases: Iterable[str | Sequence[str]]) -> tuple[str, tuple[Alias, ...]]:
    """The right-hand side to fit and the interactions the default model left out as aliased."""
    if terms is None:
        dt = default_terms(frame, factors, aliases)
        return dt.rhs, dt.aliased
    rhs = terms.strip()
    if "~" in rhs:
        raise FormulaError(f"terms {rhs!r}: give only the right-hand side, e.g. 'a + b + a:b'")
    if not rhs:
        raise FormulaError("terms are empty; give e.g. 'a + b + a:b' or omit --terms")
    return rhs, ()


@dataclass(frozen=True, eq=False)
class Frames:
    """What is fitted (natural units, or coded with sum contrasts for Type III) and the coded matrix."""

    fit_frame: pd.DataFrame
    fit_rhs: str
    coding: str
    coded: pd.DataFrame
    coded_rhs: str


def model_frames(frame: pd.DataFrame, factors: Sequence[str], rhs: str, typ: int) -> Frames:
    numeric = [f for f in factors if is_numeric(frame[f])]
    categorical = [f for f in factors if not is_numeric(frame[f])]
    coded = code_factors(frame, numeric)
    if typ == 3:
        summed = sum_coding(rhs, categorical)
        return Frames(coded, summed, "coded units (centre 0, half-range 1), sum-to-zero contrasts", coded, summed)
    return Frames(frame, rhs, "natural units", coded, rhs)


def boxcox_lambda(y: np.ndarray, x: np.ndarray, bounds: tuple[float, float] = (-3.0, 3.0)) -> float:
    """Lambda minimising the residual SS of the geometric-mean-scaled Box-Cox response on x."""
    logy = np.log(y)
    gm = float(np.exp(logy.mean()))

    def sse(lam: float) -> float:
        if abs(lam) < 1e-12:
            z = gm * logy
        else:
            z = (y**lam - 1) / (lam * gm ** (lam - 1))
        coef, *_ = np.linalg.lstsq(x, z, rcond=None)
        r = z - x @ coef
        return float(r @ r)

    res = optimize.minimize_scalar(sse, bounds=bounds, method="bounded", options={"xatol": 1e-6})
    return float(res.x)


def transform_response(y: np.ndarray, transform: str | None, x: np.ndarray,
                       label: str) -> tuple[np.ndarray, str, float | None]:
    """The analysed response, its label and the Box-Cox lambda (if any)."""
    if transform is None:
        return y, label, None
    if transform not in TRANSFORMS:
        raise AnalysisOptionError(f"unknown transform {transform!r}; use one of {', '.join(TRANSFORMS)}")
    if np.any(y <= 0):
        raise AnalysisOptionError(
            f"--transform {transform} needs a positive response; {label!r} has minimum {y.min():g}"
        )
    if transform == "log":
        return np.log(y), f"log({label})", None
    lam = boxcox_lambda(y, x)
    return special.boxcox(y, lam), f"boxcox({label}, lambda={lam:.3g})", lam


def ols(rhs: str, frame: pd.DataFrame) -> Any:
    """statsmodels OLS of the analysed response on ``rhs``."""
    import patsy

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return smf.ols(f"{RESPONSE_COLUMN} ~ {rhs}", data=frame).fit()
    except patsy.PatsyError as exc:
        raise FormulaError(f"terms {rhs!r}: {exc.message}") from None
    except (NameError, SyntaxError, TypeError, ValueError) as exc:
        raise FormulaError(f"terms {rhs!r}: {exc}; use column names of the results table") from None


def fitted_matrix(fit: Any) -> ModelMatrix:
    """The model matrix of a formula fit, with its terms' columns."""
    return ModelMatrix(np.asarray(fit.model.exog, dtype=float), dict(fit.model.data.model_spec.term_name_slices))


def check_rank(fit: Any) -> None:
    """Refuse user terms that are aliased with earlier terms (not estimable in this design)."""
    matrix = fitted_matrix(fit)
    split = estimable_terms(matrix, list(matrix.slices))
    if split.aliased:
        raise FormulaError(
            f"terms {[t for t, _ in split.aliased]} are aliased with earlier terms in this design (not estimable); "
            "drop them from --terms or omit --terms to use the estimable default"
        )


def saturated_table(fit: Any, typ: int) -> pd.DataFrame:
    """Sums of squares by nested least squares when no residual df are left (anova_lm needs some)."""
    spec = fit.model.data.model_spec
    x = np.asarray(fit.model.exog, dtype=float)
    y = np.asarray(fit.model.endog, dtype=float)
    slices = spec.term_name_slices
    pairs = [(t, n) for t, n in zip(spec.terms, spec.term_names) if n != "Intercept"]

    def rss(keep: list[str]) -> float:
        cols = [slices["Intercept"]] if "Intercept" in slices else []
        cols += [slices[n] for n in keep]
        if not cols:
            return float(y @ y)
        xs = np.concatenate([x[:, s] for s in cols], axis=1)
        beta, *_ = np.linalg.lstsq(xs, y, rcond=None)
        r = y - xs @ beta
        return float(r @ r)

    def base(i: int, term: Any, name: str) -> list[str]:
        if typ == 1:
            return [n for _, n in pairs[:i]]
        if typ == 2:
            return [m for u, m in pairs if not set(term.factors) <= set(u.factors)]
        return [m for _, m in pairs if m != name]

    ss = {n: rss(base(i, t, n)) - rss(base(i, t, n) + [n]) for i, (t, n) in enumerate(pairs)}
    table = pd.DataFrame({"df": {n: float(slices[n].stop - slices[n].start) for _, n in pairs}, "sum_sq": ss})
    table.loc[RESIDUAL] = [0.0, float(np.sum(np.asarray(fit.resid) ** 2))]
    return table


def anova_tables(fit: Any, typ: int, robust: str | None, rhs: str) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """statsmodels' ANOVA table (nested least squares when saturated) and the robust one, if asked."""
    if fit.df_resid <= 0:
        return saturated_table(fit, typ), None
    try:
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore")
            aov = anova_lm(fit, typ=typ)
            rob = anova_lm(fit, typ=typ, robust=robust) if robust else None
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise FitError(f"ANOVA of {rhs!r} failed: {exc}") from None
    return aov.drop(index="Intercept", errors="ignore"), rob


def anova_rows(aov: pd.DataFrame, rob: pd.DataFrame | None, effects: Sequence[Effect], sst: float,
               saturated: bool) -> tuple[AnovaRow, ...]:
    by_term = {e.term: e for e in effects}
    rows = []
    for term, r in aov.drop(index="Intercept", errors="ignore").iterrows():
        name = str(term)
        dfv, ss = float(r["df"]), float(r["sum_sq"])
        F, p = float(r.get("F", math.nan)), float(r.get("PR(>F)", math.nan))
        if rob is not None and name != RESIDUAL:
            F, p = float(rob.loc[term, "F"]), float(rob.loc[term, "PR(>F)"])
        if saturated:
            F = p = math.nan
        eff = by_term.get(name)
        rows.append(AnovaRow(
            term=name, df=dfv, sum_sq=ss, mean_sq=ss / dfv if dfv > 0 else math.nan, F=F, p=p,
            pct_variation=100 * ss / sst if sst > 0 else math.nan,
            effect=eff.effect if eff else None, coefficient=eff.coefficient if eff else None,
        ))
    return tuple(rows)


def press(fit: Any) -> float:
    """Prediction error sum of squares from the hat matrix; inf when some leverage is 1."""
    x = np.asarray(fit.model.exog, dtype=float)
    q, _ = np.linalg.qr(x)
    h = np.einsum("ij,ij->i", q, q)
    e = np.asarray(fit.resid, dtype=float)
    if np.any(1 - h < 1e-10):
        return math.inf
    return float(np.sum((e / (1 - h)) ** 2))


def design_points(frame: pd.DataFrame, factors: Sequence[str]) -> int:
    return frame[list(factors)].drop_duplicates().shape[0] if factors else 1


def summarize(fit: Any, *, label: str, rhs: str, typ: int, sst: float, transform: str | None, lam: float | None,
              robust: str | None, coding: str, points: int, aliased: tuple[Alias, ...]) -> ModelSummary:
    saturated = fit.df_resid <= 0
    pr = press(fit)
    notes = []
    if saturated:
        notes.append("no residual degrees of freedom: F and p are undefined; judge effects by Lenth's PSE")
    if robust:
        notes.append("F and p are HC3 robust Wald tests; sums of squares are those of the ordinary fit")
    n = int(fit.nobs)
    return ModelSummary(
        response=label, formula=f"{label} ~ {rhs}", terms=rhs, typ=typ, n=n,
        df_model=float(fit.df_model), df_resid=float(fit.df_resid),
        r_squared=float(fit.rsquared),
        adj_r_squared=math.nan if saturated else float(fit.rsquared_adj),
        pred_r_squared=1 - pr / sst if math.isfinite(pr) and sst > 0 else math.nan,
        press=pr,
        root_mse=math.nan if saturated else float(np.sqrt(fit.mse_resid)),
        transform=transform, boxcox_lambda=lam, robust=robust, coding=coding,
        design_points=points, replicated=n > points, aliased=aliased, notes=tuple(notes),
    )


def fit_anova(
    frame: pd.DataFrame,
    response: str = "cost",
    terms: str | None = None,
    *,
    typ: int = 2,
    transform: str | None = None,
    robust: str | None = None,
    factors: Sequence[str] | None = None,
    aliases: Iterable[str | Sequence[str]] = (),
    alpha: float = 0.05,
) -> AnovaResult:
    """Fit ``response ~ terms`` by OLS and build the ANOVA (see the module docstring)."""
    check_options(typ, robust)
    df = frame.reset_index(drop=True)
    y = response_values(df, response)
    facs = resolve_factors(df, response, terms, factors)
    rhs, aliased = resolve_terms(df, facs, terms, aliases)
    frames = model_frames(df, facs, rhs, typ)
    yt, label, lam = transform_response(y, transform, model_matrix(frames.fit_rhs, frames.fit_frame).x, response)
    fit_frame = frames.fit_frame.assign(**{RESPONSE_COLUMN: yt})
    fit = ols(frames.fit_rhs, fit_frame)
    check_rank(fit)
    aov, rob = anova_tables(fit, typ, robust, rhs)
    sst = float(np.sum((yt - yt.mean()) ** 2))
    coded = model_matrix(frames.coded_rhs, frames.coded)
    effects = coded_effects(coded, yt, set(two_level_numeric(df, facs)), robust)
    points = design_points(df, facs)
    lenth_result: LenthResult | None = None
    if len(df) <= points and len(effects) >= 2:
        lenth_result = lenth([e.effect for e in effects], [e.term for e in effects], alpha)
    summary = summarize(fit, label=label, rhs=rhs, typ=typ, sst=sst, transform=transform, lam=lam, robust=robust,
                        coding=frames.coding, points=points, aliased=aliased)
    rows = anova_rows(aov, rob, effects, sst, saturated=fit.df_resid <= 0)
    residual_pct = next((r.pct_variation for r in rows if r.term == RESIDUAL), math.nan)
    shares = lmg_shares(fit, {r.term: r.pct_variation for r in rows if r.term != RESIDUAL}, residual_pct, typ)
    return AnovaResult(rows=rows, summary=summary, effects=effects, lenth=lenth_result, factors=facs,
                       response=response, alpha=alpha, fit=fit, data=fit_frame, coded=coded, shares=shares)
