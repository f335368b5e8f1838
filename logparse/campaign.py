"""A log inside a campaign folder whose job reports its figures as JSON: the campaign's record is its answer.

A job with ``results = "json"`` (TorchDistributor, XGBoost, a user's own) prints no BigDL training
line: read alone, its log is "incomplete: no BigDL training line". The campaign judged it when it
ran (``logparse.judge_json_run``: the process's exit, the job's figures file, lost executors) and
kept that judgement in results.csv. ``python -m logparse`` on such a log reports the recorded status,
reason and figures, when the campaign's manifest says its jobs are not BigDL (``"results"``: ``"json"``,
``"output"``, ``"none"`` or ``"mixed"``; a manifest written before that field: the run's ``runs/<key>/metrics.json`` exists).

The folder's layout is ``harness.schema.CampaignDir``'s; logparse sits below harness, so the few
names it needs are repeated here and tests/test_logparse_campaign.py checks that they agree.
"""

from __future__ import annotations

import os

from logparse.records import STATUSES

MANIFEST = "manifest.json"
RESULTS = "results.csv"
LOGS = "logs"
RUNS = "runs"
METRICS = "metrics.json"
NOTE = "status and figures as the campaign recorded them (its job is not BigDL: no BigDL lines to read)"


class Campaigns:
    """The campaign folders met while reading logs, each read once."""

    def __init__(self) -> None:
        self._folders: dict[str, tuple[str, dict[str, dict[str, str]]] | None] = {}

    def record(self, log_path: str) -> dict[str, str] | None:
        """The results.csv row of the json job whose log this is, or None (not in a campaign folder, a
        BigDL campaign, or a log the campaign did not record, e.g. an earlier attempt)."""
        logs_dir = os.path.dirname(os.path.abspath(log_path))
        if os.path.basename(logs_dir) != LOGS:
            return None
        root = os.path.dirname(logs_dir)
        if root not in self._folders:
            self._folders[root] = _read(root)
        found = self._folders[root]
        if found is None:
            return None
        results, rows = found
        row = rows.get(os.path.abspath(log_path))
        if row is None or row.get("status") not in STATUSES:
            return None
        if results in ("json", "mlflow", "output", "none", "mixed"):
            return row
        if results == "" and os.path.isfile(os.path.join(root, RUNS, f"{row.get('run')}-{row.get('replicate')}",
                                                         METRICS)):
            return row
        return None


def _read(root: str) -> tuple[str, dict[str, dict[str, str]]] | None:
    """(the manifest's ``results``, "" when it has none; results.csv rows by their log's absolute path)."""
    import json

    try:
        with open(os.path.join(root, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    results = manifest.get("results", "") if isinstance(manifest, dict) else ""
    if results == "bigdl":
        return None
    import csv

    rows: dict[str, dict[str, str]] = {}
    try:
        with open(os.path.join(root, RESULTS), newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                log = row.get("log") or f"{LOGS}/{row.get('run')}-{row.get('replicate')}.out"
                rows[os.path.abspath(os.path.join(root, log))] = row
    except (OSError, ValueError, csv.Error):
        return None
    return str(results), rows


def _number(text: str | None, kind: type) -> float | int | None:
    if text is None or text == "":
        return None
    try:
        return kind(float(text)) if kind is int else kind(text)
    except ValueError:
        return None


def recorded_log(path: str, row: dict[str, str]):
    """The JobLog of a json job's log: its record's status, reason and figures."""
    from logparse.records import FailureKind, JobLog, Status

    kind = row.get("failure_kind") or None
    return JobLog(
        path=path, status=Status(row["status"]), reason=row.get("reason") or "",
        failure_kind=FailureKind(kind) if kind in {k.value for k in FailureKind} else None,
        wall_clock_s=_number(row.get("wall_clock_s"), float), accuracy=_number(row.get("accuracy"), float),
        epochs_completed=_number(row.get("epochs_completed"), int) or 0,
        learning_rate=_number(row.get("learning_rate_used"), float),
        batch_size=_number(row.get("batch_size_used"), int), app_id=row.get("app_id") or None,
        epoch_wall_clock_ms=None, notes=(NOTE,))


def epoch_rows(path: str) -> list[dict[str, object]]:
    """The per-epoch rows of a json job: its ``sparkdl-epoch`` lines (``logparse.epochlines``)."""
    from logparse.epochlines import read_epochs

    return [{"path": path, "epoch": e.epoch, "wall_clock_s": e.wall_clock_s, "accuracy": e.accuracy, **e.extra}
            for e in read_epochs(path)]
