"""The run record and the campaign folder: what one run is, and where a campaign keeps it.

A run's record is one composition, declared once::

    RunRecord = RunSpec        (the design row: what was asked)
              + Outcome        (what logparse decided and read back from the log)
              + Execution      (what the harness measured: attempts, times, exit code, log path)
              + metrics        (named extra figures: a json job's results, spark_*, host_*, ...)

:meth:`RunRecord.row` is its flat results.csv row and :meth:`RunRecord.from_row` reads it back.
The status is :class:`sparkdl.status.Status`, decided by logparse; nothing here re-decides it.

:class:`CampaignDir` alone knows the folder layout::

    <campaign>/results.csv        one row per finished run (an export of the store)
    <campaign>/campaign.sqlite    the crash-safe store (harness.store)
    <campaign>/manifest.json      the campaign's factors and responses, declared by its design
    <campaign>/campaign.lock      held by the one process that runs the campaign (+ .owner.json)
    <campaign>/logs/<key>.out     the job's stdout (BigDL's log) and .err
    <campaign>/runs/<key>/        per-run artifacts (event log, host samples, metrics)
    <campaign>/study.sqlite       an optimize.search study (Optuna), beside the store
    <campaign>/epochs.csv         one row per epoch of each ingested log (sparkdl ingest --per-epoch)
    <campaign>/concurrency.csv    which runs ran at once: run, replicate, group, njobs (sparkdl concurrent)
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import math
import os
import shutil
import socket
import threading
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Iterable, Iterator, Mapping, Protocol, Sequence

from sparkdl.errors import CampaignBusyError, CampaignError
from sparkdl.runspec import LEGACY_PARAMS, RunSpec
from sparkdl.status import Status

Value = float | int | str | None

#: Columns of a design row that identify a run and are never factors (``whole_plot``: the split-plot whole
#: plot a job belongs to; the analysis uses it as the whole-plot error stratum).
IDENTIFIERS = ("run", "replicate", "whole_plot")


class JobLog(Protocol):
    """What :meth:`Outcome.from_log` reads of a parsed log (``logparse.JobLog`` has these fields)."""

    status: str
    reason: str
    failure_kind: str | None
    wall_clock_s: float | None
    accuracy: float | None
    app_id: str | None
    epochs_completed: int | None
    learning_rate: float | None
    batch_size: int | None


def now() -> str:
    """The current UTC time, ISO 8601 to the second (every timestamp of a campaign)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Outcome:
    """What one attempt produced, as logparse decided it, and the figures read back from its log."""

    status: Status
    reason: str = ""
    failure_kind: str | None = None
    wall_clock_s: float | None = None
    accuracy: float | None = None
    app_id: str | None = None
    epochs_completed: int | None = None
    learning_rate_used: float | None = None
    batch_size_used: int | None = None

    @classmethod
    def from_log(cls, log: JobLog) -> "Outcome":
        return cls(status=Status(log.status), reason=log.reason, failure_kind=log.failure_kind,
                   wall_clock_s=log.wall_clock_s, accuracy=log.accuracy, app_id=log.app_id,
                   epochs_completed=log.epochs_completed, learning_rate_used=log.learning_rate,
                   batch_size_used=log.batch_size)

    def failed(self, kind: str, reason: str) -> "Outcome":
        return replace(self, status=Status.FAILED, failure_kind=kind, reason=reason)

    @property
    def ok(self) -> bool:
        return self.status == Status.OK


@dataclass(frozen=True)
class Execution:
    """What the harness measured about a run's process."""

    attempts: int
    start: str
    end: str
    elapsed_s: float
    exit_code: int | None = None
    log: str = ""  # the .out file, relative to the campaign folder


OUTCOME_COLUMNS = tuple(f.name for f in fields(Outcome))
EXECUTION_COLUMNS = tuple(f.name for f in fields(Execution))
_INT_COLUMNS = {"epochs_completed", "batch_size_used", "attempts", "exit_code"}
_FLOAT_COLUMNS = {"wall_clock_s", "accuracy", "learning_rate_used", "elapsed_s"}


@dataclass(frozen=True)
class RunRecord:
    """One finished run: its design row, its outcome, how it was executed, and extra named figures."""

    spec: RunSpec
    outcome: Outcome
    execution: Execution
    metrics: Mapping[str, Value] = field(default_factory=dict)

    # the parts a reader asks for most, named once here
    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def cell(self) -> tuple[int, int]:
        return (self.spec.run, self.spec.replicate)

    @property
    def run(self) -> int:
        return self.spec.run

    @property
    def replicate(self) -> int:
        return self.spec.replicate

    @property
    def status(self) -> Status:
        return self.outcome.status

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    @property
    def reason(self) -> str:
        return self.outcome.reason

    @property
    def wall_clock_s(self) -> float | None:
        return self.outcome.wall_clock_s

    @property
    def accuracy(self) -> float | None:
        return self.outcome.accuracy

    @property
    def elapsed_s(self) -> float:
        return self.execution.elapsed_s

    def row(self) -> dict[str, Value]:
        """The flat results.csv row: design columns, outcome, execution, then metrics."""
        out: dict[str, Value] = dict(self.spec.as_row())
        out.update({c: getattr(self.outcome, c) for c in OUTCOME_COLUMNS})
        out["status"] = str(self.outcome.status)
        out.update({c: getattr(self.execution, c) for c in EXECUTION_COLUMNS})
        for name, value in self.metrics.items():
            if name in out:
                raise CampaignError(f"metric {name!r} has the name of a results column: rename it in the job")
            out[name] = value
        return out

    @classmethod
    def from_row(cls, row: Mapping[str, Value], params: Sequence[str] | None = None) -> "RunRecord":
        """The inverse of :meth:`row` (values may be JSON-typed or CSV strings).

        ``params`` names the job's parameters (the design columns besides the cell and cluster
        factors); the other columns are metrics. Without it, the built-in BigDL jobs' parameters.
        """
        if params is None:
            params = [k for k in row if k in LEGACY_PARAMS]
        spec = RunSpec.from_row({k: v for k, v in row.items() if k not in _RECORD_COLUMNS}, params)
        design = set(spec.as_row())
        outcome = Outcome(**{c: _typed(c, row.get(c)) for c in OUTCOME_COLUMNS if c != "status"},
                          status=Status(str(row["status"])))
        execution = Execution(**{c: _typed(c, row.get(c)) for c in EXECUTION_COLUMNS})
        metrics = {k: v for k, v in row.items() if k not in _RECORD_COLUMNS and k not in design}
        return cls(spec, outcome, execution, metrics)


    def to_json(self) -> str:
        """The record as stored: its row, and which of its columns are the job's parameters."""
        return json.dumps({"row": self.row(), "params": list(self.spec.param_names)}, default=str)

    @classmethod
    def from_json(cls, text: str) -> "RunRecord":
        data = json.loads(text)
        if isinstance(data, dict) and "row" in data and "params" in data:
            return cls.from_row(data["row"], data["params"])
        return cls.from_row(data)  # a bare row (stored before the parameters were kept)


_RECORD_COLUMNS = frozenset(OUTCOME_COLUMNS) | frozenset(EXECUTION_COLUMNS)


def _typed(column: str, value: Value) -> Value:
    if value is None or value == "":
        return "" if column in ("reason", "start", "end", "log") else None
    if column in _INT_COLUMNS:
        return int(value)
    if column in _FLOAT_COLUMNS:
        return float(value)
    return value


def status_counts(records: Iterable[RunRecord]) -> dict[str, int]:
    """How many records have each status, e.g. ``{"ok": 3, "failed": 1}``."""
    counts: dict[str, int] = {}
    for r in records:
        counts[str(r.status)] = counts.get(str(r.status), 0) + 1
    return counts


# ---------------------------------------------------------------- the manifest


@dataclass(frozen=True)
class Manifest:
    """What a campaign's columns mean, declared by its design and kept beside results.csv.

    ``factors`` are the design's columns (minus ``run`` and ``replicate``), in design order: models
    and the report analyse exactly these, never a guess. ``responses`` are the measured columns.
    """

    factors: tuple[str, ...]
    responses: tuple[str, ...] = ("wall_clock_s", "accuracy", "elapsed_s")
    job: str | None = None
    design: str | None = None
    runtimes: tuple[str, ...] = ()  # the runtimes the runs use (their facts: the campaign's provenance)
    #: where the runs' figures come from: "bigdl" (BigDL's log), "json" (the job's own file), "mixed", or
    #: "" (not recorded: a manifest of an older version). ``sparkdl logparse`` reads it (logparse.campaign).
    results: str = ""
    source: str | None = None  # how the folder was made when not by a design (e.g. "ingest": harness.ingest)
    #: a split-plot campaign's hard-to-change (whole-plot) factors; its runs' ``whole_plot`` column says
    #: which whole plot each ran in. Empty: the runs were not grouped into whole plots.
    whole_plot_factors: tuple[str, ...] = ()
    whole_plots: int = 0
    #: the run number of the campaign's reference runs (``harness.submit --reference-every``), if any
    reference_run: int | None = None
    #: the column holding the time of the runs' work: "wall_clock_s", "spark_jobs_span_s" (a job that reports
    #: no time: its first Spark job to its last), "mixed", or "" (not recorded)
    time: str = ""
    #: replicate until sure (``harness.submit --until``): the stopping rule and each design point's final interval
    #: and reason (harness.until.UntilResult.to_dict); None: a fixed number of replicates
    until: Mapping[str, object] | None = None

    def to_json(self) -> str:
        data = {"version": 1, "factors": list(self.factors), "responses": list(self.responses),
                "identifiers": list(IDENTIFIERS), "job": self.job, "design": self.design,
                "runtimes": list(self.runtimes), "results": self.results}
        if self.source is not None:
            data["source"] = self.source
        if self.whole_plot_factors:
            data["whole_plot_factors"] = list(self.whole_plot_factors)
            data["whole_plots"] = self.whole_plots
        if self.reference_run is not None:
            data["reference_run"] = self.reference_run
        if self.time:
            data["time"] = self.time
        if self.until is not None:
            data["until"] = dict(self.until)
        return json.dumps(data, indent=2)

    @classmethod
    def from_json(cls, text: str, source: str = "manifest.json") -> "Manifest":
        """Parse and check a manifest against its declared schema (:class:`sparkdl.schemas.ManifestDoc`)."""
        import msgspec

        from sparkdl import config
        from sparkdl.schemas import ManifestDoc

        def error(message: str) -> CampaignError:
            problem = message.removeprefix(f"{source}: ")
            return CampaignError(f"{source} is not a campaign manifest ({problem}): delete it and rerun with --resume, "
                                 "or pass the factors explicitly")

        doc = config.parse_json(text, source, "manifest", error)
        data = config.convert(doc, ManifestDoc, source, "manifest", error)
        # responses named twice (a manifest written before with_responses kept each name once) are read once
        return cls(tuple(data.factors), tuple(dict.fromkeys(data.responses)), data.job, data.design, tuple(data.runtimes),
                   data.results or "", data.source, tuple(data.whole_plot_factors), data.whole_plots, data.reference_run,
                   data.time or "", None if data.until is None else msgspec.to_builtins(data.until))

    @classmethod
    def for_design(cls, specs: Sequence[RunSpec], job: str | None = None, design: str | None = None) -> "Manifest":
        columns = list(specs[0].as_row()) if specs else []
        factors = tuple(c for c in columns if c not in IDENTIFIERS)
        return cls(factors, job=job, design=design).with_whole_plots(
            [(s.get("whole_plot"), s.as_row()) for s in specs])

    def with_whole_plots(self, plots: Sequence[tuple[object, Mapping[str, object]]]) -> "Manifest":
        """The whole-plot structure of runs given as (whole plot, design row) pairs: the factors constant
        inside every whole plot that vary between them. No whole plots (None) or fewer than 2: unchanged."""
        groups: dict[object, list[Mapping[str, object]]] = {}
        for plot, row in plots:
            if plot is not None:
                groups.setdefault(plot, []).append(row)
        if len(groups) < 2:
            return self
        rows = [r for g in groups.values() for r in g]
        whole = tuple(f for f in self.factors
                      if all(len({repr(r.get(f)) for r in g}) == 1 for g in groups.values())
                      and len({repr(r.get(f)) for r in rows}) > 1)
        return replace(self, whole_plot_factors=whole, whole_plots=len(groups))

    def with_responses(self, names: Iterable[str]) -> "Manifest":
        merged = dict.fromkeys([*self.responses, *names])  # each name once, in first-seen order
        return replace(self, responses=tuple(merged))


# ---------------------------------------------------------------- the folder


@dataclass(frozen=True)
class Owner:
    """Who holds a campaign folder's lock."""

    pid: int
    host: str
    since: str

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host} since {self.since}"


class CampaignDir:
    """A campaign's folder: the one place that knows its layout."""

    RESULTS = "results.csv"
    STORE = "campaign.sqlite"
    MANIFEST = "manifest.json"
    LOCK = "campaign.lock"
    OWNER = "campaign.owner.json"
    LOGS = "logs"
    RUNS = "runs"
    STUDY = "study.sqlite"
    EPOCHS = "epochs.csv"  # one row per epoch of each log (sparkdl ingest --per-epoch)
    CONCURRENCY = "concurrency.csv"  # which runs ran at once (sparkdl concurrent: optimize.concurrent)
    SCRATCH = "spark-tmp"  # the drivers' temporary folders, one per run in flight (harness/scratch.py)

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock: IO[str] | None = None

    def __repr__(self) -> str:
        return f"CampaignDir({str(self.path)!r})"

    @classmethod
    def of(cls, path: str | Path) -> "CampaignDir | None":
        """The campaign a path belongs to: the folder itself or the folder of its results.csv."""
        p = Path(path)
        if p.is_dir():
            return cls(p)
        if p.name == cls.RESULTS and (p.parent / cls.STORE).exists():
            return cls(p.parent)
        return None

    # -- paths
    @property
    def results_csv(self) -> Path:
        return self.path / self.RESULTS

    @property
    def store_path(self) -> Path:
        return self.path / self.STORE

    @property
    def manifest_path(self) -> Path:
        return self.path / self.MANIFEST

    @property
    def study_path(self) -> Path:
        return self.path / self.STUDY

    @property
    def logs(self) -> Path:
        return self.path / self.LOGS

    def create(self) -> "CampaignDir":
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    def sweep_scratch(self) -> list[str]:
        """Remove every run's driver scratch; return the runs' keys. Call it with the lock held: no harness of the
        campaign runs, so none of its drivers is wanted."""
        root = self.path.absolute() / self.SCRATCH
        left = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        shutil.rmtree(root, ignore_errors=True)
        return left

    def log_paths(self, key: str) -> tuple[Path, Path]:
        """The run's stdout and stderr files (the folder is created)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        return self.logs / f"{key}.out", self.logs / f"{key}.err"

    def run_dir(self, key: str) -> Path:
        """The run's own folder for artifacts beside its log (created)."""
        d = self.path / self.RUNS / key
        d.mkdir(parents=True, exist_ok=True)
        return d

    def keep_attempt(self, key: str, attempt: int) -> None:
        """Move an earlier attempt's logs aside as ``<key>.attemptN.out/.err``."""
        for p in self.log_paths(key):
            if p.exists():
                p.replace(p.with_name(f"{p.stem}.attempt{attempt}{p.suffix}"))

    # -- manifest
    def read_manifest(self) -> Manifest | None:
        from sparkdl import config

        if not self.manifest_path.exists() and not self.manifest_path.is_symlink():
            return None
        text = config.read_text(self.manifest_path, "manifest", error=CampaignError)
        return Manifest.from_json(text, str(self.manifest_path))

    def write_manifest(self, manifest: Manifest) -> None:
        _atomic_write(self.manifest_path, manifest.to_json() + "\n")

    @property
    def epochs_csv(self) -> Path:
        return self.path / self.EPOCHS

    # -- results.csv
    def write_results(self, records: Sequence[RunRecord]) -> Path:
        """Write results.csv atomically: design columns, outcome, execution, then every metric seen."""
        return self.write_rows([r.row() for r in records])

    def write_rows(self, rows: Sequence[Mapping[str, Value]], path: Path | None = None) -> Path:
        """Write rows as a CSV atomically (results.csv unless ``path``): every column seen, in order of appearance."""
        target = self.results_csv if path is None else path
        columns: list[str] = []
        for row in rows:
            columns += [c for c in row if c not in columns]
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(columns)
            for row in rows:
                w.writerow([_cell(row.get(c)) for c in columns])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        return target

    # -- one owner
    def lock(self) -> "CampaignDir":
        """Take the folder for this process (an OS lock held until :meth:`unlock` or the process's death).

        A second process gets :class:`CampaignBusyError` naming the owner. The lock dies with its
        process, so holding it proves that any earlier owner is dead.
        """
        self.create()
        f = open(self.path / self.LOCK, "a+")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            owner = self.owner()
            who = owner.describe() if owner else "another process"
            raise CampaignBusyError(f"campaign in {self.path} is running ({who}): wait for it to finish, "
                                    "stop it (Ctrl-C or kill), or choose another --out") from None
        self._lock = f
        _atomic_write(self.path / self.OWNER, json.dumps(
            {"pid": os.getpid(), "host": socket.gethostname(), "since": now()}) + "\n")
        return self

    def unlock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                (self.path / self.OWNER).unlink()
            self._lock.close()
            self._lock = None

    @contextlib.contextmanager
    def locked(self) -> Iterator["CampaignDir"]:
        self.lock()
        try:
            yield self
        finally:
            self.unlock()

    def owner(self) -> Owner | None:
        try:
            data = json.loads((self.path / self.OWNER).read_text())
            return Owner(int(data["pid"]), str(data["host"]), str(data["since"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None


def _cell(value: Value) -> Value:
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
