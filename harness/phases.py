"""Where a run's time went, from submit to spark-submit's exit, in phases that add up to its elapsed time.

Boundaries (epoch seconds) and where each comes from:

==================  ===========================================================
submitted           the harness, just before it starts spark-submit
driver started      event log: SparkListenerApplicationStart (SparkContext up)
executors granted   event log: the last SparkListenerExecutorAdded
training started    BigDL log: the origin of its wall clock (epoch 1)
training ended      BigDL log: last epoch's origin + wall clock + its validation
application ended   event log: SparkListenerApplicationEnd
exited              the harness, when spark-submit's process ended
==================  ===========================================================

The phases are the differences of consecutive boundaries, except that the training span is
split into training and validation (BigDL's validation time: count / throughput). A phase
whose boundary is unknown (a run that failed early) is None. ``phase_*`` columns: seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Mapping

from logparse.eventlog import AppMetrics
from logparse.timing import TrainingTimes, local_offset_s, zone_offset_s

PHASES = ("submit", "executors", "prepare", "training", "validation", "finish", "exit")
DESCRIPTIONS = {
    "submit": "submit to driver start (JVM, Python, imports, data before the SparkContext)",
    "executors": "driver start to executors granted (jobs/train.py prepares the data and BigDL meanwhile)",
    "prepare": "executors granted to training start (BigDL's first jobs: caching the data and models)",
    "training": "training (epochs, without validation)",
    "validation": "validation after each epoch",
    "finish": "training end to application end (model retrieval, SparkContext stop)",
    "exit": "application end to spark-submit exit (JVM shutdown)",
}


@dataclass(frozen=True)
class Boundaries:
    """The instants between phases (epoch seconds; None where unknown)."""

    submitted: float
    driver_started: float | None
    executors_granted: float | None
    training_started: float | None
    training_ended: float | None
    application_ended: float | None
    exited: float


@dataclass(frozen=True)
class Phases:
    """Seconds per phase; :attr:`total_s` is exited - submitted."""

    submit: float | None
    executors: float | None
    prepare: float | None
    training: float | None
    validation: float | None
    finish: float | None
    exit: float | None
    total_s: float

    def columns(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {f"phase_{k}_s": None if v is None else round(v, 3)
                                        for k, v in asdict(self).items() if k != "total_s"}
        out["phase_total_s"] = round(self.total_s, 3)
        return out

    @property
    def overhead_s(self) -> float:
        """Everything but training and validation."""
        return self.total_s - (self.training or 0.0) - (self.validation or 0.0)


def boundaries(submitted: float, exited: float, app: AppMetrics | None, times: TrainingTimes | None) -> Boundaries:
    """Put the event log (epoch ms) and the BigDL log (driver-local clock) on one time line."""
    start = app.start_ms / 1000 if app and app.start_ms else None
    granted = app.executors_granted_ms / 1000 if app and app.executors_granted_ms else None
    end = app.end_ms / 1000 if app and app.end_ms else None
    t_start = t_end = None
    if times is not None and times.origin is not None:
        offset = (zone_offset_s(times.spark_start, start) if times.spark_start is not None and start is not None
                  else local_offset_s())
        t_start = times.origin - offset
        t_end = times.training_end - offset if times.training_end is not None else None
    return Boundaries(submitted, start, granted, t_start, t_end, end, exited)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def split(b: Boundaries, validation_s: float) -> Phases:
    span = _diff(b.training_started, b.training_ended)
    return Phases(
        submit=_diff(b.submitted, b.driver_started),
        executors=_diff(b.driver_started, b.executors_granted),
        prepare=_diff(b.executors_granted, b.training_started),
        training=None if span is None else span - validation_s,
        validation=None if span is None else validation_s,
        finish=_diff(b.training_ended, b.application_ended),
        exit=_diff(b.application_ended, b.exited),
        total_s=b.exited - b.submitted,
    )


def run_phases(submitted: float, exited: float, app: AppMetrics | None, times: TrainingTimes | None) -> Phases:
    """The phases of one run from the harness's instants, its event log and its BigDL log."""
    return split(boundaries(submitted, exited, app, times), times.validation_s if times else 0.0)


@dataclass(frozen=True)
class Efficiency:
    """How much of a campaign's wall time was training."""

    training_s: float
    validation_s: float
    campaign_s: float
    runs: int

    @property
    def efficiency(self) -> float:
        return self.training_s / self.campaign_s if self.campaign_s > 0 else 0.0


def campaign_efficiency(rows: Iterable[Mapping[str, object]], campaign_s: float) -> Efficiency:
    """Training time over campaign wall time, from rows holding ``phase_training_s``/``phase_validation_s``."""
    train = val = 0.0
    n = 0
    for r in rows:
        t, v = r.get("phase_training_s"), r.get("phase_validation_s")
        if t not in (None, ""):
            train += float(t)  # type: ignore[arg-type]
            val += float(v or 0.0)  # type: ignore[arg-type]
            n += 1
    return Efficiency(train, val, campaign_s, n)
