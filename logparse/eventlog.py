"""Spark's own metrics of one run, read from its event log (``spark.eventLog.enabled``).

    from logparse.eventlog import read_event_log, find_event_log
    app = read_event_log(find_event_log(run_dir))
    app.totals.executor_run_ms, app.totals.jvm_gc_ms, app.columns()   # spark_* for results.csv
    app.stage_rows()                                                  # the per-stage table

Every figure is summed over task-end events the way Spark's UI (AppStatusListener) sums them,
so they agree with the driver's REST API ``/api/v1/applications/<id>/stages`` for the same
application; the scheduler delay is Spark's ``AppStatusUtils.schedulerDelay`` per task. The log
is JSON lines, plain or lz4-compressed (Spark's default codec; decoded by :mod:`logparse.lz4block`).
Light imports only (no pandas).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from logparse.errors import LogNotFoundError, LogParseError
from logparse.lz4block import decompress

INPROGRESS = ".inprogress"
STAGE_TABLE = "spark_stages.csv"


class EventLogError(LogParseError):
    """An event log cannot be found or read."""


@dataclass
class TaskTotals:
    """Sums over tasks (milliseconds unless the name says ns or bytes), as Spark's stage aggregates."""

    tasks: int = 0
    failed_tasks: int = 0
    killed_tasks: int = 0
    executor_run_ms: int = 0
    executor_cpu_ns: int = 0
    jvm_gc_ms: int = 0
    deserialize_ms: int = 0
    deserialize_cpu_ns: int = 0
    scheduler_delay_ms: int = 0
    result_serialization_ms: int = 0
    getting_result_ms: int = 0
    result_size_bytes: int = 0
    shuffle_read_bytes: int = 0
    shuffle_write_bytes: int = 0
    shuffle_fetch_wait_ms: int = 0
    shuffle_write_ns: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    peak_execution_memory_bytes: int = 0  # sum of task peaks, as Spark's stage figure
    max_task_peak_memory_bytes: int = 0
    memory_spilled_bytes: int = 0
    disk_spilled_bytes: int = 0
    task_duration_ms: int = 0

    def add(self, other: "TaskTotals") -> None:
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            setattr(self, f.name, max(a, b) if f.name.startswith("max_") else a + b)


@dataclass
class StageMetrics:
    """One stage attempt: what it was and the sums over its tasks."""

    stage_id: int
    attempt: int
    name: str = ""
    num_tasks: int = 0
    submitted_ms: int | None = None
    completed_ms: int | None = None
    failure: str | None = None
    totals: TaskTotals = field(default_factory=TaskTotals)

    @property
    def duration_ms(self) -> int | None:
        if self.submitted_ms is None or self.completed_ms is None:
            return None
        return self.completed_ms - self.submitted_ms

    def row(self) -> dict[str, object]:
        head = {k: v for k, v in asdict(self).items() if k != "totals"}
        return {**head, "duration_ms": self.duration_ms, **asdict(self.totals)}


@dataclass(frozen=True)
class ExecutorAdded:
    time_ms: int
    executor_id: str
    host: str
    cores: int


@dataclass
class AppMetrics:
    """Everything the parser reads from one application's event log."""

    path: str
    app_id: str | None = None
    app_name: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    complete: bool = False
    executors: list[ExecutorAdded] = field(default_factory=list)
    executors_removed: int = 0
    first_task_launch_ms: int | None = None
    last_task_finish_ms: int | None = None
    jobs: int = 0
    jobs_failed: int = 0
    job_times_ms: list[tuple[int, int | None]] = field(default_factory=list)  # (submitted, completed)
    stages: dict[tuple[int, int], StageMetrics] = field(default_factory=dict)
    totals: TaskTotals = field(default_factory=TaskTotals)

    @property
    def executors_granted_ms(self) -> int | None:
        """When the last executor of the initial allocation was added."""
        return max((e.time_ms for e in self.executors), default=None)

    @property
    def duration_s(self) -> float | None:
        if self.start_ms is None or self.end_ms is None:
            return None
        return (self.end_ms - self.start_ms) / 1000

    def stage_rows(self) -> list[dict[str, object]]:
        return [s.row() for _, s in sorted(self.stages.items())]

    def columns(self) -> dict[str, float | int | None]:
        """The ``spark_*`` columns of results.csv (seconds, MB, counts, shares)."""
        t = self.totals
        run_s = t.executor_run_ms / 1000

        def share(x: float) -> float | None:
            return round(x / run_s, 4) if run_s > 0 else None

        return {
            "spark_app_s": None if self.duration_s is None else round(self.duration_s, 3),
            "spark_executors": len(self.executors),
            "spark_jobs": self.jobs,
            "spark_stages": len(self.stages),
            "spark_tasks": t.tasks,
            "spark_failed_tasks": t.failed_tasks,
            "spark_killed_tasks": t.killed_tasks,
            "spark_executor_run_s": round(run_s, 3),
            "spark_executor_cpu_s": round(t.executor_cpu_ns / 1e9, 3),
            "spark_gc_s": round(t.jvm_gc_ms / 1000, 3),
            "spark_gc_share": share(t.jvm_gc_ms / 1000),
            "spark_cpu_share": share(t.executor_cpu_ns / 1e9),
            "spark_deserialize_s": round(t.deserialize_ms / 1000, 3),
            "spark_scheduler_delay_s": round(t.scheduler_delay_ms / 1000, 3),
            "spark_result_serialization_s": round(t.result_serialization_ms / 1000, 3),
            "spark_shuffle_read_mb": round(t.shuffle_read_bytes / 2**20, 3),
            "spark_shuffle_write_mb": round(t.shuffle_write_bytes / 2**20, 3),
            "spark_input_mb": round(t.input_bytes / 2**20, 3),
            "spark_peak_task_memory_mb": round(t.max_task_peak_memory_bytes / 2**20, 3),
        }


# ---------------------------------------------------------------- finding and reading


def find_event_log(directory: Path) -> Path:
    """The event log Spark wrote into ``directory`` (a finished one before an ``.inprogress`` one)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise LogNotFoundError(f"{directory}: no such directory; run with the event log enabled "
                               "(harness.command's event_log_dir)")
    candidates = [p for p in directory.iterdir()
                  if p.is_file() and p.name.startswith(("app-", "local-", "application_"))]
    done = [p for p in candidates if not p.name.endswith(INPROGRESS)]
    pick = sorted(done or candidates, key=lambda p: p.stat().st_mtime)
    if not pick:
        raise LogNotFoundError(f"{directory}: no Spark event log (app-*): was spark.eventLog.enabled set?")
    return pick[-1]


def read_lines(path: Path) -> list[str]:
    """The JSON lines of an event log, decompressed when its name ends in ``.lz4``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise LogNotFoundError(f"{path}: no such event log") from e
    except OSError as e:
        raise EventLogError(f"{path}: cannot read ({e.strerror})") from e
    inprogress = path.name.endswith(INPROGRESS)
    base = path.name[: -len(INPROGRESS)] if inprogress else path.name
    if base.endswith(".lz4"):
        data = decompress(data, allow_truncated=inprogress)
    elif "." in base.split("-")[-1] and not base.endswith(".json"):
        raise EventLogError(f"{path}: compression codec {base.rsplit('.', 1)[-1]!r} is not readable here: "
                            "set spark.eventLog.compression.codec=lz4")
    return data.decode("utf-8", errors="replace").splitlines()


def _num(d: dict, key: str) -> int:
    v = d.get(key)
    return int(v) if isinstance(v, (int, float)) else 0


def scheduler_delay_ms(info: dict, metrics: dict) -> int:
    """Spark's ``AppStatusUtils.schedulerDelay`` of a finished task."""
    launch, finish = _num(info, "Launch Time"), _num(info, "Finish Time")
    duration = finish - launch if finish > 0 else 0
    fetch_start = _num(info, "Getting Result Time")
    getting = (launch + duration - fetch_start) if fetch_start > 0 and duration > 0 else 0
    return max(0, duration - _num(metrics, "Executor Run Time") - _num(metrics, "Executor Deserialize Time")
               - _num(metrics, "Result Serialization Time") - getting)


def task_totals(event: dict) -> TaskTotals:
    """The figures of one SparkListenerTaskEnd event."""
    info = event.get("Task Info") or {}
    m = event.get("Task Metrics") or {}
    reason = (event.get("Task End Reason") or {}).get("Reason", "Success")
    killed = bool(info.get("Killed")) or reason == "TaskKilled"
    failed = not killed and (bool(info.get("Failed")) or reason != "Success")
    sr, sw = m.get("Shuffle Read Metrics") or {}, m.get("Shuffle Write Metrics") or {}
    launch, finish, fetch = _num(info, "Launch Time"), _num(info, "Finish Time"), _num(info, "Getting Result Time")
    peak = _num(m, "Peak Execution Memory")
    return TaskTotals(
        tasks=1, failed_tasks=int(failed), killed_tasks=int(killed),
        executor_run_ms=_num(m, "Executor Run Time"), executor_cpu_ns=_num(m, "Executor CPU Time"),
        jvm_gc_ms=_num(m, "JVM GC Time"), deserialize_ms=_num(m, "Executor Deserialize Time"),
        deserialize_cpu_ns=_num(m, "Executor Deserialize CPU Time"),
        scheduler_delay_ms=scheduler_delay_ms(info, m) if m else 0,
        result_serialization_ms=_num(m, "Result Serialization Time"),
        getting_result_ms=(finish - fetch) if fetch > 0 and finish > 0 else 0,
        result_size_bytes=_num(m, "Result Size"),
        shuffle_read_bytes=_num(sr, "Remote Bytes Read") + _num(sr, "Local Bytes Read"),
        shuffle_write_bytes=_num(sw, "Shuffle Bytes Written"),
        shuffle_fetch_wait_ms=_num(sr, "Fetch Wait Time"), shuffle_write_ns=_num(sw, "Shuffle Write Time"),
        input_bytes=_num(m.get("Input Metrics") or {}, "Bytes Read"),
        output_bytes=_num(m.get("Output Metrics") or {}, "Bytes Written"),
        peak_execution_memory_bytes=peak, max_task_peak_memory_bytes=peak,
        memory_spilled_bytes=_num(m, "Memory Bytes Spilled"), disk_spilled_bytes=_num(m, "Disk Bytes Spilled"),
        task_duration_ms=(finish - launch) if finish > 0 else 0,
    )


def _stage(app: AppMetrics, info: dict) -> StageMetrics:
    key = (int(info.get("Stage ID", -1)), int(info.get("Stage Attempt ID", 0)))
    stage = app.stages.get(key)
    if stage is None:
        stage = app.stages[key] = StageMetrics(*key)
    stage.name = info.get("Stage Name", stage.name) or stage.name
    stage.num_tasks = int(info.get("Number of Tasks", stage.num_tasks) or 0)
    if info.get("Submission Time"):
        stage.submitted_ms = int(info["Submission Time"])
    if info.get("Completion Time"):
        stage.completed_ms = int(info["Completion Time"])
    if info.get("Failure Reason"):
        stage.failure = str(info["Failure Reason"]).splitlines()[0][:200]
    return stage


def parse_events(lines: list[str], path: str = "") -> AppMetrics:
    """Fold the events of one application into :class:`AppMetrics` (unknown events are ignored)."""
    app = AppMetrics(path=path)
    for line in lines:
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue  # the last line of a log still being written
        kind = ev.get("Event")
        if kind == "SparkListenerTaskEnd":
            t = task_totals(ev)
            stage = app.stages.get((int(ev.get("Stage ID", -1)), int(ev.get("Stage Attempt ID", 0))))
            if stage is None:
                stage = _stage(app, {"Stage ID": ev.get("Stage ID", -1), "Stage Attempt ID": ev.get("Stage Attempt ID", 0)})
            stage.totals.add(t)
            app.totals.add(t)
            finish = _num(ev.get("Task Info") or {}, "Finish Time")
            if finish:
                app.last_task_finish_ms = max(app.last_task_finish_ms or 0, finish)
        elif kind == "SparkListenerTaskStart":
            launch = _num(ev.get("Task Info") or {}, "Launch Time")
            if launch and (app.first_task_launch_ms is None or launch < app.first_task_launch_ms):
                app.first_task_launch_ms = launch
        elif kind in ("SparkListenerStageSubmitted", "SparkListenerStageCompleted"):
            _stage(app, ev.get("Stage Info") or {})
        elif kind == "SparkListenerJobStart":
            app.jobs += 1
            app.job_times_ms.append((_num(ev, "Submission Time"), None))
        elif kind == "SparkListenerJobEnd":
            if (ev.get("Job Result") or {}).get("Result") != "JobSucceeded":
                app.jobs_failed += 1
            for i, (sub, done) in enumerate(app.job_times_ms):
                if done is None:
                    app.job_times_ms[i] = (sub, _num(ev, "Completion Time"))
                    break
        elif kind == "SparkListenerExecutorAdded":
            info = ev.get("Executor Info") or {}
            app.executors.append(ExecutorAdded(_num(ev, "Timestamp"), str(ev.get("Executor ID")),
                                               str(info.get("Host", "")), _num(info, "Total Cores")))
        elif kind == "SparkListenerExecutorRemoved":
            app.executors_removed += 1
        elif kind == "SparkListenerApplicationStart":
            app.app_id, app.app_name = ev.get("App ID"), ev.get("App Name")
            app.start_ms = _num(ev, "Timestamp") or None
        elif kind == "SparkListenerApplicationEnd":
            app.end_ms = _num(ev, "Timestamp") or None
            app.complete = True
    return app


def read_event_log(path: Path) -> AppMetrics:
    """Parse one event log file (plain JSON lines or ``.lz4``; ``.inprogress`` allowed)."""
    return parse_events(read_lines(path), str(path))


def write_stage_table(app: AppMetrics, path: Path) -> Path:
    """The per-stage table as CSV (one row per stage attempt)."""
    rows = app.stage_rows()
    head = list(StageMetrics(0, 0).row())
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=head)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
    tmp.replace(path)
    return path
