"""Courier (Albo Martínez 2021): the batch size with the highest predicted accuracy whose predicted response time meets a
latency SLO; when no candidate does, say so and return the fastest.

Two random forests from :mod:`models.predict` (response time and accuracy) are trained on a Courier
table: batch, cpus, njobs, network, time, accuracy (see :func:`optimize.concurrent.courier_table`,
or a CSV with those columns).

``sparkdl batch`` (:mod:`optimize.cli.batch`) prints a choice, or with ``--evaluate`` Courier against a
uniformly random batch.

Each predicted time and accuracy of a single choice comes with a CV+ prediction interval at
``--level`` (90 % by default; :mod:`models.predict.intervals`: 5 more forest fits per target); the
choice itself is Courier's rule on the point predictions (``--margin`` guards it).

``--evaluate`` follows Albo Martínez 2021 section 5 on held-out rows of the campaign (not fresh jobs): the
table's (cpus, njobs, network) configurations are split into train and test groups; for each test
configuration an SLO is drawn from N(300, 100) (truncated at 1 s); Courier chooses with forests
trained on the other configurations, the baseline picks a batch uniformly at random, and both
choices are scored with the mean measured time and accuracy of that configuration and batch.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from models.predict import RandomForestModel
from models.predict.intervals import ConformalPredictor, Intervals
from models.results import read_csv, runs_of
from optimize.concurrent import COURIER_COLUMNS, courier_table
from optimize.errors import CampaignDataError, SearchOptionError
from sparkdl.cli import run_cli

CANDIDATES: tuple[int, ...] = (64, 128, 256, 512)
JOB_COLUMNS = ("cpus", "njobs", "network")


@dataclass(frozen=True)
class Candidate:
    """A batch size with its predicted response time and accuracy, and whether that time meets the SLO."""

    batch: int
    time: float
    accuracy: float
    meets_slo: bool
    #: Prediction intervals (None when the model was fitted without them).
    time_interval: tuple[float, float] | None = None
    accuracy_interval: tuple[float, float] | None = None


@dataclass(frozen=True)
class BatchChoice:
    """Courier's answer: the chosen candidate, whether it meets the SLO, and every candidate's prediction."""

    batch: int
    slo: float
    meets_slo: bool
    candidates: tuple[Candidate, ...]

    @property
    def chosen(self) -> Candidate:
        return next(c for c in self.candidates if c.batch == self.batch)


def choose(batches: Sequence[int], times: Sequence[float], accuracies: Sequence[float], slo: float,
           margin: float = 0.0) -> BatchChoice:
    """The highest-accuracy batch whose time x (1 + margin) is <= slo (ties: the faster, then the smaller batch);
    when none meets it, the fastest (ties: the more accurate, then the smaller batch), flagged.
    ``margin`` 0 is Courier's rule; a positive margin guards against under-predicted times."""
    if not (len(batches) == len(times) == len(accuracies)) or not batches:
        raise SearchOptionError("give one predicted time and accuracy per candidate batch size")
    if not slo > 0:
        raise SearchOptionError(f"slo={slo!r} must be a positive number of seconds")
    if not margin >= 0:
        raise SearchOptionError(f"margin={margin!r} must be >= 0 (a fraction of the predicted time, e.g. 0.2)")
    cands = tuple(Candidate(int(b), float(t), float(a), float(t) * (1 + margin) <= slo)
                  for b, t, a in zip(batches, times, accuracies))
    meeting = [c for c in cands if c.meets_slo]
    if meeting:
        best = min(meeting, key=lambda c: (-c.accuracy, c.time, c.batch))
    else:
        best = min(cands, key=lambda c: (c.time, -c.accuracy, c.batch))
    return BatchChoice(best.batch, float(slo), best.meets_slo, cands)


class Courier:
    """Random forests for time and accuracy over batch, cpus, njobs, network (+ processes = cpus x njobs);
    with ``level`` each prediction also gets a CV+ interval (``interval_folds`` more fits per target)."""

    def __init__(self, seed: int = 0, cv_folds: int = 5, n_estimators: int = 100,
                 grid: dict[str, list[object]] | None = None, level: float | None = None,
                 interval_folds: int = 5) -> None:
        kw = dict(features=["batch", "cpus", "njobs", "network", "processes"], seed=seed, cv_folds=cv_folds,
                  n_estimators=n_estimators, grid=grid)
        self.time_model = RandomForestModel(target="time", **kw)  # type: ignore[arg-type]
        self.accuracy_model = RandomForestModel(target="accuracy", **kw)  # type: ignore[arg-type]
        self._kw, self.seed, self.level, self.interval_folds = kw, seed, level, interval_folds
        self.conformal_: dict[str, ConformalPredictor] = {}

    def fit(self, table: pd.DataFrame) -> "Courier":
        check_table(table)
        self.time_model.fit(table)
        self.accuracy_model.fit(table)
        self.conformal_ = {}
        if self.level is not None:
            for target, model in (("time", self.time_model), ("accuracy", self.accuracy_model)):
                make = lambda target=target: RandomForestModel(target=target, **self._kw)  # type: ignore[arg-type]
                self.conformal_[target] = ConformalPredictor(make, self.level, self.interval_folds,
                                                             self.seed).fit(table, model)
        return self

    def _configs(self, job: dict[str, object], batches: Sequence[int]) -> pd.DataFrame:
        return pd.DataFrame([{**job, "batch": b} for b in batches])

    def predict(self, job: dict[str, object], batches: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        configs = self._configs(job, batches)
        return self.time_model.predict(configs), self.accuracy_model.predict(configs)

    def intervals(self, job: dict[str, object], batches: Sequence[int]) -> dict[str, Intervals]:
        """CV+ intervals of the time and the accuracy per batch (empty when fitted without a level)."""
        configs = self._configs(job, batches)
        return {target: c.interval(configs) for target, c in self.conformal_.items()}

    def choose(self, job: dict[str, object], slo: float, batches: Sequence[int] = CANDIDATES,
               margin: float = 0.0) -> BatchChoice:
        times, accs = self.predict(job, batches)
        choice = choose(batches, times, accs, slo, margin)
        found = self.intervals(job, batches)
        if not found:
            return choice
        ends = {t: list(zip(i.low.tolist(), i.high.tolist())) for t, i in found.items()}
        cands = tuple(replace(c, time_interval=ends["time"][k], accuracy_interval=ends["accuracy"][k])
                      for k, c in enumerate(choice.candidates))
        return replace(choice, candidates=cands)


def check_table(table: pd.DataFrame) -> None:
    missing = [c for c in COURIER_COLUMNS if c not in table.columns]
    if missing:
        raise CampaignDataError(f"the Courier table lacks column(s) {', '.join(missing)}: it needs "
                                f"{', '.join(COURIER_COLUMNS)} (build it from a campaign with optimize.concurrent)")


def load_table(path: str | Path) -> pd.DataFrame:
    """A campaign directory (results.csv + concurrency.csv) or a CSV already in Courier's columns."""
    path = Path(path)
    if path.is_dir():
        return courier_table(path)
    csv, table = read_csv(path)  # the one table reader (models.results.read_csv)
    check_table(table)
    return runs_of(table, str(csv)).say().frame  # and its one validity rule, said in the one note


# ---------------------------------------------------------------- evaluation vs a uniformly random batch


@dataclass(frozen=True)
class EvaluationRow:
    job: dict[str, object]
    slo: float
    courier_batch: int
    courier_time: float
    courier_accuracy: float
    random_batch: int
    random_time: float
    random_accuracy: float


@dataclass(frozen=True)
class Evaluation:
    """Albo Martínez 2021 section 5's figures on held-out rows: SLO fulfilment rates and mean accuracies."""

    rows: tuple[EvaluationRow, ...]

    @property
    def courier_fulfilment(self) -> float:
        return float(np.mean([r.courier_time <= r.slo for r in self.rows]))

    @property
    def random_fulfilment(self) -> float:
        return float(np.mean([r.random_time <= r.slo for r in self.rows]))

    @property
    def courier_accuracy(self) -> float:
        return float(np.mean([r.courier_accuracy for r in self.rows]))

    @property
    def random_accuracy(self) -> float:
        return float(np.mean([r.random_accuracy for r in self.rows]))

    def accuracy_when_both_meet(self) -> tuple[float, float, int]:
        both = [r for r in self.rows if r.courier_time <= r.slo and r.random_time <= r.slo]
        if not both:
            return float("nan"), float("nan"), 0
        return (float(np.mean([r.courier_accuracy for r in both])), float(np.mean([r.random_accuracy for r in both])),
                len(both))


def evaluate(table: pd.DataFrame, trials: int = 100, slo_mean: float = 300.0, slo_sd: float = 100.0,
             test_share: float = 0.3, seed: int = 0, batches: Sequence[int] = CANDIDATES,
             courier: Courier | None = None, margin: float = 0.0) -> Evaluation:
    """Courier vs a uniformly random batch on held-out configurations (see the module docstring)."""
    check_table(table)
    rng = np.random.default_rng(seed)
    means = table.groupby([*JOB_COLUMNS, "batch"], as_index=False)[["time", "accuracy"]].mean()
    jobs = means[list(JOB_COLUMNS)].drop_duplicates().reset_index(drop=True)
    complete = [i for i, j in jobs.iterrows()
                if set(batches) <= set(means.loc[(means[list(JOB_COLUMNS)] == j.values).all(axis=1), "batch"])]
    if len(complete) < 2:
        raise CampaignDataError("evaluation needs at least 2 (cpus, njobs, network) configurations measured at every "
                                f"candidate batch {list(batches)}; run more configurations")
    order = rng.permutation(complete)
    n_test = max(1, int(round(test_share * len(order))))
    test_jobs, train_jobs = jobs.loc[order[:n_test]], jobs.loc[order[n_test:]]
    key = list(JOB_COLUMNS)
    train = table.merge(train_jobs, on=key)
    model = (courier or Courier(seed=seed)).fit(train)
    rows = []
    for _ in range(trials):
        job = test_jobs.iloc[int(rng.integers(len(test_jobs)))].to_dict()
        slo = max(1.0, float(rng.normal(slo_mean, slo_sd)))
        pick = model.choose(job, slo, batches, margin).batch
        rand = int(batches[int(rng.integers(len(batches)))])
        measured = means[(means[key] == pd.Series(job)[key].values).all(axis=1)].set_index("batch")
        rows.append(EvaluationRow(job, slo, pick, float(measured.at[pick, "time"]), float(measured.at[pick, "accuracy"]),
                                  rand, float(measured.at[rand, "time"]), float(measured.at[rand, "accuracy"])))
    return Evaluation(tuple(rows))


if __name__ == "__main__":
    from optimize.cli.batch import main
    sys.exit(run_cli(main))
