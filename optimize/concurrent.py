"""Courier's concurrency factor: ``njobs`` copies of a job submitted at once to the same cluster.

``run_group`` prepares the cluster once, then runs every spec of the group in its own thread through
a sibling of the session's :class:`harness.campaign.Campaign` (each thread opens its own connection
to the campaign's SQLite store, as sqlite3 requires); each copy is a distinct ``(run, replicate)`` cell with its own
log. ``concurrency.csv`` beside ``results.csv`` records which cells ran together, and
:func:`courier_table` joins both into Albo Martínez 2021's table: batch, cpus, njobs, network, time, accuracy.

The response time of a copy is the harness's ``elapsed_s`` (submission to the end of
spark-submit, queueing for cores included), the time a user with an SLO waits for.

``sparkdl concurrent`` (:mod:`optimize.cli.concurrent`) runs one group per batch size.
"""

from __future__ import annotations

import csv
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd

from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir, RunRecord
from models.predict.table import read_results
from models.results import read_csv
from optimize.errors import CampaignDataError, SearchOptionError
from optimize.session import JobSession
from sparkdl.cli import run_cli

GROUPS_CSV = CampaignDir.CONCURRENCY
GROUP_COLUMNS = ("run", "replicate", "group", "njobs")
COURIER_COLUMNS = ("batch", "cpus", "njobs", "network", "time", "accuracy")


@dataclass(frozen=True)
class ConcurrentGroup:
    """The copies of one group, in cell order."""

    group: int
    results: tuple[RunRecord, ...]

    @property
    def njobs(self) -> int:
        return len(self.results)


def run_group(session: JobSession, group: int, specs: Sequence[RunSpec]) -> ConcurrentGroup:
    """Run ``specs`` at the same time (one thread each); reuse the group if all its cells are finished."""
    if len({s.nodes for s in specs}) != 1:
        raise SearchOptionError("every copy of a concurrent group must use the same nodes")
    known = [session.finished.get((s.run, s.replicate)) for s in specs]
    if all(known):
        return ConcurrentGroup(group, tuple(known))  # type: ignore[arg-type]
    if any(known):
        raise CampaignDataError(f"group {group} in {session.out} finished only partly (a concurrent group cannot be "
                                "resumed copy by copy): use a new --out")
    base = session.campaign
    base.backend.prepare(specs[0])
    results: list[RunRecord | None] = [None] * len(specs)
    errors: list[BaseException] = []

    def one(i: int, spec: RunSpec) -> None:
        campaign = base.sibling()
        try:
            record = campaign.execute(spec, prepare=False)  # the group's cluster shape is set above
            campaign.record(record)
            results[i] = record
        except BaseException as e:  # re-raised in the calling thread below
            errors.append(e)
        finally:
            campaign.close()

    session.progress(f"group {group}: {len(specs)} job(s) at once: " + ", ".join(s.key for s in specs))
    threads = [threading.Thread(target=one, args=(i, s), name=f"job-{s.key}") for i, s in enumerate(specs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    done = tuple(r for r in results if r is not None)
    for r in done:
        session.finished[(r.run, r.replicate)] = r
        session.executed += 1
        figures = f"elapsed {r.elapsed_s:.0f} s, accuracy {r.accuracy:.4f}" if r.ok else r.reason
        session.progress(f"run {r.run}-{r.replicate} {r.status}: {figures}")
    _append_group(session.out, group, done)
    return ConcurrentGroup(group, done)


def _append_group(out: Path, group: int, results: Sequence[RunRecord]) -> None:
    path = Path(out) / GROUPS_CSV
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(GROUP_COLUMNS)
        for r in results:
            w.writerow((r.run, r.replicate, group, len(results)))


def courier_table(campaign: str | Path) -> pd.DataFrame:
    """Albo Martínez 2021's table from a campaign: ok runs joined with their concurrency (njobs 1 when not grouped)."""
    results = read_results(campaign)
    path = Path(campaign) / GROUPS_CSV
    groups = read_csv(path)[1] if path.exists() else pd.DataFrame(columns=list(GROUP_COLUMNS))
    table = results.merge(groups[["run", "replicate", "njobs"]], on=["run", "replicate"], how="left")
    table["njobs"] = table["njobs"].fillna(1).astype(int)
    if "nodes" in table.columns:
        table = table[table["nodes"] == 1]
    return pd.DataFrame({
        "batch": table["batch_size"].astype(int),
        "cpus": (table["executors"] * table["executor_cores"]).astype(int),
        "njobs": table["njobs"],
        "network": table["model"].astype(str),
        "time": table["elapsed_s"].astype(float),
        "accuracy": table["accuracy"].astype(float),
    }).reset_index(drop=True)


if __name__ == "__main__":
    from optimize.cli.concurrent import main
    sys.exit(run_cli(main))
