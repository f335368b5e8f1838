"""A first scaling design: the (machines, data fraction) runs an A-optimal design for Ernest's model chooses.

Ernest (Venkataraman et al. 2016) runs a job on small fractions of its data at small cluster shapes and predicts
the full data at the large one. Its training runs come from a convex problem: over the candidate runs (every
machine count from ``machines`` and ``fractions`` fractions evenly spaced between the smallest and largest, keeping
those with at least one partition per core), weights lambda in [0, 1] that minimise trace(M(lambda)^-1), M the
weighted sum of the outer products of each run's features (1, s/m, m, log m), each feature divided by its mean
over the candidates, under a budget: sum lambda (s / s_min) / m <= budget (the run's time if time ~ s/m, in units
of the smallest fraction's on one machine). Runs with a weight above :data:`MIN_WEIGHT` are chosen, heaviest
first. This is Ernest's expt_design.py; cvxpy solves it (its default solver for the semidefinite form).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from models.errors import PlanError

#: A candidate run is chosen when its weight is above this (Ernest's MIN_WEIGHT_FOR_SELECTION).
MIN_WEIGHT = 0.3


@dataclass(frozen=True)
class ScalingRun:
    machines: int
    cores: int
    fraction: float
    partitions: int
    weight: float


def features(fraction: np.ndarray, machines: np.ndarray) -> np.ndarray:
    """Ernest's features of a run, in its predictor's order: 1, s/m, m, log m."""
    s, m = np.asarray(fraction, dtype=float), np.asarray(machines, dtype=float)
    return np.column_stack([np.ones_like(m), s / m, m, np.log(m)])


def candidates(min_parts: int, max_parts: int, total_parts: int, min_machines: int, max_machines: int,
               cores_per_machine: int, fractions: int = 20) -> list[tuple[float, int]]:
    """(fraction, machines) of every candidate run, Ernest's way (data in partitions): at least one partition per
    core."""
    if not (0 < min_parts <= max_parts <= total_parts):
        raise PlanError("the scaling design needs 0 < min partitions <= max partitions <= total partitions")
    return fraction_candidates(min_parts / total_parts, max_parts / total_parts, min_machines, max_machines,
                               cores_per_machine, fractions, total_parts)


def fraction_candidates(min_fraction: float, max_fraction: float, min_machines: int, max_machines: int,
                        cores_per_machine: int, fractions: int = 20,
                        total_parts: int | None = None) -> list[tuple[float, int]]:
    """(fraction, machines) of every candidate run: ``fractions`` fractions evenly spaced from the smallest to the
    largest, at every machine count; with ``total_parts`` (the full data's partitions) only those with at least one
    partition per core."""
    if not (0 < min_fraction <= max_fraction <= 1 and 1 <= min_machines <= max_machines and cores_per_machine >= 1
            and fractions >= 2):
        raise PlanError("the scaling design needs fractions 0 < min <= max <= 1, 1 <= min machines <= max machines, "
                        "cores per machine >= 1 and 2 or more fractions")
    out = []
    for s in np.linspace(min_fraction, max_fraction, fractions):
        for m in range(min_machines, max_machines + 1):
            if total_parts is None or np.round(s * total_parts) >= cores_per_machine * m:
                out.append((float(s), m))
    if not out:
        raise PlanError("no candidate run has a partition per core: raise the partitions or lower the machines")
    return out


def costs(points: list[tuple[float, int]], min_fraction: float) -> np.ndarray:
    return np.array([(s / min_fraction) / m for s, m in points])


def design(min_parts: int, max_parts: int, total_parts: int, min_machines: int, max_machines: int,
           cores_per_machine: int, budget: float = 20.0, fractions: int = 20) -> tuple[list[ScalingRun], np.ndarray]:
    """The chosen runs (heaviest first) and every candidate's weight; PlanError for a budget below the cheapest run.
    Ernest's expt_design.py's inputs (the data in partitions)."""
    points = candidates(min_parts, max_parts, total_parts, min_machines, max_machines, cores_per_machine, fractions)
    return solve(points, cores_per_machine, budget, total_parts)


def solve(points: list[tuple[float, int]], cores_per_machine: int, budget: float,
          total_parts: int | None = None) -> tuple[list[ScalingRun], np.ndarray]:
    """The A-optimal weights of the candidate ``points`` (fraction, machines) under ``budget`` (in units of the
    smallest fraction's time on one machine): the chosen runs (weight above :data:`MIN_WEIGHT`, heaviest first) and
    every candidate's weight. ``partitions`` of a run: its share of ``total_parts`` (0 without)."""
    import cvxpy as cp

    cost = costs(points, min(p[0] for p in points))
    if not (np.isfinite(budget) and budget >= cost.min()):
        raise PlanError(f"--budget {budget:g} is below the cheapest run ({cost.min():.3g}, in units of the smallest "
                        "fraction's time on one machine); give at least that")
    x = features(np.array([p[0] for p in points]), np.array([p[1] for p in points]))
    x = x / x.mean(axis=0)
    lam = cp.Variable(len(points))
    info = sum(lam[i] * np.outer(x[i], x[i]) for i in range(len(points)))
    problem = cp.Problem(cp.Minimize(cp.matrix_frac(np.eye(x.shape[1]), info)),
                         [lam >= 0, lam <= 1, cost @ lam <= budget])
    try:
        with warnings.catch_warnings():  # an inaccurate solution is taken (its status says so), not printed
            warnings.simplefilter("ignore", UserWarning)
            problem.solve()
    except cp.error.SolverError as exc:
        raise PlanError(f"the design problem was not solved ({exc}); raise the budget or widen the ranges") from None
    if problem.status not in ("optimal", "optimal_inaccurate") or lam.value is None:
        raise PlanError(f"the design problem was not solved ({problem.status}); raise the budget or widen the ranges")
    weights = np.clip(np.asarray(lam.value, dtype=float), 0.0, 1.0)
    chosen = sorted((i for i in range(len(points)) if weights[i] > MIN_WEIGHT), key=lambda i: -weights[i])
    runs = [ScalingRun(points[i][1], points[i][1] * cores_per_machine, points[i][0],
                       int(np.ceil(points[i][0] * total_parts)) if total_parts else 0, float(weights[i]))
            for i in chosen]
    return runs, weights


def relative_error(runs: list[ScalingRun], machines: float, fraction: float = 1.0) -> tuple[float, float]:
    """How precisely Ernest's predictor, fitted to one run of each of ``runs``, predicts the time at ``machines`` on
    ``fraction`` of the data, in units of the runs' noise (their coefficient of variation): (the standard error of
    the predicted time, that of a new run there), each over the time predicted.

    The times are taken to be proportional to s / m (the budget's cost model) with a noise whose SD is a fixed share
    of the time; the predictor is Ernest's least squares on the times (features 1, s/m, m, log m), so the error is
    the sandwich form x*' (X'X)^-1 X' diag(t^2) X (X'X)^-1 x*. inf when the runs cannot determine the four
    coefficients (fewer than four runs, or too few machine counts)."""
    s = np.array([r.fraction for r in runs], dtype=float)
    m = np.array([r.machines for r in runs], dtype=float)
    x = features(s, m)
    if len(runs) < x.shape[1] or np.linalg.matrix_rank(x) < x.shape[1]:
        return math.inf, math.inf
    t = s / m
    star = features(np.array([fraction]), np.array([float(machines)]))[0]
    t_star = fraction / machines
    bread = np.linalg.inv(x.T @ x)
    cov = bread @ (x.T * t**2) @ x @ bread
    mean = math.sqrt(max(float(star @ cov @ star), 0.0)) / t_star
    return mean, math.sqrt(mean**2 + 1.0)


@dataclass(frozen=True)
class ScalingTarget:
    """The precision at ``machines`` on ``fraction`` of the data: the standard error of the predicted time and of a
    new run there, each over the time (in units of the runs' CV), and with a CV the interval's half-width (a share
    of the time: the prediction interval of a new run, t with the residual degrees of freedom)."""

    machines: float
    cores: float
    fraction: float
    se_mean: float
    se_run: float
    half_width: float | None

    def to_dict(self) -> dict[str, object]:
        return {"machines": self.machines, "cores": self.cores, "fraction": self.fraction, "se_mean": self.se_mean,
                "se_run": self.se_run, "half_width": self.half_width}


@dataclass(frozen=True)
class ScalingPlan:
    """A first scaling design (:func:`plan_scaling`): the runs chosen, in run order (machines, then fraction), what
    they cost, and how precisely they predict the targets."""

    machines: tuple[int, int]
    cores_per_machine: int
    fractions: tuple[float, float]
    partitions: int | None
    budget_s: float
    base_time_s: float
    candidates: int
    runs: tuple[ScalingRun, ...]
    costs_s: tuple[float, ...]
    targets: tuple[ScalingTarget, ...]
    cv: float | None
    level: float

    @property
    def cost_s(self) -> float:
        return float(sum(self.costs_s))

    @property
    def df(self) -> int:
        """The residual degrees of freedom of Ernest's fit to the runs (four coefficients)."""
        return len(self.runs) - 4

    def to_dict(self) -> dict[str, object]:
        return {"machines": list(self.machines), "cores_per_machine": self.cores_per_machine,
                "fractions": list(self.fractions), "partitions": self.partitions, "budget_s": self.budget_s,
                "base_time_s": self.base_time_s, "budget_units": self.budget_s / self.base_time_s,
                "candidates": self.candidates, "cost_s": self.cost_s, "cv": self.cv, "level": self.level,
                "df": self.df,
                "runs": [{"machines": r.machines, "cores": r.cores, "fraction": r.fraction, "partitions": r.partitions
                          or None, "weight": r.weight, "cost_s": c} for r, c in zip(self.runs, self.costs_s)],
                "targets": [t.to_dict() for t in self.targets]}


def plan_scaling(machines: tuple[int, int], cores_per_machine: int, fractions: tuple[float, float], budget_s: float,
                 base_time_s: float = 1.0, partitions: int | None = None, at: tuple[float, ...] | None = None,
                 cv: float | None = None, level: float = 0.9, steps: int = 20) -> ScalingPlan:
    """The A-optimal runs for Ernest's model (:func:`solve`) under a cluster-time budget: ``budget_s`` over
    ``base_time_s`` (the time of one run on the smallest fraction on one machine; 1 s: the budget is in Ernest's
    units), each run costing base_time_s x (s / s_min) / m. The targets (``at``, default the largest machines) are on
    the full data."""
    from scipy import stats

    if not (math.isfinite(base_time_s) and base_time_s > 0):
        raise PlanError(f"--base-time {base_time_s:g}: give the time of one run on the smallest fraction, above 0")
    if machines[1] - machines[0] < 2:
        raise PlanError(f"--machines {machines[0]}..{machines[1]}: Ernest's model (1, s/m, m, log m) needs three or "
                        f"more machine counts, e.g. --machines {machines[0]}..{machines[0] + 2}")
    points = fraction_candidates(fractions[0], fractions[1], machines[0], machines[1], cores_per_machine, steps,
                                 partitions)
    runs, _ = solve(points, cores_per_machine, budget_s / base_time_s, partitions)
    runs = sorted(runs, key=lambda r: (r.machines, r.fraction))
    if not math.isfinite(relative_error(runs, float(machines[1]))[0]):
        raise PlanError(f"--budget {budget_s:g} s buys {len(runs)} runs at {len({r.machines for r in runs})} machine "
                        "count(s), too few for Ernest's four coefficients: raise it (or lower --base-time)")
    s_min = min(p[0] for p in points)
    spent = tuple(base_time_s * (r.fraction / s_min) / r.machines for r in runs)
    df = len(runs) - 4
    quantile = float(stats.t.ppf(0.5 + level / 2, df)) if df > 0 else math.inf
    targets = []
    for m in at or (float(machines[1]),):
        mean, run = relative_error(runs, m)
        half = None if cv is None else quantile * cv * run
        targets.append(ScalingTarget(float(m), float(m) * cores_per_machine, 1.0, mean, run, half))
    return ScalingPlan(machines, cores_per_machine, fractions, partitions, budget_s, base_time_s, len(points),
                       tuple(runs), spent, tuple(targets), cv, level)


#: The design columns a scaling design writes itself (a --fixed column may not be one of them).
DESIGN_COLUMNS = ("run", "replicate", "nodes", "executors", "executor_cores")


def design_rows(plan: ScalingPlan, work: str = "input_fraction", total: float | None = None,
                fixed: dict[str, str] | None = None) -> list[dict[str, object]]:
    """The rows of the design CSV ``sparkdl submit`` runs: one run per chosen point, in run order; a machine is a
    node with one executor of ``cores_per_machine`` cores; the ``work`` column holds the fraction (times ``total``,
    rounded to a whole number when ``total`` is whole: ``--work train_samples_value=4000``)."""
    rows = []
    for i, r in enumerate(plan.runs, start=1):
        amount: object = round(r.fraction, 6)
        if total is not None:
            amount = r.fraction * total
            amount = max(1, math.ceil(amount - 1e-9)) if float(total).is_integer() else round(amount, 6)
        rows.append({"run": i, "replicate": 1, "nodes": r.machines, "executors": 1,
                     "executor_cores": plan.cores_per_machine, work: amount, **(fixed or {})})
    return rows
