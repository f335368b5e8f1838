"""ANOVA of a results table: OLS fit, sums of squares per term, effects in coded units.

``fit_anova(frame, "cost", "nodes + epochs*learning_rate")`` fits the statsmodels formula
``cost ~ nodes + epochs*learning_rate`` and returns an :class:`AnovaResult`:

* one :class:`AnovaRow` per term plus ``Residual``: df, sum of squares, mean square, F, p and
  ``pct_variation`` = 100 * SS / SST, where SST is the corrected total sum of squares of the
  (transformed) response. For Type I the rows sum to 100; for Types II/III in an unbalanced
  design they need not, because the terms' sums of squares then overlap.
* Type II by default (``typ=``/``--typ`` 1, 2 or 3); Type I is sequential, so term order matters.
* factors enter as numbers unless wrapped in ``C()``; Types I and II use the levels as given
  (for a hierarchical model they do not depend on the origin of the levels). Type III codes
  every numeric factor to ``(x - centre) / half-range`` (two levels become -1/+1) and gives
  categorical factors sum-to-zero contrasts, so its main-effect tests are at the design centre.
* for terms made only of two-level numeric factors, the coefficient in coded (-1/+1) units and
  the effect (= 2 x coefficient, the change in mean response from the low to the high level);
* R^2, adjusted R^2 and predicted R^2 = 1 - PRESS / SST, PRESS = sum (e_i / (1 - h_ii))^2;
* Lenth's pseudo standard error (PSE) of the coded effects when the design is unreplicated.

Default terms (``terms=None``): every main effect, then each two-factor interaction that adds
full rank to the model matrix (so for a resolution IV design one of each aliased pair is kept
and the others are listed in :attr:`ModelSummary.aliased`; a resolution V+ design keeps all).
``aliases`` (groups like ``"nodes:executors = epochs:batch_size"``) chooses which member of an
alias group is named.

``--robust hc3`` replaces F and p with heteroscedasticity-consistent (HC3) Wald tests
(Types II/III); sums of squares and % of variation stay those of the ordinary fit.
``--transform log|boxcox`` analyses log(y) or the Box-Cox transform whose lambda minimises the
residual sum of squares of the geometric-mean-scaled response for this model (Box & Cox 1964).

CLI: ``python -m models.anova RESULTS --response cost [--terms RHS] [--typ 1|2|3]
[--format text|json|csv] [--transform log|boxcox] [--robust hc3] [--kruskal]``. JSON output is
``{"rows": [{"term", "df", "sum_sq", "mean_sq", "F", "p", "pct_variation", "effect",
"coefficient"}, ...], "summary": {...}, "lenth": {...} | null, "diagnostics": {...},
"kruskal": [...] | null}``; NaN is written as null. CSV output is the rows alone.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import optimize, special, stats

from models.errors import (
    AnalysisOptionError,
    FitError,
    FormulaError,
    InvalidTableError,
    MissingColumnError,
    ModelError,
)
from models.results import detect_factors

RESPONSE_COLUMN = "__y__"
TRANSFORMS = ("log", "boxcox")
ROBUST = ("hc3",)
RESIDUAL = "Residual"


@dataclass(frozen=True)
class AnovaRow:
    """One line of the ANOVA table; ``effect``/``coefficient`` are in coded units or None."""

    term: str
    df: float
    sum_sq: float
    mean_sq: float
    F: float
    p: float
    pct_variation: float
    effect: float | None = None
    coefficient: float | None = None


@dataclass(frozen=True)
class Effect:
    """A coded-unit estimate: coefficient, effect = 2 x coefficient, the coefficient's SE, t = coef / SE."""

    term: str
    coefficient: float
    effect: float
    se: float
    t: float


@dataclass(frozen=True)
class LenthResult:
    """Lenth (1989): PSE and margins of error of the effects (in effect units)."""

    pse: float
    df: float
    margin_of_error: float
    simultaneous_margin_of_error: float
    alpha: float
    active: tuple[str, ...]


@dataclass(frozen=True)
class Alias:
    """A candidate term left out of the default model because it is aliased with kept terms."""

    term: str
    aliased_with: tuple[str, ...]


@dataclass(frozen=True)
class DefaultTerms:
    """The default right-hand side and the interactions it had to leave out."""

    rhs: str
    terms: tuple[str, ...]
    aliased: tuple[Alias, ...]


@dataclass(frozen=True)
class StandardizedEffects:
    """Effects divided by their standard error (``basis="t"``) or by Lenth's PSE."""

    terms: tuple[str, ...]
    values: tuple[float, ...]
    critical: float
    basis: str
    alpha: float


@dataclass(frozen=True)
class ModelSummary:
    """Fit-level figures of an ANOVA model."""

    response: str
    formula: str
    terms: str
    typ: int
    n: int
    df_model: float
    df_resid: float
    r_squared: float
    adj_r_squared: float
    pred_r_squared: float
    press: float
    root_mse: float
    transform: str | None
    boxcox_lambda: float | None
    robust: str | None
    coding: str
    design_points: int
    replicated: bool
    aliased: tuple[Alias, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class AnovaResult:
    """ANOVA rows, model summary, coded effects and the underlying statsmodels fit."""

    rows: tuple[AnovaRow, ...]
    summary: ModelSummary
    effects: tuple[Effect, ...]
    lenth: LenthResult | None
    factors: tuple[str, ...]
    response: str
    alpha: float
    fit: Any = field(repr=False)
    data: pd.DataFrame = field(repr=False)

    @property
    def residuals(self) -> np.ndarray:
        return np.asarray(self.fit.resid, dtype=float)

    @property
    def fitted(self) -> np.ndarray:
        return np.asarray(self.fit.fittedvalues, dtype=float)

    @property
    def y(self) -> np.ndarray:
        """The response as analysed (after any transform)."""
        return self.data[RESPONSE_COLUMN].to_numpy(dtype=float)

    def row(self, term: str) -> AnovaRow:
        for r in self.rows:
            if r.term == term:
                return r
        raise KeyError(term)

    def table(self) -> pd.DataFrame:
        """The rows as a DataFrame indexed by term."""
        return pd.DataFrame([asdict(r) for r in self.rows]).set_index("term")

    def standardized_effects(self) -> StandardizedEffects:
        """t = coefficient / SE when there are residual df, else effect / Lenth's PSE."""
        if not self.effects:
            raise AnalysisOptionError(
                "no two-level numeric terms: standardized effects need factors with two numeric levels"
            )
        terms = tuple(e.term for e in self.effects)
        if self.summary.df_resid > 0:
            crit = float(stats.t.ppf(1 - self.alpha / 2, self.summary.df_resid))
            return StandardizedEffects(terms, tuple(e.t for e in self.effects), crit, "t", self.alpha)
        if self.lenth is None or not self.lenth.pse > 0:
            raise AnalysisOptionError("no residual df and no usable Lenth PSE: standardized effects undefined")
        vals = tuple(e.effect / self.lenth.pse for e in self.effects)
        return StandardizedEffects(
            terms, vals, self.lenth.margin_of_error / self.lenth.pse, "Lenth", self.alpha
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": [_clean(asdict(r)) for r in self.rows],
            "summary": _clean(asdict(self.summary)),
            "lenth": _clean(asdict(self.lenth)) if self.lenth else None,
        }


# --- helpers ---------------------------------------------------------------------------------


def _clean(obj: Any) -> Any:
    """NaN and inf to None, tuples to lists, numpy scalars to Python (JSON-safe)."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def two_level_numeric(frame: pd.DataFrame, factors: Iterable[str]) -> tuple[str, ...]:
    """Factors that are numeric with exactly two distinct values."""
    return tuple(f for f in factors if is_numeric(frame[f]) and frame[f].nunique() == 2)


def code_factors(frame: pd.DataFrame, factors: Iterable[str]) -> pd.DataFrame:
    """Copy with each numeric factor mapped to (x - centre) / half-range (two levels -> -1/+1)."""
    out = frame.copy()
    for f in factors:
        if not is_numeric(out[f]):
            continue
        x = out[f].astype(float)
        lo, hi = float(x.min()), float(x.max())
        out[f] = (x - (lo + hi) / 2) / ((hi - lo) / 2) if hi > lo else x - lo
    return out


def _term_parts(term: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in term.split(":"))


def _factor_term(factor: str, frame: pd.DataFrame) -> str:
    return factor if is_numeric(frame[factor]) else f"C({factor})"


def parse_aliases(groups: Iterable[str | Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """Alias groups from strings like ``"a:b = c:d"`` or from sequences of term names."""
    out = []
    for g in groups:
        members = [m.strip() for m in g.split("=")] if isinstance(g, str) else [str(m).strip() for m in g]
        members = [m for m in members if m]
        if len(members) < 2:
            raise AnalysisOptionError(f"alias group {g!r} needs two or more terms, e.g. 'a:b = c:d'")
        out.append(tuple(members))
    return tuple(out)


def _canonical(term: str, order: dict[str, int]) -> str:
    return ":".join(sorted(_term_parts(term), key=lambda p: order.get(p, len(order))))


def _design_matrix(rhs: str, frame: pd.DataFrame) -> tuple[np.ndarray, dict[str, slice]]:
    import patsy

    try:
        dm = patsy.dmatrix(rhs, frame, return_type="dataframe", NA_action="raise")
    except patsy.PatsyError as exc:
        raise FormulaError(f"terms {rhs!r}: {exc.message}") from None
    slices = dict(dm.design_info.term_name_slices)
    return dm.to_numpy(dtype=float), slices


def _rank(x: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(x)) if x.size else 0


def _partners(x_kept: np.ndarray, kept_slices: dict[str, slice], col: np.ndarray) -> tuple[str, ...]:
    """Kept terms whose columns are needed to reproduce ``col`` (least squares, |coef| > 1e-8)."""
    coef, *_ = np.linalg.lstsq(x_kept, col, rcond=None)
    scale = np.abs(coef).max() or 1.0
    return tuple(
        t for t, s in kept_slices.items() if t != "Intercept" and np.abs(coef[s]).max() > 1e-8 * scale
    )


def default_terms(
    frame: pd.DataFrame,
    factors: Sequence[str],
    aliases: Iterable[str | Sequence[str]] = (),
) -> DefaultTerms:
    """All main effects plus every two-factor interaction estimable alongside them."""
    if not factors:
        raise FormulaError("no factors: the table has no column that varies besides the response")
    order = {f: i for i, f in enumerate(factors)}
    mains = [_factor_term(f, frame) for f in factors]
    pairs = [
        f"{_factor_term(a, frame)}:{_factor_term(b, frame)}"
        for i, a in enumerate(factors)
        for b in factors[i + 1 :]
    ]
    # Alias groups only set priority: the first-listed member of each group is tried before the
    # other interactions, so it is the one kept when the rank test finds the group aliased.
    strip = lambda t: _canonical(t.replace("C(", "").replace(")", ""), order)  # noqa: E731
    firsts = {_canonical(g[0], order) for g in parse_aliases(aliases)}
    ordered = [t for t in pairs if strip(t) in firsts] + [t for t in pairs if strip(t) not in firsts]
    pts = code_factors(frame[list(factors)].drop_duplicates(), factors)
    x, slices = _design_matrix(" + ".join(mains + pairs), pts)
    keep_cols = list(range(slices["Intercept"].stop))
    kept: dict[str, slice] = {"Intercept": slices["Intercept"]}
    aliased: list[Alias] = []
    for term in mains + ordered:
        s = slices[term]
        cols = list(range(s.start, s.stop))
        if _rank(x[:, keep_cols + cols]) == len(keep_cols) + len(cols):
            kept[term] = slice(len(keep_cols), len(keep_cols) + len(cols))
            keep_cols += cols
            continue
        if term in mains:
            raise FormulaError(
                f"main effect {term!r} is not estimable from this design (confounded with other "
                "factors); drop that factor or give --terms"
            )
        partners = _partners(x[:, keep_cols], kept, x[:, s.start])
        aliased.append(Alias(term, partners))
    kept_names = [t for t in mains + pairs if t in kept]
    aliased.sort(key=lambda al: pairs.index(al.term))
    return DefaultTerms(" + ".join(kept_names), tuple(kept_names), tuple(aliased))


def _sum_coding(rhs: str, categorical: Iterable[str]) -> str:
    """Give C(x) and bare categorical names sum-to-zero contrasts (for Type III)."""
    out = re.sub(r"C\(\s*([A-Za-z_]\w*)\s*\)", r"C(\1, Sum)", rhs)
    for name in categorical:
        out = re.sub(rf"(?<![\w.(]){re.escape(name)}(?![\w(])(?!\s*,)", f"C({name}, Sum)", out)
    return out


def _ols(rhs: str, frame: pd.DataFrame) -> Any:
    import patsy

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return smf.ols(f"{RESPONSE_COLUMN} ~ {rhs}", data=frame).fit()
    except patsy.PatsyError as exc:
        raise FormulaError(f"terms {rhs!r}: {exc.message}") from None
    except (NameError, SyntaxError, TypeError, ValueError) as exc:
        raise FormulaError(f"terms {rhs!r}: {exc}; use column names of the results table") from None


def _check_rank(fit: Any) -> None:
    x = np.asarray(fit.model.exog, dtype=float)
    if _rank(x) == x.shape[1]:
        return
    slices = fit.model.data.model_spec.term_name_slices
    keep: list[int] = []
    bad = []
    for term, s in slices.items():
        cols = list(range(s.start, s.stop))
        if _rank(x[:, keep + cols]) == len(keep) + len(cols):
            keep += cols
        else:
            bad.append(term)
    raise FormulaError(
        f"terms {bad} are aliased with earlier terms in this design (not estimable); drop them "
        "from --terms or omit --terms to use the estimable default"
    )


def _saturated_table(fit: Any, typ: int) -> pd.DataFrame:
    """Sums of squares by nested least squares when no residual df are left (anova_lm needs some)."""
    spec = fit.model.data.model_spec
    x = np.asarray(fit.model.exog, dtype=float)
    y = np.asarray(fit.model.endog, dtype=float)
    terms = [t for t in spec.terms if spec.term_names[spec.terms.index(t)] != "Intercept"]
    names = [spec.term_names[spec.terms.index(t)] for t in terms]
    slices = spec.term_name_slices

    def rss(keep: list[str]) -> float:
        cols = [slices["Intercept"]] if "Intercept" in slices else []
        cols += [slices[n] for n in keep]
        xs = np.concatenate([x[:, s] for s in cols], axis=1) if cols else np.zeros((len(y), 0))
        if xs.shape[1] == 0:
            return float(y @ y)
        beta, *_ = np.linalg.lstsq(xs, y, rcond=None)
        r = y - xs @ beta
        return float(r @ r)

    def contains(big: Any, small: Any) -> bool:
        return set(small.factors) <= set(big.factors)

    ss = {}
    for i, (t, n) in enumerate(zip(terms, names)):
        if typ == 1:
            base = names[:i]
        elif typ == 2:
            base = [m for u, m in zip(terms, names) if not contains(u, t)]
        else:
            base = [m for m in names if m != n]
        ss[n] = rss(base) - rss(base + [n])
    df = {n: float(slices[n].stop - slices[n].start) for n in names}
    table = pd.DataFrame({"df": df, "sum_sq": ss})
    table.loc[RESIDUAL] = [0.0, float(np.sum(np.asarray(fit.resid) ** 2))]
    return table


def lenth(effects: Sequence[float], terms: Sequence[str] | None = None, alpha: float = 0.05) -> LenthResult:
    """Lenth's PSE = 1.5 * median(|c| : |c| < 2.5 s0), s0 = 1.5 * median|c|, on d = m/3 df.

    The margin of error is t(1 - alpha/2, d) * PSE; the simultaneous margin uses
    t(gamma, d) with gamma = (1 + (1 - alpha)^(1/m)) / 2.
    """
    c = np.abs(np.asarray(effects, dtype=float))
    m = c.size
    if m < 2:
        raise AnalysisOptionError("Lenth's PSE needs two or more effects")
    s0 = 1.5 * float(np.median(c))
    trimmed = c[c < 2.5 * s0]
    pse = 1.5 * float(np.median(trimmed)) if trimmed.size else math.nan
    d = m / 3.0
    me = float(stats.t.ppf(1 - alpha / 2, d)) * pse
    gamma = (1 + (1 - alpha) ** (1 / m)) / 2
    sme = float(stats.t.ppf(gamma, d)) * pse
    names = tuple(terms) if terms is not None else tuple(str(i) for i in range(m))
    active = tuple(n for n, v in zip(names, c) if v > me)
    return LenthResult(pse, d, me, sme, alpha, active)


def press(fit: Any) -> float:
    """Prediction error sum of squares from the hat matrix; inf when some leverage is 1."""
    x = np.asarray(fit.model.exog, dtype=float)
    q, _ = np.linalg.qr(x)
    h = np.einsum("ij,ij->i", q, q)
    e = np.asarray(fit.resid, dtype=float)
    if np.any(1 - h < 1e-10):
        return math.inf
    return float(np.sum((e / (1 - h)) ** 2))


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


def _transform(y: np.ndarray, transform: str | None, x: np.ndarray, label: str) -> tuple[np.ndarray, str, float | None]:
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


def _coded_effects(rhs: str, coded: pd.DataFrame, two_level: set[str], robust: str | None) -> tuple[Effect, ...]:
    fit = _ols(rhs, coded)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        cov = np.asarray(fit.cov_HC3 if robust == "hc3" else fit.cov_params(), dtype=float)
    params = np.asarray(fit.params, dtype=float)
    out = []
    for term, s in fit.model.data.model_spec.term_name_slices.items():
        if term == "Intercept" or s.stop - s.start != 1:
            continue
        if not all(p in two_level for p in _term_parts(term)):
            continue
        i = s.start
        coef = float(params[i])
        se = float(np.sqrt(cov[i, i])) if fit.df_resid > 0 else math.nan
        t = coef / se if se > 0 else math.nan
        out.append(Effect(term, coef, 2 * coef, se, t))
    return tuple(out)


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
    if typ not in (1, 2, 3):
        raise AnalysisOptionError(f"typ {typ!r} is not 1, 2 or 3")
    if robust is not None and robust not in ROBUST:
        raise AnalysisOptionError(f"robust {robust!r} is not supported; use hc3")
    if robust and typ == 1:
        raise AnalysisOptionError("robust (HC3) tests need --typ 2 or 3; sequential Type I has none")
    if response not in frame.columns:
        raise MissingColumnError(f"response column {response!r} is not in the table; pick one of {list(frame.columns)}")
    df = frame.copy().reset_index(drop=True)
    y = pd.to_numeric(df[response], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        raise InvalidTableError(f"response {response!r} has {int((~np.isfinite(y)).sum())} missing or non-numeric values")
    facs = tuple(factors) if factors is not None else detect_factors(df, exclude=[response])
    missing = [f for f in facs if f not in df.columns]
    if missing:
        raise MissingColumnError(f"factor column(s) {missing} are not in the table")

    aliased: tuple[Alias, ...] = ()
    if terms is None:
        dt = default_terms(df, facs, aliases)
        rhs, aliased = dt.rhs, dt.aliased
    else:
        rhs = terms.strip()
        if "~" in rhs:
            raise FormulaError(f"terms {rhs!r}: give only the right-hand side, e.g. 'a + b + a:b'")
        if not rhs:
            raise FormulaError("terms are empty; give e.g. 'a + b + a:b' or omit --terms")

    numeric = [f for f in facs if is_numeric(df[f])]
    categorical = [f for f in facs if not is_numeric(df[f])]
    two_level = set(two_level_numeric(df, facs))
    coded = code_factors(df, numeric)
    if typ == 3:
        fit_frame, fit_rhs, coding = coded, _sum_coding(rhs, categorical), "coded units (centre 0, half-range 1), sum-to-zero contrasts"
    else:
        fit_frame, fit_rhs, coding = df, rhs, "natural units"

    x_fit, _ = _design_matrix(fit_rhs, fit_frame)
    yt, label, lam = _transform(y, transform, x_fit, response)
    fit_frame = fit_frame.copy()
    fit_frame[RESPONSE_COLUMN] = yt
    coded[RESPONSE_COLUMN] = yt

    fit = _ols(fit_rhs, fit_frame)
    _check_rank(fit)
    rob = None
    if fit.df_resid <= 0:
        aov = _saturated_table(fit, typ)
    else:
        try:
            with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
                warnings.simplefilter("ignore")
                aov = sm.stats.anova_lm(fit, typ=typ)
                rob = sm.stats.anova_lm(fit, typ=typ, robust=robust) if robust else None
        except (ValueError, np.linalg.LinAlgError) as exc:
            raise FitError(f"ANOVA of {rhs!r} failed: {exc}") from None
    aov = aov.drop(index="Intercept", errors="ignore")
    sst = float(np.sum((yt - yt.mean()) ** 2))

    effects = _coded_effects(rhs if typ != 3 else fit_rhs, coded, two_level, robust)
    by_term = {e.term: e for e in effects}
    rows = []
    for term, r in aov.iterrows():
        name = str(term)
        dfv, ss = float(r["df"]), float(r["sum_sq"])
        F, p = float(r.get("F", math.nan)), float(r.get("PR(>F)", math.nan))
        if rob is not None and name != RESIDUAL:
            F, p = float(rob.loc[term, "F"]), float(rob.loc[term, "PR(>F)"])
        if fit.df_resid <= 0:
            F = p = math.nan
        eff = by_term.get(name)
        rows.append(
            AnovaRow(
                term=name,
                df=dfv,
                sum_sq=ss,
                mean_sq=ss / dfv if dfv > 0 else math.nan,
                F=F,
                p=p,
                pct_variation=100 * ss / sst if sst > 0 else math.nan,
                effect=eff.effect if eff else None,
                coefficient=eff.coefficient if eff else None,
            )
        )

    points = df[list(facs)].drop_duplicates().shape[0] if facs else 1
    replicated = len(df) > points
    lenth_result = None
    if not replicated and len(effects) >= 2:
        lenth_result = lenth([e.effect for e in effects], [e.term for e in effects], alpha)

    n = len(df)
    pr = press(fit)
    notes = []
    if fit.df_resid <= 0:
        notes.append("no residual degrees of freedom: F and p are undefined; judge effects by Lenth's PSE")
    if robust:
        notes.append("F and p are HC3 robust Wald tests; sums of squares are those of the ordinary fit")
    summary = ModelSummary(
        response=label,
        formula=f"{label} ~ {rhs}",
        terms=rhs,
        typ=typ,
        n=n,
        df_model=float(fit.df_model),
        df_resid=float(fit.df_resid),
        r_squared=float(fit.rsquared),
        adj_r_squared=float(fit.rsquared_adj) if fit.df_resid > 0 else math.nan,
        pred_r_squared=1 - pr / sst if math.isfinite(pr) and sst > 0 else math.nan,
        press=pr,
        root_mse=float(np.sqrt(fit.mse_resid)) if fit.df_resid > 0 else math.nan,
        transform=transform,
        boxcox_lambda=lam,
        robust=robust,
        coding=coding,
        design_points=points,
        replicated=replicated,
        aliased=aliased,
        notes=tuple(notes),
    )
    return AnovaResult(
        rows=tuple(rows),
        summary=summary,
        effects=effects,
        lenth=lenth_result,
        factors=facs,
        response=response,
        alpha=alpha,
        fit=fit,
        data=fit_frame,
    )


# --- text output -----------------------------------------------------------------------------


def _num(v: float | None, fmt: str = "{:.4g}") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return fmt.format(v)


def format_table(result: AnovaResult) -> str:
    """The ANOVA rows as an aligned text table."""
    head = ["term", "df", "sum_sq", "mean_sq", "F", "p", "%var", "effect", "coef"]
    body = [
        [
            r.term,
            _num(r.df, "{:g}"),
            _num(r.sum_sq),
            _num(r.mean_sq),
            _num(r.F),
            _num(r.p, "{:.3g}"),
            _num(r.pct_variation, "{:.2f}"),
            _num(r.effect),
            _num(r.coefficient),
        ]
        for r in result.rows
    ]
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        for row in [head] + body
    ]
    return "\n".join(lines)


def format_summary(result: AnovaResult) -> str:
    s = result.summary
    lines = [
        f"model: {s.formula}   (Type {s.typ} sums of squares, {s.coding})",
        f"n = {s.n} jobs at {s.design_points} design points ({'replicated' if s.replicated else 'unreplicated'}); "
        f"residual df = {s.df_resid:g}",
        f"R^2 = {_num(s.r_squared, '{:.4f}')}   adjusted R^2 = {_num(s.adj_r_squared, '{:.4f}')}   "
        f"predicted R^2 = {_num(s.pred_r_squared, '{:.4f}')} (PRESS = {_num(s.press)})",
    ]
    if s.boxcox_lambda is not None:
        lines.append(f"Box-Cox lambda = {s.boxcox_lambda:.4f}")
    for a in s.aliased:
        lines.append(f"left out (aliased): {a.term} = {' + '.join(a.aliased_with) or 'intercept'}")
    if result.lenth:
        le = result.lenth
        lines.append(
            f"Lenth: PSE = {le.pse:.4g} on {le.df:.3g} df; margin of error = {le.margin_of_error:.4g}, "
            f"simultaneous = {le.simultaneous_margin_of_error:.4g}; active: {', '.join(le.active) or 'none'}"
        )
    lines += [f"note: {n}" for n in s.notes]
    return "\n".join(lines)


# --- CLI -------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m models.anova",
        description="ANOVA with assumption checks on a results table (CSV or campaign directory).",
    )
    p.add_argument("results", help="results CSV, or a campaign directory holding results.csv")
    p.add_argument("--response", default="cost", help="response column (default: cost)")
    p.add_argument("--terms", help="right-hand side of the model formula, e.g. 'a + b*c'; default: "
                   "main effects plus estimable two-factor interactions")
    p.add_argument("--typ", type=int, choices=(1, 2, 3), default=2, help="sums of squares type (default 2)")
    p.add_argument("--format", choices=("text", "json", "csv"), default="text")
    p.add_argument("--transform", choices=TRANSFORMS, help="analyse log(y) or Box-Cox(y)")
    p.add_argument("--robust", choices=ROBUST, help="HC3 robust F tests (with --typ 2 or 3)")
    p.add_argument("--kruskal", action="store_true", help="add a Kruskal-Wallis test per factor")
    p.add_argument("--cost", help="recompute cost from wall_clock_s and accuracy: pct2 (default "
                   "T/(A*100)^2), acc2, time, tta:TARGET, or an expression of T and A")
    p.add_argument("--include-failed", action="store_true", help="keep rows whose status is not ok")
    p.add_argument("--exclude-runs", default="", help="comma-separated run numbers to leave out")
    p.add_argument("--alias", action="append", default=[], metavar="GROUP",
                   help="alias group such as 'a:b = c:d' (repeatable)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--plots", metavar="DIR", help="also write the effect and residual plots as PNG files")
    return p


def _runs(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise AnalysisOptionError(f"--exclude-runs {text!r}: give run numbers like 2,3") from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from models import diagnostics
    from models.results import load_results

    try:
        table = load_results(
            args.results, cost=args.cost, include_failed=args.include_failed, exclude_runs=_runs(args.exclude_runs)
        )
        result = fit_anova(
            table.frame,
            args.response,
            args.terms,
            typ=args.typ,
            transform=args.transform,
            robust=args.robust,
            factors=[f for f in table.factors if f != args.response],
            aliases=args.alias,
            alpha=args.alpha,
        )
        diag = diagnostics.check_assumptions(result)
        kw = diagnostics.kruskal_wallis(result) if args.kruskal else None
        preview = None
        if args.transform is None and not diag.all_hold and np.all(result.y > 0):
            other = fit_anova(
                table.frame, args.response, args.terms, typ=args.typ, transform="log",
                robust=args.robust, factors=result.factors, aliases=args.alias, alpha=args.alpha,
            )
            preview = diagnostics.compare_transforms(result, other)
        if args.plots:
            from models import plots

            written = plots.save_all(result, args.plots)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, FitError) else 2

    if args.format == "csv":
        sys.stdout.write(result.table().reset_index().to_csv(index=False))
    elif args.format == "json":
        doc = result.to_dict()
        doc["input"] = {"source": table.source, "read": table.n_read, "dropped": dict(table.dropped), "cost": table.cost_name}
        doc["diagnostics"] = diag.to_dict()
        doc["kruskal"] = [_clean(asdict(k)) for k in kw] if kw is not None else None
        doc["log_transform_preview"] = preview.to_dict() if preview else None
        json.dump(doc, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        response = f"cost = {table.cost_name}" if args.response == "cost" else f"response = {args.response}"
        out = [f"input: {table.source}: {table.describe_dropped()}; {response}", "",
               format_table(result), "", format_summary(result), "", diag.to_text()]
        if kw is not None:
            out += ["", diagnostics.format_kruskal(kw)]
        if preview is not None:
            out += ["", preview.to_text()]
        if args.plots:
            out += ["", "plots: " + ", ".join(str(w) for w in written)]
        print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
