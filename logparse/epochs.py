"""Per-epoch summaries of a fully parsed log (``parse(path, full=True)``)."""

from __future__ import annotations

from dataclasses import dataclass

from logparse.records import JobLog


@dataclass(frozen=True)
class EpochSummary:
    """One epoch: its iterations, its end and its validation, as one flat row."""

    path: str
    epoch: int
    iterations: int
    records: float
    mean_loss: float | None
    last_loss: float | None
    mean_throughput: float | None     # records/second, mean over the epoch's iterations
    last_learning_rate: float | None
    wall_clock_s: float | None        # header Wall Clock of the "Epoch finished" line
    epoch_wall_clock_ms: float | None
    accuracy: float | None            # Top1Accuracy of this epoch's validation
    validation_wall_clock_s: float | None


def epoch_summaries(log: JobLog) -> list[EpochSummary]:
    """One row per epoch seen in any record, in epoch order."""
    by_epoch: dict[int, list] = {}
    for it in log.iterations:
        by_epoch.setdefault(it.epoch, []).append(it)
    ends = {e.epoch: e for e in log.epochs}
    vals = {v.epoch: v for v in log.validations}
    rows = []
    for epoch in sorted(set(by_epoch) | set(ends) | set(vals)):
        its = by_epoch.get(epoch, [])
        end, val = ends.get(epoch), vals.get(epoch)
        rows.append(EpochSummary(
            path=log.path, epoch=epoch, iterations=len(its), records=sum(i.records for i in its),
            mean_loss=sum(i.loss for i in its) / len(its) if its else None,
            last_loss=its[-1].loss if its else None,
            mean_throughput=sum(i.throughput for i in its) / len(its) if its else None,
            last_learning_rate=its[-1].learning_rate if its else None,
            wall_clock_s=None if end is None else end.wall_clock_s,
            epoch_wall_clock_ms=None if end is None else end.epoch_wall_clock_ms,
            accuracy=None if val is None else val.accuracy,
            validation_wall_clock_s=None if val is None else val.wall_clock_s,
        ))
    return rows
