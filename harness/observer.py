"""What the campaign records beside BigDL's figures for every run: Spark's metrics, host use, phases.

    observer = RunObserver(roots=cluster.worker_pids)
    watch = observer.start(run_dir)   # just before spark-submit starts
    metrics = watch.stop(out_log)     # after it exited: spark_*, host_*, phase_* columns

``run_dir`` is the run's folder in the campaign (``runs/<key>/``): Spark writes its event log
there (:func:`harness.command.event_log_conf`), and the observer adds ``spark_stages.csv``
(one row per stage attempt) and ``host_samples.csv`` (one row per sample). A run whose event
log or BigDL log is missing or unreadable (it failed early) still gets its host columns and the
phases that are known; what could not be read is named in ``metrics_note``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from harness.phases import run_phases
from harness.sampler import SAMPLES_TABLE, HostSampler, Roots
from logparse.errors import LogParseError
from logparse.eventlog import STAGE_TABLE, AppMetrics, find_event_log, read_event_log, write_stage_table
from logparse.timing import TrainingTimes, read_training_times

Metrics = dict[str, object]


@dataclass(frozen=True)
class Observation:
    """The parsed pieces of one run, for callers that want more than the columns."""

    app: AppMetrics | None
    times: TrainingTimes | None
    metrics: Metrics


class RunObserver:
    """How runs are observed: which processes are the executors, how often the host is sampled."""

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
        try:
            app = read_event_log(find_event_log(self.run_dir))
            write_stage_table(app, self.run_dir / STAGE_TABLE)
            metrics.update(app.columns())
        except LogParseError as e:
            notes.append(f"event log: {e}")
        if out_log is not None and Path(out_log).exists():
            try:
                times = read_training_times(Path(out_log))
            except (OSError, ValueError) as e:
                notes.append(f"BigDL log: {e}")
        metrics.update(run_phases(self.submitted, exited, app, times).columns())
        if notes:
            metrics["metrics_note"] = "; ".join(notes)
        return Observation(app, times, metrics)


def observer_for(backend: object) -> RunObserver | None:
    """The default observer of a backend: local cluster: event log and host sampling of its workers'
    executors; fixed master: event log only (its hosts are not this one); inventory hosts: none yet
    (the driver, and so the event log, is on the master host)."""
    from harness.backends import FixedBackend, LocalBackend

    if isinstance(backend, LocalBackend):
        return RunObserver(backend.cluster.worker_pids)
    if isinstance(backend, FixedBackend):
        return RunObserver(sample=False)
    return None
