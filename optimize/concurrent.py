"""Courier's concurrency factor: ``njobs`` copies of a job submitted at once to the same cluster.

``run_group`` prepares the cluster once, then runs every spec of the group in its own thread through
a sibling of the session's :class:`harness.campaign.Campaign` (each thread opens its own connection
to the campaign's SQLite store, as sqlite3 requires); each copy is a distinct ``(run, replicate)`` cell with its own
log. ``concurrency.csv`` beside ``results.csv`` records which cells ran together, and
:func:`courier_table` joins both into Albo Martínez 2021's table: batch, cpus, njobs, network, time, accuracy.

The response time of a copy is the harness's ``elapsed_s`` (submission to the end of
spark-submit, queueing for cores included), the time a user with an SLO waits for.

    sparkdl concurrent --out runs/courier --job lenet --cpus 1 --njobs 2 --batch-sizes 64 128
"""

from __future__ import annotations

import argparse
import csv
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from sparkdl.runspec import RunSpec
from sparkdl.campaign import RunRecord
from models.predict.table import read_results
from models.results import read_csv
from optimize.errors import CampaignDataError, SearchOptionError
from optimize.session import (ClusterOptions, JobConfig, JobSession, add_optimizer_job, check_job, open_session,
                              submit_options)
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.options import SAMPLES, add_out, add_seed, cluster_options, renamed

GROUPS_CSV = "concurrency.csv"
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


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sparkdl concurrent", parents=[cluster_options()],
                                description="Run njobs copies of a job at once, per batch size (Albo Martínez 2021's factor).")
    add_out(p, "the campaign folder the groups' jobs go to (results.csv and concurrency.csv)", required=True)
    p.add_argument("--resume", action="store_true", help="continue the campaign in --out, skipping finished groups")
    add_optimizer_job(p)
    renamed(p, "--model", "--job")
    p.add_argument("--cpus", type=int, default=1, help="executors (of one core) per job")
    p.add_argument("--njobs", type=int, default=2, help="copies submitted at once")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 128, 256, 512],
                   help="one group of --njobs copies per batch size (default 64 128 256 512)")
    p.add_argument("--learning-rate", type=float, default=0.05, help="every job's learning rate (default 0.05)")
    p.add_argument("--epochs", type=int, default=1, help="every job's epochs (default 1)")
    p.add_argument("--train-samples", type=SAMPLES, help="train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="validate on the first N digits only")
    add_seed(p, "every job's weights", default=42)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    if args.cpus < 1 or args.njobs < 1:
        raise SearchOptionError("--cpus and --njobs must be >= 1")
    config = JobConfig(model=check_job(args.job), nodes=1, executors=args.cpus, executor_cores=1, epochs=args.epochs,
                       learning_rate=args.learning_rate, batch_size=args.batch_sizes[0])
    settings = {"optimizer": "concurrent", **vars(args), "out": str(args.out), "state_dir": str(args.state_dir)}
    settings.pop("resume")
    cluster = ClusterOptions.from_args(args)
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.seed)
    # one worker big enough for all copies side by side
    shape = replace(config.spec(1, 1), executors=args.cpus * args.njobs)
    on_interrupt(f"finished groups are kept in {args.out}; continue with --resume")
    with open_session(args.out, settings, options, cluster, [shape], args.resume, say) as session:
        for g, batch in enumerate(args.batch_sizes, start=1):
            specs = [config.spec(run=(g - 1) * args.njobs + i, replicate=1, batch_size=batch)
                     for i in range(1, args.njobs + 1)]
            run_group(session, g, specs)
    table = courier_table(args.out)
    print()
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
