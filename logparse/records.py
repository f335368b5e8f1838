"""The records a BigDL log yields: one record per kind of DistriOptimizer line, and JobLog.

The records are named tuples (``collections.namedtuple`` subclasses), not dataclasses: they are
immutable, compare and pickle by value, and ``log._replace(status=...)`` makes a changed copy.
``dataclasses`` (with ``inspect``) and ``typing`` would add 10 ms to every ``sparkdl logparse``,
which is timed against grep; each field's type is written beside its name.
"""

from __future__ import annotations

from collections import namedtuple
from enum import StrEnum

from sparkdl.status import FAILURE_KINDS, STATUSES, FailureKind, Status  # noqa: F401  (the campaign's status values)


class Iteration(namedtuple("Iteration", (
        "epoch",            # int
        "iteration",        # int
        "wall_clock_s",     # float
        "epoch_records",    # int: records of this epoch trained so far (may exceed epoch_size)
        "epoch_size",       # int: records in one epoch
        "records",          # float: records trained in this iteration (the global batch)
        "seconds",          # float
        "throughput",       # float: records/second
        "loss",             # float
        "learning_rate",    # float | None: the current (decayed) rate BigDL reports, if the line has it
))):
    """One ``[Epoch E n/N][Iteration I][Wall Clock Ss] Trained ...`` line."""

    __slots__ = ()


class EpochEnd(namedtuple("EpochEnd", (
        "epoch",                # int
        "iteration",            # int
        "wall_clock_s",         # float
        "epoch_wall_clock_ms",  # float
))):
    """One ``... Epoch finished. Wall clock time is X ms`` line."""

    __slots__ = ()


class Metric(namedtuple("Metric", (
        "name",     # str, e.g. "Top1Accuracy"
        "kind",     # str, e.g. "Accuracy"
        "value",    # float | None: the headline figure
        "fields",   # tuple[tuple[str, float], ...]: every "name: number" pair, in the order printed
))):
    """One validation method's result, e.g. ``Top1Accuracy is Accuracy(correct: 52, count: 512, accuracy: 0.1)``.

    ``value`` is ``accuracy`` for an Accuracy, the ``Average ...`` field for a loss, else the last field.
    """

    __slots__ = ()

    def get(self, name: str) -> float | None:
        """The field called ``name``, or None."""
        for key, value in self.fields:
            if key == name:
                return value
        return None


class Validation(namedtuple("Validation", (
        "epoch",          # int
        "iteration",      # int
        "wall_clock_s",   # float
        "metrics",        # tuple[Metric, ...]
))):
    """Every metric line BigDL printed for one validation (same epoch, iteration and wall clock)."""

    __slots__ = ()

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


_JOBLOG_REQUIRED = (
    "path",                 # str
    "status",               # Status
    "reason",               # str
    "failure_kind",         # FailureKind | None
    "wall_clock_s",         # float | None: header Wall Clock of the last validation (Marinos 2021's figure)
    "accuracy",             # float | None: Top1Accuracy of the last validation
    "epochs_completed",     # int: epoch of the last "Epoch finished" line (0 if none)
    "learning_rate",        # float | None: "Current learning rate" of the first iteration
    "batch_size",           # int | None: records trained in the first iteration
    "app_id",               # str | None: Spark application id, when the log shows one
    "epoch_wall_clock_ms",  # float | None: last "Epoch finished. Wall clock time is X ms"
)
_JOBLOG_OPTIONAL = (  # (name, default)
    ("epochs_validated", None),      # int | None: epoch of the last validation
    ("planned_epochs", None),        # int | None: expected_epochs, else "epochs=N" in the application name
    ("iterations_completed", None),  # int | None: iteration number of the last iteration line
    ("final_loss", None),            # float | None: loss of the last iteration line
    ("final_metrics", ()),           # tuple[Metric, ...]: every metric of the last validation
    ("app_name", None),              # str | None
    ("err_path", None),              # str | None: the .err read beside the .out (None if none, or not needed)
    ("notes", ()),                   # tuple[str, ...]: facts that did not change the status
    ("evaluated", ()),               # tuple[tuple[str, float, int], ...]: post-training "Evaluated result" lines
    ("iterations", ()),              # tuple[Iteration, ...]: full=True only
    ("epochs", ()),                  # tuple[EpochEnd, ...]: full=True only
    ("validations", ()),             # tuple[Validation, ...]: full=True only
)


class JobLog(namedtuple("JobLog", _JOBLOG_REQUIRED + tuple(n for n, _ in _JOBLOG_OPTIONAL),
                        defaults=tuple(d for _, d in _JOBLOG_OPTIONAL))):
    """Everything one job's log says: final figures, status and, with ``full=True``, every record.

    ``status`` is ``ok``, ``failed`` or ``incomplete`` (rules in ``logparse.status``);
    ``reason`` is "" when ok, else the first meaningful error line or what is missing;
    ``failure_kind`` is None when ok, ``"job"`` for deterministic job errors and
    ``"infrastructure"`` for lost executors/workers/master, refused connections, signals
    and truncated logs. The fields and their types are listed above the class.
    """

    __slots__ = ()

    def __repr__(self) -> str:  # the per-line records would make it megabytes long
        return f"JobLog(path={self.path!r}, status={self.status!r}, reason={self.reason!r}, ...)"

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
        """Every field, records included, as plain JSON-ready data (records become dicts)."""
        return _plain(self)


def _plain(value: object) -> object:
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {k: _plain(v) for k, v in zip(value._fields, value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


SUMMARY_FIELDS = (
    "path", "status", "reason", "failure_kind", "wall_clock_s", "accuracy", "epochs_completed",
    "learning_rate", "batch_size", "app_id", "epoch_wall_clock_ms", "epochs_validated",
    "planned_epochs", "iterations_completed", "final_loss", "app_name", "err_path", "notes",
)
