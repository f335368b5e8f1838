"""Faults on a real cluster: the harness killed with SIGKILL mid-campaign, a worker dying mid-job, a timeout."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster.local import ClusterState, start_ticks

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

HEADER = "run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"


#: The harnesses a test started; :func:`stop_harnesses` stops those still running when the test ends.
STARTED: list[subprocess.Popen] = []


def harness(design: Path, out: Path, state_dir: Path, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "harness.submit", str(design), "--local", "--state-dir",
                             str(state_dir), "--out", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    STARTED.append(proc)
    return proc


@pytest.fixture(autouse=True)
def stop_harnesses():
    """A test that fails before it ends its harness would leave it running, on a cluster its fixture stops and a
    folder pytest later removes (one such harness ran for an hour, then crashed writing into the removed folder).
    SIGTERM first, so the harness stops its driver; SIGKILL if it does not end."""
    yield
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def query(out: Path, sql: str) -> list[tuple]:
    if not (out / "campaign.sqlite").exists():
        return []
    db = sqlite3.connect(out / "campaign.sqlite", timeout=30)
    try:
        return list(db.execute(sql))
    except sqlite3.OperationalError:
        return []
    finally:
        db.close()


def test_sigkill_mid_campaign_then_resume_gives_each_cell_exactly_once(local_cluster, tmp_path):
    local_cluster.start(workers=1, cores=1, memory="700m")
    design = tmp_path / "design.csv"
    design.write_text(HEADER + "".join(f"{i},lenet,1,1,1,1,0.05,32\n" for i in (1, 2)))
    out = tmp_path / "campaign"
    small = ("--train-samples", "256", "--test-samples", "128", "--executor-memory", "600m")
    proc = harness(design, out, local_cluster.state_dir, *small)
    # kill it while run 2 is in flight (its job process recorded)
    wait_for(lambda: query(out, "SELECT pid FROM attempts WHERE run=2 AND pid IS NOT NULL"), 600, "run 2 to start")
    (pid,) = query(out, "SELECT pid FROM attempts WHERE run=2")[0]
    log = out / "logs" / "2-1.out"  # mid-job: BigDL builds its network (a fixed sleep, a fast machine outruns)
    wait_for(lambda: log.exists() and b"creating: " in log.read_bytes(), 300, "run 2's job to build its network")
    proc.kill()
    proc.wait(30)
    assert query(out, "SELECT run FROM results") == [(1,)]
    # the job died with the harness (no orphan keeps writing run 2's log)
    wait_for(lambda: start_ticks(pid) is None or open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
             30, "the orphaned spark-submit to die")

    resumed = harness(design, out, local_cluster.state_dir, "--resume", *small)
    text, _ = resumed.communicate(timeout=900)
    assert resumed.returncode == 0, text
    assert "resuming: 1 run(s) already finished, 1 to go" in text
    cells = query(out, "SELECT run, replicate, status FROM results ORDER BY run")
    assert cells == [(1, 1, "ok"), (2, 1, "ok")]
    assert query(out, "SELECT attempt, status FROM attempts WHERE run=2 ORDER BY attempt") == [
        (1, "interrupted"), (2, "ok")]
    assert (out / "logs" / "2-1.attempt1.out").exists()
    assert len((out / "results.csv").read_text().strip().splitlines()) == 3


def test_worker_killed_mid_job_is_an_infrastructure_failure_and_is_retried(local_cluster, tmp_path):
    local_cluster.start(workers=2, cores=1, memory="700m")
    design = tmp_path / "design.csv"
    design.write_text(HEADER + "1,lenet,2,1,1,3,0.05,64\n")
    out = tmp_path / "campaign"
    # 1,024 digits: 16 iterations an epoch, 48 in all, so the kill after the 5th lands mid-training
    proc = harness(design, out, local_cluster.state_dir, "--retries", "1", "--executor-memory", "600m",
                   "--train-samples", "1024", "--test-samples", "256")
    log = out / "logs" / "1-1.out"
    wait_for(lambda: log.exists() and b"[Iteration 5]" in log.read_bytes(), 600, "training to start")
    state = ClusterState.load(local_cluster.state_dir / "state.json")
    victim = state.workers[-1]
    os.killpg(victim.pid, signal.SIGKILL)  # the worker JVM and its executors
    text, _ = proc.communicate(timeout=1200)
    assert "infrastructure failure" in text and "retrying" in text, text  # lost executor, even if Spark recovered
    rows = query(out, "SELECT json_extract(record, '$.row.status'), json_extract(record, '$.row.failure_kind'), "
                      "json_extract(record, '$.row.attempts') FROM results")
    assert rows == [("ok", None, 2)], text
    first = query(out, "SELECT status, failure_kind FROM attempts WHERE attempt=1")[0]
    assert first[1] == "infrastructure"
    assert (out / "logs" / "1-1.attempt1.out").exists()


def test_timeout_stops_the_job_and_records_it(local_cluster, tmp_path):
    local_cluster.start(workers=1, cores=1, memory="700m")
    design = tmp_path / "design.csv"
    design.write_text(HEADER + "1,lenet,1,1,1,1,0.05,32\n")
    out = tmp_path / "campaign"
    proc = harness(design, out, local_cluster.state_dir, "--timeout", "8", "--executor-memory", "600m")
    text, _ = proc.communicate(timeout=300)
    assert proc.returncode == 3, text
    (row,) = query(out, "SELECT json_extract(record, '$.row.status'), json_extract(record, '$.row.failure_kind'), "
                       "json_extract(record, '$.row.reason') FROM results")
    assert row[0] == "failed" and row[1] == "timeout" and "raise --timeout" in row[2]
    (pid,) = query(out, "SELECT pid FROM attempts")[0]
    assert start_ticks(pid) is None  # the whole process group is gone
