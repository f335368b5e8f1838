"""A run's per-epoch figures, whatever reports them: ``runs/<key>/epochs.csv``, the campaign's epochs.csv,
and the one reader every consumer uses (:func:`run_epoch_points`).

Where a run's epochs come from, by its ``results``:

* ``"output"``: the matches of a ``figures`` regex with a group named ``epoch`` (:mod:`harness.outputfigures`),
  and ``"mlflow"``: the metrics the program logged at more than one step (:mod:`harness.mlflow_run`). Both are
  written, once the run is ok, to ``runs/<key>/epochs.csv`` (:func:`write_run_epochs`), one row per epoch;
  the campaign's ``epochs.csv`` gathers them, each row led by its run's design row (:func:`campaign_epoch_rows`);
* ``"json"`` and jobs of their kind: the ``sparkdl-epoch`` lines of the job's .out (:mod:`logparse.epochlines`),
  and the lists of its metrics.json (steps 1..n);
* ``"bigdl"``: the log's validated epochs (:func:`logparse.epochs.epoch_summaries`).

:func:`run_epoch_points` reads them in that order of preference, one point per (figure, epoch), with the
epoch's training time where the source has one (the MLflow export's metric histories are made from it).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from sparkdl.campaign import IDENTIFIERS, CampaignDir, RunRecord
from sparkdl.numbers import finite

EPOCHS_FILE = "epochs.csv"
#: Columns of a run's epochs.csv that number the epoch rather than measure it.
EPOCH_KEYS = ("epoch", "step")
#: The time so far at an epoch: a row's ``wall_clock_s`` (the run's own ``wall_clock_s`` is the last epoch's),
#: named so as a history.
EPOCH_WALL = "epoch_wall_clock_s"


@dataclass(frozen=True)
class EpochPoint:
    """One figure at one epoch, with the training time so far when the source gives it."""

    name: str
    epoch: int
    value: float
    wall_clock_s: float | None = None


def write_run_epochs(run_dir: Path, rows: Sequence[Mapping[str, object]]) -> Path | None:
    """``runs/<key>/epochs.csv``: one row per epoch of the run (None, and no file, when it has none)."""
    target = Path(run_dir) / EPOCHS_FILE
    target.unlink(missing_ok=True)
    if not rows:
        return None
    columns = list(dict.fromkeys(c for row in rows for c in row))
    with open(target, "w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)
    return target


def read_run_epochs(path: Path) -> list[dict[str, Any]]:
    """The rows of a run's epochs.csv, numbers as numbers (integers as ints); [] when there is none."""
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def campaign_epoch_rows(folder: CampaignDir, records: Sequence[RunRecord]) -> list[dict[str, object]]:
    """The campaign's epochs.csv: every ok run's ``runs/<key>/epochs.csv``, led by its design row."""
    rows: list[dict[str, object]] = []
    for record in sorted(records, key=lambda r: r.cell):
        path = folder.path / CampaignDir.RUNS / record.key / EPOCHS_FILE
        if not record.ok or not path.is_file():
            continue
        design = record.spec.as_row()
        lead = {"run": record.run, "replicate": record.replicate,
                **{k: v for k, v in design.items() if k not in IDENTIFIERS}}
        rows += [{**lead, **row} for row in read_run_epochs(path)]
    return rows


def _number(text: str | None) -> Any:
    if text in (None, ""):
        return None
    try:
        value = float(text)  # type: ignore[arg-type]
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def table_points(rows: Sequence[Mapping[str, object]]) -> list[EpochPoint]:
    """The points of epochs.csv rows: each number but the epoch's own numbering; ``wall_clock_s`` is the
    epoch's time (named :data:`EPOCH_WALL`)."""
    out: list[EpochPoint] = []
    for row in rows:
        epoch = row.get("epoch")
        if not isinstance(epoch, int) or isinstance(epoch, bool):
            continue
        wall = finite(row.get("wall_clock_s"))
        for name, value in row.items():
            number = finite(value)
            if name not in EPOCH_KEYS and number is not None:
                out.append(EpochPoint(EPOCH_WALL if name == "wall_clock_s" else name, epoch, number, wall))
    return out


def log_points(out_log: Path) -> list[EpochPoint]:
    """The validated epochs of a log: its ``sparkdl-epoch`` lines, else BigDL's own (accuracy, mean loss and
    throughput, the time at the epoch's validation)."""
    import logparse
    from logparse import epochlines
    from logparse.epochs import epoch_summaries
    from logparse.errors import LogParseError

    if not out_log.is_file():
        return []
    out: list[EpochPoint] = []

    def add(name: str, epoch: int, value: object, wall: float | None) -> None:
        number = finite(value)
        if number is not None:
            out.append(EpochPoint(name, epoch, number, wall))

    lines = epochlines.read_epochs(out_log)
    for e in lines:
        add("accuracy", e.epoch, e.accuracy, e.wall_clock_s)
        add(EPOCH_WALL, e.epoch, e.wall_clock_s, e.wall_clock_s)
        for name, value in e.extra.items():
            if name not in ("accuracy", EPOCH_WALL):
                add(name, e.epoch, value, e.wall_clock_s)
    if lines:
        return out
    try:
        summaries = epoch_summaries(logparse.parse(out_log, full=True))
    except LogParseError:
        summaries = []
    for s in summaries:
        wall = s.validation_wall_clock_s if s.validation_wall_clock_s is not None else s.wall_clock_s
        add("accuracy", s.epoch, s.accuracy, wall)
        add("loss", s.epoch, s.mean_loss, wall)
        add("throughput", s.epoch, s.mean_throughput, wall)
        add(EPOCH_WALL, s.epoch, wall, wall)
    return out


def run_epoch_points(out_log: Path, series: Mapping[str, Sequence[float]] = {},
                     table: Path | None = None) -> list[EpochPoint]:
    """Every per-epoch figure of one run, from the first source that has epochs: its epochs.csv (``table``:
    an output or MLflow job's), else its log's epoch lines; then each list of a json job's metrics.json
    (``series``, steps 1..n) not already named."""
    points = table_points(read_run_epochs(table)) if table is not None else []
    if not points:
        points = log_points(out_log)
    named = {p.name for p in points}
    for name, values in series.items():
        if name not in named:
            points += [EpochPoint(name, i, float(v)) for i, v in enumerate(values, start=1) if finite(v) is not None]
    return points


def run_epochs(folder: CampaignDir, record: RunRecord) -> list[EpochPoint]:
    """:func:`run_epoch_points` of a stored run: its log, its metrics.json's lists and its epochs.csv."""
    from harness.command import METRICS_FILE
    from harness.metrics import read_metrics, reserved_names

    run_dir = folder.path / CampaignDir.RUNS / record.key
    metrics = run_dir / METRICS_FILE
    series = dict(read_metrics(metrics, reserved_names(record.spec)).series) if metrics.is_file() else {}
    out_log = folder.path / record.execution.log if record.execution.log else folder.logs / f"{record.key}.out"
    return run_epoch_points(out_log, series, run_dir / EPOCHS_FILE)
