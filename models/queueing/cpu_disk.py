"""Albo Martínez 2021's CPU + disk model of a BigDL training job (Courier, ICPE '21, section 4.2).

A job runs N_T = ceil(N / B) * epochs iterations; each iteration is a CPU phase then a disk
fetch, so E[T] = N_T (E[T_cpu] + E[T_D]).

- CPU: M/M/1 with processor sharing. Its mean response time is E[S_cpu] / (1 - rho_cpu), the same
  as FCFS M/M/1 (PS is insensitive to the order of service). The paper schedules no more tasks
  than cores, so rho_cpu = 0 and E[T_cpu] = E[S_cpu], seconds per iteration.
- Disk: M/M/1 with arrival rate lambda_D = max(1, cpus * njobs / workers) / E[S_cpu] (tasks
  per worker, each issuing one fetch per CPU phase), so E[T_D] = 1 / (mu_D - lambda_D).
- Fit: each measured run gives mu_D = 1 / (E[T]/N_T - E[T_cpu]) + lambda_D; a linear regression
  mu_D ~ 1 + batch + processes then predicts mu_D, hence E[T], for any configuration.

The paper prints E[T_D] = 1 / (lambda_D - mu_D), a sign slip (negative for a stable disk); its
inversion for mu_D is the correct one and is used here.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy import stats

from models.errors import ConcurrencyUnknownError, FitError, InvalidTableError, MissingColumnError, QueueParameterError
from models.queueing.formulas import _check_rate, mm1
from models.results import resolve_path, status_is_ok
from sparkdl.campaign import CampaignDir
from sparkdl.config import read_table


@dataclass(frozen=True)
class CourierJob:
    """One training job as the model sees it."""

    batch_size: int
    epochs: int
    cpus: int  # total Spark cores of the job: executors * executor_cores
    workers: int
    njobs: int = 1  # jobs running concurrently on the cluster
    dataset_size: int = 60_000  # MNIST training set

    @property
    def iterations(self) -> int:
        """N_T = ceil(N / B) * epochs (BigDL finishes an epoch on a partial last batch)."""
        return math.ceil(self.dataset_size / self.batch_size) * self.epochs

    @property
    def processes(self) -> int:
        """cpus * njobs, Albo Martínez 2021's "processes" feature."""
        return self.cpus * self.njobs

    def tasks_per_worker(self) -> float:
        """max(1, processes / workers): tasks sharing one worker's disk."""
        return max(1.0, self.processes / self.workers)


@dataclass(frozen=True)
class CpuDiskPrediction:
    """Predicted response time of one job, in seconds, with its parts (seconds per iteration)."""

    iterations: int
    cpu_time: float
    disk_arrival_rate: float
    disk_service_rate: float
    disk_utilization: float
    disk_time: float
    ET: float


def _check_job(config: CourierJob) -> None:
    for name in ("batch_size", "epochs", "cpus", "workers", "njobs", "dataset_size"):
        value = getattr(config, name)
        if int(value) != value or value < 1:
            raise QueueParameterError(f"{name} must be an integer >= 1, got {value!r}")


def disk_arrival_rate(config: CourierJob, cpu_service_time: float) -> float:
    """lambda_D = max(1, processes / workers) / E[S_cpu], fetches per second at one disk."""
    _check_job(config)
    return config.tasks_per_worker() / _check_rate("cpu_service_time", cpu_service_time)


def cpu_disk_response_time(config: CourierJob, cpu_service_time: float, disk_service_rate: float,
                           cpu_utilization: float = 0.0) -> CpuDiskPrediction:
    """E[T] = N_T (E[S_cpu] / (1 - rho_cpu) + 1 / (mu_D - lambda_D)); raises if the disk is unstable."""
    if not 0 <= cpu_utilization < 1:
        raise QueueParameterError(f"cpu_utilization must be in [0, 1), got {cpu_utilization!r}")
    lam = disk_arrival_rate(config, cpu_service_time)
    disk = mm1(lam, disk_service_rate)
    cpu_time = cpu_service_time / (1 - cpu_utilization)
    return CpuDiskPrediction(config.iterations, cpu_time, lam, disk.service_rate, disk.rho, disk.ET,
                             ET=config.iterations * (cpu_time + disk.ET))


def disk_service_rate_from_time(config: CourierJob, response_time: float, cpu_service_time: float) -> float:
    """Invert the model for one measured run: mu_D = 1 / (E[T]/N_T - E[S_cpu]) + lambda_D."""
    lam = disk_arrival_rate(config, cpu_service_time)
    per_iteration = _check_rate("response_time", response_time) / config.iterations
    if per_iteration <= cpu_service_time:
        raise QueueParameterError(
            f"response_time {response_time:g} s over {config.iterations} iterations is "
            f"{per_iteration:.4g} s per iteration, not above cpu_service_time {cpu_service_time:g} s: "
            f"lower cpu_service_time"
        )
    return 1.0 / (per_iteration - cpu_service_time) + lam


@dataclass(frozen=True)
class CpuDiskModel:
    """mu_D = intercept + per_batch * batch_size + per_process * processes, fitted to runs.

    A fit keeps what its intervals need: ``xtx_inv`` ((X'X)^-1 of the design 1, batch_size, processes), the
    residual SD of the runs' implied mu_D about the line and its degrees of freedom (runs - 3). A model built by
    hand (no ``xtx_inv``) has no intervals.
    """

    cpu_service_time: float
    intercept: float
    per_batch: float
    per_process: float
    xtx_inv: tuple[tuple[float, ...], ...] | None = None
    residual_sd: float = math.nan
    residual_df: int = 0

    def disk_service_rate(self, config: CourierJob) -> float:
        return self.intercept + self.per_batch * config.batch_size + self.per_process * config.processes

    @property
    def standard_errors(self) -> tuple[float, float, float]:
        """The coefficients' ordinary least-squares standard errors (NaN without residual degrees of freedom)."""
        if self.xtx_inv is None or self.residual_df < 1:
            return (math.nan,) * 3  # type: ignore[return-value]
        return tuple(self.residual_sd * math.sqrt(self.xtx_inv[i][i]) for i in range(3))  # type: ignore[return-value]

    def rate_interval(self, config: CourierJob, level: float, new_run: bool) -> tuple[float, float]:
        """The t interval of mu_D at ``config``: of the line (``new_run`` False) or of one more run's implied mu_D."""
        if not 0 < level < 1:
            raise QueueParameterError(f"level must be in (0, 1), got {level!r}")
        if self.xtx_inv is None or self.residual_df < 1:
            return math.nan, math.nan
        x = np.array([1.0, config.batch_size, config.processes])
        leverage = float(x @ np.array(self.xtx_inv) @ x)
        half = (stats.t.ppf(0.5 + level / 2, self.residual_df) * self.residual_sd
                * math.sqrt(leverage + (1.0 if new_run else 0.0)))
        rate = self.disk_service_rate(config)
        return rate - half, rate + half

    def time_interval(self, config: CourierJob, level: float, new_run: bool) -> tuple[float, float]:
        """``rate_interval`` mapped through E[T], which falls as mu_D rises: (E[T] at the high rate, at the low one).

        Where the low rate does not exceed lambda_D (an unstable disk) the upper end is inf; NaN without a fit.
        """
        low_rate, high_rate = self.rate_interval(config, level, new_run)
        if math.isnan(low_rate):
            return math.nan, math.nan
        lam = disk_arrival_rate(config, self.cpu_service_time)

        def time(rate: float) -> float:
            if rate <= lam:
                return math.inf
            return cpu_disk_response_time(config, self.cpu_service_time, rate).ET

        return time(high_rate), time(low_rate)

    def predict(self, config: CourierJob) -> CpuDiskPrediction:
        """Predicted E[T]; raises UnstableQueueError if the fitted mu_D does not exceed lambda_D."""
        rate = self.disk_service_rate(config)
        if rate <= 0:
            raise FitError(f"the fitted disk service rate is {rate:g} <= 0 for {config}: outside the data")
        return cpu_disk_response_time(config, self.cpu_service_time, rate)


def fit_cpu_disk(configs: Sequence[CourierJob], response_times: Sequence[float],
                 cpu_service_time: float) -> CpuDiskModel:
    """Fit Albo Martínez 2021's disk-rate regression to measured response times (seconds), one per run."""
    if len(configs) != len(response_times):
        raise QueueParameterError(f"{len(configs)} configs but {len(response_times)} response times")
    rates = [disk_service_rate_from_time(c, t, cpu_service_time) for c, t in zip(configs, response_times)]
    design = np.array([[1.0, c.batch_size, c.processes] for c in configs])
    if np.linalg.matrix_rank(design) < 3:
        raise QueueParameterError("the runs must vary both batch_size and processes (cpus * njobs) to fit mu_D")
    y = np.array(rates)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    df = len(rates) - 3
    sd = math.sqrt(float(np.sum((y - design @ coef) ** 2)) / df) if df > 0 else math.nan
    xtx_inv = tuple(tuple(map(float, row)) for row in np.linalg.inv(design.T @ design))
    return CpuDiskModel(cpu_service_time, *map(float, coef), xtx_inv=xtx_inv, residual_sd=sd, residual_df=df)


def load_runs(results: str | Path | Sequence[str | Path],
              dataset_size: int = 60_000) -> tuple[list[CourierJob], list[float]]:
    """Configurations and wall-clock seconds of the ``status == ok`` runs of one or more results tables.

    cpus = executors * executor_cores, workers = nodes, and njobs (the jobs running at once) from
    :func:`njobs_reader`: an ``njobs`` column, else the campaign's concurrency.csv, else its recorded
    ``sparkdl concurrent`` settings, else 1 for a campaign of jobs run one at a time; a table that says
    none of these is refused. One ``sparkdl concurrent`` folder holds one cpus x njobs, so a fit of
    mu_D ~ batch + processes needs several: pass them all.
    """
    paths = [results] if isinstance(results, (str, Path)) else list(results)
    if not paths:
        raise QueueParameterError("no results table given: name at least one campaign folder or results CSV")
    configs: list[CourierJob] = []
    times: list[float] = []
    for one in paths:
        c, t = _load_one(one, dataset_size)
        configs += c
        times += t
    return configs, times


def _load_one(results: str | Path, dataset_size: int) -> tuple[list[CourierJob], list[float]]:
    path = resolve_path(results)
    table = read_table(path, "results table", InvalidTableError)  # the one table reader
    columns = set(table.header)
    reader = (_record(table.header, fields) for _, fields in table.rows)
    rows = list(enumerate(reader, start=2))
    missing = sorted({"batch_size", "epochs", "executors", "executor_cores", "nodes", "wall_clock_s"} - columns)
    if missing:
        raise MissingColumnError(f"{path} has no column {', '.join(missing)}: the CPU + disk model needs it")
    njobs_of = njobs_reader(path, table.header)
    configs, times = [], []
    for line, row in rows:
        if "status" in row and not status_is_ok(row["status"]):
            continue
        try:
            ints = {name: int(float(row[name])) for name in ("batch_size", "epochs", "executors", "executor_cores",
                                                              "nodes")}
            seconds = float(row["wall_clock_s"])
        except (ValueError, OverflowError) as exc:
            raise InvalidTableError(f"{path} line {line}: {exc}") from None
        configs.append(CourierJob(ints["batch_size"], ints["epochs"], ints["executors"] * ints["executor_cores"],
                                 ints["nodes"], njobs_of(row, line), dataset_size))
        times.append(seconds)
    if not configs:
        raise InvalidTableError(f"{path} has no runs with status ok")
    return configs, times


NjobsOf = Callable[[Mapping[str | None, object], int], int]

_NJOBS_FIX = "add an njobs column to results.csv (the jobs that ran at once; 1 for a job that ran alone)"


def njobs_reader(results_csv: Path, header: Sequence[str]) -> NjobsOf:
    """How to read each run's njobs from where its campaign recorded it, first found:

    1. an ``njobs`` column of the results table (a table of the user's, or Albo Martínez 2021's own);
    2. concurrency.csv beside it (run, replicate, group, njobs: written by ``sparkdl concurrent`` per group);
       every run must be in it;
    3. the campaign's recorded settings (its store's ``search``): a ``sparkdl concurrent`` campaign ran every
       group with its ``--njobs`` copies;
    4. 1, for a campaign folder (manifest.json and store) made by any other command: ``sparkdl submit`` and the
       other optimizers run one job at a time.

    Anything else (a bare CSV, an ingested campaign, a concurrent campaign's store unreadable) cannot tell and is
    :class:`ConcurrencyUnknownError`. manifest.json and the design never hold njobs: the manifest lists the
    design's factors, and a design with an njobs column is refused by ``sparkdl design``/``submit``.
    """
    if "njobs" in header:
        return lambda row, line: _count(row.get("njobs"), f"{results_csv} line {line}: njobs")
    folder = CampaignDir(results_csv.parent)
    groups = folder.path / CampaignDir.CONCURRENCY
    if groups.is_file():
        return _from_groups(groups, results_csv, header)
    search = _recorded_search(folder)
    if isinstance(search, dict) and search.get("optimizer") == "concurrent":
        n = _count(search.get("njobs"), f"{folder.store_path}: the recorded --njobs")
        return lambda row, line: n
    manifest = folder.read_manifest() if folder.store_path.is_file() else None
    if manifest is not None and manifest.source != "ingest":
        return lambda row, line: 1
    where = ("an ingested campaign (its logs' concurrency was not recorded)" if manifest is not None
             else "no campaign folder beside it (no concurrency.csv, manifest.json or campaign.sqlite)")
    raise ConcurrencyUnknownError(f"{results_csv} has no njobs column and {where}, so the jobs running at once "
                                  f"are unknown: {_NJOBS_FIX}")


def _count(value: object, what: str) -> int:
    """A positive integer njobs, or :class:`ConcurrencyUnknownError` naming ``what``."""
    try:
        n = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        n = math.nan
    if not math.isfinite(n) or n < 1 or n != int(n):
        raise ConcurrencyUnknownError(f"{what} is {value!r}, not an integer >= 1: give the jobs that ran at once "
                                      "(1 for a job that ran alone)")
    return int(n)


def _from_groups(groups: Path, results_csv: Path, header: Sequence[str]) -> NjobsOf:
    """njobs per (run, replicate) from concurrency.csv; a run it does not hold is refused."""
    if not {"run", "replicate"} <= set(header):
        raise ConcurrencyUnknownError(f"{results_csv} has no run and replicate columns to find its runs in {groups}: "
                                      f"{_NJOBS_FIX}")
    table = read_table(groups, "concurrency table", ConcurrencyUnknownError)
    missing = sorted({"run", "replicate", "njobs"} - set(table.header))
    if missing:
        raise ConcurrencyUnknownError(f"{groups} has no column {', '.join(missing)}: it is not the concurrency.csv "
                                      f"of sparkdl concurrent; {_NJOBS_FIX}")
    njobs: dict[tuple[str, str], int] = {}
    for line, fields in table.rows:
        row = _record(table.header, fields)
        key = (_cell_key(row.get("run")), _cell_key(row.get("replicate")))
        njobs[key] = _count(row.get("njobs"), f"{groups} line {line}: njobs")

    def of(row: Mapping[str | None, object], line: int) -> int:
        run, replicate = _cell_key(row.get("run")), _cell_key(row.get("replicate"))
        if (run, replicate) not in njobs:
            raise ConcurrencyUnknownError(f"{groups.name} has no row for run {run}-{replicate} ({results_csv} line "
                                          f"{line}): restore the campaign's {groups.name}, or {_NJOBS_FIX}")
        return njobs[(run, replicate)]

    return of


def _cell_key(value: object) -> str:
    """A run or replicate number as text ("3", "3.0" and " 3" alike)."""
    text = str(value if value is not None else "").strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if math.isfinite(number) and number == int(number) else text


def _recorded_search(folder: CampaignDir) -> object:
    """The settings an optimizer recorded in the campaign's store (``meta.search``), None without a store."""
    path = folder.store_path
    if not path.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'search'").fetchone()
    except sqlite3.Error as exc:
        raise ConcurrencyUnknownError(f"{path} cannot be read ({exc}), so whether its runs ran at once is unknown: "
                                      f"{_NJOBS_FIX}") from None
    if row is None:
        return None
    try:
        return json.loads(row[0])
    except ValueError:
        raise ConcurrencyUnknownError(f"{path}: its recorded settings are not JSON: {_NJOBS_FIX}") from None


def _record(header: tuple[str, ...], fields: tuple[str, ...]) -> dict[str | None, object]:
    """A row as csv.DictReader gives it: missing fields None, extra ones under None."""
    row: dict[str | None, object] = dict(zip(header, (*fields, *[None] * (len(header) - len(fields)))))
    if len(fields) > len(header):
        row[None] = list(fields[len(header):])
    return row
