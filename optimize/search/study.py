"""The multi-objective search loop: Optuna ask-and-tell against real jobs, resumable from the campaign folder.

Each trial is one run of the campaign (run = trial number + 1, replicate 1): Optuna asks for the
factors of the space, :class:`optimize.session.JobSession` runs the job through the harness, and the
study is told the objectives read from the job's log (status ok), or that the trial was pruned
(status pruned: a rule of :mod:`optimize.search.pruning` stopped it) or failed. The study lives in
``study.sqlite`` beside the harness's ``campaign.sqlite``; a killed search resumes: a trial left
running is told failed and its parameters are asked again first (the harness ends its job and keeps
its logs aside), unless the harness had already stored its run, whose result is then told.

The budget is cluster time: the sum of the runs' ``elapsed_s`` (what spark-submit took), counted
over the whole campaign, so a resumed search spends only what is left.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import optuna
from optuna.trial import TrialState

from sparkdl.runspec import RunSpec, batch_problem
from sparkdl.campaign import CampaignDir, RunRecord
from harness.campaign import Campaign
from harness.command import job_for
from harness.figurespec import FigureSpec
from logparse import Status
from sparkdl.cost import parse_cost
from models.errors import CostError
from optimize.errors import SearchOptionError
from optimize.pareto import ObjectiveSpec
from optimize.search.pruning import CurveTail, EpochFigure, Rule, TrialWatch
from optimize.search.space import SearchSpace, latin_hypercube
from optimize.session import JobConfig, JobSession

#: Columns of a run's record every ok run has. A search can also optimise ``cost`` (computed from
#: wall_clock_s and accuracy with the search's cost formula) and any other numeric figure the run
#: records: Spark's, the hosts' and the phases' columns (``spark_gc_share``, ``host_cpu_busy_mean``,
#: ``phase_training_s``...) or a figure the job reports itself.
OBJECTIVE_COLUMNS = ("wall_clock_s", "accuracy", "elapsed_s")
COMPUTED_OBJECTIVES = ("cost",)
#: What a name must look like to be a run's figure (the harness's rule for job-reported metrics).
FIGURE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,63}", re.ASCII)
#: Columns of a run's record that are not figures.
IDENTIFIER_COLUMNS = ("run", "replicate", "status", "reason", "failure_kind", "log")
STUDY_NAME = "search"
SAMPLERS = ("tpe", "nsga2", "random", "grid")
#: Give up when this many trials in a row ask for jobs BigDL cannot run (batch not a multiple of cores).
MAX_INVALID_IN_A_ROW = 50
#: Without repeats: stop when this many trials in a row ask for factors already run (the space is measured).
MAX_REPEATS_IN_A_ROW = 30

Progress = Callable[[str], None]


#: TPE's start-up trials (a Latin hypercube) before its model: tuned on the recorded surfaces (docs/optimizers.md).
DEFAULT_STARTUP_TRIALS = 3


@dataclass(frozen=True)
class SearchConfig:
    """What defines a search (hashed into the campaign: a folder never mixes two searches)."""

    space: SearchSpace
    job: JobConfig
    objectives: tuple[ObjectiveSpec, ...]
    sampler: str = "tpe"
    seed: int = 0
    startup_trials: int = DEFAULT_STARTUP_TRIALS
    population: int = 8
    grid_points: int = 3  # float levels per range when sampler is grid
    cost: str | None = None  # the formula of the ``cost`` objective (sparkdl.cost)
    start: str = "lhs"  # tpe's start-up trials: a Latin hypercube ("lhs") or Optuna's random ones ("random")
    repeat: bool = False  # True: a trial asking for factors already run runs them again (a replicate); False: it is
    # told that run's result, with no job
    fidelity: str = "epochs"  # the job's parameter that counts its validated epochs (xgboost: rounds)

    def planned(self, spec: RunSpec) -> float:
        """The last epoch a run of ``spec`` validates (its fidelity's level); unknown: inf (no rule calls it last)."""
        level = spec.get(self.fidelity)
        return level if isinstance(level, int) and not isinstance(level, bool) else math.inf


def check_objectives(objectives: Sequence[ObjectiveSpec], cost: str | None = None) -> None:
    """Refuse names no run can record, and a cost formula sparkdl.cost cannot read (when ``cost`` is asked)."""
    bad = [o.column for o in objectives if not FIGURE_NAME.fullmatch(o.column) or o.column in IDENTIFIER_COLUMNS]
    if bad:
        raise SearchOptionError(f"--objectives {', '.join(bad)}: an objective is a numeric figure of a run, e.g. "
                                f"{', '.join(OBJECTIVE_COLUMNS + COMPUTED_OBJECTIVES)}, spark_gc_share or host_cpu_busy_mean")
    if any(o.column == "cost" for o in objectives):
        try:
            parse_cost(cost)
        except CostError as exc:
            raise SearchOptionError(f"--cost: {exc}") from None


def objective_values(row: dict[str, object], objectives: Sequence[ObjectiveSpec], cost: str | None = None
                     ) -> tuple[float, ...] | str:
    """The objectives' values in an ok run's row, or why there are none (the name of the missing figure)."""
    values = []
    for o in objectives:
        if o.column == "cost" and "cost" not in row:
            t, a = _number(row.get("wall_clock_s")), _number(row.get("accuracy"))
            v = float(parse_cost(cost)(np.array([t]), np.array([a]))[0]) if t is not None and a is not None else None
        else:
            v = _number(row.get(o.column))
        if v is None or not math.isfinite(v):
            absent = o.column not in row and o.column != "cost"
            return f"objective {o.column} is {'missing' if absent else 'not a finite number'} in this ok run's record"
        values.append(v)
    return tuple(values)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or value is None or value == "":
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def make_sampler(config: SearchConfig) -> optuna.samplers.BaseSampler:
    """TPE (multi-objective, after ``startup_trials`` start-up ones), NSGA-II, random or the full grid; seeded."""
    if config.sampler == "tpe":
        return optuna.samplers.TPESampler(seed=config.seed, n_startup_trials=config.startup_trials, multivariate=True)
    if config.sampler == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=config.seed, population_size=config.population)
    if config.sampler == "random":
        return optuna.samplers.RandomSampler(seed=config.seed)
    if config.sampler == "grid":  # the points are enqueued by open_study (Optuna's GridSampler stops the
        return optuna.samplers.RandomSampler(seed=config.seed)  # study from inside, which ask-and-tell refuses)
    raise SearchOptionError(f"--sampler {config.sampler!r}: use one of {', '.join(SAMPLERS)}")


def open_study(out: Path, config: SearchConfig, in_memory: bool = False,
               pruner: optuna.pruners.BasePruner | None = None) -> optuna.Study:
    """The study in ``out/study.sqlite``, created or loaded (resume); ``in_memory``: in this process only (a
    replayed bench arm, which is not resumed: Optuna's sqlite storage costs more than a replayed trial).
    ``pruner``: Optuna's own, for a single-objective study whose trials report each epoch
    (:class:`optimize.search.pruning.StudyPrunerRule`)."""
    storage = (optuna.storages.InMemoryStorage() if in_memory
               else optuna.storages.RDBStorage(f"sqlite:///{CampaignDir(out).study_path.resolve()}"))
    directions = ["minimize" if o.sense == "min" else "maximize" for o in config.objectives]
    study = optuna.create_study(storage=storage, study_name=STUDY_NAME, sampler=make_sampler(config),
                                directions=directions, load_if_exists=True, pruner=pruner)
    if config.sampler == "grid" and not study.trials:
        for point in config.space.grid(config.grid_points):
            study.enqueue_trial(point)
    if config.sampler == "tpe" and config.start == "lhs" and not study.trials:
        for point in latin_hypercube(config.space, config.startup_trials, config.seed):  # TPE counts them as its start-up
            study.enqueue_trial(point)
    return study


def curve_of_run(out: Path, result: RunRecord, figures: FigureSpec | None = None) -> list[EpochFigure]:
    """The validated epochs in a finished run's log (the pruning rules' history is rebuilt from the logs);
    ``figures``: a ``results = "output"`` job's, whose epochs are its regexes' rows."""
    tail = CurveTail(out / result.execution.log, figures)
    tail.read()
    return tail.curve


def output_figures(campaign: Campaign, spec: RunSpec) -> FigureSpec | None:
    """The declared figures of the job that runs ``spec`` when it reports what it prints (``results = "output"``):
    the pruning watch reads its epochs with them."""
    job = job_for(spec, campaign.options)
    return job.figures if job.results == "output" else None


@dataclass
class TrialRecord:
    """One trial as the search saw it: its run, factors, status, objective values and curve."""

    number: int
    run: str
    params: dict[str, object]
    status: str
    values: tuple[float, ...] | None
    elapsed_s: float
    reason: str = ""


@dataclass
class SearchOutcome:
    """A finished (or budget-stopped) search: every trial, the cluster time used, and why it stopped."""

    trials: list[TrialRecord] = field(default_factory=list)
    cluster_time_s: float = 0.0
    stop_reason: str = ""

    def count(self, status: str) -> int:
        return sum(t.status == status for t in self.trials)


class MultiObjectiveSearch:
    """The ask-and-tell loop over a :class:`JobSession` (see the module doc)."""

    def __init__(self, session: JobSession, study: optuna.Study, config: SearchConfig, rules: Sequence[Rule],
                 progress: Progress = lambda _: None) -> None:
        self.session, self.study, self.config, self.rules = session, study, config, rules
        self.progress = progress
        runner = session.campaign.runner
        self.runner = runner if hasattr(runner, "watch") else None  # ProcessRunner (or a test double of it)
        if rules and self.runner is None:
            progress(f"note: this backend's runner ({type(runner).__name__}) cannot stop a running job: no pruning")
        self.history: list[list[EpochFigure]] = [curve_of_run(session.out, r, output_figures(session.campaign, r.spec))
                                                 for r in session.finished.values()
                                                 if r.status in (Status.OK, Status.PRUNED)]
        self.outcome = SearchOutcome()
        self.repeats = 0  # trials told an earlier run's result (``repeat`` False)

    @property
    def spent_s(self) -> float:
        """Cluster time used so far by the whole campaign (resumed sessions included)."""
        return math.fsum(r.elapsed_s for r in self.session.finished.values())

    def tell(self, number: int, result: RunRecord) -> TrialRecord:
        """Tell the study how trial ``number``'s run ended; keep its curve for the pruning rules."""
        values = None
        missing = None
        if result.status == Status.OK:
            got = objective_values(result.row(), self.config.objectives, self.config.cost)
            if isinstance(got, str):
                missing = got
                self.study.tell(number, state=TrialState.FAIL)
            else:
                values = got
                self.study.tell(number, list(values))
        else:
            self.study.tell(number, state=TrialState.PRUNED if result.status == Status.PRUNED else TrialState.FAIL)
        if result.status in (Status.OK, Status.PRUNED):
            self.history.append(curve_of_run(self.session.out, result, output_figures(self.session.campaign, result.spec)))
        record = TrialRecord(number, f"{result.run}-{result.replicate}",
                             {f: getattr(result.spec, f) for f in self.config.space.names}, str(result.status), values,
                             result.elapsed_s, result.reason)
        self.outcome.trials.append(record)
        if missing is not None:  # every later run would lack it too: stop here, the run and the study are kept
            raise SearchOptionError(f"run {record.run} finished ok but its {missing}: --objectives must name figures "
                                    f"every run records (the columns of {self.session.out / 'results.csv'})")
        return record

    def recover(self) -> None:
        """Trials a killed search left running: tell the stored result, or fail them and ask their factors again."""
        for t in self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING, TrialState.WAITING)):
            if t.state == TrialState.WAITING:
                continue
            stored = self.session.finished.get((t.number + 1, 1))
            if stored is not None:
                self.tell(t.number, stored)
                self.progress(f"trial {t.number}: its run {t.number + 1}-1 had finished; told the study")
            else:
                self.study.tell(t.number, state=TrialState.FAIL)
                self.study.enqueue_trial(dict(t.params))
                self.progress(f"trial {t.number} was running when the search stopped: its factors are asked again")

    def spec_of(self, trial: optuna.trial.Trial) -> tuple[RunSpec, dict[str, object]]:
        """The run of this trial: run = trial number + 1, replicate 1, the factors Optuna suggests."""
        params = self.config.space.suggest(trial)
        return self.config.job.spec(trial.number + 1, 1, **params), params

    def measured(self, params: dict[str, object]) -> TrialRecord | None:
        """The first trial of this session that ran these factors (ok or pruned), else None."""
        return next((t for t in self.outcome.trials if t.params == params and t.status in ("ok", "pruned")), None)

    def check_cell(self, spec: RunSpec, result: RunRecord) -> None:
        """A stored cell must hold the factors this trial asked (else the folder holds another search)."""
        asked = spec.as_row()
        differs = [k for k in self.config.space.names if getattr(result.spec, k) != asked[k]]
        if differs:
            raise SearchOptionError(f"run {spec.key} in {self.session.out} was made with other factors "
                                    f"({', '.join(differs)}) than trial {spec.run - 1} asks: use a new --out")

    def run_trial(self) -> TrialRecord | None:
        """Ask, run the job with the pruning watch, tell; None when the trial could not be run (told failed)."""
        trial = self.study.ask()
        spec, params = self.spec_of(trial)
        if not self.config.repeat:
            earlier = self.measured(params)
            if earlier is not None:  # told that run's result again: no job, no cluster time
                self.repeats += 1
                if earlier.values is not None:
                    self.study.tell(trial, list(earlier.values))
                else:
                    self.study.tell(trial, state=TrialState.PRUNED if earlier.status == "pruned" else TrialState.FAIL)
                return None
        problem = batch_problem(spec)
        if problem:
            self.study.tell(trial, state=TrialState.FAIL)
            self.progress(f"trial {trial.number}: {problem}; skipped (no job)")
            return None
        if self.runner is not None:
            rules = [r.for_trial(trial) if hasattr(r, "for_trial") else r for r in self.rules]  # StudyPrunerRule
            self.runner.watch = (TrialWatch(rules, self.config.planned(spec), list(self.history),
                                            figures=output_figures(self.session.campaign, spec)) if self.rules else None)
        try:
            result = self.session.run(spec)
        finally:
            if self.runner is not None:
                self.runner.watch = None
        self.check_cell(spec, result)
        return self.tell(trial.number, result)

    def run(self, budget_s: float, max_trials: int | None = None) -> SearchOutcome:
        """Trials while the next one is expected to fit the budget, until ``max_trials`` ran or the sampler has no more.

        A trial starts only if the mean cluster time of the campaign's runs so far fits in what is left of
        ``budget_s`` (the first always starts), so the budget is a cap that a trial longer than the mean
        can still pass, by less than that trial."""
        self.recover()
        started, invalid, ran = time.monotonic(), 0, 0
        repeated_from = self.repeats
        while True:
            spent = self.spent_s
            runs = len(self.session.finished)
            mean = spent / runs if runs else 0.0
            if spent + mean > budget_s or spent >= budget_s:
                self.outcome.stop_reason = (f"cluster-time budget: {spent / 60:.1f} of {budget_s / 60:.1f} min spent, "
                                            f"a trial takes {mean / 60:.1f} min on average")
                break
            if max_trials is not None and ran >= max_trials:
                self.outcome.stop_reason = f"max trials ({max_trials}) reached"
                break
            if self.config.sampler == "grid" and self.grid_done():
                self.outcome.stop_reason = "every point of the grid ran"
                break
            repeats = self.repeats
            record = self.run_trial()
            if record is None and self.repeats > repeats:
                if self.repeats - repeated_from >= MAX_REPEATS_IN_A_ROW:
                    self.outcome.stop_reason = (f"{MAX_REPEATS_IN_A_ROW} trials in a row asked for factors already "
                                                "run: the sampler has nothing new to try")
                    break
                continue
            repeated_from = self.repeats
            if record is None:
                invalid += 1
                if invalid >= MAX_INVALID_IN_A_ROW:
                    raise SearchOptionError(f"{invalid} trials in a row asked for a batch size BigDL cannot run: "
                                            "make batch_size a multiple of nodes x executors x executor_cores")
                continue
            invalid, ran = 0, ran + 1
            self.progress(self.progress_line(record, budget_s, time.monotonic() - started, ran, max_trials))
        self.outcome.cluster_time_s = self.spent_s
        return self.outcome

    def grid_done(self) -> bool:
        """Every enqueued grid point was asked (trials left running are enqueued again by recover)."""
        return not self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,))

    def progress_line(self, record: TrialRecord, budget_s: float, wall_s: float, ran: int,
                      max_trials: int | None = None) -> str:
        """One line per trial: its figures, the cluster time against the budget, and an ETA."""
        spent = self.spent_s
        figures = (", ".join(f"{o.column} {v:.4g}" for o, v in zip(self.config.objectives, record.values))
                   if record.values else record.reason)
        params = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in record.params.items())
        per_trial = wall_s / ran
        per_trial_cluster = math.fsum(t.elapsed_s for t in self.outcome.trials) / len(self.outcome.trials)
        left = [math.floor(max(0.0, budget_s - spent) / per_trial_cluster) if math.isfinite(budget_s) else math.inf]
        if max_trials is not None:
            left.append(max_trials - ran)
        if self.config.sampler == "grid":
            left.append(len(self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,))))
        more = min(left)
        budget = f"{budget_s / 60:.1f} min" if math.isfinite(budget_s) else "no limit"
        eta = (f"ETA {more * per_trial / 60:.1f} min (~{more} more trials at {per_trial:.0f} s each)"
               if math.isfinite(more) else "ETA unknown")
        return (f"trial {record.number} run {record.run} {record.status}: {figures} [{params}] | cluster time "
                f"{spent / 60:.1f} min of {budget} | {eta}")
