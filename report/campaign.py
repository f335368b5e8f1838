"""What a report is made from: a campaign directory (or a plain results CSV), read without changing it.

A campaign directory ``runs/NAME`` holds ``results.csv`` (one row per job, every status),
``campaign.sqlite`` (provenance in ``meta``, every attempt in ``attempts``; see
:mod:`harness.store`) and ``logs/<run>-<replicate>.out/.err``. A plain CSV is a results
table alone. Nothing in the directory is changed: the SQLite file is opened read-only, and
immutable (no -shm/-wal files created) unless a -wal file shows a campaign still writing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparkdl.campaign import CampaignDir
from models.errors import CostInputsMissingError
from models.results import STATUS_COLUMN, ResultsTable, assumptions, build_table, choose_factors, ok_rows, read_csv

ROW_KEY = "__row__"
LOG_TAIL_LINES = 8


@dataclass(frozen=True)
class CampaignData:
    """The rows of a campaign, the jobs that enter the analysis, and the campaign's records.

    ``raw`` holds every row as read, with a ``cost`` column (NaN where none could be computed);
    ``frame`` the jobs to analyse: those of ``table`` (status ok, finite cost), or when no cost
    could be computed at all (``table`` is None, ``cost_problem`` says why) the rows with status ok
    (:func:`models.results.ok_rows`, the one rule). ``candidates`` are the design's factor columns
    (declared: ``--factors``, the campaign's manifest.json or the harness's design columns; else
    guessed and named in ``notices``); ``measurements`` are columns set aside as measurements.
    """

    source: Path
    results_path: Path
    results_sha256: str
    raw: pd.DataFrame
    frame: pd.DataFrame
    table: ResultsTable | None
    cost_problem: str | None
    candidates: tuple[str, ...]
    measurements: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    meta_problem: str | None = None
    attempts: pd.DataFrame | None = None
    log_dir: Path | None = None

    @property
    def is_campaign(self) -> bool:
        return self.source.is_dir()

    def log_tail(self, run: object, replicate: object, lines: int = LOG_TAIL_LINES,
                 log: object = None) -> tuple[str, str] | None:
        """The last lines of a run's stderr (else stdout) log and its name, if the file exists: the row's
        ``log`` column when it has one (relative to the campaign, or absolute: logs ingested where they are),
        else ``logs/<run>-<replicate>``. A .gz log has no tail here."""
        if isinstance(log, str) and log.strip() and self.is_campaign:
            out = self.source / log
            stem = out.name[:-4] if out.name.endswith(".out") else None
            candidates = [out.with_name(stem + ".err"), out] if stem else []
        elif self.log_dir is not None:
            candidates = [self.log_dir / f"{run}-{replicate}{suffix}" for suffix in (".err", ".out")]
        else:
            return None
        for p in candidates:
            if _is_file(p):
                text = _tail(p, lines)
                if text.strip():
                    return str(p) if p.is_absolute() and not p.is_relative_to(self.source) else p.name, text
        return None


def _is_file(path: Path) -> bool:
    """A regular file; a name the system refuses (over 255 bytes, a NUL byte) is none."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _tail(path: Path, lines: int, max_bytes: int = 16384) -> str:
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - max_bytes))
        data = f.read().decode("utf-8", errors="replace")
    out = [ln[:240] for ln in data.splitlines()[-lines:]]
    return "\n".join(out)


def read_meta(db: Path) -> tuple[dict[str, Any], pd.DataFrame | None, str | None]:
    """Provenance and attempts from ``campaign.sqlite``, opened read-only; a problem is returned, not raised."""
    if not db.is_file():
        return {}, None, f"no {CampaignDir.STORE} in the campaign directory: provenance unknown"
    try:
        # With no -wal file every committed row is in the main file: open it immutable, which
        # creates no -shm/-wal beside it. A -wal file means a live (or killed) campaign: read it too.
        live = db.with_name(db.name + "-wal").exists()
        con = sqlite3.connect(f"{db.resolve().as_uri()}?{'mode=ro' if live else 'immutable=1'}", uri=True)
        try:
            meta = {}
            for key, value in con.execute("SELECT key, value FROM meta"):
                try:
                    meta[key] = json.loads(value)
                except (TypeError, ValueError):
                    meta[key] = value
            attempts = pd.read_sql_query("SELECT * FROM attempts", con)
        finally:
            con.close()
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        return {}, None, f"{db.name} could not be read ({exc}): provenance unknown"
    return meta, attempts, None


def load_campaign(path: str | Path, response: str = "cost", cost: str | None = None,
                  factors: Sequence[str] | None = None) -> CampaignData:
    """Read a campaign directory or a results CSV.

    Raises :class:`~models.errors.ResultsNotFoundError` for a missing path,
    :class:`~models.errors.InvalidTableError` for an unreadable CSV or a column that cannot be a
    factor, and :class:`~models.errors.MissingColumnError` when ``cost`` is asked for but the table
    has no wall clock and accuracy. With no ``cost`` and no way to compute one the report still renders.
    """
    source = Path(path)
    csv_path, raw = read_csv(source)
    raw = raw.reset_index(drop=True)
    choice = choose_factors(raw, factors, csv_path, response)
    table: ResultsTable | None
    problem = None
    try:
        keyed = raw.assign(**{ROW_KEY: np.arange(len(raw))})
        table = build_table(keyed, cost=cost, source=str(csv_path), factors=choice.factors, response=response,
                            csv_path=csv_path)
    except CostInputsMissingError as exc:
        if cost is not None:
            raise
        table, problem = None, str(exc)
    if table is not None:
        if "cost" in table.frame.columns:  # not computed for another response of a table without its inputs
            rows = table.frame[ROW_KEY].to_numpy()
            costs = np.full(len(raw), np.nan)
            costs[rows] = table.frame["cost"].to_numpy(dtype=float)
            raw = raw.assign(cost=costs)
        table = replace(table, frame=table.frame.drop(columns=[ROW_KEY]), factors_from=choice.source,
                        measurements=choice.measurements)
        frame = table.frame
        notices = table.notices()
    else:
        frame = ok_rows(raw)
        notices = assumptions(STATUS_COLUMN in raw.columns, len(raw), choice)
    meta: dict[str, Any] = {}
    attempts = None
    meta_problem = None
    log_dir = None
    if source.is_dir():
        meta, attempts, meta_problem = read_meta(source / CampaignDir.STORE)
        log_dir = source / "logs" if (source / "logs").is_dir() else None
    return CampaignData(
        source=source,
        results_path=csv_path,
        results_sha256=hashlib.sha256(csv_path.read_bytes()).hexdigest(),
        raw=raw,
        frame=frame,
        table=table,
        cost_problem=problem,
        candidates=choice.factors,
        measurements=choice.measurements,
        notices=notices,
        meta=meta,
        meta_problem=meta_problem,
        attempts=attempts,
        log_dir=log_dir,
    )
