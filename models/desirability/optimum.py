"""The best compromise: overall desirability maximized over the fitted surfaces, inside the region.

Each response gets its own full quadratic (:func:`models.rsm.fit_surface`); the search runs over
the settings the design covers (:class:`models.rsm.Region`), not over the observed runs (seed
003's report picked an observed run and called it the optimum). Factors whose tested levels are
all integers (batch size, epochs) are rounded at the end, the others kept to 4 significant digits,
and every figure is re-evaluated there.
At the recommendation each response gets its prediction with a confidence interval and a
prediction interval for the mean of the confirmation jobs, its desirability, and its sacrifice:
how much worse it is than the best that response reaches alone in the region (0 = no sacrifice).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.desirability.functions import Goal, overall
from models.errors import DesirabilityError
from models.rsm.canonical import optimum
from models.rsm.fit import PredictionInterval, SurfaceFit, fit_surface
from models.rsm.search import maximize_in_region
from models.summary import Summary
from sparkdl.numbers import json_safe

DEFAULT_CONFIRMATION_JOBS = 3
SIGNIFICANT = 4  # digits kept of a continuous factor's recommended value


@dataclass(frozen=True)
class ResponseAtOptimum:
    """One response at the recommended setting, against its own best."""

    goal: Goal
    interval: PredictionInterval
    desirability: float
    best_alone: float
    best_alone_at: tuple[float, ...]
    best_observed: float
    sacrifice: float
    r2: float
    lack_of_fit_p: float | None

    @property
    def predicted(self) -> float:
        return self.interval.predicted


@dataclass(frozen=True)
class ObservedRun:
    row: int
    settings: tuple[float, ...]
    desirability: float


@dataclass(frozen=True, eq=False)
class Compromise:
    """The recommended setting, its overall desirability, and every response there."""

    factors: tuple[str, ...]
    natural: tuple[float, ...]
    coded: tuple[float, ...]
    D: float
    inside: bool
    responses: tuple[ResponseAtOptimum, ...]
    fits: tuple[SurfaceFit, ...]
    best_observed_runs: tuple[ObservedRun, ...]
    rounded: tuple[str, ...]

    def setting(self) -> dict[str, float]:
        return dict(zip(self.factors, self.natural))

    def to_dict(self) -> dict:
        return json_safe({
            "factors": list(self.factors),
            "recommended": self.setting(),
            "overall_desirability": self.D,
            "inside_region": self.inside,
            "rounded_to_integers": list(self.rounded),
            "responses": [{
                "response": r.goal.response, "goal": r.goal.goal, "low": r.goal.low, "high": r.goal.high,
                "target": r.goal.target, "weight": r.goal.weight, "weight_high": r.goal.weight_high,
                "importance": r.goal.importance, "predicted": r.predicted,
                "confidence_interval": list(r.interval.confidence),
                "prediction_interval": list(r.interval.prediction), "confirmation_jobs": r.interval.new_jobs,
                "interval_level": r.interval.level, "desirability": r.desirability,
                "best_alone": r.best_alone, "best_alone_at": dict(zip(self.factors, r.best_alone_at)),
                "best_observed": r.best_observed, "sacrifice": r.sacrifice, "r2": r.r2,
                "lack_of_fit_p": r.lack_of_fit_p, "warning": f.warning(),
            } for r, f in zip(self.responses, self.fits)],
            "best_observed_runs": [{"row": o.row, "settings": dict(zip(self.factors, o.settings)),
                                    "overall_desirability": o.desirability} for o in self.best_observed_runs],
        })

    #: The CSV's columns: one row per response at the recommended setting.
    COLUMNS = ("response", "goal", "predicted", "prediction_low", "prediction_high", "confirmation_jobs",
               "desirability", "best_alone", "sacrifice", "best_observed", "r2")

    def summary(self) -> Summary:
        """The text (:meth:`text`), the responses at the recommendation as the CSV, :meth:`to_dict` as the JSON."""
        rows = tuple((r.goal.response, r.goal.goal, r.predicted, *r.interval.prediction, r.interval.new_jobs,
                      r.desirability, r.best_alone, r.sacrifice, r.best_observed, r.r2) for r in self.responses)
        return Summary(tuple(self.text()), self.COLUMNS, rows, self.to_dict())

    def text(self) -> list[str]:
        at = ", ".join(f"{f} = {v:g}" for f, v in zip(self.factors, self.natural))
        lines = [f"recommended (searched over the fitted surfaces in the region): {at}",
                 f"overall desirability D = {self.D:.4f}" + ("" if self.inside else " (outside the region after rounding)")]
        if self.rounded:
            lines.append(f"rounded to integers: {', '.join(self.rounded)}")
        lines.append("")
        lines.append(f"{'response':<16} {'goal':<7} {'predicted':>10} {'95% PI (mean of n)':>24} {'d':>6} "
                     f"{'best alone':>11} {'sacrifice':>10} {'best obs.':>10} {'R^2':>6}")
        for r in self.responses:
            pi = f"[{r.interval.prediction[0]:.4g}, {r.interval.prediction[1]:.4g}] n={r.interval.new_jobs}"
            lines.append(f"{r.goal.response:<16} {r.goal.goal:<7} {r.predicted:>10.4g} {pi:>24} "
                         f"{r.desirability:>6.3f} {r.best_alone:>11.4g} {r.sacrifice:>10.4g} {r.best_observed:>10.4g} "
                         f"{r.r2:>6.3f}")
        lines += [f"caution ({f.response}): {f.warning()}" for f in self.fits if f.warning()]
        if self.best_observed_runs:
            o = self.best_observed_runs[0]
            lines += ["", f"for comparison, the best observed run (row {o.row}) has D = {o.desirability:.4f} "
                          "(from its measured values)"]
        return lines


def _unreachable(goals: list[Goal], alone: list[tuple[float, np.ndarray]]) -> str:
    """Why D is 0 everywhere in the region: which limits no fitted setting reaches (or, none alone: together)."""
    words = {"max": lambda g, b: f"{g.response} reaches at most {b:.4g} (it must exceed {g.low:g})",
             "min": lambda g, b: f"{g.response} gets no lower than {b:.4g} (it must be below {g.high:g})",
             "target": lambda g, b: f"{g.response} comes no closer to {g.target:g} than {b:.4g}"}
    out = [words[g.goal](g, best) for g, (best, _) in zip(goals, alone) if float(g(np.array([best]))[0]) == 0.0]
    why = "; ".join(out) if out else "each limit is reachable alone, but not all at one setting"
    return (f"no setting in the region makes every response acceptable: {why}; relax the limits (or run a design "
            "over a wider region)")


def _sacrifice(goal: Goal, value: float, best: float) -> float:
    if goal.goal == "max":
        return max(best - value, 0.0)
    if goal.goal == "min":
        return max(value - best, 0.0)
    t = float(goal.target)  # type: ignore[arg-type]
    return max(abs(value - t) - abs(best - t), 0.0)


def _best_alone(fit: SurfaceFit, goal: Goal, seed: int) -> tuple[float, np.ndarray]:
    if goal.goal == "target":
        found = maximize_in_region(lambda x: -np.abs(fit.predict_coded(x) - float(goal.target)), fit.region, seed)
        return float(fit.predict_coded(found.x)[0]), found.x
    o = optimum(fit, goal.goal, seed)
    return o.predicted, np.array(o.coded)


def _best_observed(y: np.ndarray, goal: Goal) -> float:
    if goal.goal == "max":
        return float(np.nanmax(y))
    if goal.goal == "min":
        return float(np.nanmin(y))
    t = float(goal.target)  # type: ignore[arg-type]
    return float(y[np.nanargmin(np.abs(y - t))])


def compromise(frame: pd.DataFrame, goals: list[Goal], factors: tuple[str, ...], seed: int = 0,
               new_jobs: int = DEFAULT_CONFIRMATION_JOBS, level: float = 0.95,
               steps: Mapping[str, int] | None = None) -> Compromise:
    """Fit every goal's response, maximize D over the region, and describe the recommendation.

    ``steps``: an integer factor's recommended value is rounded to a multiple of its step (e.g. a
    batch size to a multiple of the job's cores, see :func:`models.desirability.confirm.steps_of`).
    """
    if not goals:
        raise DesirabilityError("no goals: give at least one --response NAME:GOAL")
    names = [g.response for g in goals]
    if len(set(names)) < len(names):
        raise DesirabilityError(f"a response has two goals: {', '.join(names)}")
    if new_jobs < 1:
        raise DesirabilityError(f"--confirmation-jobs must be >= 1, got {new_jobs}")
    complete = frame.dropna(subset=[n for n in names if n in frame.columns]).reset_index(drop=True)
    fits = tuple(fit_surface(complete, g.response, factors, g.transform) for g in goals)
    region = fits[0].region
    importances = [g.importance for g in goals]

    def D(x: np.ndarray) -> np.ndarray:
        return overall([g(f.predict_coded(x)) for g, f in zip(goals, fits)], importances)

    alone = [_best_alone(f, g, seed) for f, g in zip(fits, goals)]
    found = maximize_in_region(D, region, seed, extra=np.array([a[1] for a in alone]))
    if found.value <= 0:
        raise DesirabilityError(_unreachable(goals, alone))
    natural = fits[0].coding.to_natural(found.x)
    rounded = []
    for j, f in enumerate(factors):
        levels = complete[f].to_numpy(dtype=float)
        if np.all(np.isclose(levels, np.round(levels))):
            step = int((steps or {}).get(f, 1))
            value = max(step, int(np.floor(natural[j] / step + 0.5)) * step)
            if not np.isclose(natural[j], value):
                rounded.append(f"{f} {natural[j]:.4g} -> {value:d}" + (f" (a multiple of {step})" if step > 1 else ""))
            natural[j] = value
        else:
            natural[j] = float(f"{natural[j]:.{SIGNIFICANT}g}")  # a setting one can type; D is re-evaluated
    coded = fits[0].coding.to_coded(natural)
    d_all = float(D(np.atleast_2d(coded))[0])
    responses = []
    for g, f, (best, best_x) in zip(goals, fits, alone):
        pi = f.interval(natural, new_jobs=new_jobs, level=level)
        responses.append(ResponseAtOptimum(
            g, pi, float(g(np.array([pi.predicted]))[0]), best, tuple(map(float, f.coding.to_natural(best_x))),
            _best_observed(complete[g.response].to_numpy(dtype=float), g), _sacrifice(g, pi.predicted, best),
            f.r2, f.lack_of_fit.p))
    observed_d = overall([g(complete[g.response].to_numpy(dtype=float)) for g in goals], importances)
    order = np.argsort(-observed_d, kind="stable")[:3]
    runs = tuple(ObservedRun(int(i), tuple(float(v) for v in complete.loc[int(i), list(factors)]), float(observed_d[i]))
                 for i in order)
    return Compromise(tuple(factors), tuple(float(v) for v in natural), tuple(float(v) for v in coded), d_all,
                      bool(region.contains(coded)[0]), tuple(responses), fits, runs, tuple(rounded))
