"""The records a BigDL log yields: one dataclass per kind of DistriOptimizer line, and JobLog."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Status(StrEnum):
    """A run's status, decided once, by logparse, and taken as is everywhere else.

    A ``StrEnum``: ``Status.OK == "ok"``, and it is written as ``ok`` in CSV, JSON and SQLite.
    ``pruned`` is a run an optimizer stopped on purpose (never a failure).
    """

    OK = "ok"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    PRUNED = "pruned"


class FailureKind(StrEnum):
    """Whose fault a failed or incomplete run was."""

    JOB = "job"                        # deterministic: the job itself (a bad argument, a Usage Error)
    INFRASTRUCTURE = "infrastructure"  # lost executor/worker/master, refused connection, signal, truncated log
    TIMEOUT = "timeout"                # the harness stopped it after --timeout


STATUSES = tuple(s.value for s in Status)
FAILURE_KINDS = ("job", "infrastructure")


@dataclass(slots=True)
class Iteration:
    """One ``[Epoch E n/N][Iteration I][Wall Clock Ss] Trained ...`` line.

    Read-only by convention but not frozen: a frozen dataclass takes ~3x longer to build,
    and a full parse builds one per iteration line (millions in a large log).
    """

    epoch: int
    iteration: int
    wall_clock_s: float
    epoch_records: int      # n: records of this epoch trained so far (may exceed epoch_size)
    epoch_size: int         # N: records in one epoch
    records: float          # records trained in this iteration (the global batch)
    seconds: float
    throughput: float       # records/second
    loss: float
    learning_rate: float | None  # the current (decayed) rate BigDL reports, if the line has it


@dataclass(frozen=True, slots=True)
class EpochEnd:
    """One ``... Epoch finished. Wall clock time is X ms`` line."""

    epoch: int
    iteration: int
    wall_clock_s: float
    epoch_wall_clock_ms: float


@dataclass(frozen=True, slots=True)
class Metric:
    """One validation method's result, e.g. ``Top1Accuracy is Accuracy(correct: 52, count: 512, accuracy: 0.1)``.

    ``fields`` keeps every ``name: number`` pair in the order printed; ``value`` is the
    headline figure (``accuracy`` for an Accuracy, the ``Average ...`` field for a loss,
    else the last field).
    """

    name: str
    kind: str
    value: float | None
    fields: tuple[tuple[str, float], ...]

    def get(self, name: str) -> float | None:
        """The field called ``name``, or None."""
        for key, value in self.fields:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class Validation:
    """Every metric line BigDL printed for one validation (same epoch, iteration and wall clock)."""

    epoch: int
    iteration: int
    wall_clock_s: float
    metrics: tuple[Metric, ...]

    def metric(self, name: str) -> Metric | None:
        """The metric called ``name`` (e.g. ``Top1Accuracy``), or None."""
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    @property
    def accuracy(self) -> float | None:
        """Top1Accuracy's accuracy, or None when this validation did not compute it."""
        m = self.metric("Top1Accuracy")
        return None if m is None else m.value


@dataclass(frozen=True)
class JobLog:
    """Everything one job's log says: final figures, status and, with ``full=True``, every record.

    ``status`` is ``ok``, ``failed`` or ``incomplete`` (rules in ``logparse.status``);
    ``reason`` is "" when ok, else the first meaningful error line or what is missing;
    ``failure_kind`` is None when ok, ``"job"`` for deterministic job errors and
    ``"infrastructure"`` for lost executors/workers/master, refused connections, signals
    and truncated logs.
    """

    path: str
    status: Status
    reason: str
    failure_kind: FailureKind | None
    wall_clock_s: float | None          # header Wall Clock of the last validation (seed 001's figure)
    accuracy: float | None              # Top1Accuracy of the last validation
    epochs_completed: int               # epoch of the last "Epoch finished" line (0 if none)
    learning_rate: float | None         # "Current learning rate" of the first iteration
    batch_size: int | None              # records trained in the first iteration
    app_id: str | None                  # Spark application id, when the log shows one
    epoch_wall_clock_ms: float | None   # last "Epoch finished. Wall clock time is X ms"
    epochs_validated: int | None = None  # epoch of the last validation
    planned_epochs: int | None = None   # expected_epochs, else "epochs=N" in the application name
    iterations_completed: int | None = None  # iteration number of the last iteration line
    final_loss: float | None = None     # loss of the last iteration line
    final_metrics: tuple[Metric, ...] = ()   # every metric of the last validation
    app_name: str | None = None
    err_path: str | None = None         # the .err read beside the .out (None if none, or not needed: ok from the .out)
    notes: tuple[str, ...] = ()         # facts that did not change the status (e.g. errors after an ok end)
    evaluated: tuple[tuple[str, float, int], ...] = ()  # post-training "Evaluated result" lines: (method, value, total)
    iterations: tuple[Iteration, ...] = field(default=(), repr=False)   # full=True only
    epochs: tuple[EpochEnd, ...] = field(default=(), repr=False)        # full=True only
    validations: tuple[Validation, ...] = field(default=(), repr=False)  # full=True only

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    def summary(self) -> dict[str, object]:
        """The scalar fields as a flat dict (final metrics as ``metric_<name>``), for CSV and JSON."""
        out: dict[str, object] = {}
        for name in SUMMARY_FIELDS:
            value = getattr(self, name)
            out[name] = "; ".join(value) if name == "notes" else str(value) if isinstance(value, StrEnum) else value
        for m in self.final_metrics:
            out[f"metric_{m.name}"] = m.value
        for method, value, _total in self.evaluated:
            out["evaluated_" + "".join(ch if ch.isalnum() else "_" for ch in method.lower()).strip("_")] = value
        return out

    def as_dict(self) -> dict[str, object]:
        """Every field, records included, as plain JSON-ready data."""
        return asdict(self)


SUMMARY_FIELDS = (
    "path", "status", "reason", "failure_kind", "wall_clock_s", "accuracy", "epochs_completed",
    "learning_rate", "batch_size", "app_id", "epoch_wall_clock_ms", "epochs_validated",
    "planned_epochs", "iterations_completed", "final_loss", "app_name", "err_path", "notes",
)
