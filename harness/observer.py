"""What the campaign records beside BigDL's figures for every run: Spark's metrics, host use, phases.

    observer = RunObserver(roots=cluster.worker_pids)
    watch = observer.start(run_dir)   # just before spark-submit starts
    metrics = watch.stop(out_log)     # after it exited: spark_*, host_*, phase_* columns

``run_dir`` is the run's folder in the campaign (``runs/<key>/``): Spark writes its event log
there (:func:`harness.command.event_log_conf`), and the observer adds ``spark_stages.csv``
(one row per stage attempt) and ``host_samples.csv`` (one row per sample). A run whose event
log or BigDL log is missing or unreadable (it failed early) still gets its host columns and the
phases that are known; what could not be read is written to ``runs/<key>/observer-notes.txt``
(every metric is numeric: the store lists them as the campaign's responses).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from harness.phases import run_phases
from harness.times import startup_s
from harness.sampler import SAMPLES_TABLE, HostSample, HostSampler, Roots, SampleTable, read_samples
from logparse.errors import LogParseError
from logparse.eventlog import STAGE_TABLE, AppMetrics, find_event_log, read_event_log, write_stage_table
from logparse.timing import TrainingTimes, read_training_times

if TYPE_CHECKING:
    from cluster.group import HostResult
    from cluster.remote import RemoteCluster

Metrics = dict[str, object]


class Watch(Protocol):
    """One run being watched; ``stop`` after spark-submit exited, ``cancel`` when it was interrupted."""

    def stop(self, out_log: Path | None) -> Metrics: ...
    def cancel(self) -> None: ...


class Observer(Protocol):
    """What the campaign needs: whether Spark writes its event log into the run's folder, and a watch per run."""

    event_log: bool

    def start(self, run_dir: Path) -> Watch: ...


@dataclass(frozen=True)
class Observation:
    """The parsed pieces of one run, for callers that want more than the columns."""

    app: AppMetrics | None
    times: TrainingTimes | None
    metrics: Metrics


NOTES = "observer-notes.txt"
#: What reading one run's event log may cost (a real run's log is a few MB and reads in a second).
EVENT_LOG_MAX_BYTES = 512 * 2**20
EVENT_LOG_MAX_S = 120.0


def write_notes(run_dir: Path, notes: Sequence[str]) -> None:
    """What could not be observed for a run, one line each (no file when everything was)."""
    if notes:
        (Path(run_dir) / NOTES).write_text("".join(f"{n}\n" for n in notes))


class RunObserver:
    """How runs are observed: which processes are the executors, how often the host is sampled.

    ``event_log`` tells the campaign to have Spark write its event log into the run's folder
    (possible only where the driver runs on this machine).
    """

    event_log = True

    def __init__(self, roots: Roots = lambda: (), period_s: float = 1.0, sample: bool = True) -> None:
        self.roots, self.period_s, self.sample = roots, period_s, sample

    def start(self, run_dir: Path) -> "RunWatch":
        """Call just before spark-submit starts; creates ``run_dir`` (Spark needs it to exist).

        Each run gets its own :class:`RunWatch`, so concurrent runs (optimize.concurrent) can be
        watched at once; their host samples then overlap, as the runs do.
        """
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        sampler = HostSampler(self.roots, self.period_s).start() if self.sample else None
        return RunWatch(Path(run_dir), time.time(), sampler)


@dataclass
class RunWatch:
    """One run being watched: its folder, when it was submitted, its host sampler."""

    run_dir: Path
    submitted: float
    sampler: HostSampler | None
    app: AppMetrics | None = None  # the event log as read by the last observe (None: none, or unreadable)

    def cancel(self) -> None:
        """Stop sampling without reading anything (the run was interrupted)."""
        if self.sampler is not None:
            self.sampler.stop()
            self.sampler = None

    def stop(self, out_log: Path | None) -> Metrics:
        return self.observe(out_log).metrics

    def observe(self, out_log: Path | None) -> Observation:
        """Call once spark-submit exited: stop sampling, read the logs, write the tables."""
        exited = time.time()
        metrics: Metrics = {}
        notes: list[str] = []
        if self.sampler is not None:
            table = self.sampler.stop()
            self.sampler = None
            table.write_csv(self.run_dir / SAMPLES_TABLE)
            metrics.update(table.summary())
        app = times = None
        try:  # an event log that cannot be read is a note on the run, never the end of the campaign
            app = read_event_log(find_event_log(self.run_dir), EVENT_LOG_MAX_BYTES, EVENT_LOG_MAX_S)
            write_stage_table(app, self.run_dir / STAGE_TABLE)
            metrics.update(app.columns())
        except (LogParseError, OSError, ValueError, ArithmeticError, RecursionError, MemoryError) as e:
            app = None
            notes.append(f"event log: {e if isinstance(e, LogParseError) else f'{type(e).__name__}: {e}'}")
        if out_log is not None and Path(out_log).exists():
            try:
                times = read_training_times(Path(out_log))
            except (OSError, ValueError) as e:
                notes.append(f"BigDL log: {e}")
        metrics.update(run_phases(self.submitted, exited, app, times).columns())
        metrics["startup_s"] = startup_s(metrics["phase_submit_s"])  # the time vocabulary (sparkdl.times)
        write_notes(self.run_dir, notes)
        self.app = app
        return Observation(app, times, metrics)


class RemoteRunObserver:
    """Inventory hosts: a sampler on every worker host of the run, over the cluster's SSH connections.

    The driver (and so the event log) is on the master host, so there are no ``spark_*`` columns;
    the phases known from BigDL's log alone (training, validation) are recorded, with BigDL's
    timestamps read in this machine's time zone.
    """

    event_log = False

    def __init__(self, cluster: "RemoteCluster", workers: Callable[[], int], period_s: float = 1.0) -> None:
        self.cluster, self.workers, self.period_s = cluster, workers, period_s

    def start(self, run_dir: Path) -> "RemoteWatch":
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        key, workers = Path(run_dir).name, self.workers()
        started = self.cluster.start_sampling(key, workers, self.period_s)
        return RemoteWatch(Path(run_dir), time.time(), self.cluster, key, workers,
                           tuple(r.describe() for r in started.results if not r.ok))


@dataclass
class RemoteWatch:
    run_dir: Path
    submitted: float
    cluster: "RemoteCluster"
    key: str
    workers: int
    problems: tuple[str, ...] = ()

    def cancel(self) -> None:
        self.cluster.stop_sampling(self.key, self.workers)

    def stop(self, out_log: Path | None) -> Metrics:
        exited = time.time()
        result = self.cluster.stop_sampling(self.key, self.workers)
        metrics: Metrics = host_metrics(self.run_dir, result.results, exited - self.submitted)
        times = read_training_times(Path(out_log)) if out_log is not None and Path(out_log).exists() else None
        metrics.update(run_phases(self.submitted, exited, None, times).columns())
        notes = [*self.problems, *(r.describe() for r in result.results if not r.ok)]
        write_notes(self.run_dir, notes)
        return metrics


def host_metrics(run_dir: Path, results: Sequence["HostResult"], elapsed_s: float) -> Metrics:
    """Write each host's table as ``host_samples-<host>.csv``; ``host_*`` columns over all hosts.

    Means and maxima run over every host's samples; the sampler's cost is that of the busiest
    sampler (the whole sampler process's CPU, interpreter start included).
    """
    samples: list[HostSample] = []
    cost = 0.0
    for r in results:
        if not r.ok:
            continue
        path = Path(run_dir) / f"host_samples-{r.host}.csv"
        path.write_text(r.data["csv"])
        samples += read_samples(path)
        cost = max(cost, float(r.data.get("sampler_cpu_s") or 0.0))
    return dict(SampleTable(tuple(samples), cost, elapsed_s).summary())


def observer_for(backend: object) -> Observer | None:
    """The default observer of a backend: local cluster: event log and host sampling of its workers'
    executors; fixed master: event log only (its hosts are not this one); inventory hosts: a
    sampler on each worker host over SSH (the event log would be on the master host)."""
    from harness.backends import FixedBackend, LocalBackend
    from harness.remote_backend import RemoteBackend

    if isinstance(backend, LocalBackend):
        return RunObserver(backend.cluster.worker_pids)
    if isinstance(backend, FixedBackend):
        return RunObserver(sample=False)
    if isinstance(backend, RemoteBackend):
        return RemoteRunObserver(backend.cluster, lambda: backend.workers or 0)
    return None
