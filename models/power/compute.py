"""Power and sample size of a factorial design's main-effect F tests (noncentral F).

For each factor, the test is the ANOVA's Type II F test of its main effect in the design's model
(default: main effects and every estimable two-factor interaction). With ``r`` rows at the design
points and the true mean differing by ``delta`` between the factor's extreme levels (and nothing
else), the statistic is noncentral F with

* ``df1`` = the columns the main effect adds to the terms not containing the factor,
* ``df2`` = the error degrees of freedom (runs minus the model's rank),
* noncentrality ``lambda = ||(I - P_R) m||^2 / sigma^2``, where ``m`` is the effect's pattern over
  the runs (``delta`` times the factor's coded level over 2 for a numeric factor: +-delta/2 at the
  extremes) and ``P_R`` projects onto the terms not containing the factor. For an orthogonal
  two-level design this is ``N delta^2 / (4 sigma^2)``; in general it is ``delta' X'X delta`` of the
  main effect adjusted for the other terms, so missing runs and unequal replication count exactly.
  A categorical factor's effect is the least favourable one: two levels ``delta`` apart, the others
  midway (the pair of levels with the smallest lambda).

Power is ``P(F'(df1, df2, lambda) > F_{1-alpha}(df1, df2))``. The replicates needed are the
fewest copies ``r`` of every distinct design point whose power reaches the target (lambda and the
error df grow with ``r``); the detectable effect is the ``delta`` whose lambda gives the target
power on the current design.

Scale: an effect in % (``5%``) is a ratio, analysed on the log scale (``delta = log(1.05)``, the
noise the SD of log(y); a CV ``c`` is ``sqrt(log(1 + c^2))`` there), since "5 % faster" is a
multiplicative effect; an effect in response units is analysed on the linear scale.

Split-plot designs: with whole-plot factors, runs in one whole plot share a whole-plot error of
SD ``sigma_w``. The model is then generalised least squares: runs are whitened by
``V^(-1/2)``, ``V = I + (sigma_w / sigma)^2 Z Z'`` (Z the whole plots), before the projection, and
the error df of a whole-plot term (one made of whole-plot factors only) are the whole plots minus
the whole-plot model's rank; the other terms get the rest. For a balanced split-plot design this
is exact (the whole-plot test is the F test on whole-plot means, the subplot test the one within
whole plots); otherwise the noncentral F is an approximation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats

from models.anova.design import INTERCEPT, code_factors, factor_term, is_numeric, model_matrix, rank
from models.anova.terms import default_terms
from models.errors import PlanError
from models.power.result import DesignInfo, Effect, FactorPower, Noise, PowerPlan

SCALES = ("log", "linear")
#: Run-time columns, in order of preference, for the cluster time of a recommended design.
TIME_COLUMNS = ("wall_clock_s", "elapsed_s", "elapsed")
#: The plan looks for the replicates needed up to this many copies of the design.
MAX_REPLICATES = 1000
WHOLE_PLOT_COLUMN = "whole_plot"
REPLICATE_COLUMN = "replicate"
RUNS = "runs"
WHOLE_PLOTS = "whole plots"

Whitener = Callable[[np.ndarray], np.ndarray]


# --- inputs as given on the command line ------------------------------------------------------


def parse_percent(text: str, option: str) -> float:
    """``"21.7%"`` -> 0.217; a value without the % sign is refused (0.1 and 10 are too easy to confuse)."""
    t = str(text).strip()
    if not t.endswith("%"):
        raise PlanError(f"{option} {text!r}: give a percentage with its % sign, e.g. {option} 10%")
    try:
        v = float(t[:-1]) / 100
    except ValueError:
        raise PlanError(f"{option} {text!r} is not a number; give e.g. {option} 10%") from None
    if not (math.isfinite(v) and v > 0):
        raise PlanError(f"{option} {text!r} must be above 0 %, e.g. {option} 10%")
    return v


def parse_effect(text: str) -> Effect:
    """``"5%"`` (relative) or ``"0.3"`` (response units)."""
    t = str(text).strip()
    if t.startswith("-") and t[1:2].isdigit():  # the F test is two-sided: a fall is detected as a rise of its size
        raise PlanError(f"--effect {text!r}: the tests are two-sided, an effect is its size: give --effect "
                        f"{t[1:]} to detect a change of {t[1:]} either way")
    if t.endswith("%"):
        return Effect(parse_percent(t, "--effect"), True, t)
    try:
        v = float(t)
    except ValueError:
        raise PlanError(f"--effect {text!r}: give a percentage (5%) or a size in the response's units (0.3)") from None
    if not (math.isfinite(v) and v > 0):
        raise PlanError(f"--effect {text!r} must be above 0; give e.g. --effect 5% or --effect 0.3")
    return Effect(v, False, t)


def default_scale(effect: Effect) -> str:
    """log for a relative effect (a ratio), linear for one in units."""
    return "log" if effect.relative else "linear"


def cv_to_sigma(cv: float, scale: str) -> float:
    """The SD on the analysis scale of a CV: ``sqrt(log(1 + cv^2))`` on the log scale, the CV itself else."""
    return math.sqrt(math.log1p(cv * cv)) if scale == "log" else cv


def sigma_to_cv(sigma: float, scale: str) -> float:
    return math.sqrt(math.expm1(sigma * sigma)) if scale == "log" else sigma


def given_noise(scale: str, *, cv: float | None = None, sd: float | None = None, mean: float | None = None) -> Noise:
    """Noise given on the command line: a CV (relative) or an SD in units (linear scale only)."""
    if (cv is None) == (sd is None):
        raise PlanError("give the noise once: --cv 10% or --sd UNITS (or a pilot campaign)")
    if sd is not None:
        if scale == "log":
            raise PlanError("--sd is in the response's units, which the log scale has not: give --cv, or "
                            "--scale linear")
        if not (math.isfinite(sd) and sd > 0):
            raise PlanError(f"--sd {sd} must be above 0")
        cv_ = sd / mean if mean else math.nan
        return Noise(sd, f"given: SD {sd:g}", cv_, None, mean, in_units=True)
    assert cv is not None
    sigma = cv_to_sigma(cv, scale)
    if scale == "linear" and mean is not None:
        return Noise(cv * mean, f"given: CV {100 * cv:.3g} % of the pilot's mean {mean:.4g}", cv, None, mean,
                     in_units=True)
    where = " (SD of log(y))" if scale == "log" else " (relative to the mean)"
    return Noise(sigma, f"given: CV {100 * cv:.3g} %{where}", cv, None, mean, in_units=False)


def analysed(y: np.ndarray, scale: str, response: str) -> np.ndarray:
    """The response on the analysis scale; the log scale needs positive values."""
    if scale == "log":
        if np.any(y <= 0):
            raise PlanError(f"the log scale needs a positive {response}; it has {int((y <= 0).sum())} value(s) <= 0: "
                            "give the effect in units (linear scale)")
        return np.log(y)
    return y


def pilot_noise(frame: pd.DataFrame, response: str, factors: Sequence[str], scale: str, method: str,
                rhs: str) -> Noise:
    """Noise of a pilot: pooled within-design-point SD (``replicates``) or the model's residual (``residual``)."""
    y = analysed(pd.to_numeric(frame[response], errors="coerce").to_numpy(dtype=float), scale, response)
    mean = float(frame[response].astype(float).mean())
    on = "log(" + response + ")" if scale == "log" else response
    if method == "replicates":
        groups = frame[list(factors)].astype(str).agg("|".join, axis=1) if factors else pd.Series(0, index=frame.index)
        g = pd.Series(y, index=frame.index).groupby(groups.to_numpy())
        n = g.count()
        df = float((n - 1).sum())
        if df < 1:
            raise PlanError("the pilot has no replicated design point, so its replicate noise is unknown: "
                            "use --noise residual, or give --cv")
        ss = float(sum(((v - v.mean()) ** 2).sum() for _, v in g))
        sigma = math.sqrt(ss / df)
        src = f"pilot replicates: pooled SD of {on} within {int((n > 1).sum())} replicated design point(s)"
    elif method == "residual":
        x = model_matrix(rhs, code_factors(frame, factors)).x
        beta, *_ = np.linalg.lstsq(x, y, rcond=None)
        df = float(len(y) - rank(x))
        if df < 1:
            raise PlanError("the pilot's model leaves no residual degrees of freedom: use --noise replicates, "
                            "fewer --terms, or give --cv")
        e = y - x @ beta
        sigma = math.sqrt(float(e @ e) / df)
        src = f"pilot model residual: root MSE of {on} ~ {rhs}"
    else:
        raise PlanError(f"--noise {method!r}: use replicates or residual")
    if not sigma > 0:
        raise PlanError(f"the pilot's {response} does not vary within design points: its noise is 0, so any effect "
                        "is detected; give --cv to plan for some noise")
    return Noise(sigma, src, sigma_to_cv(sigma, scale) if scale == "log" else sigma / mean, df, mean,
                 in_units=scale == "linear")


def with_whole_plot_noise(noise: Noise, scale: str, *, cv: float | None = None, ratio: float | None = None) -> Noise:
    """Add the whole-plot error: its CV (as for the runs' noise) or its variance over the runs' variance."""
    if (cv is None) == (ratio is None):
        raise PlanError("whole-plot factors need the whole-plot noise once: --whole-plot-cv 10% or --variance-ratio R")
    if ratio is not None:
        if not (math.isfinite(ratio) and ratio >= 0):
            raise PlanError(f"--variance-ratio {ratio} must be 0 or more (whole-plot variance / run variance)")
        wp = noise.sigma * math.sqrt(ratio)
    elif scale == "linear" and noise.in_units:
        assert cv is not None
        if noise.mean is None:
            raise PlanError("--whole-plot-cv needs the response's mean (the noise is an SD in units): give "
                            "--variance-ratio instead")
        wp = cv * noise.mean
    else:
        assert cv is not None
        wp = cv_to_sigma(cv, scale)
    return Noise(noise.sigma, noise.source, noise.cv, noise.df, noise.mean, wp, noise.in_units)


def effect_delta(effect: Effect, noise: Noise, scale: str) -> float:
    """The effect on the analysis scale, in the noise's units."""
    if scale == "log":
        if not effect.relative:
            raise PlanError(f"--effect {effect.text}: on the log scale give the effect in % (e.g. 5%), or use "
                            "--scale linear")
        return math.log1p(effect.value)
    if effect.relative:
        if not noise.in_units:
            return effect.value
        if noise.mean is None:
            raise PlanError(f"--effect {effect.text} is relative but the response's mean is unknown: give the effect "
                            "in units, or a pilot campaign")
        return effect.value * noise.mean
    if not noise.in_units:
        raise PlanError(f"--effect {effect.text} is in units but the noise is relative (--cv without a pilot): give "
                        "the effect in %, --sd, or a pilot campaign")
    return effect.value


# --- the F test's power -----------------------------------------------------------------------


def power_of(lam: float, df1: float, df2: float, alpha: float) -> float:
    """Power of the level-alpha F test with noncentrality ``lam`` (NaN without error df)."""
    if not (df1 > 0 and df2 > 0) or not math.isfinite(lam):
        return math.nan
    crit = stats.f.isf(alpha, df1, df2)
    return float(stats.ncf.sf(crit, df1, df2, lam))


def noncentrality_for(power: float, df1: float, df2: float, alpha: float) -> float:
    """The noncentrality at which the F test's power equals ``power`` (NaN without error df)."""
    if not (df1 > 0 and df2 > 0):
        return math.nan
    hi = 1.0
    while power_of(hi, df1, df2, alpha) < power:
        hi *= 2
        if hi > 1e9:
            return math.inf
    return float(optimize.brentq(lambda lam: power_of(lam, df1, df2, alpha) - power, 0.0, hi, xtol=1e-10))


# --- the design's model -----------------------------------------------------------------------


def term_factors(term: str) -> frozenset[str]:
    """The factors of a model term: ``"C(model):nodes"`` -> {model, nodes}."""
    return frozenset(re.sub(r"^C\(\s*(\w+).*\)$", r"\1", p.strip()) for p in term.split(":"))


def whitener(groups: np.ndarray | None, ratio: float) -> Whitener:
    """``V^(-1/2)`` for ``V = I + ratio * Z Z'`` (Z: the whole plots of ``groups``), applied to rows."""
    if groups is None or ratio == 0:
        return lambda a: a
    _, inv = np.unique(groups, return_inverse=True)
    sizes = np.bincount(inv).astype(float)
    shrink = 1 - 1 / np.sqrt(1 + ratio * sizes)

    def apply(a: np.ndarray) -> np.ndarray:
        a2 = a.reshape(len(a), -1)
        sums = np.zeros((len(sizes), a2.shape[1]))
        np.add.at(sums, inv, a2)
        means = sums / sizes[:, None]
        return (a2 - shrink[inv][:, None] * means[inv]).reshape(a.shape)

    return apply


def residual_ss(x: np.ndarray, m: np.ndarray) -> float:
    beta, *_ = np.linalg.lstsq(x, m, rcond=None)
    r = m - x @ beta
    return float(r @ r)


def effect_patterns(frame: pd.DataFrame, factor: str) -> list[np.ndarray]:
    """Mean patterns over the rows with a difference of 1 between the factor's extreme levels."""
    col = frame[factor]
    if is_numeric(col):
        x = col.astype(float).to_numpy()
        lo, hi = float(x.min()), float(x.max())
        return [(x - (lo + hi) / 2) / (hi - lo)]
    levels = list(pd.unique(col))
    out = []
    for i, a in enumerate(levels):
        for b in levels[i + 1:]:
            out.append(np.where(col == b, 0.5, np.where(col == a, -0.5, 0.0)))
    return out


@dataclass(frozen=True)
class FactorTest:
    """A factor's test on one design: noncentrality at delta = sigma = 1, and its degrees of freedom."""

    unit_lambda: float
    df1: float
    df2: float


def whole_plot_ids(frame: pd.DataFrame, wp_factors: Sequence[str]) -> np.ndarray | None:
    """The rows' whole plots: the ``whole_plot`` column, else one per replicate and whole-plot setting."""
    if not wp_factors:
        return None
    if WHOLE_PLOT_COLUMN in frame.columns:
        return frame[WHOLE_PLOT_COLUMN].astype(str).to_numpy()
    keys = ([REPLICATE_COLUMN] if REPLICATE_COLUMN in frame.columns else []) + list(wp_factors)
    return frame[keys].astype(str).agg("|".join, axis=1).to_numpy()


def factor_tests(frame: pd.DataFrame, factors: Sequence[str], rhs: str, wp_factors: Sequence[str],
                groups: np.ndarray | None, ratio: float) -> dict[str, FactorTest]:
    """Each factor's test on the rows of ``frame`` (see the module docstring)."""
    mm = model_matrix(rhs, code_factors(frame, factors))
    x, slices = mm.x, mm.slices
    white = whitener(groups, ratio)
    xw = white(x)
    n = len(frame)
    full_rank = rank(x)
    wp = set(wp_factors)
    wp_cols = [c for t, s in slices.items() if t == INTERCEPT or term_factors(t) <= wp for c in range(s.start, s.stop)]
    n_wp = len(np.unique(groups)) if groups is not None else 0
    wp_df = n_wp - rank(x[:, wp_cols]) if wp else math.nan
    out = {}
    for f in factors:
        term = factor_term(f, frame)
        if term not in slices:
            raise PlanError(f"factor {f!r} has no main effect {term!r} in the model {rhs!r}: add it to --terms")
        reduced = [c for t, s in slices.items() if t == INTERCEPT or f not in term_factors(t)
                   for c in range(s.start, s.stop)]
        with_term = reduced + list(range(slices[term].start, slices[term].stop))
        df1 = float(rank(x[:, with_term]) - rank(x[:, reduced]))
        if df1 == 0:
            raise PlanError(f"the main effect of {f!r} is aliased with other terms of {rhs!r} in this design, so no "
                            "replicates can test it: drop the terms it is aliased with (--terms)")
        lam = min(residual_ss(xw[:, reduced], white(m)) for m in effect_patterns(frame, f))
        if f in wp:
            df2 = float(wp_df)
        elif wp:
            df2 = float(n - full_rank - wp_df)
        else:
            df2 = float(n - full_rank)
        out[f] = FactorTest(lam, df1, df2)
    return out


# --- run times ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PointTimes:
    """A pilot's mean run time per design point (keyed by the points' levels as text) and overall."""

    column: str
    by_point: Mapping[tuple[str, ...], float]
    overall: float

    def design_s(self, points: pd.DataFrame, factors: Sequence[str]) -> float:
        """Summed mean run time of one run at each of ``points``."""
        keys = [tuple(str(v) for v in row) for row in points[list(factors)].itertuples(index=False)]
        return float(sum(self.by_point.get(k, self.overall) for k in keys))


def point_times(pilot: pd.DataFrame | None, factors: Sequence[str]) -> PointTimes | None:
    """Mean run times of the pilot's design points from its first time column (None without one)."""
    if pilot is None:
        return None
    column = next((c for c in TIME_COLUMNS if c in pilot.columns), None)
    if column is None:
        return None
    t = pd.to_numeric(pilot[column], errors="coerce")
    keep = np.isfinite(t.to_numpy(dtype=float)) & (t.to_numpy(dtype=float) >= 0)
    if not keep.any():
        return None
    sub = pilot[keep].assign(__t__=t[keep])
    by = {tuple(str(v) for v in k) if isinstance(k, tuple) else (str(k),): float(v)
          for k, v in sub.groupby(list(factors))["__t__"].mean().items()}
    return PointTimes(column, by, float(sub["__t__"].mean()))


# --- the plan ----------------------------------------------------------------------------------


def check_levels(alpha: float, power: float) -> None:
    if not 0 < alpha < 1:
        raise PlanError(f"--alpha {alpha} must be between 0 and 1, e.g. 0.05")
    if not alpha < power < 1:
        raise PlanError(f"--power {power} must be between alpha ({alpha}) and 1, e.g. 0.8")


def plan_power(
    design: pd.DataFrame,
    factors: Sequence[str],
    *,
    effect: Effect,
    noise: Noise,
    scale: str,
    response: str,
    source: str,
    terms: str | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    whole_plot_factors: Sequence[str] = (),
    times: PointTimes | None = None,
    max_replicates: int = MAX_REPLICATES,
) -> PowerPlan:
    """Power now, replicates needed and the detectable effect for each factor (see the module docstring)."""
    check_levels(alpha, power)
    if scale not in SCALES:
        raise PlanError(f"--scale {scale!r}: use log or linear")
    factors = [f for f in factors if design[f].nunique(dropna=True) > 1]
    if not factors:
        raise PlanError("no factor varies in the design: nothing to plan")
    wp = [f for f in whole_plot_factors]
    unknown = [f for f in wp if f not in factors]
    if unknown:
        raise PlanError(f"--whole-plot {','.join(unknown)}: not a varying factor of the design ({', '.join(factors)})")
    if wp and noise.whole_plot_sigma is None:
        raise PlanError("whole-plot factors need the whole-plot noise: --whole-plot-cv 10% or --variance-ratio R")
    rhs = terms.strip() if terms else default_terms(design, factors).rhs
    delta = effect_delta(effect, noise, scale)
    ratio = (noise.whole_plot_sigma / noise.sigma) ** 2 if wp and noise.whole_plot_sigma is not None else 0.0
    points = design[list(factors)].drop_duplicates().reset_index(drop=True)
    now_groups = whole_plot_ids(design, wp)
    copy_groups = whole_plot_ids(points, wp) if wp else None
    now = factor_tests(design, factors, rhs, wp, now_groups, ratio)
    copy = factor_tests(points, factors, rhs, wp, copy_groups, ratio)
    doubled = pd.concat([points.assign(**{REPLICATE_COLUMN: r}) for r in (1, 2)], ignore_index=True)
    two = factor_tests(doubled, factors, rhs, wp, whole_plot_ids(doubled, wp), ratio)
    scale2 = (delta / noise.sigma) ** 2
    one_copy_s = times.design_s(points, factors) if times is not None else None
    rows = []
    for f in factors:
        s_now, s1, s2 = now[f], copy[f], two[f]
        step = s2.df2 - s1.df2  # error df added by each further copy of the design
        r_needed, r_power, r_df2 = None, math.nan, math.nan
        for r in range(1, max_replicates + 1):
            df2 = s1.df2 + (r - 1) * step
            r_power, r_df2 = power_of(r * s1.unit_lambda * scale2, s1.df1, df2, alpha), df2
            if r_power >= power:
                r_needed = r
                break
        lam_star = noncentrality_for(power, s_now.df1, s_now.df2, alpha)
        d = noise.sigma * math.sqrt(lam_star / s_now.unit_lambda) if s_now.unit_lambda > 0 else math.inf
        rows.append(FactorPower(
            factor=f, term=factor_term(f, design), stratum=WHOLE_PLOTS if f in wp else RUNS,
            df_num=s_now.df1, df_den=s_now.df2, noncentrality=s_now.unit_lambda * scale2,
            power=power_of(s_now.unit_lambda * scale2, s_now.df1, s_now.df2, alpha),
            detectable=d, detectable_pct=_pct(d, noise, scale), detectable_units=_units(d, noise, scale),
            replicates=r_needed, replicate_power=r_power, replicate_df_den=r_df2,
            cluster_s=r_needed * one_copy_s if r_needed is not None and one_copy_s is not None else None,
        ))
    needed = [r.replicates for r in rows]
    recommended = max(needed) if needed and all(n is not None for n in needed) else None  # type: ignore[type-var]
    notes = _notes(rows, max_replicates, s_now_df=min(now[f].df2 for f in factors), wp=bool(wp))
    notes += _noise_note(noise, scale)
    counts = design.groupby(list(factors)).size()
    info = DesignInfo(
        source=source, factors=tuple(factors), terms=rhs, points=len(points), runs=len(design),
        replicates_min=int(counts.min()), replicates_max=int(counts.max()),
        parameters=rank(model_matrix(rhs, code_factors(points, factors)).x), whole_plot_factors=tuple(wp),
        whole_plots=int(len(np.unique(now_groups))) if now_groups is not None else None,
        whole_plots_per_replicate=int(len(np.unique(copy_groups))) if copy_groups is not None else None,
    )
    return PowerPlan(
        response=response, scale=scale, effect=effect, delta=delta, alpha=alpha, target_power=power, noise=noise,
        design=info, factors=tuple(rows), recommended_replicates=recommended,
        recommended_cluster_s=recommended * one_copy_s if recommended is not None and one_copy_s is not None else None,
        time_column=times.column if times is not None else None, max_replicates=max_replicates, notes=tuple(notes),
    )


def _pct(d: float, noise: Noise, scale: str) -> float | None:
    if not math.isfinite(d):
        return None
    if scale == "log":
        return 100 * math.expm1(d)
    if not noise.in_units:
        return 100 * d
    return 100 * d / noise.mean if noise.mean else None


def _units(d: float, noise: Noise, scale: str) -> float | None:
    return d if scale == "linear" and noise.in_units and math.isfinite(d) else None


#: Below this many degrees of freedom a pilot's noise is itself too uncertain to plan on quietly.
FEW_NOISE_DF = 20


def _noise_note(noise: Noise, scale: str) -> list[str]:
    """The 80 % interval of a pilot's noise when it rests on few degrees of freedom."""
    if noise.df is None or noise.df >= FEW_NOISE_DF:
        return []
    lo = noise.sigma * math.sqrt(noise.df / stats.chi2.ppf(0.9, noise.df))
    hi = noise.sigma * math.sqrt(noise.df / stats.chi2.ppf(0.1, noise.df))
    what = (f"CV {100 * sigma_to_cv(lo, scale):.3g} % to {100 * sigma_to_cv(hi, scale):.3g} %" if scale == "log"
            else f"SD {lo:.4g} to {hi:.4g}")
    return [f"the noise rests on {noise.df:g} df: its 80 % interval is {what}, and the replicates needed scale with "
            "its square; replicate more design points in the pilot to pin it down"]


def _notes(rows: Sequence[FactorPower], limit: int, s_now_df: float, wp: bool) -> list[str]:
    out = []
    if s_now_df <= 0:
        out.append("the current design leaves no error degrees of freedom for some test: its power is undefined "
                   "until the design points are replicated")
    far = [r.factor for r in rows if r.replicates is None]
    if far:
        out.append(f"{', '.join(far)}: more than {limit} replicates of every design point would be needed for this "
                   "effect; a larger effect, less noise or a blocked design is needed")
    if wp:
        out.append("whole-plot factors are tested against the whole-plot error (whole plots minus the whole-plot "
                   "model's terms as df); exact for a balanced split-plot design, approximate otherwise")
    return out
