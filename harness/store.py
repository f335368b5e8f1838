"""The campaign's results store: SQLite in the campaign directory, results.csv as an export.

Every finished run is one committed transaction, so ``kill -9`` at any moment loses at
most the run in flight, and the primary key ``(run, replicate)`` makes a duplicate
result impossible. Each attempt (including the one in flight) is recorded in
``attempts``; ``results`` holds the final word per cell.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Iterable

from harness.errors import CampaignError
from harness.runspec import RunSpec

DB_NAME = "campaign.sqlite"
CSV_NAME = "results.csv"


@dataclass(frozen=True)
class RunResult:
    """The outcome of one run: its design row, what the log says, and what the harness measured."""

    run: int
    replicate: int
    model: str
    nodes: int
    executors: int
    executor_cores: int
    epochs: int
    learning_rate: float
    batch_size: int
    status: str  # ok | failed | incomplete
    reason: str
    wall_clock_s: float | None
    accuracy: float | None
    elapsed_s: float
    start: str
    end: str
    app_id: str | None
    failure_kind: str | None = None  # job | infrastructure | timeout | None
    attempts: int = 1
    epochs_completed: int | None = None
    learning_rate_used: float | None = None
    batch_size_used: int | None = None
    exit_code: int | None = None
    log: str = ""

    @classmethod
    def for_spec(cls, spec: RunSpec, **outcome: object) -> "RunResult":
        return cls(**spec.as_row(), **outcome)  # type: ignore[arg-type]


COLUMNS = tuple(f.name for f in fields(RunResult))


def _schema() -> str:
    cols = ", ".join(f"{name} {'INTEGER' if name in ('run', 'replicate') else ''}".strip() for name in COLUMNS)
    return f"""
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS results ({cols}, PRIMARY KEY (run, replicate));
    CREATE TABLE IF NOT EXISTS attempts (
        run INTEGER NOT NULL, replicate INTEGER NOT NULL, attempt INTEGER NOT NULL,
        state TEXT NOT NULL, started TEXT NOT NULL, ended TEXT, status TEXT, reason TEXT, failure_kind TEXT,
        argv TEXT NOT NULL, pid INTEGER, pid_ticks INTEGER, PRIMARY KEY (run, replicate, attempt));
    """


class ResultStore:
    """Open (creating if needed) the store in ``campaign_dir``."""

    def __init__(self, campaign_dir: Path) -> None:
        self.dir = Path(campaign_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.dir / DB_NAME, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_schema())

    def close(self) -> None:
        self.db.close()

    # -- provenance
    def meta(self) -> dict[str, object]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def set_meta(self, values: dict[str, object]) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                [(k, json.dumps(v, default=str)) for k, v in values.items()])

    def check_design(self, design_sha256: str, resume: bool) -> None:
        """Refuse to mix two designs, or to overwrite a campaign without --resume."""
        known = self.meta().get("design_sha256")
        if known is None:
            return
        if known != design_sha256:
            raise CampaignError(f"{self.dir} holds a campaign of another design file (sha256 {str(known)[:12]}...): "
                                "choose another --out")
        if not resume and self.finished_cells():
            raise CampaignError(f"{self.dir} already holds results of this design: pass --resume to continue it, "
                                "or choose another --out")

    # -- attempts
    def begin_attempt(self, spec: RunSpec, started: str, argv: list[str]) -> int:
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            (n,) = self.db.execute("SELECT COUNT(*) FROM attempts WHERE run=? AND replicate=?",
                                   (spec.run, spec.replicate)).fetchone()
            self.db.execute("INSERT INTO attempts VALUES (?, ?, ?, 'running', ?, NULL, NULL, NULL, NULL, ?, NULL, NULL)",
                            (spec.run, spec.replicate, n + 1, started, json.dumps(argv)))
        return n + 1

    def set_attempt_process(self, spec: RunSpec, attempt: int, pid: int, ticks: int | None) -> None:
        """Remember the process of an attempt, so a resumed campaign can end it if it outlived the harness."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("UPDATE attempts SET pid=?, pid_ticks=? WHERE run=? AND replicate=? AND attempt=?",
                            (pid, ticks, spec.run, spec.replicate, attempt))

    def end_attempt(self, spec: RunSpec, attempt: int, ended: str, status: str, reason: str,
                    failure_kind: str | None) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("UPDATE attempts SET state='done', ended=?, status=?, reason=?, failure_kind=? "
                            "WHERE run=? AND replicate=? AND attempt=?",
                            (ended, status, reason, failure_kind, spec.run, spec.replicate, attempt))

    def interrupted_attempts(self) -> list[tuple[int, int, int, int | None, int | None]]:
        """(run, replicate, attempt, pid, pid_ticks) of attempts in flight when the harness last died."""
        return list(self.db.execute("SELECT run, replicate, attempt, pid, pid_ticks FROM attempts "
                                    "WHERE state='running'"))

    def mark_interrupted(self, ended: str) -> int:
        with self.db:
            self.db.execute("BEGIN")
            cur = self.db.execute("UPDATE attempts SET state='done', ended=?, status='interrupted', "
                                  "reason='the harness stopped while this run was in flight' WHERE state='running'",
                                  (ended,))
        return cur.rowcount

    # -- results
    def record(self, result: RunResult) -> None:
        """Store a finished run (one transaction) and refresh results.csv."""
        row = asdict(result)
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                            [row[c] for c in COLUMNS])
        self.export_csv()

    def finished_cells(self) -> set[tuple[int, int]]:
        return {(r, p) for r, p in self.db.execute("SELECT run, replicate FROM results")}

    def results(self) -> list[RunResult]:
        cur = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY start, run, replicate")
        return [RunResult(**dict(zip(COLUMNS, row))) for row in cur]

    def export_csv(self, path: Path | None = None) -> Path:
        """Write results.csv atomically (a crash never leaves half a file)."""
        path = path or self.dir / CSV_NAME
        # unique per writer: concurrent runs of one campaign (optimize.concurrent) export at once
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for r in self.results():
                w.writerow(["" if v is None else v for v in (getattr(r, c) for c in COLUMNS)])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return path


def status_counts(results: Iterable[RunResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return counts
