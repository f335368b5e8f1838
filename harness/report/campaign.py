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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.runspec import OPTIONAL, REQUIRED
from harness.schema import CampaignDir
from models.errors import InvalidTableError, MissingColumnError
from models.results import NON_FACTOR_COLUMNS, OK_STATUS, STATUS_COLUMN, ResultsTable, build_table, resolve_path

#: Columns the harness writes that are neither factors nor the response.
BOOKKEEPING = NON_FACTOR_COLUMNS
#: The design columns of a harness design file, in file order.
DESIGN_COLUMNS = ("model",) + REQUIRED
ROW_KEY = "__row__"
LOG_TAIL_LINES = 8


@dataclass(frozen=True)
class Campaign:
    """The rows of a campaign, the jobs that enter the analysis, and the campaign's records.

    ``raw`` holds every row as read, with a ``cost`` column (NaN where none could be computed);
    ``frame`` the jobs to analyse: those of ``table`` (status ok, finite cost), or when no cost
    could be computed at all (``table`` is None, ``cost_problem`` says why) the rows with status ok. ``candidates`` are the columns that may be
    design factors; ``measurements`` are candidate-looking columns set aside as measurements.
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
    meta: Mapping[str, Any] = field(default_factory=dict)
    meta_problem: str | None = None
    attempts: pd.DataFrame | None = None
    log_dir: Path | None = None

    @property
    def is_campaign(self) -> bool:
        return self.source.is_dir()

    def log_tail(self, run: object, replicate: object, lines: int = LOG_TAIL_LINES) -> tuple[str, str] | None:
        """The last lines of a run's stderr (else stdout) log and its name, if the file exists."""
        if self.log_dir is None:
            return None
        for suffix in (".err", ".out"):
            p = self.log_dir / f"{run}-{replicate}{suffix}"
            if p.is_file():
                text = _tail(p, lines)
                if text.strip():
                    return p.name, text
        return None


def _tail(path: Path, lines: int, max_bytes: int = 16384) -> str:
    with path.open("rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - max_bytes))
        data = f.read().decode("utf-8", errors="replace")
    out = [ln[:240] for ln in data.splitlines()[-lines:]]
    return "\n".join(out)


def ok_rows(raw: pd.DataFrame) -> pd.DataFrame:
    """Rows whose status is ok (every row when there is no status column)."""
    if STATUS_COLUMN not in raw.columns:
        return raw.reset_index(drop=True)
    status = raw[STATUS_COLUMN].astype("string").str.strip().str.lower()
    return raw[(status == OK_STATUS).fillna(False).to_numpy(dtype=bool)].reset_index(drop=True)


def candidate_columns(raw: pd.DataFrame, response: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Columns that may be factors, and those set aside as measurements.

    A harness table (it has every design column) uses its design columns. Any other table uses
    every column that is not bookkeeping or the response, except numeric columns with more than
    10 distinct values that differ in over half the rows (measurements, not design levels).
    """
    if all(c in raw.columns for c in REQUIRED):
        return tuple(c for c in raw.columns if c in DESIGN_COLUMNS), ()
    keep, measured = [], []
    skip = BOOKKEEPING | set(OPTIONAL) | {response, ROW_KEY}
    for c in raw.columns:
        if c in skip:
            continue
        distinct = raw[c].nunique(dropna=True)
        if pd.api.types.is_numeric_dtype(raw[c]) and distinct > 10 and distinct > len(raw) / 2:
            measured.append(c)
        else:
            keep.append(c)
    return tuple(keep), tuple(measured)


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


def load_campaign(path: str | Path, response: str = "cost", cost: str | None = None) -> Campaign:
    """Read a campaign directory or a results CSV.

    Raises :class:`~models.errors.ResultsNotFoundError` for a missing path,
    :class:`~models.errors.InvalidTableError` for an unreadable CSV, and
    :class:`~models.errors.MissingColumnError` when ``cost`` is asked for but the table has no
    wall clock and accuracy. With no ``cost`` and no way to compute one the report still renders.
    """
    source = Path(path)
    csv_path = resolve_path(source)
    data = csv_path.read_bytes()
    try:
        raw = pd.read_csv(csv_path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InvalidTableError(f"{csv_path}: not a readable CSV ({exc}); write one header row then one row per job") from None
    raw = raw.reset_index(drop=True)
    table: ResultsTable | None
    problem = None
    try:
        keyed = raw.assign(**{ROW_KEY: np.arange(len(raw))})
        table = build_table(keyed, cost=cost, source=str(csv_path))
    except MissingColumnError as exc:
        if cost is not None:
            raise
        table, problem = None, str(exc)
    if table is not None:
        rows = table.frame[ROW_KEY].to_numpy()
        costs = np.full(len(raw), np.nan)
        costs[rows] = table.frame["cost"].to_numpy(dtype=float)
        raw = raw.assign(cost=costs)
        frame = table.frame.drop(columns=[ROW_KEY])
        table = ResultsTable(frame, table.source, tuple(f for f in table.factors if f != ROW_KEY), table.n_read,
                             dict(table.dropped), table.cost_name)
    else:
        frame = ok_rows(raw)
    candidates, measured = candidate_columns(raw, response)
    meta: dict[str, Any] = {}
    attempts = None
    meta_problem = None
    log_dir = None
    if source.is_dir():
        meta, attempts, meta_problem = read_meta(source / CampaignDir.STORE)
        log_dir = source / "logs" if (source / "logs").is_dir() else None
    return Campaign(
        source=source,
        results_path=csv_path,
        results_sha256=hashlib.sha256(data).hexdigest(),
        raw=raw,
        frame=frame,
        table=table,
        cost_problem=problem,
        candidates=candidates,
        measurements=measured,
        meta=meta,
        meta_problem=meta_problem,
        attempts=attempts,
        log_dir=log_dir,
    )
