"""The run record, the campaign folder and its one-owner lock."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from harness.errors import CampaignBusyError
from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir, Execution, Manifest, Outcome, RunRecord
from harness.store import ResultStore
from logparse import Status


def record(run: int = 1, status: str = "ok", **metrics) -> RunRecord:
    spec = RunSpec(run, 2, 1, 1, 2, 3, 0.05, 64, "lenet")
    outcome = Outcome(Status(status), "" if status == "ok" else "lost", None if status == "ok" else "job",
                      12.5, 0.875, "app-1", 3, 0.05, 64)
    return RunRecord(spec, outcome, Execution(1, "2026-01-01T00:00:00+00:00", "2026-01-01T00:01:00+00:00",
                                              60.25, 0, "logs/1-2.out"), metrics)


def test_row_round_trips_through_json_and_csv_strings():
    r = record(spark_gc_s=1.5, host_cpu_max=97.0)
    row = r.row()
    assert list(row)[:9] == ["run", "replicate", "nodes", "executors", "executor_cores", "epochs",
                             "learning_rate", "batch_size", "model"]
    assert row["status"] == "ok" and row["spark_gc_s"] == 1.5
    assert RunRecord.from_row(row) == r
    as_text = {k: "" if v is None else str(v) for k, v in row.items()}
    back = RunRecord.from_row(as_text)
    assert back.spec == r.spec and back.outcome == r.outcome and back.execution == r.execution
    assert back.metrics == {"spark_gc_s": "1.5", "host_cpu_max": "97.0"}  # CSV keeps text; readers convert


def test_a_metric_may_not_shadow_a_column():
    with pytest.raises(Exception, match="accuracy"):
        record(accuracy=1.0).row()


def test_store_keeps_records_and_results_csv_lists_every_metric(tmp_path):
    folder = CampaignDir(tmp_path / "c")
    store = ResultStore(folder)
    folder.write_manifest(Manifest.for_design([record(1).spec]))
    store.record(record(1))
    store.record(record(2, status="failed", spark_gc_s=2.0))
    assert [r.run for r in store.results()] == [1, 2]
    assert store.result(2, 2) == store.results()[1] and store.result(3, 2) is None
    assert store.results()[1].status == Status.FAILED and store.results()[1].metrics == {"spark_gc_s": 2.0}
    rows = list(csv.DictReader(open(folder.results_csv)))
    assert rows[0]["spark_gc_s"] == "" and rows[1]["spark_gc_s"] == "2.0" and rows[1]["status"] == "failed"
    assert folder.read_manifest().responses == ("wall_clock_s", "accuracy", "elapsed_s", "spark_gc_s")
    with pytest.raises(Exception):  # a cell is recorded once, ever
        store.record(record(1))
    store.close()


def test_non_finite_metrics_are_written_readably(tmp_path):
    folder = CampaignDir(tmp_path)
    folder.write_results([record(1, x=math.inf)])
    assert list(csv.DictReader(open(folder.results_csv)))[0]["x"] == "inf"


def test_manifest_declares_the_design_columns_as_factors(tmp_path):
    specs = [RunSpec(1, 1, 1, 1, 1, 1, 0.1, 64), RunSpec(2, 1, 2, 1, 1, 1, 0.2, 64)]
    m = Manifest.for_design(specs, design="d.csv").with_responses(["spark_gc_s"])
    assert m.factors == ("nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size", "model")
    folder = CampaignDir(tmp_path)
    folder.write_manifest(m)
    assert folder.read_manifest() == m
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(Exception, match="not a campaign manifest"):
        folder.read_manifest()


def test_campaign_dir_finds_its_folder_from_results_csv(tmp_path):
    ResultStore(tmp_path).close()
    assert CampaignDir.of(tmp_path / "results.csv").path == tmp_path
    assert CampaignDir.of(tmp_path / "other.csv") is None


HOLD = textwrap.dedent("""
    import sys, time
    from sparkdl.campaign import CampaignDir
    held = CampaignDir(sys.argv[1]).lock()  # the lock lives as long as this object
    print("locked", flush=True)
    time.sleep(60)
""")


def test_a_second_owner_is_refused_naming_the_first_and_the_lock_dies_with_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(CampaignBusyError, match=rf"campaign in {tmp_path} is running \(pid {holder.pid} on "):
            CampaignDir(tmp_path).lock()
        assert CampaignBusyError.exit_code == 2
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the lock with its dead owner: the folder can be taken (a resume is safe)
    folder = CampaignDir(tmp_path).lock()
    assert folder.owner() is not None and folder.owner().pid != holder.pid
    folder.unlock()
    assert not (tmp_path / CampaignDir.OWNER).exists()


def test_a_second_harness_on_a_running_campaign_exits_2_at_once_and_touches_nothing(tmp_path):
    design = tmp_path / "design.csv"
    design.write_text("nodes,executors,executor_cores,epochs,learning_rate,batch_size\n1,1,1,1,0.05,64\n")
    out = tmp_path / "campaign"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for extra in ([], ["--resume"]):
            proc = subprocess.run([sys.executable, "-m", "harness.submit", str(design), "--out", str(out),
                                   "--state-dir", str(tmp_path / "cluster"), *extra],
                                  capture_output=True, text=True, timeout=60)
            assert proc.returncode == 2, proc.stderr
            assert proc.stderr.startswith(f"error: campaign in {out} is running (pid {holder.pid} on ")
            assert "Traceback" not in proc.stderr
        # nothing was created or started by the refused harness
        assert not (out / CampaignDir.STORE).exists() and not (tmp_path / "cluster").exists()
    finally:
        holder.kill()
        holder.wait()


def test_responses_are_kept_once_and_a_manifest_naming_one_twice_reads_it_once():
    """A resumed campaign adds its measured columns again (found by test_campaign_faults after the strict
    manifest reader): each response is kept once; a factor named twice is still an input error."""
    from sparkdl.campaign import Manifest
    from sparkdl.errors import CampaignError

    m = Manifest(("nodes",)).with_responses(["spark_jobs", "spark_jobs", "wall_clock_s", "host_cpu_busy_mean"])
    assert m.responses == ("wall_clock_s", "accuracy", "elapsed_s", "spark_jobs", "host_cpu_busy_mean")
    assert m.with_responses(m.responses) == m
    text = m.to_json().replace('"host_cpu_busy_mean"', '"host_cpu_busy_mean", "spark_jobs"')
    assert Manifest.from_json(text).responses == m.responses
    with pytest.raises(CampaignError, match="nodes"):
        Manifest.from_json(text.replace('"factors": [\n    "nodes"', '"factors": [\n    "nodes",\n    "nodes"'))


def test_records_stored_at_once_from_many_threads_all_reach_results_csv(tmp_path, monkeypatch):
    """Concurrent copies (optimize.concurrent) record from one thread each: the CSV written last has every row.

    Each store's insert is its own transaction, but the CSV is rebuilt after it: without one writer at a time
    an export that read fewer rows could replace one that read more (seen in CI: two rows of three).
    Here an export that read fewer rows takes longer to write, which makes that order certain.
    """
    write_results = CampaignDir.write_results

    def slow_when_short(self, records):
        time.sleep(0.05 * (n * rounds - len(records)))
        return write_results(self, records)

    monkeypatch.setattr(CampaignDir, "write_results", slow_when_short)
    folder = CampaignDir(tmp_path / "c")
    ResultStore(folder).close()
    folder.write_manifest(Manifest.for_design([record(1).spec]))
    n, rounds = 4, 2
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        store = ResultStore(folder)
        try:
            for k in range(rounds):
                barrier.wait(timeout=30)
                store.record(record(1 + i + n * k))
        except BaseException as e:  # re-raised below
            errors.append(e)
        finally:
            store.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    runs = sorted(int(r["run"]) for r in csv.DictReader(open(folder.results_csv)))
    assert runs == list(range(1, n * rounds + 1))
