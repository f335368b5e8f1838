"""Fit every model on every split and collect the comparison (used by the CLI and bench/predict.py).

Each row carries the model's R^2 as a share of the table's noise ceiling (models.predict.ceiling),
the empirical coverage of its CV+ prediction intervals on the held-out rows (models.predict.intervals)
and a ``warning`` (models.predict.flags): R^2 < 0, parameters on their bounds, one-level inputs,
test rows or predictions outside the training ranges."""

from __future__ import annotations

import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass

import pandas as pd

from models.errors import InvalidTableError, ModelError, TooFewRowsError
from models.predict import flags
from models.predict._base import Predictor
from models.predict.ceiling import NoiseCeiling, noise_ceiling
from models.predict.parallelism import COLUMN as PARALLELISM, resolve
from models.predict.scaleout import ScaleOut, analyse
from models.predict.scaling import AMDAHL, USL, ErnestModel, NotIdentifiedError, ScalingModel
from models.predict.generic import PowerLawFit, PowerLawModel
from models.predict.intervals import DEFAULT_FOLDS, DEFAULT_LEVEL, ConformalPredictor
from models.predict.linear import LinearModel
from models.predict.loglinear import LogLinearModel
from models.predict.result import Comparison, ComparisonRow  # noqa: F401 - also models.predict.compare's
from models.predict.splits import Split, extrapolation_split, random_split
from models.predict.table import factor_columns, with_derived
from models.predict.work import Work
from models.predict.trees import GradientBoostingModel, RandomForestModel, _GridSearchedTrees

#: Model name -> factory(target, seed).
MODELS: dict[str, Callable[[str, int], Predictor]] = {
    "linear": lambda target, seed: LinearModel(target),
    "loglinear": lambda target, seed: LogLinearModel(target),
    "rf": lambda target, seed: RandomForestModel(target, seed=seed),
    "gb": lambda target, seed: GradientBoostingModel(target, seed=seed),
    "generic": lambda target, seed: PowerLawModel(target, seed=seed),
    "ernest": lambda target, seed: ErnestModel(target),
    "amdahl": lambda target, seed: ScalingModel(AMDAHL, target),
    "usl": lambda target, seed: ScalingModel(USL, target),
}
#: Models that cannot predict beyond the training rows' range: a tree repeats the value of its last leaf.
CANNOT_EXTRAPOLATE: frozenset[str] = frozenset({"rf", "gb"})
CANNOT_EXTRAPOLATE_TEXT = "cannot extrapolate: a tree repeats the largest training scale's value"
SPLITS: tuple[str, ...] = ("random", "extrapolate")


def parse_models(spec: str) -> list[str]:
    """'all' or a comma-separated subset of MODELS, in the order given."""
    if spec.strip() == "all":
        return list(MODELS)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown or not names:
        raise InvalidTableError(f"unknown models {unknown}; choose from all, {', '.join(MODELS)}")
    return names


def default_size_column(table: pd.DataFrame) -> str:
    """Column the extrapolation split sorts by: parallelism m, else Albo Martínez 2021's processes, else the first
    resource column there is (an ingested study may record its nodes only)."""
    derived = with_derived(table)
    for column in ("parallelism", "processes", "nodes", "executors", "executor_cores", "cpus"):
        if column in derived.columns:
            return column
    raise InvalidTableError("no parallelism or resource column (nodes, executors, executor_cores) to extrapolate "
                            "on: pass --extrapolate-by COLUMN, or --split random")


def make_splits(
    table: pd.DataFrame, kinds: Sequence[str], seed: int = 0, by: str | None = None, test_fraction: float = 0.2
) -> list[Split]:
    """The requested splits of ``table`` ('random' and/or 'extrapolate')."""
    splits = []
    for kind in kinds:
        if kind == "random":
            splits.append(random_split(table, test_fraction, seed))
        elif kind == "extrapolate":
            splits.append(extrapolation_split(table, by or default_size_column(table), test_fraction))
        else:
            raise InvalidTableError(f"unknown split {kind!r}; choose from {', '.join(SPLITS)}")
    return splits


#: Models whose fit is slow (a grid search, an exponent search): the parallel run hands them out first.
SLOW_FIRST: tuple[str, ...] = ("rf", "gb", "generic", "linear")
#: Progress: one line of text at a time (the CLI writes it to stderr; the library says nothing by default).
Progress = Callable[[str], None]


def compare(table_splits: Sequence[Split], target: str, models: Sequence[str], seed: int = 0,
            measured: Sequence[str] = (), factors: Sequence[str] | None = None,
            level: float | None = DEFAULT_LEVEL, interval_folds: int = DEFAULT_FOLDS,
            scale_columns: Sequence[str] | None = None, scale_level: float = DEFAULT_LEVEL,
            progress: Progress = lambda _: None, jobs: int = 1, work: Work | None = None) -> Comparison:
    """Fit each model on each split's train table and evaluate it on the test table; ``measured``
    columns are inputs beside the factors for the models that take them (the tree models).

    The noise ceiling is computed on the whole table (train + test of the first split) with design
    points given by ``factors`` (default: the table's factor columns); ``level`` None skips the
    intervals (each costs ``interval_folds`` more fits per model and split).

    ``scale_columns`` are the columns the parallelism is made of (not covariates of the scaling models), ``work``
    the amount of work every scaling curve takes (models.predict.work). On an extrapolate split the scale-out
    analysis (models.predict.scaleout) runs too, at ``scale_level``.

    ``progress`` hears one line as each model starts on each split, and before the scale-out analysis. ``jobs``
    > 1 fits that many (model, split) pairs at once in forked worker processes (where the platform can fork; else
    one after another), the slow models first; every figure is the one a serial run gives (each fit is seeded and
    independent of the others), only ``fit_s`` is timed under the workers' contention."""
    fits: dict[str, PowerLawFit] = {}
    ceiling = None
    chosen: list[str] = []
    if table_splits:
        whole = pd.concat([table_splits[0].train, table_splits[0].test], ignore_index=True)
        chosen = list(factors) if factors is not None else factor_columns(whole, target)
        ceiling = noise_ceiling(whole, target, [c for c in chosen if c in whole.columns])
    tasks = [_Task(split, name, target, seed, tuple(measured), level, interval_folds,
                   None if scale_columns is None else tuple(scale_columns), ceiling,
                   None if work is None else work.column)
             for split in table_splits for name in models]
    forking = "fork" in multiprocessing.get_all_start_methods()  # a worker gets the tables without re-importing
    parallel = jobs > 1 and len(tasks) > 1 and forking
    done = _run_parallel(tasks, jobs, progress) if parallel else _run_serial(tasks, progress)
    rows = []
    for task, (row, fit) in zip(tasks, done):
        rows.append(row)
        if fit is not None:
            fits[task.split.kind] = fit
    scaleout, scaleout_note = None, None
    extrapolate = next((s for s in table_splits if s.kind == "extrapolate"), None)
    if extrapolate is not None and PARALLELISM in extrapolate.train.columns:
        progress(f"predict: the scale-out interval over model form on the extrapolate split "
                 f"({len(extrapolate.train)} rows)")
        try:
            covariates = scale_covariates(extrapolate.train, chosen, scale_columns, work)
            scaleout = analyse(extrapolate.train, target, covariates, test=extrapolate.test, level=scale_level,
                               work=None if work is None else Work(work.column))
        except ModelError as exc:
            scaleout_note = f"scale-out on the extrapolate split ({extrapolate.description}): {exc}"
    return Comparison(target, tuple(rows), {s.kind: s.description for s in table_splits}, fits, ceiling,
                      scaleout, scaleout_note)


@dataclass(frozen=True)
class _Task:
    """One model on one split, with everything its fit needs (picklable: a worker process gets it whole)."""

    split: Split
    name: str
    target: str
    seed: int
    measured: tuple[str, ...]
    level: float | None
    interval_folds: int
    scale_columns: tuple[str, ...] | None
    ceiling: NoiseCeiling | None
    work: str | None = None

    def make(self) -> Predictor:
        model = MODELS[self.name](self.target, self.seed)
        model.measured = list(self.measured)
        if isinstance(model, ScalingModel):
            if self.scale_columns is not None:
                model.scale_columns = list(self.scale_columns)
            model.work = self.work
        return model

    def describe(self, number: int, total: int) -> str:
        """What the task does, in one line, for the progress."""
        kind, n = self.split.kind, len(self.split.train)
        intervals = self.level is not None
        if self.name in ("rf", "gb"):
            tree = self.make()
            assert isinstance(tree, _GridSearchedTrees)
            settings = math.prod(len(v) for v in tree.grid.values())
            what = f"grid search over {settings} settings x {tree.cv_folds} folds" + (
                ", CV+ from its folds" if intervals else "")
        else:
            what = "normal-form exponent search" if self.name == "generic" else "fit"
            what += f" and {self.interval_folds} CV+ refits" if intervals else ""
        return f"predict [{number}/{total}]: {self.name} on the {kind} split ({n} rows): {what}"


def _run_serial(tasks: Sequence[_Task], progress: Progress) -> list[tuple[ComparisonRow, PowerLawFit | None]]:
    out = []
    for i, task in enumerate(tasks, 1):
        progress(task.describe(i, len(tasks)))
        out.append(_fit_one(task))
    return out


def _run_parallel(tasks: Sequence[_Task], jobs: int,
                  progress: Progress) -> list[tuple[ComparisonRow, PowerLawFit | None]]:
    """The tasks in ``jobs`` forked workers, the slow models first; a task is announced as a worker takes it
    (the parent hands out one task per free worker), and the results come back in the tasks' order."""
    order = sorted(range(len(tasks)), key=lambda i: (SLOW_FIRST.index(tasks[i].name)
                                                      if tasks[i].name in SLOW_FIRST else len(SLOW_FIRST), i))
    results: dict[int, tuple[ComparisonRow, PowerLawFit | None]] = {}
    queue = iter(order)
    sys.stdout.flush()  # a forked worker flushes its copy of the buffers when it ends: they must be empty
    sys.stderr.flush()
    started = 0
    with ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=multiprocessing.get_context("fork")) as pool:
        pending: dict[Future, int] = {}

        def hand_out() -> None:
            nonlocal started
            i = next(queue, None)
            if i is not None:
                started += 1
                progress(tasks[i].describe(started, len(tasks)))
                pending[pool.submit(_fit_one, tasks[i])] = i

        for _ in range(min(jobs, len(tasks))):
            hand_out()
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                results[pending.pop(future)] = future.result()
                hand_out()
    return [results[i] for i in range(len(tasks))]


def _fit_one(task: _Task) -> tuple[ComparisonRow, PowerLawFit | None]:
    """Fit one model on one split, evaluate it, and its CV+ interval's coverage when ``task.level`` is set."""
    split, name, target, level = task.split, task.name, task.target, task.level
    model = task.make()
    start = time.perf_counter()
    nan = float("nan")
    try:
        model.fit(split.train)
        elapsed = time.perf_counter() - start
        result = model.evaluate(split.test)
    except (NotIdentifiedError, TooFewRowsError) as exc:  # the rows cannot fit it: a note on its row, not a failure
        return ComparisonRow(name, split.kind, len(split.train), len(split.test), nan, nan, nan,
                             time.perf_counter() - start, None, not_identified=str(exc)), None
    except ModelError as exc:
        return ComparisonRow(name, split.kind, len(split.train), len(split.test), nan, nan, nan,
                             time.perf_counter() - start, str(exc)), None
    fit = None
    messages = flags.negative_r2(result.r2)
    if split.kind == "extrapolate" and name in CANNOT_EXTRAPOLATE:
        messages.insert(0, CANNOT_EXTRAPOLATE_TEXT)
    if isinstance(model, PowerLawModel) and model.fit_ is not None:
        fit = model.fit_
        messages += [f"degenerate fit: {p}" for p in model.fit_.problems]
    messages += flags.one_level_inputs(model)
    messages += flags.outside_ranges(model, split.train, split.test)
    messages += flags.predictions_outside(model._target_values(split.train), model.predict(split.test), target)
    coverage = width = nan
    if level is not None:
        try:
            fold_make, reused = task.make, None
            if isinstance(model, _GridSearchedTrees):  # the folds refit with the hyperparameters chosen:
                chosen = {k: [v] for k, v in model.best_params_.items()}  # the search's own fold fits of
                reused = model.cv_fits(task.interval_folds, task.seed)  # them when its folds are CV+'s

                def fold_make(make: Callable[[], Predictor] = task.make, chosen=chosen) -> Predictor:
                    tree = make()
                    tree.grid = dict(chosen)  # type: ignore[attr-defined]
                    return tree
            conformal = ConformalPredictor(fold_make, level, task.interval_folds, task.seed).fit(split.train, model,
                                                                                                 reused)
            intervals = conformal.interval(split.test)
            coverage = intervals.coverage(model._target_values(split.test))
            width = intervals.mean_width()
        except ModelError as exc:
            messages.append(f"no interval: {exc}")
    share = task.ceiling.share(result.r2) if task.ceiling is not None else nan
    return ComparisonRow(name, split.kind, len(split.train), len(split.test), result.r2, result.mape, result.mse,
                         elapsed, None, share, coverage, nan if level is None else level, width,
                         flags.join(messages)), fit


def scale_covariates(train: pd.DataFrame, factors: Sequence[str], scale_columns: Sequence[str] | None,
                     work: Work | None = None) -> list[str]:
    """The factors that vary in ``train`` other than the parallelism, the columns it is made of and the work."""
    if scale_columns is None:
        found = resolve(train)
        scale_columns = found.columns if found is not None else ()
    skip = {PARALLELISM, "processes", *scale_columns, *([work.column] if work is not None else [])}
    return [c for c in factors if c in train.columns and c not in skip and train[c].nunique(dropna=False) > 1]
