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

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from models.errors import FitError, InvalidTableError, MissingColumnError, QueueParameterError
from models.queueing.formulas import _check_rate, mm1
from models.results import resolve_path, status_is_ok
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
    """mu_D = intercept + per_batch * batch_size + per_process * processes, fitted to runs."""

    cpu_service_time: float
    intercept: float
    per_batch: float
    per_process: float

    def disk_service_rate(self, config: CourierJob) -> float:
        return self.intercept + self.per_batch * config.batch_size + self.per_process * config.processes

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
    coef, *_ = np.linalg.lstsq(design, np.array(rates), rcond=None)
    return CpuDiskModel(cpu_service_time, *map(float, coef))


def load_runs(results: str | Path, dataset_size: int = 60_000) -> tuple[list[CourierJob], list[float]]:
    """Configurations and wall-clock seconds of the ``status == ok`` runs of a results table.

    cpus = executors * executor_cores, workers = nodes, njobs from an ``njobs`` column or 1.
    """
    path = resolve_path(results)
    table = read_table(path, "results table", InvalidTableError)  # the one table reader
    columns = set(table.header)
    reader = (_record(table.header, fields) for _, fields in table.rows)
    rows = list(enumerate(reader, start=2))
    missing = sorted({"batch_size", "epochs", "executors", "executor_cores", "nodes", "wall_clock_s"} - columns)
    if missing:
        raise MissingColumnError(f"{path} has no column {', '.join(missing)}: the CPU + disk model needs it")
    configs, times = [], []
    for line, row in rows:
        if "status" in row and not status_is_ok(row["status"]):
            continue
        try:
            ints = {name: int(float(row[name])) for name in ("batch_size", "epochs", "executors", "executor_cores",
                                                              "nodes")}
            njobs = int(float(row.get("njobs") or 1))
            seconds = float(row["wall_clock_s"])
        except (ValueError, OverflowError) as exc:
            raise InvalidTableError(f"line {line}: {exc}") from None
        configs.append(CourierJob(ints["batch_size"], ints["epochs"], ints["executors"] * ints["executor_cores"],
                                 ints["nodes"], njobs, dataset_size))
        times.append(seconds)
    if not configs:
        raise InvalidTableError(f"{path} has no runs with status ok")
    return configs, times


def _record(header: tuple[str, ...], fields: tuple[str, ...]) -> dict[str | None, object]:
    """A row as csv.DictReader gives it: missing fields None, extra ones under None."""
    row: dict[str | None, object] = dict(zip(header, (*fields, *[None] * (len(header) - len(fields)))))
    if len(fields) > len(header):
        row[None] = list(fields[len(header):])
    return row
