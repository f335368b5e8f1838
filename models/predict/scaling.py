"""Scaling curves that can saturate: Amdahl, the Universal Scalability Law and Ernest, with the other factors
as covariates, and what the training rows can and cannot say at a scale they do not hold.

Each curve is linear in non-negative coefficients theta over basis functions of the parallelism m:

    amdahl  T(m) = serial + parallel / m                       (Amdahl 1967: speed-up bounded by 1/serial share)
    usl     T(m) = (c + a (m - 1) + b m (m - 1)) / m            (Gunther's Universal Scalability Law, time form:
                                                                 throughput m / T; a = contention, b = coherency;
                                                                 with b > 0 the time bends back up past
                                                                 m* = sqrt((c - a) / b), retrograde scaling)
    ernest  T(m) = fixed + parallel / m + tree * log m + per_machine * m   (Venkataraman et al. 2016)

and the other factors (batch size, epochs, the network...) multiply the whole curve,
T = exp(x . beta) * phi(m) . theta: one shape shared by every setting, each setting's own level (numeric
covariates enter as log x centred on the training rows' geometric mean, categorical ones as indicators of
each level but the first). Times are ratios of one another, so the fit minimises the relative squared error
sum(((y - T) / ybar_cell)^2), where ybar_cell is the mean of the runs that share the row's design point; with
no covariates that is a non-negative least squares problem (scipy.optimize.nnls), with covariates a bounded
non-linear one (scipy.optimize.least_squares), after which theta is the exact NNLS optimum for the fitted beta.

Identification. A curve with p coefficients needs p distinct levels of m in the training rows (Amdahl 2,
the USL 3, Ernest 4), a basis of full rank at those levels, and covariates that are not confounded with m. A
fit that fails any of these is *not identified*: :class:`CurveFit` says why in one line and
:meth:`CurveFit.predict` gives no point estimate (NaN).

What it can still say. The set of non-negative theta that fit the training rows about as well as the best
one, {theta >= 0 : RSS(theta) <= RSS_min + sigma^2 t^2}, where sigma is the relative replicate noise and t
the two-sided t quantile at the level (a profile-likelihood interval for a scalar function of theta), is
bounded even when theta is not identified, because every basis function is non-negative and positive at some
training level. :meth:`CurveFit.mean_range` returns the smallest and largest T(m*) over that set (a convex
problem, solved with SLSQP): for an identified fit it is the usual confidence interval of the mean, for one
that is not identified it is the range of every curve of the family that fits the rows (e.g. from 1 and 2
machines, the USL's time at 4 lies between the pure-contention and the pure-coherency curve through the two
points). :meth:`CurveFit.run_interval` widens it by the noise of one new run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats
from scipy.optimize import least_squares, minimize, nnls

from models.errors import FitError, InvalidTableError, NotIdentifiedError
from models.predict._base import Predictor
from models.predict.ernest import ernest_design
from models.predict.parallelism import COLUMN as PARALLELISM, Parallelism, resolve
from models.predict.table import factor_columns, is_categorical
from models.predict.work import Work
from models.rsm.fit import LackOfFit, lack_of_fit

#: Lack of fit below this p-value: the curve misses structure the replicates show is real.
LACK_OF_FIT_P = 0.01
#: Relative singular value under which a design is taken as singular.
RANK_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Curve:
    """A scaling curve: its name, its coefficients' names, its formula and its basis functions of m."""

    name: str
    parameters: tuple[str, ...]
    formula: str
    #: The basis functions at parallelism m and amount of work s (both arrays of the rows).
    basis: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(repr=False)
    #: For a family with one non-linear exponent (the power law): the exponents tried, each a linear member.
    exponents: tuple[float, ...] = ()
    #: True: fitted by the relative squared error; False: by the squared error of the times (Ernest's own fit).
    relative: bool = True

    @property
    def p(self) -> int:
        return len(self.parameters)

    def phi(self, m: np.ndarray, s: np.ndarray | None = None) -> np.ndarray:
        """The basis at parallelism ``m`` and work ``s`` (1 for every row when None)."""
        m = np.asarray(m, dtype=float)
        return self.basis(m, np.ones_like(m) if s is None else np.broadcast_to(np.asarray(s, dtype=float), m.shape))

    def member(self, q: float) -> Curve:
        """The power law's member of exponent q: s (C + a m^-q), linear in (C, a)."""
        return Curve(self.name, ("C", "a"), f"C + a m^-{q:g}",
                     lambda m, s: s[:, None] * np.column_stack([np.ones_like(m), m**-q]), relative=self.relative)


def _amdahl(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    return s[:, None] * np.column_stack([np.ones_like(m), 1.0 / m])


def _usl(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    return s[:, None] * np.column_stack([1.0 / m, (m - 1.0) / m, m - 1.0])


AMDAHL = Curve("amdahl", ("serial", "parallel"), "serial + parallel/m", _amdahl)
USL = Curve("usl", ("c", "contention", "coherency"), "(c + contention (m-1) + coherency m (m-1)) / m", _usl)
ERNEST = Curve("ernest", ("fixed", "parallel", "tree", "per_machine"),
               "fixed + parallel s/m + tree log m + per_machine m", ernest_design, relative=False)
#: Ernest fitted by the relative squared error like the other curves (``--ernest-fit relative``): the same curve.
ERNEST_RELATIVE = dataclasses.replace(ERNEST, relative=True)
#: Extra-P's power law (Calotoiu et al. 2013; Kavarakuntla 2024's generic model in one input): T = C + a m^-q, the
#: exponent from {1/4, 1/2, ..., 2} (q = 1 is Amdahl), C and a >= 0. It keeps speeding up (as m^-q) where the
#: others flatten, so with it the interval over model form also holds a job that scales on without saturating.
POWER = Curve("power", ("C", "a", "q"), "C + a m^-q", lambda m, s: np.zeros((len(m), 0)),
              exponents=tuple(i / 4 for i in range(1, 9)))
CURVES: dict[str, Curve] = {c.name: c for c in (AMDAHL, USL, ERNEST, POWER)}


# --- covariates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Covariates:
    """How the other factors enter: log x - mean(log x) for positive numbers, x - mean x for others, one indicator per
    categorical level but the first."""

    numeric: tuple[tuple[str, bool, float], ...]  # (column, logged, centre)
    categorical: tuple[tuple[str, tuple[str, ...]], ...]  # (column, levels after the first)

    @classmethod
    def learn(cls, table: pd.DataFrame, columns: Sequence[str]) -> Covariates:
        numeric, categorical = [], []
        for c in columns:
            if is_categorical(table[c]):
                levels = sorted(map(str, table[c].unique()))
                categorical.append((c, tuple(levels[1:])))
            else:
                x = table[c].to_numpy(dtype=float)
                logged = bool((x > 0).all())
                v = np.log(x) if logged else x
                numeric.append((c, logged, float(v.mean())))
        return cls(tuple(numeric), tuple(categorical))

    @property
    def names(self) -> list[str]:
        return [f"log {c}" if logged else c for c, logged, _ in self.numeric] + [
            f"{c}={level}" for c, levels in self.categorical for level in levels]

    @property
    def columns(self) -> list[str]:
        return [c for c, _, _ in self.numeric] + [c for c, _ in self.categorical]

    def matrix(self, table: pd.DataFrame) -> np.ndarray:
        parts = []
        for c, logged, centre in self.numeric:
            x = table[c].to_numpy(dtype=float)
            if logged and (x <= 0).any():
                raise InvalidTableError(f"covariate {c!r} must be positive (it entered the scaling fit as log {c})")
            parts.append((np.log(x) if logged else x) - centre)
        for c, levels in self.categorical:
            values = table[c].astype(str).to_numpy()
            parts += [(values == level).astype(float) for level in levels]
        return np.column_stack(parts) if parts else np.zeros((len(table), 0))


# --- the fit -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeanRange:
    """Smallest and largest mean time at one setting over the coefficients that fit the rows, and those coefficients."""

    low: float
    high: float
    theta_low: np.ndarray
    theta_high: np.ndarray
    #: The member whose coefficients those are (a family's ends can come from two exponents); None: the fit's own.
    curve_low: Curve | None = None
    curve_high: Curve | None = None


@dataclass(frozen=True, eq=False)
class CurveFit:
    """One curve fitted to training rows (see the module docstring); arrays are the training rows'."""

    curve: Curve
    theta: np.ndarray
    beta: np.ndarray
    covariates: Covariates
    levels: tuple[float, ...]
    identified: bool
    reason: str | None
    #: The fit's own criterion at its optimum (relative or absolute squared error, as the curve is fitted).
    rss: float
    #: Relative noise of one run (the replicates' pure error, else the residuals'), its df and where it came from.
    sigma: float
    sigma_df: int
    sigma_source: str
    lack_of_fit: LackOfFit | None
    m: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    x: np.ndarray = field(repr=False)
    w: np.ndarray = field(repr=False)
    #: A family's members (the power law's exponents), each fitted; the fit itself is the best of them.
    members: tuple[CurveFit, ...] = field(default=(), repr=False)
    #: Each row's amount of work (1 without --work).
    s: np.ndarray | None = field(default=None, repr=False)
    #: Seconds per unit of relative noise in the fit's criterion: 1 for a relative fit, the root mean square of the
    #: design points' mean times for an absolute one (so the same relative noise bounds both).
    unit: float = 1.0
    #: The relative squared error at the fit (whatever the fit's criterion), and the coefficients it counts.
    rel_rss: float = float("nan")
    n_params: int = 0
    #: Without replicates: the p-value of this curve's residual variance against the best identified curve's (the
    #: noise every curve takes); None when it is that curve, or cannot be tested.
    against_best: float | None = None
    #: Without replicates: the curve's AICc (relative residuals, its coefficients and the noise counted) and its
    #: Akaike weight among the identified curves that pass the test against the best; None when not weighed.
    aicc: float | None = None
    aicc_weight: float | None = None
    #: Why the AICc rule left the curve out of the interval over model form (None: it did not).
    weighed_out: str | None = None

    @property
    def work(self) -> np.ndarray:
        return np.ones_like(self.m) if self.s is None else self.s

    @property
    def fits(self) -> bool:
        """False when the lack-of-fit test rejects the curve at LACK_OF_FIT_P (against the replicates, or without
        them against the best identified curve's residual noise); True when it cannot be tested."""
        lof = self.lack_of_fit
        if lof is not None and lof.testable and (lof.p or 0.0) < LACK_OF_FIT_P:
            return False
        if self.weighed_out is not None:
            return False
        return not (self.against_best is not None and self.against_best < LACK_OF_FIT_P)

    @property
    def lack_of_fit_p(self) -> float | None:
        """The p-value of the test that rules the curve in or out (replicates first, else against the best)."""
        lof = self.lack_of_fit
        if lof is not None and lof.testable:
            return lof.p
        return self.against_best

    def _row_factor(self, x: np.ndarray) -> np.ndarray:
        return np.exp(x @ self.beta) if self.beta.size else np.ones(len(x))

    def expected(self, m: np.ndarray, x: np.ndarray, theta: np.ndarray | None = None,
                 curve: Curve | None = None, s: np.ndarray | None = None) -> np.ndarray:
        """exp(x . beta) phi(m, s) . theta for the fitted theta (or the one given, of ``curve``), identified or not."""
        m = np.asarray(m, dtype=float)
        return self._row_factor(np.asarray(x, dtype=float).reshape(len(m), -1)) * (
            (curve or self.curve).phi(m, s) @ (self.theta if theta is None else theta))

    def predict(self, m: np.ndarray, x: np.ndarray, s: np.ndarray | None = None) -> np.ndarray:
        """Point predictions; NaN everywhere when the fit is not identified."""
        if not self.identified:
            return np.full(len(np.asarray(m)), np.nan)
        return self.expected(m, x, s=s)

    def t_quantile(self, level: float) -> float:
        if self.sigma_df > 0:
            return float(stats.t.ppf(0.5 + level / 2, self.sigma_df))
        return float(stats.norm.ppf(0.5 + level / 2))

    def slack(self, level: float) -> float:
        sigma = self.sigma if math.isfinite(self.sigma) else 0.0
        if sigma > 0:
            return (sigma * self.unit) ** 2 * self.t_quantile(level) ** 2
        return len(self.y) * 1e-12 * self.unit**2  # the floor keeps an exact fit's set open

    def mean_range(self, m: float, x: np.ndarray, level: float, bound: float | None = None,
                   s: float = 1.0) -> MeanRange:
        """The smallest and largest mean time at (m, x, s) over {theta >= 0 : RSS <= RSS_min + sigma^2 t^2} (or
        RSS <= ``bound``); for a family, over every member's set under the best member's bound."""
        bound = self.rss + self.slack(level) if bound is None else bound
        if self.members:
            ranges = [f.mean_range(m, x, level, bound, s) for f in self.members if f.rss <= bound]
            low = min(ranges, key=lambda r: r.low)
            high = max(ranges, key=lambda r: r.high)
            return MeanRange(low.low, high.high, low.theta_low, high.theta_high, low.curve_low, high.curve_high)
        if self.rss > bound:
            raise FitError(f"{self.curve.name}: no coefficients within the bound")
        a = (self.w * self._row_factor(self.x))[:, None] * self.curve.phi(self.m, self.work)
        b = self.w * self.y
        g = (self._row_factor(np.asarray(x, dtype=float).reshape(1, -1))
             * self.curve.phi(np.array([float(m)]), np.array([float(s)])))[0]
        scale = max(float(g @ self.theta), 1e-300)
        ends = []
        for sign in (1.0, -1.0):
            result = minimize(
                lambda t: sign * float(g @ t) / scale, self.theta, jac=lambda t: sign * g / scale, method="SLSQP",
                bounds=[(0.0, None)] * self.curve.p,
                constraints=[{"type": "ineq", "fun": lambda t: (bound - float(np.sum((a @ t - b) ** 2))) / bound,
                              "jac": lambda t: -2.0 * (a.T @ (a @ t - b)) / bound}],
                options={"maxiter": 200, "ftol": 1e-10},
            )
            theta = np.maximum(result.x, 0.0)
            if float(np.sum((a @ theta - b) ** 2)) > bound * (1 + 1e-6):  # not feasible: keep the fitted theta
                theta = self.theta
            ends.append(theta)
        lo_theta, hi_theta = ends
        low, high = float(g @ lo_theta), float(g @ hi_theta)
        if low > high:
            low, high, lo_theta, hi_theta = high, low, hi_theta, lo_theta
        return MeanRange(low, high, lo_theta, hi_theta, self.curve, self.curve)

    def run_interval(self, m: float, x: np.ndarray, level: float, s: float = 1.0) -> tuple[float, float, MeanRange]:
        """The interval for one new run at (m, x, s): the mean range widened, on each side, by t * sigma * centre in
        quadrature (the usual prediction interval of an identified fit); the mean range alone without a noise
        estimate."""
        rng = self.mean_range(m, x, level, s=s)
        centre = float(self.expected(np.array([float(m)]), np.asarray(x, dtype=float).reshape(1, -1),
                                     s=np.array([float(s)]))[0]) if self.identified else 0.5 * (rng.low + rng.high)
        noise = self.t_quantile(level) * self.sigma * centre if math.isfinite(self.sigma) else 0.0
        low = centre - math.hypot(centre - rng.low, noise)
        high = centre + math.hypot(rng.high - centre, noise)
        return max(low, 0.0), high, rng

    def describe(self) -> str:
        """The fitted coefficients in one line (or why there are none)."""
        if not self.identified:
            return f"{self.curve.name}: not identified: {self.reason}"
        coefficients = ", ".join(f"{n} {v:.4g}" for n, v in zip(self.curve.parameters, self.theta))
        extra = ""
        if self.curve is USL and self.theta[0] > 0:
            c, a, b = self.theta
            extra = f"; contention share {a / c:.3g}, coherency share {b / c:.3g}"
            if b > 0 and c > a:
                extra += f", fastest at m = {math.sqrt((c - a) / b):.3g}"
        if self.curve is AMDAHL and self.theta.sum() > 0:
            extra = f"; serial share {self.theta[0] / self.theta.sum():.3g}"
        formula = self.curve.formula
        if self.s is not None and np.ptp(self.s) > 0 and self.curve.name != ERNEST.name:
            formula = f"s ({formula})"
        return f"{self.curve.name}: T = {formula} with {coefficients}{extra}"


def design_cells(m: np.ndarray, x: np.ndarray, s: np.ndarray | None = None) -> np.ndarray:
    """One integer per row: the design point (m, the work and the covariates) it belongs to."""
    parts = [m.reshape(-1, 1)] + ([] if s is None else [np.asarray(s, dtype=float).reshape(-1, 1)]) + (
        [x] if x.size else [])
    return np.unique(np.round(np.column_stack(parts), 9), axis=0, return_inverse=True)[1].reshape(-1)


#: The least relative noise a run is taken to have (a clock's resolution on a second's run): an exact fit's
#: residuals are rounding, not noise, and a test against them would reject curves that fit as exactly.
NOISE_FLOOR = 1e-6


def fit_curve(curve: Curve, m: np.ndarray, y: np.ndarray, x: np.ndarray | None = None,
              covariates: Covariates | None = None, sigma: tuple[float, int, str] | None = None,
              s: np.ndarray | None = None) -> CurveFit:
    """Fit ``curve`` to times ``y`` at parallelism ``m`` and work ``s`` (default 1) with covariate matrix ``x`` (n x
    k, default none).

    ``sigma`` (value, df, source) replaces the noise estimated from the rows (a caller adding hypothetical runs
    keeps the noise it measured)."""
    m = np.asarray(m, dtype=float)
    y = np.asarray(y, dtype=float)
    x = np.zeros((len(m), 0)) if x is None else np.asarray(x, dtype=float).reshape(len(m), -1)
    s = None if s is None else np.asarray(s, dtype=float).reshape(-1)
    covariates = covariates or Covariates((), ())
    if curve.exponents:
        return _fit_family(curve, m, y, x, covariates, sigma, s)
    if len(m) != len(y) or len(y) == 0 or (s is not None and len(s) != len(y)):
        raise InvalidTableError(f"need one time per parallelism value, got {len(y)} and {len(m)}")
    if (m < 1).any() or not np.isfinite(m).all():
        raise InvalidTableError("parallelism m must be a finite number >= 1 in every row")
    if s is not None and ((s <= 0).any() or not np.isfinite(s).all()):
        raise InvalidTableError("the amount of work must be a finite number > 0 in every row")
    if (y <= 0).any() or not np.isfinite(y).all():
        raise InvalidTableError("a scaling curve needs positive finite times in every row")
    cells = design_cells(m, x, s)
    cell_mean = np.bincount(cells, weights=y) / np.bincount(cells)
    relative_w = 1.0 / cell_mean[cells]
    w = relative_w if curve.relative else np.ones_like(y)
    unit = 1.0 if curve.relative else float(np.sqrt(np.mean(cell_mean[cells] ** 2)))
    phi = curve.phi(m, s)
    k = x.shape[1]
    if k == 0:
        theta, beta = nnls(w[:, None] * phi, w * y)[0], np.zeros(0)
    else:
        theta, beta = _fit_with_covariates(phi, y, w, x, m)
    levels = tuple(float(v) for v in np.unique(m))
    reason = _identification(curve, levels, phi, w, x, theta, beta, m, s, covariates.names)
    fitted = np.exp(x @ beta) * (phi @ theta) if k else phi @ theta
    rss = float(np.sum((w * (y - fitted)) ** 2))
    rel_rss = float(np.sum((relative_w * (y - fitted)) ** 2))
    n_cells = int(cells.max()) + 1
    df_pe = len(y) - n_cells
    ry = relative_w * y
    ss_pe = float(np.sum((ry - np.bincount(cells, weights=ry)[cells] / np.bincount(cells)[cells]) ** 2))
    n_params = curve.p + k
    if sigma is not None:
        sd, sd_df, source = sigma
    elif df_pe > 0:
        sd, sd_df, source = math.sqrt(ss_pe / df_pe), df_pe, "replicates"
    elif reason is None and len(y) > n_params:
        sd, sd_df, source = math.sqrt(rel_rss / (len(y) - n_params)), len(y) - n_params, "residuals"
    else:
        sd, sd_df, source = float("nan"), 0, "unknown"
    lof = None
    if reason is None and df_pe > 0 and len(y) - n_params - df_pe > 0:
        keys = np.column_stack([m] + ([] if s is None else [s]) + ([x] if k else []))
        lof = lack_of_fit(keys, w * y, rss, len(y) - n_params)[0]
    return CurveFit(curve, theta, beta, covariates, levels, reason is None, reason, rss, sd, sd_df, source, lof,
                    m, y, x, w, s=s, unit=unit, rel_rss=rel_rss, n_params=n_params)


def _fit_family(curve: Curve, m: np.ndarray, y: np.ndarray, x: np.ndarray, covariates: Covariates,
                sigma: tuple[float, int, str] | None, s: np.ndarray | None) -> CurveFit:
    """Every member of ``curve``'s family; the best (least RSS) stands for it, identified by the family's own
    count of coefficients (the exponent counts)."""
    members = tuple(fit_curve(curve.member(q), m, y, x, covariates, sigma, s) for q in curve.exponents)
    best = min(members, key=lambda f: f.rss)
    levels = tuple(float(v) for v in np.unique(m))
    reason = None
    if len(levels) < curve.p:
        reason = _identification(curve, levels, np.zeros((len(m), 0)), best.w, x, best.theta, best.beta, m, None,
                                 covariates.names)
    elif best.reason is not None:
        reason = best.reason
    n_params = curve.p + x.shape[1]
    fields: dict = {"n_params": n_params}
    if sigma is None and best.sigma_source == "residuals":
        fields |= ({"sigma": math.sqrt(best.rel_rss / (len(y) - n_params)), "sigma_df": len(y) - n_params}
                   if len(y) > n_params else {"sigma": float("nan"), "sigma_df": 0, "sigma_source": "unknown"})
    return dataclasses.replace(best, identified=reason is None, reason=reason, members=members, **fields)


def share_noise(fits: Sequence[CurveFit]) -> tuple[CurveFit, ...]:
    """Without replicates, one noise for every curve: the residual noise of the best-fitting identified curve (the
    least relative residual variance, its df n - p, at least :data:`NOISE_FLOOR` squared; of two as exact, the one
    with fewer coefficients); and each other curve tested
    against it, F = (its relative residual variance) / (that noise^2) on (n - p_curve, n - p_best) df, left out of
    the interval over model form at p < LACK_OF_FIT_P. With replicates (or a noise given) the fits are returned as
    they are: the pure error is every curve's noise and the lack-of-fit test is against it."""
    if not fits or any(f.sigma_source in ("replicates", "given") for f in fits):
        return tuple(fits)
    n = len(fits[0].y)
    able = [f for f in fits if f.identified and n > f.n_params]
    if not able:
        return tuple(fits)
    best = min(able, key=lambda f: (max(f.rel_rss / (n - f.n_params), NOISE_FLOOR**2), f.n_params))
    df_best = n - best.n_params
    variance = max(best.rel_rss / df_best, NOISE_FLOOR**2)
    out = []
    for f in fits:
        p = None
        if f is not best and n > f.n_params:
            ratio = (f.rel_rss / (n - f.n_params)) / variance
            p = float(stats.f.sf(ratio, n - f.n_params, df_best))
        source = f"residuals of {best.curve.name}, the best-fitting identified curve"
        shared = {"sigma": math.sqrt(variance), "sigma_df": df_best, "sigma_source": source}
        members = tuple(dataclasses.replace(g, **shared) for g in f.members)
        out.append(dataclasses.replace(f, against_best=p, members=members, **shared))
    return weigh(out)


def aicc(rel_rss: float, n: int, n_params: int) -> float | None:
    """AICc of a least-squares fit (Hurvich and Tsai 1989) with k = n_params + 1 (the noise counted):
    n ln(RSS / n) + 2k + 2k(k + 1) / (n - k - 1), the RSS at least n NOISE_FLOOR^2 (an exact fit's residuals are
    rounding); None when n <= k + 1, where the correction is infinite."""
    k = n_params + 1
    if n - k - 1 <= 0:
        return None
    rss = max(rel_rss, n * NOISE_FLOOR**2)
    return n * math.log(rss / n) + 2 * k + 2 * k * (k + 1) / (n - k - 1)


def weigh(fits: Sequence[CurveFit]) -> tuple[CurveFit, ...]:
    """The parsimony rule of the interval over model form without replicates, after the test against the best.

    Among the identified curves that pass that test, a curve is left out when another of them has fewer coefficients
    and fits at least as well (a relative RSS no larger, both floored at n NOISE_FLOOR^2: on exact data two curves
    tie at the floor). Such a curve's AICc is above the simpler one's whatever n, so its Akaike weight is lower; the
    weights (Delta AICc over the curves that have an AICc, n > k + 1) are computed and reported beside each curve.
    They do not drop curves by a cut-off: on few noisy rows that undercovers (docs/queueing-and-prediction.md, a
    simulation: a cut at 1/8 of the best's weight covered 73 % of new runs at a nominal 90 %, the rule here 98 %).
    Curves that are not identified are not weighed: they stay in and bound the time."""
    able = [f for f in fits if f.identified and f.fits and len(f.y) > 0]
    if not able:
        return tuple(fits)
    n = len(able[0].y)
    floor = n * NOISE_FLOOR**2
    scores = {id(f): aicc(f.rel_rss, n, f.n_params) for f in able}
    valued = [a for a in scores.values() if a is not None]
    least = min(valued) if valued else None
    total = sum(math.exp(-(a - least) / 2) for a in valued) if valued else None
    out = []
    for f in fits:
        if id(f) not in scores:
            out.append(f)
            continue
        changes: dict = {}
        a = scores[id(f)]
        if a is not None and least is not None and total is not None:
            changes |= {"aicc": a, "aicc_weight": math.exp(-(a - least) / 2) / total}
        simpler = [g for g in able if g.n_params < f.n_params and max(g.rel_rss, floor) <= max(f.rel_rss, floor)]
        if simpler:
            g = min(simpler, key=lambda g: (g.n_params, g.rel_rss))
            changes["weighed_out"] = (f"{g.curve.name} fits as well with {g.n_params} coefficients against its "
                                      f"{f.n_params} (relative RSS {max(g.rel_rss, floor):.3g} <= "
                                      f"{max(f.rel_rss, floor):.3g})")
        out.append(dataclasses.replace(f, **changes) if changes else f)
    return tuple(out)


def _fit_with_covariates(phi: np.ndarray, y: np.ndarray, w: np.ndarray, x: np.ndarray,
                         m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p, k = phi.shape[1], x.shape[1]
    start = np.linalg.lstsq(np.column_stack([np.ones(len(y)), np.log(m), x]), np.log(y), rcond=None)[0]
    beta0 = start[2:]
    theta0 = nnls((w * np.exp(x @ beta0))[:, None] * phi, w * y)[0]
    theta0 = np.maximum(theta0, 1e-9 * float(np.mean(y)))

    def residuals(v: np.ndarray) -> np.ndarray:
        return w * (y - np.exp(x @ v[p:]) * (phi @ v[:p]))

    result = least_squares(residuals, np.concatenate([theta0, beta0]),
                           bounds=(np.r_[np.zeros(p), np.full(k, -np.inf)], np.full(p + k, np.inf)),
                           method="trf", x_scale="jac", max_nfev=2000)
    if not np.isfinite(result.x).all():
        raise FitError("the scaling fit with covariates did not converge; drop a covariate (--factors)")
    beta = result.x[p:]
    theta = nnls((w * np.exp(x @ beta))[:, None] * phi, w * y)[0]
    return theta, beta


def _identification(curve: Curve, levels: tuple[float, ...], phi: np.ndarray, w: np.ndarray, x: np.ndarray,
                    theta: np.ndarray, beta: np.ndarray, m: np.ndarray, s: np.ndarray | None,
                    names: Sequence[str] = ()) -> str | None:
    """Why the rows cannot determine the curve (None when they can): fewer (parallelism, work) settings than
    coefficients, a basis of less than full rank at them, or covariates confounded with the scale."""
    shown = ", ".join(f"{v:g}" for v in levels)
    missing = curve.p - len(levels)
    by_levels = (f"{curve.p} coefficients ({', '.join(curve.parameters)}) and {len(levels)} level"
                 f"{'s' if len(levels) != 1 else ''} of parallelism in the training rows ({shown}); "
                 f"runs at {missing} more level{'s' if missing > 1 else ''} identify it")
    points = np.unique(np.round(np.column_stack([m, np.ones_like(m) if s is None else s]), 12), axis=0)
    if curve.exponents or (len(points) < curve.p and len(points) == len(levels)):
        return by_levels
    if len(points) < curve.p:
        return (f"{curve.p} coefficients ({', '.join(curve.parameters)}) and {len(points)} settings of (parallelism, "
                f"work) in the training rows (parallelism {shown}); runs at {curve.p - len(points)} more identify it")
    sv = np.linalg.svd(curve.phi(points[:, 0], points[:, 1]), compute_uv=False)
    if sv.min() <= RANK_TOLERANCE * sv.max():
        if len(levels) < curve.p:  # the work scales the whole curve: only more levels of m identify it
            return by_levels
        return f"its basis is singular at the training levels ({shown})"
    if x.shape[1]:
        factor = np.exp(x @ beta)
        jac = np.column_stack([(w * factor)[:, None] * phi, (w * factor * (phi @ theta))[:, None] * x])
        _, sv, vt = np.linalg.svd(jac, full_matrices=False)
        if sv.min() <= RANK_TOLERANCE * sv.max():
            return _confounded(vt[sv <= RANK_TOLERANCE * sv.max()], phi.shape[1], names)
    return None


def _confounded(null: np.ndarray, p: int, names: Sequence[str]) -> str:
    """What a singular design's null directions (rows of ``null``: the curve's ``p`` coefficients, then one per
    covariate named ``names``) say is aliased: the scale with some factors, or factors with each other."""
    weight = np.abs(null).max(axis=0)
    involved = weight > 1e-6 * weight.max()
    columns = list(dict.fromkeys(str(n).removeprefix("log ").split("=")[0] for n, hit in zip(names, involved[p:])
                                 if hit)) if len(names) == null.shape[1] - p else []
    shown = " and ".join(columns) if len(columns) <= 2 else ", ".join(columns[:-1]) + " and " + columns[-1]
    if not columns:
        return "parallelism is confounded with the other factors in the training rows (a singular design)"
    if involved[:p].any():
        return (f"parallelism is confounded with {shown} in the training rows (a singular design): run other "
                f"combinations, or leave {'it' if len(columns) == 1 else 'them'} out with --factors")
    if len(columns) == 1:
        return f"{shown} takes one level in the training rows: leave it out with --factors"
    return (f"{shown} are aliased with each other in the training rows (each run's level of one fixes the "
            f"other's): run other combinations, or keep one of them with --factors")


# --- as a prediction model -------------------------------------------------------------------


class ScalingModel(Predictor):
    """A scaling curve as one of ``sparkdl predict``'s models: inputs the parallelism, the work and the other factors.

    ``scale_columns`` are the columns the parallelism is made of (not covariates); by default those of
    :func:`models.predict.parallelism.resolve`. ``work`` is the column of the amount of work (None: 1 for every
    run). fit() raises NotIdentifiedError when the rows cannot determine the curve (``fit_`` keeps the fit, whose
    mean ranges are still defined)."""

    def __init__(self, curve: Curve, target: str = "wall_clock_s", scale_columns: Sequence[str] | None = None,
                 work: str | None = None) -> None:
        super().__init__(target)
        self.curve = curve
        self.name = curve.name  # type: ignore[misc]
        self.scale_columns = None if scale_columns is None else list(scale_columns)
        self.work = work
        self.fit_: CurveFit | None = None
        self._scale: tuple[str, ...] = ()

    def _parallelism(self, table: pd.DataFrame) -> tuple[str, ...]:
        if self.scale_columns is not None:
            return tuple(self.scale_columns)
        found: Parallelism | None = resolve(table)
        if PARALLELISM not in table.columns and found is None:
            raise InvalidTableError("no parallelism column: pass --parallelism COLUMN (e.g. nodes), or give the "
                                    "table nodes, executors and executor_cores")
        return found.columns if found is not None else ()

    def default_features(self, table: pd.DataFrame) -> list[str]:
        scale = self._scale or self._parallelism(table)
        others = [c for c in factor_columns(table, self.target)
                  if c not in scale and c not in (PARALLELISM, "processes", self.work)]
        return [PARALLELISM, *others]

    def required_columns(self) -> list[str]:
        return list(self.features_) + ([self.work] if self.work and self.work not in self.features_ else [])

    def fit(self, table: pd.DataFrame) -> ScalingModel:
        self._scale = self._parallelism(table)
        return super().fit(self._with_m(table))

    def _with_m(self, table: pd.DataFrame) -> pd.DataFrame:
        if PARALLELISM in table.columns or not self._scale:
            return table
        out = table.copy()
        out[PARALLELISM] = Parallelism(self._scale, "").values(table)
        return out

    def _work(self, table: pd.DataFrame) -> np.ndarray | None:
        return None if self.work is None else Work(self.work).values(table)

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        if PARALLELISM not in self.features_:
            raise NotIdentifiedError(f"{self.name}: one level of parallelism in the training rows; a scaling curve "
                                     "needs runs at two or more scales")
        covariates = Covariates.learn(table, [c for c in self.features_ if c not in (PARALLELISM, self.work)])
        self.fit_ = fit_curve(self.curve, table[PARALLELISM].to_numpy(dtype=float), y,
                              covariates.matrix(table), covariates, s=self._work(table))
        if not self.fit_.identified:
            raise NotIdentifiedError(f"not identified: {self.fit_.reason}")

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        assert self.fit_ is not None
        return self.fit_.predict(configs[PARALLELISM].to_numpy(dtype=float), self.fit_.covariates.matrix(configs),
                                 self._work(configs))

    def predict(self, configs: pd.DataFrame) -> np.ndarray:
        return super().predict(self._with_m(configs))


class ErnestModel(ScalingModel):
    """Ernest (Venkataraman et al. 2016) as a prediction model: the ``ernest`` curve, fitted as Ernest's predictor
    does (non-negative least squares on the times; ``relative=True``: on the relative error, like the other
    curves), its amount of work from the column ``work``."""

    def __init__(self, target: str = "wall_clock_s", scale_columns: Sequence[str] | None = None,
                 work: str | None = None, relative: bool = False) -> None:
        super().__init__(ERNEST_RELATIVE if relative else ERNEST, target, scale_columns, work)
