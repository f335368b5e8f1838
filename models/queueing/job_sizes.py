"""Job sizes from a results table, and the queue metrics they imply at a chosen utilization.

A job's size is either its wall-clock time in seconds (column ``wall_clock_s``) or Marinos 2021's
cost T / (100 A)^2 (column ``cost``, or computed from ``wall_clock_s`` and ``accuracy``). The
service rate is 1 / mean size, per second or per unit of cost; the scv is the sample variance
(ddof = 1) over the squared mean.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from models.errors import InvalidTableError, MissingColumnError
from models.queueing.formulas import QueueMetrics, arrival_rate_for, mgk, mmk
from models.results import resolve_path, status_is_ok
from sparkdl.config import read_table

UNITS = {"time": "seconds (wall_clock_s)", "cost": "Marinos 2021 cost units, T / (100 A)^2"}


@dataclass(frozen=True)
class JobSizes:
    """Summary of the job sizes of the usable runs in one table."""

    source: str
    quantity: str  # "time" or "cost"
    count: int
    mean: float
    scv: float

    @property
    def service_rate(self) -> float:
        """1 / mean size: jobs per second (time) or per unit of cost."""
        return 1.0 / self.mean


def size_moments(sizes: Sequence[float]) -> tuple[float, float]:
    """Mean and scv (sample variance, ddof 1, over the squared mean) of two or more positive sizes.

    Computed in units of the largest size, so no sum overflows whatever the magnitudes (1e308 s
    included); a mean or scv that is still not finite is an :class:`InvalidTableError`.
    """
    if len(sizes) < 2:
        raise InvalidTableError(f"{len(sizes)} job size(s); need at least 2 for a mean and an scv")
    scale = max(sizes)
    z = [x / scale for x in sizes]
    mean_z = statistics.fmean(z)
    mean, scv = mean_z * scale, statistics.variance(z) / mean_z**2
    if not (math.isfinite(mean) and math.isfinite(scv) and mean > 0):
        raise InvalidTableError(f"job sizes up to {scale:g} give no finite mean and scv; drop the absurd rows")
    return mean, scv


def _number(row: dict[str, str], column: str, line: int) -> float:
    try:
        value = float(row[column] or "")
    except (TypeError, ValueError):
        raise InvalidTableError(f"line {line}: {column} = {row[column]!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise InvalidTableError(f"line {line}: {column} = {value!r} must be positive for a job size")
    return value


def _size(row: dict[str, str], quantity: str, line: int) -> float:
    if quantity == "time":
        return _number(row, "wall_clock_s", line)
    if row.get("cost") not in (None, "") or "accuracy" not in row or "wall_clock_s" not in row:
        return _number(row, "cost", line)  # an empty cost without time and accuracy is "not a number"
    accuracy = _number(row, "accuracy", line)
    if accuracy > 1:
        raise InvalidTableError(f"line {line}: accuracy {accuracy!r} is above 1; expected a fraction")
    return _number(row, "wall_clock_s", line) / (100 * accuracy) ** 2


def load_job_sizes(results: str | Path, job_size: str | None = None) -> JobSizes:
    """Read job sizes from a campaign directory (DIR/results.csv) or a CSV.

    Rows whose ``status`` is not ok (:func:`models.results.status_is_ok`) are skipped. ``job_size`` is "time", "cost"
    or None (time if the table has ``wall_clock_s``, else cost).
    """
    path = resolve_path(results)
    table = read_table(path, "results table", InvalidTableError)  # the one table reader
    columns = set(table.header)
    reader = (_record(table.header, fields) for _, fields in table.rows)
    rows = [(line, row) for line, row in enumerate(reader, start=2)]
    quantity = job_size or ("time" if "wall_clock_s" in columns else "cost")
    if quantity not in UNITS:
        raise InvalidTableError(f"job_size must be 'time' or 'cost', got {quantity!r}")
    needed = {"wall_clock_s"} if quantity == "time" else (
        {"cost"} if "cost" in columns else {"wall_clock_s", "accuracy"})
    missing = sorted(needed - columns)
    if missing:
        raise MissingColumnError(f"{path} has no column {', '.join(missing)} for job_size={quantity!r}")
    if "status" in columns:
        rows = [(line, row) for line, row in rows if status_is_ok(row["status"])]
    sizes = [_size(row, quantity, line) for line, row in rows]
    if len(sizes) < 2:
        raise InvalidTableError(f"{path} has {len(sizes)} usable runs; need at least 2 for a mean and an scv")
    mean, scv = size_moments(sizes)
    return JobSizes(str(path), quantity, len(sizes), mean, scv)


@dataclass(frozen=True)
class Plan:
    """Queue metrics for one number of servers at the target utilization."""

    servers: int
    markovian: QueueMetrics  # M/M/k: exponential job sizes assumed, as Marinos 2021 does
    general: QueueMetrics  # M/G/k with the measured scv (exact P-K when k = 1)


def plan(sizes: JobSizes, utilization: float, servers: Sequence[int]) -> list[Plan]:
    """For each k, the arrival rate rho k mu and the M/M/k and M/G/k metrics it gives."""
    mu = sizes.service_rate
    result = []
    for k in servers:
        lam = arrival_rate_for(utilization, mu, k)
        result.append(Plan(k, mmk(lam, mu, k), mgk(lam, mu, k, sizes.scv)))
    return result


def _record(header: tuple[str, ...], fields: tuple[str, ...]) -> dict[str | None, object]:
    """A row as csv.DictReader gives it: missing fields None, extra ones under None."""
    row: dict[str | None, object] = dict(zip(header, (*fields, *[None] * (len(header) - len(fields)))))
    if len(fields) > len(header):
        row[None] = list(fields[len(header):])
    return row
