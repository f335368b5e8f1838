"""Scale-out: the time at a parallelism the training rows do not reach, how sure we can be, and the next run to make.

:func:`analyse` fits every scaling curve of :mod:`models.predict.scaling` (Amdahl, the USL, Ernest) to the
training rows and, at each target setting (a parallelism m* with the other factors' values), gives

- each curve's point prediction (none when it is not identified) and its interval for one new run;
- one interval over model form: the hull of the intervals of every curve that fits the training rows (a curve
  whose lack-of-fit test rejects it at p < 0.01 is left out, and said so: against the replicates' pure error, or,
  without replicates, against the residual noise of the best-fitting identified curve, which is then every
  curve's noise, :func:`models.predict.scaling.share_noise`). A curve that
  is not identified still bounds the time (the range of its family through the rows), so two levels of m give
  an honest, wide interval instead of a confident wrong number;
- with observed runs at the target (the extrapolation split), the share of them inside it, beside the level.

:func:`advise` answers "which run next": for each affordable candidate parallelism it adds ``runs`` hypothetical
runs there, as each of three scenarios would give them (the curves that make the target's interval's low end,
its high end, and their midpoint), and takes the mean over the scenarios of the width the interval at the target
is expected to have after them. Two things narrow it. Each curve's own range shrinks (the curves are refitted with
the runs added, the noise held at the value measured on the real rows). And a curve that disagrees with the
scenario may be ruled out by its lack-of-fit test: the test's power is the non-central F's tail, with the curve's
least squared distance from the scenario over all the runs, over the noise, as non-centrality (Atkinson and Fedorov's
T-criterion for discriminating rival models), and the width is the hull's expected width over the tests' outcomes.
A curve the real runs already rule out stays out. Scoring the tests by their power, not by the runs' noise-free
values, matters: a noise-free replicate deflates the pure error and a noise-free run at a new level dilutes the
test, which pushed the advice to repeat shapes it had already run. Candidates are ranked by that expected width;
the cost is the candidate's predicted time x its parallelism x runs (cluster-seconds, in units of the parallelism:
core-seconds when m counts cores, node-seconds when it counts nodes). Ernest (Venkataraman et al. 2016) chooses its
training runs by A-optimal design of a model assumed right; this chooses them to shrink the interval over model
form, which is what is uncertain when extrapolating.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from models.errors import InvalidTableError, TooFewRowsError
from models.predict.parallelism import COLUMN as PARALLELISM
from models.predict.scaling import CURVES, LACK_OF_FIT_P, Covariates, Curve, CurveFit, fit_curve, share_noise
from models.predict.work import Work

#: At most this many target settings are listed in the text (all are in the JSON).
MAX_LISTED = 8


@dataclass(frozen=True)
class CurveAtTarget:
    """One curve at one target setting."""

    curve: str
    identified: bool
    fits: bool
    point: float  # NaN when not identified
    low: float
    high: float


@dataclass(frozen=True)
class TargetPrediction:
    """The time at one target setting: each curve's, the interval over model form and the runs observed there."""

    parallelism: float
    config: dict[str, Any]
    curves: tuple[CurveAtTarget, ...]
    low: float
    high: float
    observed: tuple[float, ...] = ()
    #: The amount of work the prediction is at (None: no --work, every run's work is 1).
    work: float | None = None

    @property
    def covered(self) -> int:
        return sum(self.low <= v <= self.high for v in self.observed)

    def text(self) -> str:
        where = ", ".join(f"{k} {v}" for k, v in self.config.items())
        head = f"m = {self.parallelism:g}" + (f", s = {self.work:g}" if self.work is not None else "") + (
            f" ({where})" if where else "")
        parts = []
        for c in self.curves:
            point = f"{c.point:.4g}" if c.identified else "not identified"
            parts.append(f"{c.curve} {point} [{c.low:.4g}, {c.high:.4g}]{'' if c.fits else ' (left out)'}")
        seen = ""
        if self.observed:
            seen = (f"; observed mean {np.mean(self.observed):.4g} over {len(self.observed)} run(s), "
                    f"{self.covered} inside")
        return f"{head}: interval {self.low:.4g} to {self.high:.4g}{seen}\n      " + "; ".join(parts)


@dataclass(frozen=True)
class ScaleOut:
    """The scale-out analysis of one training table (see the module docstring)."""

    level: float
    parallelism: str
    levels: tuple[float, ...]
    fits: tuple[CurveFit, ...] = field(repr=False)
    targets: tuple[TargetPrediction, ...]
    #: The --work spec (column, and the amount predicted at), None without it.
    work: str | None = None

    @property
    def n_observed(self) -> int:
        return sum(len(t.observed) for t in self.targets)

    @property
    def coverage(self) -> float:
        n = self.n_observed
        return sum(t.covered for t in self.targets) / n if n else float("nan")

    @property
    def noise(self) -> tuple[float, int, str]:
        f = self.fits[0]
        return f.sigma, f.sigma_df, f.sigma_source

    def notes(self) -> list[str]:
        """One line per curve: its coefficients or why it is not identified, and whether it fits."""
        out = []
        for f in self.fits:
            line = f.describe()
            if f.weighed_out is not None and not _rejected(f):
                line += f"; {f.weighed_out}: left out of the interval"
            elif not f.fits:
                against = "the replicates" if f.sigma_source == "replicates" else "the best-fitting curve's noise"
                line += f"; lack of fit against {against} p = {f.lack_of_fit_p:.2g}: left out of the interval"
            elif f.aicc_weight is not None:
                line += f"; AICc weight {f.aicc_weight:.2g}"
            out.append(line)
        return out

    def text(self) -> list[str]:
        sigma, df, source = self.noise
        noise = (f"relative noise of a run {100 * sigma:.1f} % ({source}, {df} df)" if math.isfinite(sigma)
                 else "noise of a run unknown (no replicates): the intervals hold the curves' spread only")
        levels = ", ".join(f"{v:g}" for v in self.levels)
        work = f"; work {self.work}" if self.work else ""
        lines = [f"scale-out ({self.parallelism}{work}; trained on m = {levels}; {noise}; intervals at "
                 f"{100 * self.level:.0f} % for one new run, over model form):"]
        lines += [f"  {n}" for n in self.notes()]
        lines += [f"  {t.text()}" for t in self.targets[:MAX_LISTED]]
        if len(self.targets) > MAX_LISTED:
            lines.append(f"  ... {len(self.targets) - MAX_LISTED} more settings (--format json lists them)")
        if self.n_observed:
            lines.append(f"  coverage on the held-out runs: {100 * self.coverage:.0f} % of {self.n_observed} "
                         f"(nominal {100 * self.level:.0f} %)")
        return lines

    def to_dict(self) -> dict[str, Any]:
        sigma, df, source = self.noise
        return {
            "level": self.level, "parallelism": self.parallelism, "work": self.work, "levels": list(self.levels),
            "noise": {"relative_sd": sigma, "df": df, "source": source},
            "curves": [{"curve": f.curve.name, "identified": f.identified, "reason": f.reason, "fits": f.fits,
                        "lack_of_fit_p": f.lack_of_fit_p, "against_best_p": f.against_best,
                        "aicc": f.aicc, "aicc_weight": f.aicc_weight, "weighed_out": f.weighed_out,
                        "coefficients": dict(zip(f.curve.parameters, map(float, f.theta))) if f.identified else None,
                        "text": line} for f, line in zip(self.fits, self.notes())],
            "targets": [{"parallelism": t.parallelism, "work": t.work, "config": t.config, "low": t.low, "high": t.high,
                         "observed": list(t.observed), "covered": t.covered,
                         "curves": [c.__dict__ for c in t.curves]} for t in self.targets],
            "coverage": self.coverage, "n_observed": self.n_observed,
        }


def _rejected(f: CurveFit) -> bool:
    """True when a lack-of-fit test (against the replicates or the best curve) rules ``f`` out."""
    p = f.lack_of_fit_p
    return p is not None and p < LACK_OF_FIT_P


def _config_rows(table: pd.DataFrame, covariates: Sequence[str]) -> pd.DataFrame:
    return table[list(covariates)].drop_duplicates().reset_index(drop=True) if covariates else pd.DataFrame(index=[0])


def fit_curves(train: pd.DataFrame, target: str, covariates: Sequence[str], curves: Sequence[Curve],
               sigma: tuple[float, int, str] | None = None, work: Work | None = None) -> tuple[CurveFit, ...]:
    """Every curve fitted to ``train`` (its ``parallelism`` column, ``target``, the work and the covariate columns);
    without replicates (and no ``sigma`` given) every curve takes the best identified curve's noise
    (:func:`models.predict.scaling.share_noise`)."""
    cov = Covariates.learn(train, list(covariates))
    x = cov.matrix(train)
    m = train[PARALLELISM].to_numpy(dtype=float)
    y = train[target].to_numpy(dtype=float)
    s = None if work is None else work.values(train)
    fits = tuple(fit_curve(c, m, y, x, cov, sigma, s) for c in curves)
    return fits if sigma is not None else share_noise(fits)


def _at(fits: Sequence[CurveFit], m: float, config: pd.DataFrame, level: float,
        observed: Sequence[float] = (), s: float | None = None
        ) -> tuple[TargetPrediction, list[tuple[CurveFit, np.ndarray, float]]]:
    """The prediction at (m, config, work s), and the (fit, coefficients, member curve) that make the interval's two
    ends."""
    x = fits[0].covariates.matrix(config) if fits[0].covariates.columns else np.zeros((1, 0))
    rows, ends = [], []
    for f in fits:
        low, high, rng = f.run_interval(m, x, level, 1.0 if s is None else s)
        point = float(f.predict(np.array([m]), x, None if s is None else np.array([s]))[0])
        rows.append(CurveAtTarget(f.curve.name, f.identified, f.fits, point, low, high))
        ends.append((f, rng, low, high))
    usable = [e for e in ends if e[0].fits] or ends
    lo_end = min(usable, key=lambda e: e[2])
    hi_end = max(usable, key=lambda e: e[3])
    config_dict = {k: (v.item() if hasattr(v, "item") else v) for k, v in config.iloc[0].items()} \
        if len(config.columns) else {}
    prediction = TargetPrediction(float(m), config_dict, tuple(rows), lo_end[2], hi_end[3], tuple(map(float, observed)),
                                  s)
    extremes = [(lo_end[0], lo_end[1].theta_low, lo_end[1].curve_low), (hi_end[0], hi_end[1].theta_high,
                                                                         hi_end[1].curve_high)]
    return prediction, extremes


def scales(at: float | Sequence[float] | None) -> tuple[float, ...]:
    """``--at`` as a tuple of scales (one number or several)."""
    if at is None:
        return ()
    return (float(at),) if isinstance(at, (int, float)) else tuple(float(v) for v in at)


def analyse(train: pd.DataFrame, target: str, covariates: Sequence[str], at: float | Sequence[float] | None = None,
            test: pd.DataFrame | None = None, level: float = 0.9, parallelism: str = PARALLELISM,
            curves: Sequence[Curve] = tuple(CURVES.values()), work: Work | None = None) -> ScaleOut:
    """The scale-out analysis: at each parallelism of ``at`` for every setting of the other factors in ``train``
    (at the amount of work ``work.value``, else at each amount the runs had), or at every (parallelism, work,
    setting) of ``test`` with its runs as the observed values."""
    ats = scales(at)
    check_scales(train, ats, work)
    fits = fit_curves(train, target, covariates, curves, work=work)
    targets = []
    worked = [work.column] if work is not None else []
    if test is not None:
        keys = [PARALLELISM, *worked, *covariates]
        for _, group in test.groupby(keys, sort=True):
            config = group[list(covariates)].iloc[[0]].reset_index(drop=True) if covariates else pd.DataFrame(index=[0])
            s = float(work.values(group)[0]) if work is not None else None
            targets.append(_at(fits, float(group[PARALLELISM].iloc[0]), config, level, group[target].tolist(), s)[0])
    else:
        assert ats
        if work is not None and work.value is None:  # at each amount of work the runs had
            configs = _config_rows(train, [work.column, *covariates])
        else:
            configs = _config_rows(train, covariates)
        for m_star in ats:
            for i in range(len(configs)):
                config = configs.iloc[[i]].reset_index(drop=True)
                s = None if work is None else (work.value if work.value is not None
                                               else float(work.values(config)[0]))
                targets.append(_at(fits, m_star, config[list(covariates)] if covariates else pd.DataFrame(index=[0]),
                                   level, (), s)[0])
    levels = tuple(float(v) for v in np.unique(train[PARALLELISM]))
    return ScaleOut(level, parallelism, levels, fits, tuple(targets), None if work is None else work.spec)


def check_scales(train: pd.DataFrame, at: float | Sequence[float] | None, work: Work | None = None) -> None:
    """Two or more levels of parallelism, and targets that are distinct and above all of them (with the work to
    predict at, ``--work COLUMN=VALUE``: not below the smallest, since the work is the other way out of the data)."""
    levels = np.unique(train[PARALLELISM].to_numpy(dtype=float))
    if len(levels) < 2:
        raise TooFewRowsError(f"the training rows have one level of parallelism ({levels[0]:g}); scale-out needs "
                              "runs at two or more scales")
    ats = scales(at)
    if len(set(ats)) < len(ats):
        twice = next(v for v in ats if ats.count(v) > 1)
        raise InvalidTableError(f"--at names parallelism {twice:g} twice; give each scale once")
    for value in ats:
        if not math.isfinite(value):
            raise InvalidTableError(f"--at {value:g}: give finite parallelisms")
        if work is not None and work.value is not None:
            if value < levels.min():
                raise InvalidTableError(f"--at {value:g} is below the data (the runs start at parallelism "
                                        f"{levels.min():g}); give scales from {levels.min():g} up")
        elif not value > levels.max():
            raise InvalidTableError(f"--at {value:g}: the runs already reach parallelism {levels.max():g}; give a "
                                    "larger scale (scale-out predicts beyond the data), use --work COLUMN=VALUE to "
                                    "predict at another amount of work, or --split to test inside it")


# --- the next run ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NextRun:
    """The expected interval at the target after ``runs`` runs at ``parallelism``, and what they cost."""

    parallelism: float
    runs: int
    expected_low: float
    expected_high: float
    cost: float  # predicted time x parallelism x runs
    #: The amount of work the runs are made at (None without --work).
    work: float | None = None

    @property
    def width(self) -> float:
        return self.expected_high - self.expected_low


@dataclass(frozen=True)
class Advice:
    """The candidates ranked by the expected width of the interval at the target (narrowest first)."""

    at: float
    config: dict[str, Any]
    current: TargetPrediction
    candidates: tuple[NextRun, ...]

    def text(self) -> list[str]:
        where = ", ".join(f"{k} {v}" for k, v in self.config.items())
        now = self.current
        worked = any(c.work is not None for c in self.candidates)
        at_work = f", s = {now.work:g}" if now.work is not None else ""
        lines = [f"next run (target m = {self.at:g}{at_work}{', ' + where if where else ''}; interval now "
                 f"{now.low:.4g} to {now.high:.4g}, width {now.high - now.low:.4g}):",
                 f"  {'m':>6}{f' {chr(115):>8}' if worked else ''} {'runs':>4} {'expected interval':>23} "
                 f"{'width':>9} {'cost':>10}"]
        for i, c in enumerate(self.candidates):
            mark = "  <- run this" if i == 0 else ""
            s = f" {c.work:>8.4g}" if worked and c.work is not None else ""
            lines.append(f"  {c.parallelism:>6g}{s} {c.runs:>4} {c.expected_low:>11.4g} to {c.expected_high:<9.4g} "
                         f"{c.width:>9.4g} {c.cost:>10.4g}{mark}")
        lines.append("  cost: predicted time x m x runs (cluster-seconds in units of the parallelism)"
                     + ("; s: the amount of work of the runs" if worked else ""))
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at, "config": self.config, "current": {"low": self.current.low, "high": self.current.high},
                "candidates": [{**c.__dict__, "width": c.width} for c in self.candidates]}


def default_candidates(levels: Sequence[float], at: float, most: int = 6) -> list[float]:
    """The training levels, and whole numbers between the largest and the target (at most ``most`` of them,
    spread geometrically): shapes a user can afford, below the one they want to know about."""
    top = max(levels)
    between = [float(v) for v in range(int(math.floor(top)) + 1, int(math.ceil(at)))]
    if len(between) > most:
        picks = np.unique(np.round(np.geomspace(between[0], between[-1], most)))
        between = [float(v) for v in picks]
    return sorted(set(map(float, levels)) | set(between))


#: With --work, the amounts of work a candidate's runs may be made at (the runs' own, spread): at most this many.
MAX_WORK_LEVELS = 3


def work_levels(amounts: np.ndarray | None, most: int = MAX_WORK_LEVELS) -> list[float]:
    """The amounts of work the runs had, at most ``most`` of them: the smallest, the largest and between."""
    levels = sorted(set(map(float, amounts if amounts is not None else ())))
    if len(levels) > most:
        levels = [levels[i] for i in sorted(set(np.round(np.linspace(0, len(levels) - 1, most)).astype(int)))]
    return levels


def advise(train: pd.DataFrame, target: str, covariates: Sequence[str], at: float,
           candidates: Sequence[float] | None = None, runs: int = 2, level: float = 0.9,
           curves: Sequence[Curve] = tuple(CURVES.values()), work: Work | None = None) -> Advice:
    """Rank ``candidates`` (default :func:`default_candidates`) by the expected interval width at ``at`` (see the
    module docstring): the mean over three scenarios of the width expected over the lack-of-fit tests' outcomes.
    With ``work``, a candidate is a parallelism and an amount of work (the amounts the runs had, at most
    :data:`MAX_WORK_LEVELS` of them, spread from the smallest to the largest), and the target is at ``work.value``
    (else at the amount most runs had)."""
    check_scales(train, at, work)
    if runs < 1:
        raise InvalidTableError(f"runs per candidate must be at least 1, got {runs}")
    fits = fit_curves(train, target, covariates, curves, work=work)
    levels = sorted(set(train[PARALLELISM].astype(float)))
    candidates = default_candidates(levels, at) if candidates is None else sorted(set(map(float, candidates)))
    beyond = work is not None and work.value is not None  # the target is out of the data by its work
    bad = [c for c in candidates if not (math.isfinite(c) and 1 <= c and (beyond or c < at))]
    if bad:
        raise InvalidTableError(f"candidate scale {bad[0]:g} is not between 1 and the target {at:g}; give affordable "
                                "shapes below the target")
    keys = ([work.column] if work is not None else []) + list(covariates)
    if keys:  # the most frequent setting of the work and the other factors: the one most runs were made at
        counts = train.groupby(keys, sort=False).size().sort_values(ascending=False)
        top = counts.index[0] if len(keys) > 1 else (counts.index[0],)
        chosen = pd.DataFrame([dict(zip(keys, top))])
    else:
        chosen = pd.DataFrame(index=[0])
    config = chosen[list(covariates)] if covariates else pd.DataFrame(index=[0])
    s_c = None if work is None else float(work.values(chosen)[0])
    s_star = None if work is None else (work.value if work.value is not None else s_c)
    current, extremes = _at(fits, at, config, level, (), s_star)
    sigma = fits[0].sigma, fits[0].sigma_df, fits[0].sigma_source
    # the curves that can still make the interval: one the real runs rule out stays out (more runs only give its
    # lack-of-fit test more power); each of the others survives the next runs with the probability of its test
    in_play = [f for f in fits if f.fits] or list(fits)
    family = {c.name: c for c in curves}  # a family's fit carries its best member's curve
    base = train[[PARALLELISM, target, *keys]]
    m_real = base[PARALLELISM].to_numpy(dtype=float)
    x_real = fits[0].covariates.matrix(base) if covariates else np.zeros((len(base), 0))
    x_c = fits[0].covariates.matrix(config) if covariates else np.zeros((1, 0))
    s_real = None if work is None else work.values(base)
    out = []
    amounts = [s_c] if work is None else work_levels(s_real)
    for m_c, s_c in [(m, s) for m in candidates for s in amounts]:
        m_all = np.concatenate([m_real, np.full(runs, m_c)])
        x_all = np.vstack([x_real, np.repeat(x_c, runs, axis=0)])
        s_all = None if s_real is None else np.concatenate([s_real, np.full(runs, s_c)])
        lows, highs, centres = [], [], []
        for which in ("low", "high", "mid"):
            truth = _scenario(extremes, which, m_all, x_all, s_all)
            extra = pd.concat([chosen] * runs, ignore_index=True) if keys else pd.DataFrame(index=range(runs))
            extra[PARALLELISM] = m_c
            if work is not None:
                extra[work.column] = s_c
            extra[target] = truth[-runs:]
            grown = pd.concat([base, extra], ignore_index=True)
            after = {c.curve: c for c in _at(fit_curves(grown, target, covariates, curves, sigma, work), at, config,
                                             level, (), s_star)[0].curves}
            ends = [(after[f.curve.name].low, after[f.curve.name].high,
                     lof_power(family[f.curve.name], m_all, x_all, truth, f.covariates, sigma[0], s_all))
                    for f in in_play]
            low, high = expected_hull(ends)
            lows.append(low)
            highs.append(high)
            centres.append(float(truth[-1]))
        centre = float(np.mean(centres))
        out.append(NextRun(m_c, runs, float(np.mean(lows)), float(np.mean(highs)), centre * m_c * runs, s_c))
    out.sort(key=lambda c: (c.width, c.cost))
    return Advice(at, current.config, current, tuple(out))


def _scenario(extremes: Sequence[tuple[CurveFit, np.ndarray, Curve | None]], which: str, m: np.ndarray,
              x: np.ndarray, s: np.ndarray | None = None) -> np.ndarray:
    """The mean times at (m, x, s) if the truth were the curve that makes the interval's low end, its high end, or
    the midpoint of the two."""
    low, high = (f.expected(m, x, theta, curve, s) for f, theta, curve in extremes)
    return {"low": low, "high": high, "mid": 0.5 * (low + high)}[which]


def lof_power(curve: Curve, m: np.ndarray, x: np.ndarray, truth: np.ndarray, covariates: Covariates,
              sigma: float, s: np.ndarray | None = None) -> float:
    """The probability that the lack-of-fit test (p < LACK_OF_FIT_P) rejects ``curve`` on runs at (m, x) whose mean
    times are ``truth`` and whose relative noise is ``sigma``: the non-central F's tail beyond the critical value, with
    non-centrality the curve's least relative squared distance from the truth over the runs, over sigma^2 (Atkinson
    and Fedorov's T-criterion for discriminating between rival models). 0 when the design cannot test it."""
    if not (math.isfinite(sigma) and sigma > 0):
        return 0.0
    fit = fit_curve(curve, m, truth, x, covariates, (sigma, 1, "given"), s)
    lof = fit.lack_of_fit
    if lof is None or lof.df_lof <= 0 or lof.df_pe <= 0:
        return 0.0
    critical = stats.f.isf(LACK_OF_FIT_P, lof.df_lof, lof.df_pe)
    return float(stats.ncf.sf(critical, lof.df_lof, lof.df_pe, fit.rss / (sigma * fit.unit) ** 2))


def expected_hull(ends: Sequence[tuple[float, float, float]]) -> tuple[float, float]:
    """The expected low and high end of the hull of intervals (low, high), each left out with its probability
    (independently); when every one is left out the hull of all of them stands, as :func:`analyse` does."""
    all_low, all_high = min(e[0] for e in ends), max(e[1] for e in ends)
    low = high = 0.0
    for kept in itertools.product((True, False), repeat=len(ends)):
        weight = math.prod(1 - p if k else p for (_, _, p), k in zip(ends, kept))
        chosen = [e for e, k in zip(ends, kept) if k]
        low += weight * (min(e[0] for e in chosen) if chosen else all_low)
        high += weight * (max(e[1] for e in chosen) if chosen else all_high)
    return low, high
