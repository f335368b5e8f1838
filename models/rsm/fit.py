"""The full second-order fit of one response: coefficients, ANOVA and lack of fit.

The model is always the full quadratic (intercept, linear, two-factor interactions and pure
quadratic terms), fitted by ordinary least squares in coded units and converted exactly to
natural units. If the data cannot support it (a factor with fewer than three levels, fewer
distinct points than terms), the fit is refused with the reason: it never falls back to a
linear model while calling it quadratic (the DoE-tool report did, with R^2 0.05).

ANOVA: sequential sums of squares for the linear, two-factor interaction and quadratic groups
(in that order, as Myers, Montgomery and Anderson-Cook tabulate them), the residual split into
lack of fit and pure error. Pure error comes from jobs at identical settings (replicated
centre points); lack of fit tests whether the quadratic misses structure the replicates say
is real: F = (SS_LOF / df_LOF) / (SS_PE / df_PE).

``transform="log"`` fits log(y) (for positive responses whose spread grows with their level,
such as job times on a shared cluster): coefficients, ANOVA and R^2 are on the log scale;
predictions, intervals and plots are back-transformed with exp (the fitted median), so a
predicted time is never negative.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from models.anova.result import AnovaRow
from models.errors import SurfaceError
from models.rsm.coding import INTERCEPT, Coding, Region, model_matrix, n_terms, term_names

TRANSFORMS = ("none", "log")


@dataclass(frozen=True)
class Coefficient:
    """One term: its coded coefficient with SE, t and p, and its coefficient in natural units."""

    term: str
    coded: float
    se: float
    t: float
    p: float
    natural: float


@dataclass(frozen=True)
class LackOfFit:
    """The residual split into lack of fit and pure error; F and p are None when it cannot be tested."""

    ss_lof: float
    df_lof: int
    ss_pe: float
    df_pe: int
    F: float | None
    p: float | None
    note: str

    @property
    def testable(self) -> bool:
        return self.p is not None


@dataclass(frozen=True)
class PredictionInterval:
    """Prediction at one setting: the mean's confidence interval and the interval for the mean of ``m`` new jobs."""

    natural: tuple[float, ...]
    predicted: float
    se_mean: float
    confidence: tuple[float, float]
    prediction: tuple[float, float]
    new_jobs: int
    level: float


@dataclass(frozen=True, eq=False)
class SurfaceFit:
    """A fitted full quadratic in coded units with everything needed to read and query it."""

    response: str
    factors: tuple[str, ...]
    coding: Coding
    region: Region
    coded_x: np.ndarray
    y: np.ndarray
    beta: np.ndarray
    xtx_inv: np.ndarray
    coefficients: tuple[Coefficient, ...]
    anova: tuple[AnovaRow, ...]
    lack_of_fit: LackOfFit
    r2: float
    adj_r2: float
    pred_r2: float
    rmse: float
    df_resid: int
    n_points: int
    transform: str = "none"

    @property
    def n(self) -> int:
        return len(self.y)

    @property
    def k(self) -> int:
        return len(self.factors)

    @property
    def mse(self) -> float:
        return self.rmse**2

    @property
    def b0(self) -> float:
        return float(self.beta[0])

    @property
    def b(self) -> np.ndarray:
        """Linear coefficients (coded)."""
        return self.beta[1: 1 + self.k]

    @property
    def B(self) -> np.ndarray:
        """Symmetric matrix of the second-order part (coded): y = b0 + b'x + x'Bx."""
        k = self.k
        B = np.diag(self.beta[-k:]).astype(float)
        pos = 1 + k
        for i in range(k):
            for j in range(i + 1, k):
                B[i, j] = B[j, i] = self.beta[pos] / 2.0
                pos += 1
        return B

    def natural_coefficients(self) -> dict[str, float]:
        return {c.term: c.natural for c in self.coefficients}

    def back(self, v: np.ndarray | float) -> np.ndarray:
        """From the model's scale to the response's (exp for a log fit)."""
        return np.exp(v) if self.transform == "log" else np.asarray(v, dtype=float)

    def predict_model_coded(self, x: np.ndarray) -> np.ndarray:
        """Fitted values on the model's scale (log y for a log fit)."""
        return model_matrix(x) @ self.beta

    def predict_coded(self, x: np.ndarray) -> np.ndarray:
        """Fitted values on the response's scale."""
        return self.back(self.predict_model_coded(x))

    def predict(self, natural: np.ndarray) -> np.ndarray:
        return self.predict_coded(self.coding.to_coded(np.atleast_2d(natural)))

    def interval(self, natural: np.ndarray, new_jobs: int = 1, level: float = 0.95) -> PredictionInterval:
        """Confidence interval of the mean and prediction interval of the mean of ``new_jobs`` jobs."""
        x = self.coding.to_coded(np.atleast_2d(natural))
        f = model_matrix(x)[0]
        h = float(f @ self.xtx_inv @ f)
        yhat = float(f @ self.beta)
        se_mean = float(np.sqrt(self.mse * h))
        se_pred = float(np.sqrt(self.mse * (1.0 / new_jobs + h)))
        t = float(stats.t.ppf(0.5 + level / 2, self.df_resid)) if self.df_resid > 0 else float("nan")
        b = self.back
        return PredictionInterval(tuple(float(v) for v in np.atleast_2d(natural)[0]), float(b(yhat)), se_mean,
                                  (float(b(yhat - t * se_mean)), float(b(yhat + t * se_mean))),
                                  (float(b(yhat - t * se_pred)), float(b(yhat + t * se_pred))), new_jobs, level)

    def warning(self) -> str | None:
        """A sentence when the surface should not be trusted for prediction, else None."""
        if np.isfinite(self.pred_r2) and self.pred_r2 < 0:
            return (f"predicted R^2 {self.pred_r2:.3g} < 0: left-out jobs are predicted worse than by their mean; "
                    "read this surface as a rough trend only, and its optimum through its interval")
        if np.isfinite(self.adj_r2) and self.adj_r2 < 0.5:
            return f"adjusted R^2 {self.adj_r2:.3g} < 0.5: the surface explains little of the variation"
        if self.lack_of_fit.testable and (self.lack_of_fit.p or 0) < 0.05:
            return "significant lack of fit: the quadratic misses structure; its predictions are biased"
        return None

    def term_p(self, term: str) -> float:
        return next(c.p for c in self.coefficients if c.term == term)


def natural_from_coded(beta: np.ndarray, coding: Coding) -> np.ndarray:
    """Exact natural-unit coefficients of y = b0 + b'x + x'Bx with x = (X - c) / h.

    With a = 1/h and d = -c/h: y = (b0 + b'd + d'Bd) + (a (b + 2Bd))'X + X'(A B A)X.
    """
    k = len(coding.factors)
    a = 1.0 / np.array(coding.half)
    d = -np.array(coding.centre) * a
    b0, b = beta[0], beta[1: 1 + k]
    B = np.diag(beta[-k:]).astype(float)
    pos = 1 + k
    pairs = []
    for i in range(k):
        for j in range(i + 1, k):
            B[i, j] = B[j, i] = beta[pos] / 2.0
            pairs.append((i, j))
            pos += 1
    n0 = b0 + b @ d + d @ B @ d
    lin = a * (b + 2 * B @ d)
    quad = np.outer(a, a) * B
    return np.array([n0, *lin, *(2 * quad[i, j] for i, j in pairs), *np.diag(quad)])


def _numeric(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame.columns:
        known = ", ".join(map(str, frame.columns))
        raise SurfaceError(f"no column {column!r} in the results table; its columns are {known}")
    values = pd.to_numeric(frame[column], errors="coerce")
    if values.isna().any():
        bad = frame.loc[values.isna(), column].iloc[0]
        raise SurfaceError(f"column {column!r} has a non-numeric value {bad!r}; a response surface needs numbers")
    return values.to_numpy(dtype=float)


def lack_of_fit(x: np.ndarray, y: np.ndarray, ss_res: float, df_res: int) -> tuple[LackOfFit, int]:
    """The residual sum of squares ss_res (df_res) split into lack of fit and the pure error of the rows that share
    a row of x; also the number of distinct rows of x."""
    keys = [tuple(np.round(r, 9)) for r in x]
    groups: dict[tuple, list[float]] = {}
    for key, v in zip(keys, y):
        groups.setdefault(key, []).append(float(v))
    ss_pe = float(sum(((np.array(g) - np.mean(g)) ** 2).sum() for g in groups.values()))
    df_pe = sum(len(g) - 1 for g in groups.values())
    ss_lof, df_lof = max(ss_res - ss_pe, 0.0), df_res - df_pe
    if df_pe == 0:
        note = "not testable: no replicated settings, so no pure error (replicate the centre point)"
        return LackOfFit(ss_lof, df_lof, ss_pe, df_pe, None, None, note), len(groups)
    if df_lof == 0:
        note = "not testable: as many terms as distinct settings, so nothing is left for lack of fit"
        return LackOfFit(ss_lof, df_lof, ss_pe, df_pe, None, None, note), len(groups)
    if ss_pe == 0:
        note = "pure error is zero (replicates identical): the F ratio is infinite"
        return LackOfFit(ss_lof, df_lof, ss_pe, df_pe, float("inf"), 0.0, note), len(groups)
    F = (ss_lof / df_lof) / (ss_pe / df_pe)
    p = float(stats.f.sf(F, df_lof, df_pe))
    note = ("significant: the quadratic misses structure the replicates show is real; its predictions are biased"
            if p < 0.05 else "not significant: no evidence that the quadratic misses structure")
    return LackOfFit(ss_lof, df_lof, ss_pe, df_pe, float(F), p, note), len(groups)


def fit_surface(frame: pd.DataFrame, response: str, factors: tuple[str, ...] | list[str],
                transform: str = "none") -> SurfaceFit:
    """Fit the full second-order model of ``response`` on ``factors`` (rows with a NaN response are an error)."""
    factors = tuple(factors)
    if transform not in TRANSFORMS:
        raise SurfaceError(f"transform {transform!r} is not one of {', '.join(TRANSFORMS)}")
    if len(factors) < 1:
        raise SurfaceError("no factors: give --factors A,B,... (at least one numeric column)")
    if len(set(factors)) < len(factors):
        raise SurfaceError(f"a factor is listed twice in {','.join(factors)}")
    if response in factors:
        raise SurfaceError(f"{response!r} is both the response and a factor")
    X = np.column_stack([_numeric(frame, f) for f in factors])
    y = _numeric(frame, response)
    if not np.all(np.isfinite(y)):
        raise SurfaceError(f"response {response!r} has infinite values; drop those rows")
    if transform == "log":
        if np.any(y <= 0):
            raise SurfaceError(f"response {response!r} has values <= 0 ({y.min():g}); a log fit needs positive values")
        y = np.log(y)
    for j, f in enumerate(factors):
        n_levels = len(np.unique(X[:, j]))
        if n_levels < 3:
            raise SurfaceError(
                f"factor {f!r} has {n_levels} level(s); a quadratic term needs at least 3 (use a Box-Behnken or "
                "central composite design: sparkdl design --kind box-behnken|ccd)")
    coding = Coding.from_levels(factors, [X[:, j] for j in range(len(factors))])
    x = coding.to_coded(X)
    F = model_matrix(x)
    p = n_terms(len(factors))
    distinct = len({tuple(np.round(r, 9)) for r in x})
    if distinct < p or np.linalg.matrix_rank(F) < p:
        raise SurfaceError(
            f"the full quadratic in {len(factors)} factor(s) has {p} terms but the {len(y)} ok rows hold {distinct} "
            "distinct settings (or their columns are dependent); run a response-surface design (Box-Behnken or CCD)")
    n = len(y)
    df_res = n - p
    beta, *_ = np.linalg.lstsq(F, y, rcond=None)
    xtx_inv = np.linalg.inv(F.T @ F)
    resid = y - F @ beta
    ss_res = float(resid @ resid)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    mse = ss_res / df_res if df_res > 0 else float("nan")
    se = np.sqrt(np.diag(xtx_inv) * mse) if df_res > 0 else np.full(p, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = beta / se
    pv = 2 * stats.t.sf(np.abs(t), df_res) if df_res > 0 else np.full(p, np.nan)
    natural = natural_from_coded(beta, coding)
    names = term_names(factors)
    coefs = tuple(Coefficient(nm, float(b), float(s), float(tt), float(pp), float(nb))
                  for nm, b, s, tt, pp, nb in zip(names, beta, se, t, pv, natural))
    lof, n_points = lack_of_fit(x, y, ss_res, df_res)
    anova = _anova(F, y, len(factors), ss_res, df_res, ss_tot, lof)
    h = np.einsum("ij,jk,ik->i", F, xtx_inv, F)
    with np.errstate(divide="ignore", invalid="ignore"):
        press = float(((resid / (1 - h)) ** 2).sum()) if np.all(h < 1 - 1e-10) else float("nan")
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    adj = 1 - (1 - r2) * (n - 1) / df_res if df_res > 0 else float("nan")
    pred = 1 - press / ss_tot if ss_tot > 0 else float("nan")
    return SurfaceFit(response, factors, coding, Region.of_points(x), x, y, beta, xtx_inv, coefs, anova, lof,
                      float(r2), float(adj), float(pred), float(np.sqrt(mse)), df_res, n_points, transform)


def _anova(F: np.ndarray, y: np.ndarray, k: int, ss_res: float, df_res: int, ss_tot: float,
           lof: LackOfFit) -> tuple[AnovaRow, ...]:
    """Sequential SS of linear, interaction and quadratic groups; residual, lack of fit, pure error, total."""
    n_int = k * (k - 1) // 2
    bounds = [("linear", 1 + k), ("two-factor interaction", 1 + k + n_int), ("quadratic", F.shape[1])]
    mse = ss_res / df_res if df_res > 0 else float("nan")
    rows, prev_ss, prev_cols = [], ss_tot, 1
    for name, cols in bounds:
        if cols == prev_cols:
            continue
        b, *_ = np.linalg.lstsq(F[:, :cols], y, rcond=None)
        r = y - F[:, :cols] @ b
        ss_now = float(r @ r)
        ss, df = prev_ss - ss_now, cols - prev_cols
        rows.append(_row(name, df, ss, mse, df_res, ss_tot))
        prev_ss, prev_cols = ss_now, cols
    rows.insert(0, _row("model", F.shape[1] - 1, ss_tot - ss_res, mse, df_res, ss_tot))
    rows.append(_plain("residual", df_res, ss_res, mse if df_res > 0 else float("nan"), ss_tot))
    if lof.df_pe > 0 and lof.df_lof > 0:
        rows.append(_plain("lack of fit", lof.df_lof, lof.ss_lof, lof.ss_lof / lof.df_lof, ss_tot, lof.F, lof.p))
        rows.append(_plain("pure error", lof.df_pe, lof.ss_pe, lof.ss_pe / lof.df_pe, ss_tot))
    rows.append(_plain("total", len(y) - 1, ss_tot, ss_tot / (len(y) - 1), ss_tot))
    return tuple(rows)


def _plain(name: str, df: int, ss: float, ms: float, ss_tot: float, F: float | None = None,
           p: float | None = None) -> AnovaRow:
    """A row of the surface's ANOVA (the one :class:`~models.anova.AnovaRow`); F and p NaN where there is no
    test; ``pct_variation`` is the row's share of the total sum of squares."""
    nan = float("nan")
    return AnovaRow(name, df, ss, ms, nan if F is None else F, nan if p is None else p,
                    100 * ss / ss_tot if ss_tot > 0 else nan)


def _row(name: str, df: int, ss: float, mse: float, df_res: int, ss_tot: float) -> AnovaRow:
    ms = ss / df
    if df_res > 0 and mse > 0:
        F = ms / mse
        return _plain(name, df, ss, ms, ss_tot, float(F), float(stats.f.sf(F, df, df_res)))
    return _plain(name, df, ss, ms, ss_tot)


__all__ = ["INTERCEPT", "AnovaRow", "Coefficient", "LackOfFit", "PredictionInterval", "SurfaceFit", "fit_surface",
           "natural_from_coded"]
