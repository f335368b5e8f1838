"""The per-epoch line of jobs that are not BigDL: one JSON object per validated epoch, in the job's stdout.

BigDL prints its own per-epoch validation lines (``Top1Accuracy is Accuracy(...)``, read by
:mod:`logparse.scan`). A job that reports its figures as JSON (``results = "json"``: the
TorchDistributor and XGBoost jobs, or a user's) prints instead, once per validated epoch::

    sparkdl-epoch {"epoch": 2, "wall_clock_s": 7.31, "accuracy": 0.874, "loss": 0.41}

``epoch`` (an integer >= 1), ``wall_clock_s`` (training time so far, a finite number >= 0) and
``accuracy`` (in [0, 1]) are required; any other key is kept as it is. A line that is not that is
ignored (a job's output can hold anything). The last line of an epoch counts. Pruning reads these
lines while the job runs (:mod:`optimize.search.pruning`), the per-epoch harvest afterwards
(:mod:`optimize.harvest`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Mapping

TAG = b"sparkdl-epoch "
MAX_LINE = 1 << 16


@dataclass(frozen=True)
class EpochLine:
    """One validated epoch of a job that is not BigDL."""

    epoch: int
    wall_clock_s: float
    accuracy: float
    extra: Mapping[str, object] = field(default_factory=dict)


def parse_line(line: bytes) -> EpochLine | None:
    """The epoch of one line (``sparkdl-epoch {...}``, anywhere in the line), else None."""
    at = line.find(TAG)
    if at < 0 or len(line) > MAX_LINE:
        return None
    try:
        data = json.loads(line[at + len(TAG):].decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    epoch, wall, accuracy = data.get("epoch"), data.get("wall_clock_s"), data.get("accuracy")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (wall, accuracy)):
        return None
    if wall < 0 or not 0.0 <= accuracy <= 1.0:  # type: ignore[operator]
        return None
    extra = {k: v for k, v in data.items() if k not in ("epoch", "wall_clock_s", "accuracy")}
    return EpochLine(epoch, float(wall), float(accuracy), extra)  # type: ignore[arg-type]


def read_epochs(path: str | os.PathLike[str]) -> list[EpochLine]:
    """Every validated epoch in a log, in epoch order (the last line of an epoch counts); [] when none."""
    by_epoch: dict[int, EpochLine] = {}
    try:
        with open(path, "rb") as f:
            for line in f:
                if TAG in line:
                    found = parse_line(line.rstrip(b"\r\n"))
                    if found is not None:
                        by_epoch[found.epoch] = found
    except FileNotFoundError:
        return []
    return [by_epoch[e] for e in sorted(by_epoch)]


#: A job's own measurement of its training's times, one line (the last counts): ``sparkdl-times {"fit_s": 14.2}``.
TIMES_TAG = b"sparkdl-times "
#: The times such a line may give (docs/runtimes-and-jobs.md: the time vocabulary).
TIME_NAMES = ("fit_s", "train_loop_s")


def parse_times(line: bytes) -> dict[str, float] | None:
    """The times of one ``sparkdl-times`` line (finite numbers >= 0 of :data:`TIME_NAMES`), else None."""
    at = line.find(TIMES_TAG)
    if at < 0 or len(line) > MAX_LINE:
        return None
    try:
        data = json.loads(line[at + len(TIMES_TAG):].decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    times = {k: float(v) for k, v in data.items() if k in TIME_NAMES and isinstance(v, (int, float))
             and not isinstance(v, bool) and math.isfinite(v) and v >= 0}
    return times or None


def read_times(path: str | os.PathLike[str]) -> dict[str, float]:
    """The times of the last ``sparkdl-times`` line of a log; {} when there is none."""
    found: dict[str, float] = {}
    try:
        with open(path, "rb") as f:
            for line in f:
                if TIMES_TAG in line:
                    found = parse_times(line.rstrip(b"\r\n")) or found
    except FileNotFoundError:
        return {}
    return found
