"""A log inside a campaign folder whose job reports its figures as JSON: the campaign's record is its answer.

A job with ``results = "json"`` (TorchDistributor, XGBoost, a user's own) prints no BigDL training
line: read alone, its log is "incomplete: no BigDL training line". The campaign judged it when it
ran (``logparse.judge_json_run``: the process's exit, the job's figures file, lost executors) and
kept that judgement in results.csv. ``sparkdl logparse`` on such a log reports the recorded status,
reason and figures, when the campaign's manifest says its jobs are not BigDL (``"results"``: ``"json"``,
``"output"``, ``"none"`` or ``"mixed"``; a manifest written before that field: the run's ``runs/<key>/metrics.json`` exists).

The folder's layout is ``sparkdl.campaign.CampaignDir``'s; logparse sits below harness, so the few
names it needs are repeated here and tests/test_logparse_campaign.py checks that they agree.
"""

from __future__ import annotations

import os

from logparse.errors import LogReadError
from logparse.records import STATUSES
from logparse.status import MAX_WALL_CLOCK_S

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
    """(the manifest's ``results``, "" when it has none; results.csv rows by their log's absolute path).

    None when the folder is no campaign (no manifest.json or results.csv); both files are read by the one
    reader (``sparkdl.config``: a FIFO, a device, a link loop, a bad byte or an oversized field is a
    LogReadError naming the file, never a hang)."""
    from sparkdl import config

    manifest_path = os.path.join(root, MANIFEST)
    if not os.path.lexists(manifest_path):
        return None
    manifest = config.read_json(manifest_path, "campaign manifest", error=LogReadError)
    results = manifest.get("results", "") if isinstance(manifest, dict) else ""
    if results == "bigdl":
        return None
    results_path = os.path.join(root, RESULTS)
    if not os.path.lexists(results_path):
        return None
    table = config.read_table(results_path, "campaign results table", error=LogReadError)
    rows: dict[str, dict[str, str]] = {}
    for _line, record in table.rows:
        row = dict(zip(table.header, record))
        log = row.get("log") or f"{LOGS}/{row.get('run')}-{row.get('replicate')}.out"
        if "\x00" in log or len(log) > config.MAX_PATH_CHARS:
            continue
        rows[os.path.abspath(os.path.join(root, log))] = row
    return str(results), rows


#: What a recorded figure may be: (integer, minimum, maximum): a run's figures, bounded as logparse.status bounds them.
FIGURES = {"wall_clock_s": (False, 0.0, MAX_WALL_CLOCK_S), "accuracy": (False, 0.0, 1.0),
           "epochs_completed": (True, 0, 10**9), "learning_rate_used": (False, 0.0, None),
           "batch_size_used": (True, 0, 10**9)}


def _number(path: str, row: dict[str, str], name: str) -> float | int | None:
    """The recorded figure ``name``, read by the one bounded number parser; a figure no run can have is a
    LogReadError naming it."""
    from sparkdl.numbers import NumberError, number

    text = row.get(name)
    if text is None or text.strip() == "":
        return None
    integer, lo, hi = FIGURES[name]
    try:
        value = number(text, minimum=lo, maximum=hi)
        if integer and not float(value).is_integer():
            raise NumberError(f"{text.strip()} is not a whole number")
    except NumberError as e:
        raise LogReadError(f"{path}: its campaign's {RESULTS} records {name} {text[:40]!r} ({e}): not a figure a "
                           "run can have; fix or remove that row") from None
    return int(value) if integer else float(value)


def recorded_log(path: str, row: dict[str, str]):
    """The JobLog of a json job's log: its record's status, reason and figures (each checked: a figure no run can
    have, ``accuracy`` 5.5, ``wall_clock_s`` -7, ``epochs_completed`` inf, is a LogReadError naming it)."""
    from logparse.records import FailureKind, JobLog, Status

    kind = row.get("failure_kind") or None
    return JobLog(
        path=path, status=Status(row["status"]), reason=row.get("reason") or "",
        failure_kind=FailureKind(kind) if kind in {k.value for k in FailureKind} else None,
        wall_clock_s=_number(path, row, "wall_clock_s"), accuracy=_number(path, row, "accuracy"),
        epochs_completed=_number(path, row, "epochs_completed") or 0,
        learning_rate=_number(path, row, "learning_rate_used"),
        batch_size=_number(path, row, "batch_size_used"), app_id=row.get("app_id") or None,
        epoch_wall_clock_ms=None, notes=(NOTE,))


def epoch_rows(path: str) -> list[dict[str, object]]:
    """The per-epoch rows of a json job: its ``sparkdl-epoch`` lines (``logparse.epochlines``)."""
    from logparse.epochlines import read_epochs

    return [{"path": path, "epoch": e.epoch, "wall_clock_s": e.wall_clock_s, "accuracy": e.accuracy, **e.extra}
            for e in read_epochs(path)]
