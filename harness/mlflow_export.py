"""A campaign in MLflow: the one mapping from a campaign folder to an MLflow experiment.

    sparkdl mlflow runs/NAME --tracking-uri http://127.0.0.1:5000   # after the fact (harness.mlflow)
    sparkdl submit design.csv --mlflow http://127.0.0.1:5000        # live: after every stored run

Both paths call :meth:`MlflowExporter.sync`, which brings the experiment up to date with the folder:

* **one experiment per campaign**, named after the folder (``<name>-<campaign id>`` when another
  campaign already has that name), tagged with the design's sha256, the job, the factors and the
  responses (``sparkdl.*`` tags) and shown in the UI's "Model training" view;
* **one MLflow run per design run** (the attempt that counts: the one results.csv holds), named
  ``run <run>-<replicate>``: params = the design row (as results.csv writes it), the job, its
  runtime and JVM choice, the cluster shape; metrics = every number of the record (accuracy,
  wall_clock_s, elapsed_s, cost, the spark_*/host_*/phase_* figures, a job's own) with per-epoch
  figures as metric histories (step = epoch: ``accuracy``, ``loss``, ``throughput``,
  ``epoch_wall_clock_s``, a json job's per-epoch lists, an output job's epoch rows); tags = status, reason, failure_kind,
  app_id, run, replicate, attempt (text figures too); artifacts = the run's .out/.err (earlier
  attempts' too) and its ``runs/<key>/`` folder (metrics.json, the event log, the observer's
  tables), each file over the size cap left out and named in a tag. The MLflow status is FINISHED
  for ok, KILLED for pruned (a search's stopped trial; tag status=pruned), FAILED otherwise;
* **one run named "campaign"** (tag ``sparkdl.kind=campaign``), the **parent of every design run**
  (each carries MLflow's ``mlflow.parentRunId`` tag, so the UI nests them under it, as MLflow nests a
  sweep's runs), holds what belongs to the whole campaign, MLflow having no experiment-level files:
  results.csv, manifest.json, the provenance, the report (``report*.html``) and a search's
  ``pareto.png``/``search.json``.

A ``results = "mlflow"`` job logged into a run the harness made for it (:mod:`harness.mlflow_run`;
tag ``sparkdl.program_run``, named in the record's ``mlflow_run_id``): that run is the design run's
run, and the export fills it (params it does not have, metrics it does not have, tags, files)
instead of making another, and never deletes it.

Idempotent: each run carries ``sparkdl.run_key`` and a fingerprint of what it was made from (the
record, its files' names and sizes, the export's settings). A sync creates the runs that are
missing, replaces (deletes and recreates) a run whose fingerprint changed or whose export was cut
short, and leaves the rest alone, so exporting twice adds nothing and a resumed campaign's new runs
are added. ``mlflow`` is imported only here, and only when an export is asked for.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import re
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from harness.errors import CampaignError, HarnessError
from harness.runepochs import EpochPoint, run_epoch_points, run_epochs
from sparkdl.campaign import CampaignDir, RunRecord, status_counts
from sparkdl.errors import EXIT_CLUSTER, EXIT_INPUT, ToolError
from sparkdl.numbers import finite
from sparkdl.status import STATUSES
from sparkdl.tracking import is_http, store_path, tracking_uri

#: The pinned MLflow of the ``mlflow`` extra (constraints.txt).
MLFLOW_REQUIREMENT = "mlflow==3.17.2"
INSTALL_HINT = ("install the tool's mlflow extra: pip install 'sparkdl-lab[mlflow]' (in a checkout: "
                f"pip install -c constraints.txt -e '.[mlflow]', or {MLFLOW_REQUIREMENT}; make test installs it)")
#: Bump when the mapping changes: every run's fingerprint changes with it, so a sync re-exports.
EXPORT_VERSION = "1"
#: Files larger than this are not uploaded (event logs of long runs); their names go into a tag.
DEFAULT_MAX_ARTIFACT_MB = 20.0
#: Files of the campaign folder that belong to the campaign run.
CAMPAIGN_FILES = ("results.csv", "manifest.json", "pareto.png", "search.json", "concurrency.csv")
KIND, KEY, FINGERPRINT, COMPLETE = "sparkdl.kind", "sparkdl.run_key", "sparkdl.fingerprint", "sparkdl.export"
#: MLflow's tag of a nested run: the id of its parent (what ``mlflow.start_run(nested=True)`` sets).
PARENT = "mlflow.parentRunId"
CAMPAIGN_ID = "sparkdl.campaign_id"
MLFLOW_STATUS = {"ok": "FINISHED", "pruned": "KILLED"}  # anything else: FAILED
#: MLflow's limits on one log_batch call.
BATCH_METRICS, BATCH_PARAMS_TAGS = 1000, 100
#: What the MLflow client may print or retry: our own lines name the experiment; a live export must not wait
#: minutes (MLflow's default is 7 retries with backoff) for a tracker that went away mid-way.
QUIET = {"MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true"}
LIVE_HTTP = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
             "MLFLOW_HTTP_REQUEST_TIMEOUT": "60"}

Progress = Callable[[str], None]


class MlflowExportError(HarnessError):
    """A campaign cannot be exported as asked (no campaign in the folder, an experiment name taken)."""

    exit_code = EXIT_INPUT


class MlflowMissingError(MlflowExportError):
    """``--mlflow`` was asked but MLflow is not installed."""


class TrackerUnreachableError(MlflowExportError):
    """The tracking server does not answer (or refused a request): nothing finished is lost; export again later."""

    exit_code = EXIT_CLUSTER


def require_mlflow() -> ModuleType:
    """MLflow, imported (seconds: done only when an export is asked), else :class:`MlflowMissingError`."""
    try:
        import mlflow
    except ImportError as e:
        raise MlflowMissingError(f"MLflow is not installed ({e}): {INSTALL_HINT}") from None
    return mlflow


# ---------------------------------------------------------------- what a run becomes (no MLflow here)


@dataclass(frozen=True)
class MetricPoint:
    name: str
    value: float
    step: int
    timestamp_ms: int


@dataclass(frozen=True)
class Artifact:
    """A file or folder of the campaign uploaded under ``dest`` (an artifact folder of the run)."""

    path: Path
    dest: str
    size: int


@dataclass(frozen=True)
class CampaignFacts:
    """What the exporter knows of the campaign beside the records: manifest, provenance, settings."""

    name: str
    campaign_id: str
    design_sha256: str
    job: str | None
    factors: tuple[str, ...]
    responses: tuple[str, ...]
    runtime_of: Mapping[str, tuple[str, str]]  # run key -> (runtime, jvm choice)
    cluster: str  # the backend kind (local, master, inventory...)
    provenance: Mapping[str, object]
    cost: str

    @classmethod
    def read(cls, folder: CampaignDir, meta: Mapping[str, object], cost: str) -> "CampaignFacts":
        manifest = folder.read_manifest()
        runtime_of: dict[str, tuple[str, str]] = {}
        runtimes = meta.get("runtimes")
        if isinstance(runtimes, dict):
            for name, facts in runtimes.items():
                by_jvm = facts.get("runs_by_jvm", {}) if isinstance(facts, dict) else {}
                for jvm, keys in (by_jvm.items() if isinstance(by_jvm, dict) else ()):
                    for key in keys if isinstance(keys, list) else ():
                        runtime_of[str(key)] = (str(name), str(jvm))
        cluster = meta.get("cluster")
        backend = str(cluster.get("backend", "")) if isinstance(cluster, dict) else ""
        design = str(meta.get("design_sha256") or "")
        created = str(meta.get("created") or "")
        identity = f"{design}|{created}" if design else str(folder.path.resolve())
        return cls(name=folder.path.resolve().name, campaign_id=hashlib.sha256(identity.encode()).hexdigest()[:12],
                   design_sha256=design, job=manifest.job if manifest else None,
                   factors=manifest.factors if manifest else (), responses=manifest.responses if manifest else (),
                   runtime_of=runtime_of, cluster=backend, provenance=dict(meta), cost=cost)


@dataclass(frozen=True)
class RunPayload:
    """Everything one MLflow run gets (see the module doc); ``fingerprint`` says what it was made from."""

    key: str
    name: str
    status: str  # MLflow's: FINISHED, KILLED, FAILED
    start_ms: int
    end_ms: int
    params: Mapping[str, str]
    metrics: tuple[MetricPoint, ...]
    tags: Mapping[str, str]
    artifacts: tuple[Artifact, ...]
    fingerprint: str


def epoch_ms(iso: str, default: int) -> int:
    """Milliseconds since the epoch of an ISO 8601 time (the campaign's timestamps), else ``default``."""
    try:
        t = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return default
    return int((t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp() * 1000)


def run_files(folder: CampaignDir, key: str, cap_bytes: int) -> tuple[list[Artifact], list[str]]:
    """The run's logs (every attempt's) and its ``runs/<key>/`` entries; those over ``cap_bytes`` named apart."""
    found: list[Artifact] = []
    skipped: list[str] = []

    def add(path: Path, dest: str) -> None:
        size = (sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir()
                else path.stat().st_size)
        if size > cap_bytes:
            skipped.append(f"{path.name} ({size / 1e6:.1f} MB)")
        else:
            found.append(Artifact(path, dest, size))

    for log in sorted(folder.logs.glob(f"{key}.*")) if folder.logs.is_dir() else ():
        if log.is_file() and (log.name in (f"{key}.out", f"{key}.err") or log.name.startswith(f"{key}.attempt")):
            add(log, "logs")
    run_dir = folder.path / CampaignDir.RUNS / key
    for entry in sorted(run_dir.iterdir()) if run_dir.is_dir() else ():
        add(entry, "run")
    return found, skipped


def epoch_histories(out_log: Path, series: Mapping[str, Sequence[float]], start_ms: int, end_ms: int,
                    table: Path | None = None) -> dict[str, list[MetricPoint]]:
    """Per-epoch figures of a run as metric histories (step = epoch), read by the one reader of a run's epochs
    (:func:`harness.runepochs.run_epoch_points`): its epochs.csv (``table``: an output or MLflow job's rows), else
    its log's validated epochs, and a json job's lists.

    A BigDL log gives ``accuracy`` (Top1 at each validation), ``loss`` and ``throughput`` (means over the
    epoch's iterations) and ``epoch_wall_clock_s``; a job's ``sparkdl-epoch`` lines give ``accuracy``,
    ``epoch_wall_clock_s`` and their other numbers; an epochs.csv row its numbers (its ``wall_clock_s`` as
    ``epoch_wall_clock_s``); metrics.json's lists are steps 1..n of their name.
    """
    return histories_of(run_epoch_points(out_log, series, table), start_ms, end_ms)


def histories_of(points: Iterable[EpochPoint], start_ms: int, end_ms: int) -> dict[str, list[MetricPoint]]:
    """Epoch points as MLflow metric histories: each point's time is the run's start plus the epoch's wall
    clock (the run's end when it has none; never after the run's end)."""
    out: dict[str, list[MetricPoint]] = {}
    for p in points:
        wall = p.wall_clock_s
        at = start_ms + int(1000 * wall) if wall is not None and math.isfinite(wall) else end_ms
        out.setdefault(p.name, []).append(MetricPoint(p.name, p.value, p.epoch, min(max(at, start_ms), end_ms)))
    return out


def _cost(record: RunRecord, formula: str) -> float | None:
    t, a = finite(record.wall_clock_s), finite(record.accuracy)
    if t is None or a is None:
        return None
    from sparkdl.cost import parse_cost

    return finite(float(parse_cost(formula)(t, a)))


def _text(value: object) -> str:
    """A value as results.csv writes it."""
    return "" if value is None else str(value)


@dataclass(frozen=True)
class RunSource:
    """What a run's export is made from, cheap to read: its files and the fingerprint of record, files and settings."""

    artifacts: tuple[Artifact, ...]
    skipped: tuple[str, ...]  # files over the cap, "name (size MB)"
    fingerprint: str


def run_source(record: RunRecord, folder: CampaignDir, facts: CampaignFacts,
               cap_bytes: int = int(DEFAULT_MAX_ARTIFACT_MB * 1e6)) -> RunSource:
    """The run's files and fingerprint (stat calls only: a sync compares it before it reads any log)."""
    artifacts, skipped = run_files(folder, record.key, cap_bytes)
    source = json.dumps({"version": EXPORT_VERSION, "record": record.to_json(), "job": facts.job,
                         "runtime": facts.runtime_of.get(record.key), "cluster": facts.cluster, "cost": facts.cost,
                         "cap": cap_bytes, "files": [(a.dest, a.path.name, a.size) for a in artifacts],
                         "skipped": skipped}, sort_keys=True)
    return RunSource(tuple(artifacts), tuple(skipped), hashlib.sha256(source.encode()).hexdigest())


def run_payload(record: RunRecord, folder: CampaignDir, facts: CampaignFacts,
                cap_bytes: int = int(DEFAULT_MAX_ARTIFACT_MB * 1e6), source: RunSource | None = None) -> RunPayload:
    """What the run of ``record`` becomes in MLflow (the module doc); reads its log and files, uploads nothing."""
    source = source or run_source(record, folder, facts, cap_bytes)
    row = record.row()
    spec = record.spec
    start = epoch_ms(record.execution.start, 0)
    end = max(epoch_ms(record.execution.end, start), start)
    params = {name: _text(value) for name, value in spec.as_row().items()
              if name not in ("run", "replicate") and value is not None}
    runtime, jvm = facts.runtime_of.get(record.key, ("", ""))
    for name, value in (("job", facts.job or spec.get("model")), ("runtime", runtime), ("jvm", jvm),
                        ("total_cores", spec.total_cores), ("cluster", facts.cluster)):
        if value not in (None, "") and name not in params:
            params[name] = str(value)
    tags = {KIND: "run", KEY: record.key, "run": str(record.run), "replicate": str(record.replicate),
            "attempt": str(record.execution.attempts), "status": str(record.status), "reason": record.reason,
            "failure_kind": record.outcome.failure_kind or "", "app_id": record.outcome.app_id or "",
            "log": record.execution.log, CAMPAIGN_ID: facts.campaign_id, FINGERPRINT: source.fingerprint}
    if source.skipped:
        tags["sparkdl.artifacts_skipped"] = f"over the {cap_bytes / 1e6:g} MB cap: " + ", ".join(source.skipped)
    figures: dict[str, float] = {}
    for name, value in row.items():
        if name in spec.as_row() or name in ("status", "reason", "failure_kind", "app_id", "start", "end", "log"):
            continue
        number = finite(value)
        if number is not None:
            figures[name] = number
        elif isinstance(value, str) and value and name not in tags:
            tags[name] = value[:5000]  # a json job's text figure
    if "cost" not in figures:
        cost = _cost(record, facts.cost)
        if cost is not None:
            figures["cost"] = cost
            tags["sparkdl.cost_formula"] = facts.cost
    histories = histories_of(run_epochs(folder, record), start, end)
    points = [p for history in histories.values() for p in history]
    for name, value in figures.items():
        history = histories.get(name)
        if history and history[-1].value == value:
            continue  # the history's last point is the record's figure
        step = history[-1].step if history else 0
        at = max(end, history[-1].timestamp_ms + 1) if history else end
        points.append(MetricPoint(name, value, step, at))  # the latest point: the record's figure
    return RunPayload(record.key, f"run {record.key}", MLFLOW_STATUS.get(str(record.status), "FAILED"), start, end,
                      params, tuple(points), tags, source.artifacts, source.fingerprint)


def experiment_tags(facts: CampaignFacts, folder: CampaignDir, records: Sequence[RunRecord]) -> dict[str, str]:
    counts = ", ".join(f"{n} {s}" for s, n in sorted(status_counts(records).items())) or "no runs yet"
    note = (f"Campaign `{folder.path.resolve()}`: {len(records)} run(s) ({counts}). Job {facts.job or 'from the design'}; "
            f"factors {', '.join(facts.factors) or '?'}. One MLflow run per design run (tag `sparkdl.run_key`), "
            "per-epoch figures as metric histories; the run named *campaign*, their parent, holds results.csv, "
            "the manifest, the provenance and the report. Exported by sparkdl-lab (sparkdl mlflow).")
    return {CAMPAIGN_ID: facts.campaign_id, "sparkdl.design_sha256": facts.design_sha256,
            "sparkdl.campaign": str(folder.path.resolve()), "sparkdl.job": facts.job or "",
            "sparkdl.factors": ",".join(facts.factors), "sparkdl.responses": ",".join(facts.responses)[:5000],
            "sparkdl.cost_formula": facts.cost, "mlflow.experimentKind": "custom_model_development",
            "mlflow.note.content": note}


def campaign_files(folder: CampaignDir) -> list[Path]:
    """The files of the campaign run: results.csv, manifest.json, the report(s), a search's front and summary."""
    names = [*CAMPAIGN_FILES, *sorted(p.name for p in folder.path.glob("report*.html"))]
    return [folder.path / n for n in names if (folder.path / n).is_file()]


def read_campaign(folder: CampaignDir) -> tuple[list[RunRecord], dict[str, object]]:
    """The records and provenance of a campaign folder: its store, else (an ingested campaign) its results.csv."""
    if folder.store_path.is_file():
        from harness.store import ResultStore

        store = ResultStore(folder)
        try:
            return store.results(), store.meta()
        finally:
            store.close()
    if folder.results_csv.exists() or folder.results_csv.is_symlink():
        return read_results_table(folder), {}
    raise MlflowExportError(f"{folder.path}: no campaign here (no {CampaignDir.STORE} or {CampaignDir.RESULTS}): "
                            "give a campaign folder (the --out of harness.submit or an optimizer)")


#: The longest cell of a results table (a reason is a few hundred characters; MLflow keeps 8,000 of a tag).
MAX_FIELD_CHARS = 1 << 16
#: The most digits of a whole number in a results table (a run number, attempts, an exit code).
MAX_WHOLE_DIGITS = 12
_WHOLE = re.compile(r"[+-]?[0-9]{1,%d}" % MAX_WHOLE_DIGITS, re.ASCII)
#: Columns of a record that are whole numbers, and those that are finite numbers (empty: not measured).
_WHOLE_COLUMNS = ("run", "replicate", "nodes", "executors", "executor_cores", "epochs_completed", "batch_size_used",
                  "attempts", "exit_code")
_FINITE_COLUMNS = ("wall_clock_s", "accuracy", "learning_rate_used", "elapsed_s")


def _row_problem(row: Mapping[str, str]) -> str | None:
    """What makes a results.csv row something no campaign writes (None: fine)."""
    for column in _WHOLE_COLUMNS:
        value = row.get(column)
        if value is None or (value == "" and column not in ("run", "replicate", "nodes", "executors",
                                                            "executor_cores")):
            continue
        if not _WHOLE.fullmatch(value.strip()):
            return f"{column} {value[:40]!r} is not a whole number of at most {MAX_WHOLE_DIGITS} digits"
    for column in _FINITE_COLUMNS:
        value = (row.get(column) or "").strip()
        if not value:
            continue
        try:
            number = float(value) if len(value) <= 40 else math.nan
        except ValueError:
            return f"{column} {value[:40]!r} is not a number"
        if not math.isfinite(number):
            return f"{column} {value[:40]!r} is not a finite number (leave it empty when it was not measured)"
    status = row.get("status")
    if status not in STATUSES:
        return f"status {str(status)[:40]!r} is not one of {', '.join(STATUSES)}"
    return None


def _cell_value(text: object) -> object:
    """A results.csv cell as the store would hold it: a finite number (read by the one cell reader,
    :func:`sparkdl.numbers.cell`, as models.results reads the table) as a float, other text as it is."""
    from sparkdl.numbers import NumberError, cell

    if not isinstance(text, str):
        return text
    try:
        value = cell(text)
    except NumberError:
        return text
    return float(value) if isinstance(value, (int, float)) and finite(value) is not None else text


def read_results_table(folder: CampaignDir) -> list[RunRecord]:
    """The records of an ingested campaign's results.csv, read by the one table reader and checked row by row.

    Refused, each as one :class:`MlflowExportError` naming the line: what :func:`sparkdl.config.read_table`
    refuses (a FIFO, a byte that is not UTF-8, an overlong field, a row of the wrong width), a run key
    (run-replicate) written twice (MLflow would get one of them in silence), a whole-number column that
    is not one, a measured figure that is not finite, an unknown status.
    """
    from sparkdl.runspec import CLUSTER
    from sparkdl import config

    table = config.read_table(folder.results_csv, "results table", MlflowExportError, same_width=True,
                              max_field=MAX_FIELD_CHARS)
    missing = [c for c in ("run", "replicate", "status", "nodes", "executors", "executor_cores")
               if c not in table.header]
    if missing:
        raise MlflowExportError(f"{folder.results_csv}: not a campaign's results table (no column "
                                f"{', '.join(missing)}): give the folder harness.submit, harness.ingest or an "
                                "optimizer wrote")
    manifest = folder.read_manifest()
    params = [f for f in manifest.factors if f not in CLUSTER] if manifest else None
    records: list[RunRecord] = []
    seen: dict[str, int] = {}
    for line, cells in table.rows:
        row = dict(zip(table.header, cells))
        problem = _row_problem(row)
        if problem is None:
            key = f"{int(row['run'])}-{int(row['replicate'])}"
            if key in seen:
                problem = f"run {key} is also on line {seen[key]}: keep one row per run and replicate"
            seen[key] = line
        if problem is None:
            try:
                record = RunRecord.from_row(row, params)
                records.append(replace(record, metrics={k: _cell_value(v) for k, v in record.metrics.items()}))
                continue
            except (KeyError, ValueError, TypeError) as e:
                problem = f"not a campaign's row ({e})"
        raise MlflowExportError(f"{folder.results_csv}: line {line}: {problem}: fix the row, or give the folder "
                                "harness.submit, harness.ingest or an optimizer wrote")
    return records


# ---------------------------------------------------------------- talking to MLflow


@dataclass
class ExportSummary:
    experiment_id: str
    experiment_name: str
    url: str
    created: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: int = 0
    campaign_files: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return (f"MLflow experiment {self.experiment_name!r} ({self.url}): {len(self.created)} run(s) added, "
                f"{len(self.replaced)} updated, {self.unchanged} unchanged"
                + (f"; campaign files updated: {', '.join(self.campaign_files)}" if self.campaign_files else ""))


#: The largest --max-artifact-mb: a terabyte.
MAX_ARTIFACT_MB = 1e6


def artifact_cap_bytes(max_artifact_mb: float) -> int:
    """The size cap in bytes of ``max_artifact_mb``: a finite number above 0 and at most :data:`MAX_ARTIFACT_MB`."""
    if (isinstance(max_artifact_mb, bool) or not isinstance(max_artifact_mb, (int, float))
            or not math.isfinite(max_artifact_mb) or not 0 < max_artifact_mb <= MAX_ARTIFACT_MB):
        raise MlflowExportError(f"--max-artifact-mb {max_artifact_mb!r}: give a size in MB above 0 and at most "
                                f"{MAX_ARTIFACT_MB:.0f}")
    return max(1, int(max_artifact_mb * 1e6))


def _artifact_root(uri: str, store: Path | None) -> str | None:
    """Where a new experiment's files go: beside a SQLite store (MLflow's default is ./mlruns in the current
    folder, wherever the command was started); a server or a file store chooses its own."""
    if store is None or not uri.startswith("sqlite:"):
        return None
    return (store.parent / "mlartifacts").as_uri()


def _check_store_folder(uri: str, folder: CampaignDir) -> None:
    """A SQLite or file store's folder must exist (SQLite would fail deep inside MLflow), unless it is the
    campaign folder (made by the campaign)."""
    store = store_path(uri)
    if store is None:
        return
    parent = store.parent if uri.startswith("sqlite:") else store
    if parent.is_dir() or parent.absolute() == folder.path.absolute():
        if uri.startswith("sqlite:") and store.exists() and not store.is_file():
            raise MlflowExportError(f"{store}: the SQLite store is not a regular file: name a database file")
        return
    if uri.startswith("file:") and not parent.exists() and parent.parent.is_dir():
        return  # MLflow makes the store's own folder
    raise MlflowExportError(f"{parent}: no such folder for the MLflow store: create it, or give a path in an "
                            "existing folder")


class ExportBusyError(MlflowExportError):
    """Another export of the same campaign is running."""


@contextlib.contextmanager
def export_lock(folder: CampaignDir) -> Iterator[None]:
    """Hold the campaign's export lock (an OS lock on the campaign folder itself: no file is made to take it).

    A second export of the same campaign at the same time (a ``--mlflow`` campaign's live export and a
    ``sparkdl mlflow``, or two of those) would create the same runs twice: it is refused with
    :class:`ExportBusyError` naming the export that holds the lock. The lock dies with its process.
    """
    owner = folder.path / EXPORT_OWNER
    fd = os.open(folder.path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _export_owner(owner)
            raise ExportBusyError(f"another MLflow export of {folder.path} is running ({who}): wait for it to "
                                  "finish, then export again (it adds only what is missing)") from None
        wrote = False
        with contextlib.suppress(OSError):  # a read-only campaign folder is still exported
            owner.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                         "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}) + "\n")
            wrote = True
        try:
            yield
        finally:
            if wrote:
                with contextlib.suppress(OSError):
                    owner.unlink()
    finally:
        os.close(fd)


#: Who holds a campaign's export lock (written while it is held, removed after).
EXPORT_OWNER = "mlflow-export.owner.json"


def _export_owner(path: Path) -> str:
    try:
        from sparkdl import config

        data = config.read_json(path, "export owner", limit=4096)
        return f"pid {int(data['pid'])} on {str(data['host'])[:100]} since {str(data['since'])[:40]}"
    except (ToolError, KeyError, TypeError, ValueError):
        return "another process"


def check_reachable(uri: str, timeout: float = 5.0) -> None:
    """An HTTP tracker must answer its /health within ``timeout`` (MLflow's own client would retry for minutes)."""
    if not is_http(uri):
        return
    try:
        with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout) as r:  # noqa: S310 - the user's URI
            r.read(64)
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise TrackerUnreachableError(f"MLflow at {uri} does not answer ({reason}): start it or check the URI; "
                                      "nothing finished is lost, export again with sparkdl mlflow") from None


def ui_url(uri: str, experiment_id: str) -> str:
    """The experiment's run list in MLflow's UI (its "Model training" view), for an HTTP tracker."""
    if is_http(uri):
        return f"{uri.rstrip('/')}/#/experiments/{experiment_id}/runs?workflowType=machine_learning"
    return f"{uri} (experiment {experiment_id})"


def _chunks(items: Sequence[Any], n: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


class MlflowExporter:
    """Brings one MLflow experiment up to date with one campaign folder (see the module doc).

    ``experiment`` names the experiment (default: the folder's name); ``cost`` is the cost formula of
    the ``cost`` metric (sparkdl.cost); files over ``max_artifact_mb`` are not uploaded.
    """

    def __init__(self, uri: str, folder: CampaignDir, *, experiment: str | None = None, cost: str | None = None,
                 max_artifact_mb: float = DEFAULT_MAX_ARTIFACT_MB, client: Any = None) -> None:
        from sparkdl.cost import DEFAULT_COST, parse_cost

        self.uri = tracking_uri(uri, folder.path)  # the form checked, a store path made absolute: before anything
        self.folder, self.experiment = folder, experiment
        self.cost = cost or DEFAULT_COST
        parse_cost(self.cost)  # a formula sparkdl.cost cannot read is an error before anything is sent
        self.cap_bytes = artifact_cap_bytes(max_artifact_mb)
        for name, value in QUIET.items():
            os.environ.setdefault(name, value)
        store = store_path(self.uri)
        if store is not None and self.uri.startswith("file:"):
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")  # the user named a file store: MLflow 3 asks this
        self.artifact_root = _artifact_root(self.uri, store)
        if client is None:
            require_mlflow()
        self._client = client
        self._experiment_id: str | None = None
        self._experiment_name = ""

    @property
    def client(self) -> Any:
        """MLflow's client, made at the first use: a SQLite store is created then, after the checks of :meth:`sync`."""
        if self._client is None:
            self._client = require_mlflow().MlflowClient(tracking_uri=self.uri)
        return self._client

    # -- the experiment
    def experiment_id(self, facts: CampaignFacts) -> tuple[str, str]:
        """(id, name) of the campaign's experiment, found by name and campaign id, else created.

        The folder's name, else ``<name>-<campaign id>`` when an experiment of that name holds something
        else (another campaign, the user's own runs) or is deleted. An experiment named with ``experiment``
        may be one the user made; never one of another campaign (their run keys would collide).
        """
        if self._experiment_id is not None:
            return self._experiment_id, self._experiment_name
        names = [self.experiment] if self.experiment else [facts.name, f"{facts.name}-{facts.campaign_id[:8]}"]
        accepted = (None, facts.campaign_id) if self.experiment else (facts.campaign_id,)
        for name in names:
            found = self.client.get_experiment_by_name(name)
            if found is None:
                eid = self.client.create_experiment(name, artifact_location=self.artifact_root,
                                                    tags={CAMPAIGN_ID: facts.campaign_id})
            elif found.lifecycle_stage == "active" and found.tags.get(CAMPAIGN_ID) in accepted:
                eid = found.experiment_id
            else:
                continue
            self._experiment_id, self._experiment_name = str(eid), name
            return self._experiment_id, name
        taken = names[-1]
        raise MlflowExportError(f"MLflow experiment {taken!r} belongs to another campaign or is deleted: choose "
                                "another name with --experiment, or restore/remove it in MLflow (mlflow gc)")

    def forget(self) -> None:
        """Look the experiment up again at the next sync (after a failure: it may have been deleted meanwhile)."""
        self._experiment_id = None

    def _existing_runs(self, experiment_id: str) -> list[Any]:
        from mlflow.entities import ViewType

        runs: list[Any] = []
        token = None
        while True:
            page = self.client.search_runs([experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=1000,
                                           page_token=token)
            runs.extend(page)
            token = page.token
            if not token:
                return runs

    # -- one run
    def _log(self, run_id: str, params: Mapping[str, str], points: Sequence[MetricPoint],
             tags: Mapping[str, str]) -> None:
        from mlflow.entities import Metric, Param, RunTag

        for chunk in _chunks([Param(k, v) for k, v in params.items()], BATCH_PARAMS_TAGS):
            self.client.log_batch(run_id, params=list(chunk))
        for chunk in _chunks([RunTag(k, v) for k, v in tags.items()], BATCH_PARAMS_TAGS):
            self.client.log_batch(run_id, tags=list(chunk))
        for chunk in _chunks([Metric(p.name, p.value, p.timestamp_ms, p.step) for p in points], BATCH_METRICS):
            self.client.log_batch(run_id, metrics=list(chunk))

    def _upload(self, run_id: str, artifact: Artifact) -> None:
        if artifact.path.is_dir():
            self.client.log_artifacts(run_id, str(artifact.path), f"{artifact.dest}/{artifact.path.name}")
        else:
            self.client.log_artifact(run_id, str(artifact.path), artifact.dest)

    def _create(self, experiment_id: str, payload: RunPayload, parent_id: str) -> str:
        tags = {k: v for k, v in payload.tags.items() if k != FINGERPRINT}
        run = self.client.create_run(experiment_id, start_time=payload.start_ms, run_name=payload.name,
                                     tags={KIND: "run", KEY: payload.key, PARENT: parent_id})
        run_id = run.info.run_id
        self._log(run_id, payload.params, payload.metrics, tags)
        for artifact in payload.artifacts:
            self._upload(run_id, artifact)
        self.client.set_terminated(run_id, payload.status, end_time=payload.end_ms)
        # last: a run without these was cut short (tracker down mid-way) and is replaced by the next sync
        self.client.log_batch(run_id, tags=_tags({FINGERPRINT: payload.fingerprint, COMPLETE: "complete"}))
        return run_id

    def _fill(self, run: Any, payload: RunPayload, parent_id: str) -> str:
        """Add the payload to a run a program logged into: what it lacks, keeping what it logged itself."""
        run_id = run.info.run_id
        params = {k: v for k, v in payload.params.items() if k not in run.data.params}
        points = [p for p in payload.metrics if p.name not in run.data.metrics]
        tags = {**{k: v for k, v in payload.tags.items() if k != FINGERPRINT}, PARENT: parent_id}
        self._log(run_id, params, points, tags)
        for artifact in payload.artifacts:
            self._upload(run_id, artifact)
        self.client.set_terminated(run_id, payload.status, end_time=payload.end_ms)
        self.client.log_batch(run_id, tags=_tags({FINGERPRINT: payload.fingerprint, COMPLETE: "complete"}))
        return run_id

    # -- the campaign run
    def _refresh_campaign_run(self, run: Any, facts: CampaignFacts, records: Sequence[RunRecord]) -> list[str]:
        """Upload the campaign's files that changed, tag its counts; the names of the files uploaded."""
        run_id, tags = run.info.run_id, run.data.tags
        changed = []
        provenance = json.dumps(facts.provenance, indent=2, sort_keys=True, default=str)
        uploads: list[tuple[str, bytes | Path]] = [("provenance.json", provenance.encode())]
        uploads += [(p.name, p) for p in campaign_files(self.folder)]
        for name, content in uploads:
            data = content if isinstance(content, bytes) else content.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if tags.get(f"sparkdl.sha.{name}") == digest:
                continue
            if isinstance(content, bytes):
                self.client.log_text(run_id, content.decode(), name)
            else:
                self.client.log_artifact(run_id, str(content))
            self.client.set_tag(run_id, f"sparkdl.sha.{name}", digest)
            changed.append(name)
        counts = {f"runs_{s}": str(n) for s, n in status_counts(records).items()}
        summary = {"runs": str(len(records)), **counts, CAMPAIGN_ID: facts.campaign_id}
        stale = {k: v for k, v in summary.items() if tags.get(k) != v}
        if stale:
            self.client.log_batch(run_id, tags=_tags(stale))
        if run.info.status != "FINISHED":
            self.client.set_terminated(run_id, "FINISHED")
        return changed

    # -- the whole campaign
    def sync(self, records: Sequence[RunRecord], meta: Mapping[str, object]) -> ExportSummary:
        """Create the missing runs, replace the changed ones, refresh the experiment and the campaign run."""
        check_reachable(self.uri)
        _check_store_folder(self.uri, self.folder)
        with export_lock(self.folder):
            return self._sync(records, meta)

    def _sync(self, records: Sequence[RunRecord], meta: Mapping[str, object]) -> ExportSummary:
        facts = CampaignFacts.read(self.folder, meta, self.cost)
        experiment_id, name = self.experiment_id(facts)
        wanted = experiment_tags(facts, self.folder, records)
        current = self.client.get_experiment(experiment_id).tags
        for key, value in wanted.items():
            if current.get(key) != value:
                self.client.set_experiment_tag(experiment_id, key, value)
        existing = self._existing_runs(experiment_id)
        parent = campaign_run(self.client, experiment_id, existing, epoch_ms(str(meta.get("created") or ""), 0))
        parent_id = parent.info.run_id
        by_key: dict[str, list[Any]] = {}
        for run in existing:
            if run.data.tags.get(KIND) == "run" and KEY in run.data.tags:
                by_key.setdefault(run.data.tags[KEY], []).append(run)
        summary = ExportSummary(experiment_id, name, ui_url(self.uri, experiment_id))
        for record in sorted(records, key=lambda r: r.cell):
            source = run_source(record, self.folder, facts, self.cap_bytes)
            known = by_key.pop(record.key, [])
            keep = [r for r in known if r.data.tags.get(FINGERPRINT) == source.fingerprint
                    and r.data.tags.get(COMPLETE) == "complete"][:1]
            program = [r for r in known if r.info.run_id == record.metrics.get("mlflow_run_id")][:1]
            for run in known:
                if run not in keep and run not in program:
                    self.client.delete_run(run.info.run_id)
            if keep:
                if keep[0].data.tags.get(PARENT) != parent_id:  # exported before runs were nested, or its parent
                    self.client.set_tag(keep[0].info.run_id, PARENT, parent_id)  # was deleted: nest it again
                summary.unchanged += 1
                continue
            payload = run_payload(record, self.folder, facts, self.cap_bytes, source)
            if program:  # the run the job logged into is the design run's run
                self._fill(program[0], payload, parent_id)
                (summary.replaced if program[0].data.tags.get(COMPLETE) else summary.created).append(record.key)
                continue
            self._create(experiment_id, payload, parent_id)
            (summary.replaced if known else summary.created).append(record.key)
        summary.campaign_files = self._refresh_campaign_run(parent, facts, records)
        return summary


def campaign_run(client: Any, experiment_id: str, existing: Sequence[Any] | None = None, start_ms: int = 0) -> Any:
    """The campaign's own run in ``experiment_id``, the parent of its design runs: the oldest active run tagged
    ``sparkdl.kind=campaign`` (any other such run is deleted), else a new one named "campaign", started at
    ``start_ms`` when given (the campaign's creation). ``existing``: the experiment's active runs, when read."""
    if existing is None:
        from mlflow.entities import ViewType

        existing = client.search_runs([experiment_id], filter_string=f"tags.`{KIND}` = 'campaign'",
                                      run_view_type=ViewType.ACTIVE_ONLY, max_results=100)
    mine = sorted((r for r in existing if r.data.tags.get(KIND) == "campaign"),
                  key=lambda r: (r.info.start_time or 0, r.info.run_id))
    for extra in mine[1:]:
        client.delete_run(extra.info.run_id)
    if mine:
        return mine[0]
    return client.create_run(experiment_id, start_time=start_ms or None, run_name="campaign",
                             tags={KIND: "campaign"})


def _tags(values: Mapping[str, str]) -> list[Any]:
    from mlflow.entities import RunTag

    return [RunTag(k, v) for k, v in values.items()]


# ---------------------------------------------------------------- the live path


class LiveExport:
    """``--mlflow`` during a campaign: :meth:`MlflowExporter.sync` after every stored run.

    The tracker being down (or refusing a request) never stops the campaign: one note when it goes
    away, one when it is back and the runs it missed are exported; :meth:`finish` says what is still
    missing and the command that catches up. Thread-safe (optimize.concurrent records from threads).
    """

    def __init__(self, uri: str, folder: CampaignDir, progress: Progress = lambda _: None,
                 exporter: MlflowExporter | None = None) -> None:
        for name, value in LIVE_HTTP.items():
            os.environ.setdefault(name, value)
        self.exporter = exporter or MlflowExporter(uri, folder)
        self.uri, self.folder, self.progress = self.exporter.uri, folder, progress
        self.down = False
        self.last: ExportSummary | None = None
        self._lock = threading.Lock()

    def catch_up_command(self) -> str:
        return f"sparkdl mlflow {self.folder.path} --tracking-uri {self.uri}"

    def sync(self, records: Sequence[RunRecord], meta: Mapping[str, object]) -> bool:
        """Export what is new; True when the experiment is up to date, False (after a note) when it could not be."""
        from mlflow.exceptions import MlflowException
        from requests.exceptions import RequestException

        with self._lock:
            try:
                summary = self.exporter.sync(records, meta)
            except (HarnessError, CampaignError, MlflowException, RequestException, OSError) as e:
                self.exporter.forget()
                if not self.down:
                    self.progress(f"note: MLflow export paused: {str(e).splitlines()[0][:300]}; the campaign goes on "
                                  f"and the next export catches up (or: {self.catch_up_command()})")
                self.down = True
                return False
            if self.down:
                self.progress(f"MLflow at {self.uri} answers again: {summary.describe()}")
            elif self.last is None:
                self.progress(f"MLflow: runs go to {summary.url}")
            self.down, self.last = False, summary
            return True

    def finish(self, records: Sequence[RunRecord], meta: Mapping[str, object]) -> None:
        """A last sync; the experiment's link, or what is missing and how to export it later."""
        if self.sync(records, meta) and self.last is not None:
            self.progress(f"MLflow: {len(records)} run(s) in experiment {self.last.experiment_name!r}: {self.last.url}")
        else:
            self.progress(f"MLflow: the experiment is behind this campaign; export it later with "
                          f"{self.catch_up_command()}")
