"""Strategies compared on a recorded surface, each over many seeds: the runs, the scoring, the table.

Each arm runs through the code a real search runs (:class:`MultiObjectiveSearch`, or the learning-rate
rule's :func:`optimize.lr.run_search` over a :class:`JobObjective`) against :class:`ReplayCluster`, in a
campaign folder of its own, its study in memory (a bench arm is not resumed). One run per arm and seed,
to the largest budget; the figures at a smaller budget are those of the runs that had ended by then
(cumulative cluster time, the runs' ``elapsed_s`` in the order they ran): an anytime curve.

Scoring, the same for every arm: the configurations an arm measured are every validated epoch of its ok
and pruned runs (:mod:`optimize.harvest`: a run of E epochs measures epochs 1..E); each is scored at its
true value, the mean over every recorded run of the surface that measured it (so a lucky replicate does
not lift an arm above the grid). The hypervolume fraction is the hypervolume of the front of those true
values over the hypervolume of the true front of every configuration of the surface, both against one
reference point (the worst true values moved out by 10 % of their range). It is at most 1.
"""

from __future__ import annotations

import math
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Generator, Sequence

import numpy as np
import pandas as pd

from harness.command import SubmitOptions
from sparkdl.cost import time_per_squared_accuracy
from sparkdl.runspec import RunSpec
from optimize.dominance import ObjectiveSpec, default_reference, hypervolume, non_dominated, parse_objectives
from optimize.errors import JobFailedError, SearchOptionError
from optimize.harvest import harvest
from optimize.lr import Evaluator, LRPoint, Measure, run_search
from optimize.objective import JobObjective
from optimize.pareto import read_campaign
from optimize.search.pruning import StudyPrunerRule, make_rules
from optimize.search.replay import Point, ReplayCluster, ReplayError, Surface
from optimize.search.space import SearchSpace, at_largest
from optimize.search.study import DEFAULT_STARTUP_TRIALS, MultiObjectiveSearch, SearchConfig, open_study
from optimize.session import ClusterOptions, JobConfig, open_session

BUDGETS = (0.1, 0.25, 0.5, 1.0)
GOAL = 0.95
TWO_OBJECTIVES = "wall_clock_s:min,accuracy:max"
KINDS = ("search", "grid", "paper")
OPTUNA_PRUNERS = ("hyperband", "halving")


@dataclass(frozen=True)
class Arm:
    """One strategy: a sampler with our pruning rule or Optuna's, per epoch or not; or the grid; or the paper's rule."""

    name: str
    kind: str = "search"
    sampler: str = "tpe"
    pruner: str = "front"  # our rule: none, median, halving, front
    optuna_pruner: str | None = None  # hyperband or halving: Optuna's, on the cost of each epoch (one objective)
    per_epoch: bool = True  # trials at the largest epochs, the lower ones harvested
    startup_trials: int = DEFAULT_STARTUP_TRIALS
    start: str = "lhs"
    min_runs: int = 3
    population: int = 8
    repeat: bool = True  # as Optuna's samplers do; False: factors already run are told their result, no job (ours)
    description: str = ""


def default_arms(startup_trials: int = DEFAULT_STARTUP_TRIALS, min_runs: int = 3, start: str = "lhs",
                 repeat: bool = False, pruner: str = "front") -> list[Arm]:
    """The arms of the comparison; ``startup_trials``, ``min_runs``, ``start`` and ``repeat`` are the default
    search's (and its unpruned twin's), ``pruner`` the rule of every arm that prunes with ours."""
    ours = dict(startup_trials=startup_trials, min_runs=min_runs, start=start, repeat=repeat)
    return [
        Arm("default", pruner=pruner, **ours,
            description=f"TPE, per-epoch harvest, {pruner} pruning (optimize.search's defaults"
                        + (")" if pruner == "front" else f", but --pruner {pruner})")),
        Arm("no-pruning", pruner="none", description="the same without pruning", **ours),
        Arm("random-pruned", sampler="random", pruner=pruner, min_runs=min_runs,
            description=f"random search, {pruner} pruning"),
        Arm("random", sampler="random", pruner="none", description="random search, no pruning"),
        Arm("nsga2", sampler="nsga2", pruner=pruner, min_runs=min_runs,
            description=f"NSGA-II (population 8), {pruner} pruning"),
        Arm("hyperband", pruner="none", optuna_pruner="hyperband", startup_trials=startup_trials, start=start,
            description="TPE on the cost T/A^2, Optuna's Hyperband pruner (eta 3)"),
        Arm("halving", sampler="random", pruner="none", optuna_pruner="halving",
            description="random on the cost T/A^2, Optuna's successive halving pruner (eta 3)"),
        Arm("paper", kind="paper", description="Marinos 2021's learning-rate rule on the grid's rates (every other "
                                               "factor, epochs or rounds too, at its lowest level)"),
        Arm("grid", kind="grid", per_epoch=False, pruner="none",
            description="every point of the grid once, in the grid's order, no pruning"),
    ]


@dataclass(frozen=True)
class ArmRun:
    """One arm on one seed: each run in the order it ran, its cumulative cluster time and the configurations it
    measured."""

    arm: str
    seed: int
    ended_s: tuple[float, ...]  # cumulative cluster time at the end of each run
    measured: tuple[frozenset[Point], ...]  # the configurations each run measured
    pruned: tuple[bool, ...]
    stop: str = ""

    def within(self, budget_s: float) -> int:
        """How many runs had ended within ``budget_s`` of cluster time."""
        return int(np.searchsorted(np.asarray(self.ended_s), budget_s + 1e-9, side="right"))

    def configurations(self, runs: int) -> set[Point]:
        out: set[Point] = set()
        for m in self.measured[:runs]:
            out |= m
        return out


@dataclass
class Truth:
    """The surface's true values: each configuration's mean (wall clock, accuracy), the reference and the true front."""

    values: dict[Point, tuple[float, float]]
    reference: np.ndarray
    volume: float
    grid_time_s: float

    @classmethod
    def of(cls, surface: Surface) -> "Truth":
        means = surface.mean_points()
        factors = [c for c in means.columns if c not in ("wall_clock_s", "accuracy", "n")]
        values = {surface.point_of(row): (float(row["wall_clock_s"]), float(row["accuracy"]))
                  for row in means[factors + ["wall_clock_s", "accuracy"]].to_dict("records")}
        matrix = _minimised(values.values())
        reference = default_reference(matrix)
        volume = hypervolume(matrix[non_dominated(matrix)], reference)
        return cls(values, reference, volume, surface.grid_time_s())

    def fraction(self, measured: set[Point]) -> float:
        known = [self.values[p] for p in measured if p in self.values]
        if not known:
            return 0.0
        matrix = _minimised(known)
        return hypervolume(matrix[non_dominated(matrix)], self.reference) / self.volume


def _minimised(values) -> np.ndarray:
    return np.array([[w, -a] for w, a in values], dtype=float)


def surface_job(surface: Surface) -> JobConfig:
    """The surface's job with the factors it does not vary at their recorded levels."""
    return surface.job_config()


def search_config(arm: Arm, surface: Surface, seed: int) -> SearchConfig:
    """The arm's search on the surface's grid; per epoch: at the largest level of the surface's fidelity."""
    space, job = surface.space(), surface_job(surface)
    if arm.per_epoch:
        space, level = at_largest(space, surface.fidelity, job.get(surface.fidelity))
        job = replace(job, **{surface.fidelity: level})
    objectives: tuple[ObjectiveSpec, ...] = ((ObjectiveSpec("cost", "min"),) if arm.optuna_pruner
                                             else parse_objectives(TWO_OBJECTIVES))
    sampler = "grid" if arm.kind == "grid" else arm.sampler
    return SearchConfig(space, job, objectives, sampler, seed, arm.startup_trials, arm.population, start=arm.start,
                        repeat=arm.repeat, fidelity=surface.fidelity)


def shapes(job: JobConfig, space: SearchSpace) -> list[RunSpec]:
    """The job's shape with a level of every factor of the space, so that the campaign's manifest names each
    factor its runs have (as optimize.search does for a job that is not LeNet-style)."""
    return [job.spec(1, 1, **{f.name: f.at(0.0) for f in space.factors})]


def replay_options(cluster: ReplayCluster, job: JobConfig) -> SubmitOptions:
    """The options of a replayed campaign: its master, and the job each run is (a job file's too, as ``--job``)."""
    return SubmitOptions(cluster.master_url, jobs=job.choice())


def optuna_pruner(name: str | None, max_epochs: int):
    import optuna

    if name is None:
        return None
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1, max_resource=max_epochs, reduction_factor=3)
    if name == "halving":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
    raise SearchOptionError(f"Optuna pruner {name!r}: use one of {', '.join(OPTUNA_PRUNERS)}")


def rules_of(arm: Arm) -> list:
    if arm.optuna_pruner:
        cost = time_per_squared_accuracy()
        return [StudyPrunerRule(lambda t, a: float(cost(np.array([t]), np.array([a]))[0]),
                                f"Optuna's {arm.optuna_pruner} pruner")]
    return make_rules(arm.pruner, None, min_runs=arm.min_runs)


def ladder_rule(levels: Sequence[float]) -> Callable[[Evaluator], Generator[Measure, LRPoint, str]]:
    """Marinos 2021's rule on a grid's learning rates: from the lowest, up one level while the cost falls (its
    doubling, on the grid's ladder); the grid has no level between two, so the +10 % steps are not taken."""

    def propose(ev: Evaluator) -> Generator[Measure, LRPoint, str]:
        previous = yield Measure(float(levels[0]), "start")
        for lr in levels[1:]:
            point = yield Measure(float(lr), "double")
            if not point.mean < previous.mean:
                return f"the cost rose at {lr:g}"
            previous = point
        return "the grid's highest rate"

    return propose


def run_arm(arm: Arm, surface: Surface, seed: int, budget_s: float, work: Path) -> ArmRun:
    """One arm on one seed, to ``budget_s`` of cluster time (the grid and the paper's rule: to their end)."""
    out = Path(tempfile.mkdtemp(prefix=f"{arm.name}-{seed}-", dir=work))
    cluster = ReplayCluster(surface, seed)
    try:
        if arm.kind == "paper":
            stop = _run_paper(surface, out, cluster)
        else:
            config = search_config(arm, surface, seed)
            settings = {"bench": "replay", "arm": arm.name, "seed": seed}
            with open_session(out, settings, replay_options(cluster, config.job), ClusterOptions(),
                              shapes(config.job, config.space), False, backend=cluster) as session:
                study = open_study(out, config, in_memory=True,
                                   pruner=optuna_pruner(arm.optuna_pruner, config.job.get(config.fidelity)))
                search = MultiObjectiveSearch(session, study, config, rules_of(arm))
                stop = search.run(math.inf if arm.kind == "grid" else budget_s).stop_reason
        return _arm_run(arm.name, seed, out, cluster, stop, surface)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def paper_problem(surface: Surface) -> str | None:
    """Why the learning-rate rule cannot run on ``surface`` (its job has no learning_rate factor), else None."""
    if "learning_rate" in surface.key.columns:
        return None
    return (f"the paper arm climbs a learning-rate ladder, and the job {surface.job.model} of {surface.folder} has no "
            f"learning_rate factor (its factors: {', '.join(surface.key.columns)})")


def _run_paper(surface: Surface, out: Path, cluster: ReplayCluster) -> str:
    """Marinos 2021's rule on the surface's learning rates, every other varying factor (the fidelity too) at its
    lowest level."""
    problem = paper_problem(surface)
    if problem:
        raise ReplayError(problem)
    levels = surface.levels()
    fixed = {k: levels[k][0] for k in surface.factors if k != "learning_rate"}  # the lowest levels
    job = replace(surface_job(surface), **fixed)  # type: ignore[arg-type]
    rates = levels["learning_rate"]
    with open_session(out, {"bench": "replay", "arm": "paper"}, replay_options(cluster, job), ClusterOptions(),
                      shapes(job, SearchSpace(())), False, backend=cluster) as session:
        try:
            result = run_search(JobObjective(session, job, time_per_squared_accuracy()), ladder_rule(rates), "paper", 1, len(rates))
        except JobFailedError as e:
            return f"a job failed: {e}"
    return result.stop_reason


def measured_points(table: pd.DataFrame, folder: Path, surface: Surface) -> dict[str, set[Point]]:
    """Each run's measured configurations (``<run>-<replicate>`` -> its validated epochs' points, keyed as the
    surface keys them): every validated epoch of its ok and pruned runs, at the surface's fidelity."""
    if not len(table):
        return {}
    points = harvest(table, folder, surface.fidelity, surface.key.columns).table()
    by_run: dict[str, set[Point]] = {}
    for row in points.to_dict("records"):
        by_run.setdefault(f"{int(row['run'])}-{int(row['replicate'])}", set()).add(surface.point_of(row))
    return by_run


def _arm_run(name: str, seed: int, out: Path, cluster: ReplayCluster, stop: str, surface: Surface) -> ArmRun:
    table = read_campaign(out) if (out / "results.csv").exists() else pd.DataFrame()
    by_run = measured_points(table, out, surface)
    ended = np.cumsum([r.charged_s for r in cluster.log]).tolist()
    return ArmRun(name, seed, tuple(ended), tuple(frozenset(by_run.get(r.key or "", ())) for r in cluster.log),
                  tuple(r.stopped_at is not None for r in cluster.log), stop)


def campaign_run(folder: Path, surface: Surface, name: str = "real", seed: int = 0) -> ArmRun:
    """A campaign folder's runs as an arm's run (a real search, to compare with its replays on ``surface``): in run
    order, each run's recorded elapsed_s, its harvested configurations."""
    table = read_campaign(folder)
    table = table.sort_values(["run", "replicate"], kind="stable")
    by_run = measured_points(table, folder, surface)
    cells = [f"{int(r)}-{int(p)}" for r, p in zip(table["run"], table["replicate"])]
    return ArmRun(name, seed, tuple(np.cumsum(table["elapsed_s"].astype(float)).tolist()),
                  tuple(frozenset(by_run.get(c, ())) for c in cells), tuple(table["status"] == "pruned"))


def speed_ratio(folder: Path, surface: Surface) -> float | None:
    """How much longer a real campaign's runs took than the surface's recording of the same points: the median
    over its ok runs of elapsed_s over the recorded replicates' mean (None when no run is on the grid).

    A replay charges the recorded seconds; a real search on a slower (or busier) machine spends more of a budget
    per run, so its fractions at a budget are set against the replay's both as measured and on the recording's
    clock (its times divided by this ratio)."""
    table = read_campaign(folder)
    ratios = []
    for row in table[table["status"] == "ok"].to_dict("records"):
        recorded = surface.points.get(surface.point_of(row))
        if recorded:
            ratios.append(float(row["elapsed_s"]) / float(np.mean([r.elapsed_s for r in recorded])))
    return float(np.median(ratios)) if ratios else None


def on_clock(run: ArmRun, ratio: float) -> ArmRun:
    """``run`` with its cluster times divided by ``ratio`` (:func:`speed_ratio`): on the recording's clock."""
    return replace(run, ended_s=tuple(t / ratio for t in run.ended_s))


# ---------------------------------------------------------------- the distribution over seeds


@dataclass(frozen=True)
class BudgetRow:
    """One arm at one budget: the hypervolume fractions' median and 10th/90th percentiles over the seeds, and the
    share of seeds at or above the goal."""

    arm: str
    budget: float
    hv_median: float
    hv_p10: float
    hv_p90: float
    share_95: float
    seeds: int

    def to_dict(self) -> dict[str, object]:
        return {"arm": self.arm, "budget": self.budget, "hv_median": round(self.hv_median, 6),
                "hv_p10": round(self.hv_p10, 6), "hv_p90": round(self.hv_p90, 6), "share_95": self.share_95,
                "seeds": self.seeds}


def fractions(run: ArmRun, truth: Truth, budgets: Sequence[float]) -> list[float]:
    return [truth.fraction(run.configurations(run.within(b * truth.grid_time_s))) for b in budgets]


def time_to(run: ArmRun, truth: Truth, goal: float = GOAL) -> float:
    """The cluster time, as a share of the grid's, at the end of the run that took the arm to ``goal``; inf if none."""
    for i, ended in enumerate(run.ended_s):
        if truth.fraction(run.configurations(i + 1)) >= goal - 1e-12:
            return ended / truth.grid_time_s
    return math.inf


def times_to_goal(runs: Sequence[ArmRun], truth: Truth, goal: float = GOAL) -> dict[str, float]:
    """Per arm, the median over its seeds of :func:`time_to` (inf when half the seeds or more never reach it)."""
    out = {}
    for arm in dict.fromkeys(r.arm for r in runs):
        times = sorted(time_to(r, truth, goal) for r in runs if r.arm == arm)
        out[arm] = float(np.median(times)) if math.isfinite(times[(len(times) - 1) // 2]) else math.inf
    return out


def budget_rows(runs: Sequence[ArmRun], truth: Truth, budgets: Sequence[float] = BUDGETS) -> list[BudgetRow]:
    out = []
    for arm in dict.fromkeys(r.arm for r in runs):
        mine = [r for r in runs if r.arm == arm]
        table = np.array([fractions(r, truth, budgets) for r in mine])
        for j, b in enumerate(budgets):
            col = table[:, j]
            out.append(BudgetRow(arm, b, float(np.median(col)), float(np.percentile(col, 10)),
                                 float(np.percentile(col, 90)), float(np.mean(col >= GOAL - 1e-12)), len(col)))
    return out


@dataclass(frozen=True)
class PruningSaving:
    """The same search with and without pruning over its first ``trials`` trials, medians over the seeds."""

    trials: int
    time_pruned_s: float
    time_unpruned_s: float
    hv_pruned: float
    hv_unpruned: float

    @property
    def saving(self) -> float:
        return 1 - self.time_pruned_s / self.time_unpruned_s

    @property
    def loss(self) -> float:
        return self.hv_unpruned - self.hv_pruned


def pruning_saving(runs: Sequence[ArmRun], truth: Truth, pruned: str = "default", unpruned: str = "no-pruning",
                   trials: int | None = None) -> PruningSaving | None:
    a = {r.seed: r for r in runs if r.arm == pruned}
    b = {r.seed: r for r in runs if r.arm == unpruned}
    seeds = sorted(set(a) & set(b))
    if not seeds:
        return None
    n = trials or min(min(len(a[s].ended_s), len(b[s].ended_s)) for s in seeds)
    n = min([n] + [len(a[s].ended_s) for s in seeds] + [len(b[s].ended_s) for s in seeds])
    if n < 1:
        return None
    t_a = [a[s].ended_s[n - 1] for s in seeds]
    t_b = [b[s].ended_s[n - 1] for s in seeds]
    h_a = [truth.fraction(a[s].configurations(n)) for s in seeds]
    h_b = [truth.fraction(b[s].configurations(n)) for s in seeds]
    return PruningSaving(n, float(np.median(t_a)), float(np.median(t_b)), float(np.median(h_a)), float(np.median(h_b)))


def table_text(rows: Sequence[BudgetRow], arms: Sequence[Arm]) -> str:
    budgets = list(dict.fromkeys(r.budget for r in rows))
    head = f"{'arm':<14}" + "".join(f" | {f'budget {b:g}':^24}" for b in budgets)
    sub = f"{'':<14}" + "".join(f" | {'median':>7} {'p10-p90':>11} {'95%':>4}" for _ in budgets)
    lines = [head, sub]
    for arm in dict.fromkeys(r.arm for r in rows):
        cells = []
        for b in budgets:
            r = next(x for x in rows if x.arm == arm and x.budget == b)
            cells.append(f" | {r.hv_median:>7.3f} {f'{r.hv_p10:.2f}-{r.hv_p90:.2f}':>11} {r.share_95:>4.0%}")
        lines.append(f"{arm:<14}" + "".join(cells))
    described = [f"  {a.name}: {a.description}" for a in arms if a.description and any(r.arm == a.name for r in rows)]
    return "\n".join(lines + ["arms:"] + described)


def bands(runs: Sequence[ArmRun], truth: Truth, budgets: Sequence[float]) -> dict[str, tuple[np.ndarray, ...]]:
    """Per arm: the 10th percentile, median and 90th percentile of the fraction at each budget."""
    out = {}
    for arm in dict.fromkeys(r.arm for r in runs):
        table = np.array([fractions(r, truth, budgets) for r in runs if r.arm == arm])
        out[arm] = (np.percentile(table, 10, axis=0), np.median(table, axis=0), np.percentile(table, 90, axis=0))
    return out
