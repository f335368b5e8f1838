"""The campaign's results store: SQLite in the campaign directory, results.csv as an export.

Every finished run is one committed transaction, so ``kill -9`` at any moment loses at
most the run in flight, and the primary key ``(run, replicate)`` makes a duplicate
result impossible. Each attempt (including the one in flight) is recorded in
``attempts``; ``results`` holds the final word per cell.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Iterator

from harness.errors import CampaignError
from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir, RunRecord

SCHEMA_VERSION = 2


def _schema() -> str:
    return """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS results (
        run INTEGER NOT NULL, replicate INTEGER NOT NULL, status TEXT NOT NULL, ended TEXT NOT NULL,
        record TEXT NOT NULL, PRIMARY KEY (run, replicate));
    CREATE TABLE IF NOT EXISTS attempts (
        run INTEGER NOT NULL, replicate INTEGER NOT NULL, attempt INTEGER NOT NULL,
        state TEXT NOT NULL, started TEXT NOT NULL, ended TEXT, status TEXT, reason TEXT, failure_kind TEXT,
        argv TEXT NOT NULL, pid INTEGER, pid_ticks INTEGER, PRIMARY KEY (run, replicate, attempt));
    CREATE TABLE IF NOT EXISTS ingested (
        source TEXT PRIMARY KEY, run INTEGER NOT NULL, replicate INTEGER NOT NULL, size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL, record TEXT NOT NULL, UNIQUE (run, replicate));
    """


class ResultStore:
    """Open (creating if needed) the store of a campaign folder."""

    def __init__(self, campaign: CampaignDir | Path) -> None:
        self.campaign = campaign if isinstance(campaign, CampaignDir) else CampaignDir(campaign)
        self.dir = self.campaign.create().path
        self.db = sqlite3.connect(self.campaign.store_path, isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        columns = [r[1] for r in self.db.execute("PRAGMA table_info(results)")]
        if columns and "record" not in columns:
            self.db.close()
            raise CampaignError(f"{self.campaign.store_path} was written by an older version of this tool: "
                                "its results.csv is still readable, but continue in a new --out")
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

    def check_design(self, design_sha256: str, resume: bool, search: dict[str, object] | None = None) -> None:
        """Refuse to mix two designs, or to overwrite a campaign without --resume; ``search``: a search's defining
        settings, whose differences from the folder's are named in the refusal."""
        meta = self.meta()
        known = meta.get("design_sha256")
        if known is None:
            return
        if known != design_sha256:
            if search is not None and isinstance(meta.get("search"), dict):
                raise CampaignError(f"{self.dir} holds a search with other settings ({_differences(meta['search'], search)}): "
                                    "resume it with the options it was started with, or choose another --out")
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

    # -- logs ingested from elsewhere (harness.ingest)
    def ingested(self) -> list[tuple[str, int, int, int, int, dict[str, object]]]:
        """(source, run, replicate, size, mtime_ns, record) of every log ingested, in run order."""
        cur = self.db.execute("SELECT source, run, replicate, size, mtime_ns, record FROM ingested "
                              "ORDER BY run, replicate")
        return [(src, run, rep, size, mtime, json.loads(rec)) for src, run, rep, size, mtime, rec in cur]

    def record_ingested(self, rows: list[tuple[str, int, int, int, int, dict[str, object]]]) -> None:
        """Store (or replace) ingested logs, all in one transaction."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("INSERT OR REPLACE INTO ingested VALUES (?, ?, ?, ?, ?, ?)",
                                [(src, run, rep, size, mtime, json.dumps(rec, default=str))
                                 for src, run, rep, size, mtime, rec in rows])

    # -- results
    def record(self, record: RunRecord) -> None:
        """Store a finished run (one transaction) and refresh results.csv."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?)",
                            (record.run, record.replicate, str(record.status), record.execution.end,
                             record.to_json()))
        self.export_csv()

    def finished_cells(self) -> set[tuple[int, int]]:
        return {(r, p) for r, p in self.db.execute("SELECT run, replicate FROM results")}

    def result(self, run: int, replicate: int) -> RunRecord | None:
        """The stored record of one cell, or None when it has not finished."""
        row = self.db.execute("SELECT record FROM results WHERE run=? AND replicate=?", (run, replicate)).fetchone()
        return None if row is None else RunRecord.from_json(row[0])

    def results(self) -> list[RunRecord]:
        """Every finished run, in the order they ended."""
        cur = self.db.execute("SELECT record FROM results ORDER BY ended, run, replicate")
        return [RunRecord.from_json(text) for (text,) in cur]

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the store's write lock: files rebuilt from the store inside are written by one writer at a time.

        Copies that run at once (one store per thread, or per process) each record, then rebuild results.csv
        from every stored row; without this an export that read fewer rows could replace one that read more.
        """
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            yield

    def export_csv(self) -> Path:
        """Write results.csv atomically (a crash never leaves half a file); list new metrics as responses."""
        with self.exclusive():
            records = self.results()
            manifest = self.campaign.read_manifest()
            if manifest is not None:
                names = [name for r in records for name in r.metrics]
                if any(n not in manifest.responses for n in names):
                    self.campaign.write_manifest(manifest.with_responses(names))
            return self.campaign.write_results(records)


def _differences(there: dict[str, object], now: dict[str, object]) -> str:
    """Each setting that differs, as it was recorded and as it is asked now (compared as the store keeps them)."""
    now = json.loads(json.dumps(now, default=str))
    keys = [k for k in sorted(set(there) | set(now)) if there.get(k) != now.get(k)]
    shown = lambda d, k: json.dumps(d[k], default=str) if k in d else "not set"  # noqa: E731
    return "; ".join(f"{k} {shown(there, k)} there, {shown(now, k)} now" for k in keys) or "the same settings"
