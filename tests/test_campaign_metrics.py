"""harness.submit records where each run's time went: real BigDL runs on a real standalone cluster."""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.sparkenv import SITE_DIR
from harness.phases import PHASES
from logparse.eventlog import find_event_log, read_event_log

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

DESIGN = """run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size
1,lenet,1,2,2,2,0.05,64
"""


def test_results_carry_spark_host_and_phase_columns(local_cluster, tmp_path):
    design = tmp_path / "design.csv"
    design.write_text(DESIGN)
    out = tmp_path / "campaign"
    proc = subprocess.run([sys.executable, "-m", "harness.submit", str(design), "--local", "--state-dir",
                           str(local_cluster.state_dir), "--port", str(local_cluster.port), "--webui-port",
                           str(local_cluster.webui_port), "--out", str(out), "--train-samples", "256",
                           "--test-samples", "128"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (row,) = list(csv.DictReader(open(out / "results.csv")))
    assert row["status"] == "ok"
    run_dir = out / "runs" / "1-1"
    app = read_event_log(find_event_log(run_dir))
    # the results row holds the event log's own figures
    assert row["spark_tasks"] == str(app.totals.tasks) and int(row["spark_tasks"]) > 10
    assert float(row["spark_executor_run_s"]) == round(app.totals.executor_run_ms / 1000, 3)
    assert row["spark_executors"] == "2" and float(row["spark_gc_share"]) >= 0
    assert (run_dir / "spark_stages.csv").read_text().count("\n") == 1 + len(app.stages)
    # host samples, one per second, and the sampler's own cost measured (its 1 % target: bench/campaign.py, see
    # tests/test_sparkmetrics.py's sampler test)
    samples = list(csv.DictReader(open(run_dir / "host_samples.csv")))
    assert int(row["host_samples"]) == len(samples) >= 0.5 * float(row["elapsed_s"])
    assert float(row["host_sampler_cpu_s"]) > 0 and 0 < float(row["host_sampler_share"]) < 0.05
    assert float(row["host_jvm_rss_peak_mb"]) > 100
    # the phases add up to the elapsed time the harness measured (its window is a few ms wider)
    phases = [float(row[f"phase_{p}_s"]) for p in PHASES]
    assert all(p >= 0 for p in phases), phases
    assert sum(phases) == pytest.approx(float(row["elapsed_s"]), abs=1.0)
    # BigDL's training time is inside the training phase; two validations were timed
    assert float(row["phase_training_s"]) >= float(row["wall_clock_s"]) - 1.0
    assert 0 < float(row["phase_validation_s"]) < float(row["phase_training_s"])
    # the data were decoded once, before the run, and the job read the cache
    (cache,) = (out / "data").glob("mnist-*.npz")
    (argv,) = [json.loads(a) for (a,) in sqlite3.connect(out / "campaign.sqlite").execute("SELECT argv FROM attempts")]
    assert argv[argv.index("--data-cache") + 1] == str(cache.resolve())
    assert "spark.eventLog.enabled=true" in argv
    # the local backend's lighter runs: BigDL's jars read in place, the class-data archive, C1 JVMs
    assert "--jars" not in argv
    (driver_opts,) = [a for a in argv if a.startswith("spark.driver.extraJavaOptions=")]
    assert "-XX:SharedArchiveFile=" in driver_opts and "-XX:TieredStopAtLevel=1" in driver_opts
    (mkl,) = {a.split("=", 1)[1] for a in argv if a.startswith(("spark.driver.extraLibraryPath=",
                                                                 "spark.executor.extraLibraryPath="))}
    assert (Path(mkl) / "libjmkl.so").is_file()
    (cluster,) = sqlite3.connect(out / "campaign.sqlite").execute("SELECT value FROM meta WHERE key = 'cluster'")
    assert json.loads(cluster[0])["plain_jvm"] is False
    (runtimes,) = sqlite3.connect(out / "campaign.sqlite").execute("SELECT value FROM meta WHERE key = 'runtimes'")
    assert json.loads(runtimes[0])["bigdl"]["runs_by_jvm"] == {"tuned": ["1-1"]}  # lenet asks for the tuning
    # the job prepared while its executors started, and waited for both before its first job; its data
    # are in as many partitions as the application has cores, as if made after they registered
    assert app.job_times_ms[0][0] >= app.executors_granted_ms
    assert app.stages[(0, 0)].num_tasks == 4
    executor_dirs = list((local_cluster.state_dir / "work").glob(f"worker-*/{app.app_id}/*"))
    assert len(executor_dirs) == 2
    for executor_dir in executor_dirs:
        assert not list(executor_dir.glob("*.jar"))  # no 120 MB copy of the jars per executor
        launched = (executor_dir / "stderr").read_text()
        command = launched.split("\n", 1)[0]
        assert "-XX:SharedArchiveFile=" in command and "-XX:+UseParallelGC" in command
        assert "-XX:TieredStopAtLevel=1" in command
        assert f"-Dlog4j2.configurationFile={SITE_DIR / 'log4j2.xml'}" in command
        # the samples reached the executor's JVM pickled: no Python worker started there
        assert "PythonRunner" not in (executor_dir / "stdout").read_text() + launched
