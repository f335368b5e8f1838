"""The learning-rate objective on real jobs: ``objective(lr)`` runs one job and returns its cost.

Each distinct learning rate gets a run number in the order the search first asks for it, and each
call at that rate the next replicate number, so a replayed search (``--resume``) asks for the same
cells in the same order and gets the stored results back without running anything.

A job that did not finish ok raises :class:`JobFailedError`; a job whose log shows another learning
rate than the one asked raises :class:`LearningRateMismatchError`: neither is ever a data point.
(The original study's 9.011 came from a script that never set a rate above 1.024.) Only BigDL's log
shows the rate it trained at; another job's (xgboost's ``learning_rate``) is taken as asked.
"""

from __future__ import annotations

import math

from sparkdl.campaign import RunRecord
from sparkdl.cost import CostFunction
from optimize.errors import JobFailedError, LearningRateMismatchError
from optimize.session import JobConfig, JobSession

#: Relative tolerance between the asked and the logged learning rate (the log prints ~16 digits).
LR_RTOL = 1e-9


def check_learning_rate(result: RunRecord, asked: float) -> None:
    """Raise LearningRateMismatchError unless the job's log shows the learning rate asked."""
    used = result.outcome.learning_rate_used
    if used is None or not math.isclose(used, asked, rel_tol=LR_RTOL, abs_tol=0.0):
        raise LearningRateMismatchError(
            f"run {result.run}-{result.replicate} asked learning rate {asked!r} but its log ({result.execution.log}) "
            f"shows {used!r}: the job did not run what the search asked; fix the job script, then use a new --out")


class JobObjective:
    """Callable ``lr -> cost`` of one real job through a :class:`JobSession`; keeps every result."""

    def __init__(self, session: JobSession, config: JobConfig, cost: CostFunction) -> None:
        self.session, self.config, self.cost = session, config, cost
        self.runs: dict[float, int] = {}
        self.calls: dict[float, int] = {}
        self.results: list[RunRecord] = []

    def __call__(self, lr: float) -> float:
        run = self.runs.setdefault(lr, len(self.runs) + 1)
        replicate = self.calls[lr] = self.calls.get(lr, 0) + 1
        spec = self.config.spec(run, replicate, learning_rate=lr)
        result = self.session.run(spec)
        if result.spec.learning_rate != lr:
            raise JobFailedError(
                f"run {spec.key} in {self.session.out} was made at learning rate {result.spec.learning_rate!r}, "
                f"this search asks {lr!r} there: the directory holds another search; use a new --out")
        if result.status != "ok":
            raise JobFailedError(
                f"run {spec.key} at learning rate {lr!r} {result.status}: {result.reason} "
                f"(log: {self.session.out / result.execution.log}); fix the cause, then use a new --out")
        if self.config.described().results == "bigdl":  # the only log that shows the rate used
            check_learning_rate(result, lr)
        self.results.append(result)
        return float(self.cost(result.wall_clock_s, result.accuracy))
