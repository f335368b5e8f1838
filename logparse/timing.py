"""When BigDL trained and validated, read from the job's log (.out), for the phases of a run.

BigDL's ``[Wall Clock Ws]`` counts training only (validation does not advance it), from an
origin it does not print. Every iteration line stamped at second ``T`` (log4j, one-second
resolution) says ``T <= origin + W < T + 1``; intersecting those intervals over all lines puts the
origin within a fraction of a second. Validation time is exact: BigDL prints the validated
record count and the throughput (``validate model throughput is X records/second``).

Log timestamps are the driver's local time without a zone; :func:`zone_offset_s` finds the
offset from one known epoch instant (the event log's application start).
"""

from __future__ import annotations

import gzip
import re
import time
from dataclasses import dataclass
from pathlib import Path


STAMP = re.compile(r"^(\d{2,4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d) ")
EPOCH = re.compile(r"\[Epoch (\d+) ")
ITERATION = re.compile(r"\[Wall Clock ([0-9.]+)s\] Trained ")
THROUGHPUT = re.compile(r"validate model throughput is ([0-9.eE+-]+) records/second")
COUNT = re.compile(r"Top1Accuracy is Accuracy\(correct: \d+, count: (\d+)")
SPARK_START = "SparkContext:57 - Running Spark version"


@dataclass(frozen=True)
class TrainingTimes:
    """Training and validation as BigDL logged them; times are naive local epoch seconds."""

    spark_start: float | None  # the driver's "Running Spark version" line
    origin: float | None  # when BigDL's wall clock was 0 (training start)
    origin_error_s: float  # half the width of the interval the origin is known to lie in
    wall_clock_s: float | None  # the last iteration's wall clock (training time)
    validation_s: float  # sum over validations of count / throughput
    validations: int
    last_line: float | None  # the last timestamped BigDL line (end of the last validation)
    training_end: float | None  # the last epoch's origin + its last wall clock + its validation


def _stamp(line: str) -> float | None:
    m = STAMP.match(line)
    if not m:
        return None
    year = int(m.group(1))
    year += 2000 if year < 100 else 0
    fields = (year, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6)))
    return float(_timegm(fields))


def _timegm(fields: tuple[int, ...]) -> int:
    """Seconds since the epoch of a naive date-time read as UTC (the zone is fixed later)."""
    import calendar

    return calendar.timegm((*fields, 0, 0, 0))


def _origin(bounds: tuple[float, float]) -> tuple[float, float]:
    """Midpoint and half-width of the interval ``[lo, hi]`` (lines printed late: ``lo`` alone)."""
    lo, hi = bounds
    return ((lo + hi) / 2, (hi - lo) / 2) if lo <= hi else (lo, 1.0)


def read_training_times(path: Path) -> TrainingTimes:
    """Scan a BigDL .out (plain or .gz) for the wall-clock origin and validation time.

    Validation stops BigDL's wall clock, so each epoch has its own origin; the first epoch's is
    the training start, the last epoch's (plus its last wall clock and validation) the end.
    """
    bounds: dict[int, tuple[float, float]] = {}
    wall = None
    spark_start = last = None
    validation, validations, pending, last_validation = 0.0, 0, None, 0.0
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            if "Wall Clock" in line:
                t = _stamp(line)
                m = ITERATION.search(line)
                e = EPOCH.search(line)
                if t is not None and m and e:
                    w, epoch = float(m.group(1)), int(e.group(1))
                    lo, hi = bounds.get(epoch, (float("-inf"), float("inf")))
                    bounds[epoch] = (max(lo, t - w), min(hi, t + 1 - w))
                    wall, last_validation = w, 0.0
                elif (m := THROUGHPUT.search(line)) is not None:
                    pending = float(m.group(1))
                elif (m := COUNT.search(line)) is not None and pending:
                    last_validation = int(m.group(1)) / pending
                    validation += last_validation
                    validations, pending = validations + 1, None
                last = t if t is not None else last
            elif spark_start is None and SPARK_START in line:
                spark_start = _stamp(line)
    if wall is None:
        return TrainingTimes(spark_start, None, 0.0, None, validation, validations, last, None)
    origin, err = _origin(bounds[min(bounds)])
    end_origin, _ = _origin(bounds[max(bounds)])
    return TrainingTimes(spark_start, origin, err, wall, validation, validations, last,
                         end_origin + wall + last_validation)


def zone_offset_s(naive: float, epoch: float, step_s: float = 900.0) -> float:
    """The driver's UTC offset: ``naive - epoch`` rounded to whole quarter hours."""
    return round((naive - epoch) / step_s) * step_s


def local_offset_s() -> float:
    """This machine's UTC offset now (used when no event log gives an anchor)."""
    return -time.altzone if time.localtime().tm_isdst > 0 else -time.timezone
