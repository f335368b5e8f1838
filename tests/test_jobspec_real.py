"""Slow, real Spark: a user's stock pyspark.ml script runs as written; the MLlib job trains and reports JSON."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.runtime import discover

ROOT = Path(__file__).resolve().parent.parent

#: What a user writes: nothing from this project, nothing about cloudpickle, Java or the interpreter.
STOCK_SCRIPT = '''
from pyspark.ml.classification import LogisticRegression
from pyspark.ml.linalg import Vectors
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("stock").getOrCreate()
rows = [(Vectors.dense([float(i % 2), float(1 - i % 2)]), float(i % 2)) for i in range(40)]
df = spark.createDataFrame(rows, ["features", "label"])
model = LogisticRegression(maxIter=5).fit(df)
squares = spark.sparkContext.parallelize(range(10), 2).map(lambda x: x * x).sum()
print("STOCK", model.summary.accuracy, squares)
spark.stop()
'''


def submit(script: Path, master: str, env: dict[str, str], cores: int = 1) -> subprocess.CompletedProcess:
    spark = discover()
    argv = [str(spark.spark_submit), "--master", master, "--total-executor-cores", str(cores),
            "--executor-memory", "600m", "--driver-memory", "1g", *spark.submit_args(), str(script)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, cwd=script.parent)


@pytest.mark.slow
@pytest.mark.cluster
def test_a_stock_pyspark_ml_script_runs_as_written(tmp_path, local_cluster):
    script = tmp_path / "stock.py"
    script.write_text(STOCK_SCRIPT)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the user's environment: no project path
    env = discover().environ(base)
    # Control: the same script without the sitecustomize dies as the issue says (driver side, local mode).
    bare = dict(env, PYTHONPATH="")
    failed = submit(script, "local[1]", bare)
    assert failed.returncode != 0 and "tuple index out of range" in failed.stderr + failed.stdout
    # With the harness's environment, on a real standalone cluster (executors in worker JVMs):
    local_cluster.start(workers=1, cores=1, memory="1g")
    done = submit(script, local_cluster.master_url, env)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [x for x in done.stdout.splitlines() if x.startswith("STOCK ")]
    assert line and line[0].split()[1:] == ["1.0", "285"]  # separable data; sum of squares 0..9


def test_jobs_do_not_import_the_cluster_package():
    for script in ("train.py", "mlp.py"):
        text = (ROOT / "jobs" / script).read_text()
        assert "cluster" not in {line.split()[1].split(".")[0] for line in text.splitlines()
                                 if line.strip().startswith(("import ", "from "))}


def cli(*argv: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def cluster_args(cluster) -> list[str]:
    return ["--state-dir", str(cluster.state_dir), "--port", str(cluster.port), "--webui-port",
            str(cluster.webui_port), "--keep-cluster"]


# The MLlib job's campaign end to end (figures as columns, ANOVA, report): tests/test_runtime.py, on both runtimes.


BAD_METRICS_JOB = '''
import argparse, json
p = argparse.ArgumentParser()
p.add_argument("--mode")
p.add_argument("--metrics-out")
a = p.parse_args()
text = {"good": json.dumps({"accuracy": 0.5, "wall_clock_s": 1.0, "score": 7}), "broken": "{accuracy: 1",
        "impossible": json.dumps({"accuracy": 2.0})}.get(a.mode)
if text is not None:
    open(a.metrics_out, "w").write(text)
'''


@pytest.mark.slow
@pytest.mark.cluster
def test_json_jobs_without_usable_figures_fail_with_the_reason(tmp_path, local_cluster):
    (tmp_path / "job.py").write_text(BAD_METRICS_JOB)
    (tmp_path / "job.toml").write_text('[job]\nname = "fig"\napp = "job.py"\nargs = ["--mode", "{mode}"]\n'
                                       'results = "json"\n')
    design = tmp_path / "design.csv"
    design.write_text("nodes,executors,executor_cores,mode\n1,1,1,good\n1,1,1,broken\n1,1,1,none\n1,1,1,impossible\n")
    out = tmp_path / "c"
    proc = cli("harness.submit", str(design), "--job", str(tmp_path / "job.toml"), "--out", str(out),
               "--timeout", "300", *cluster_args(local_cluster))
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]  # finished, some runs failed
    rows = {r["mode"]: r for r in csv.DictReader(open(out / "results.csv"))}
    assert rows["good"]["status"] == "ok" and rows["good"]["score"] == "7" and rows["good"]["accuracy"] == "0.5"
    assert rows["broken"]["status"] == "failed" and "not valid JSON" in rows["broken"]["reason"]
    assert rows["none"]["status"] == "failed" and "wrote no metrics" in rows["none"]["reason"]
    assert rows["impossible"]["status"] == "failed" and "accuracy 2.0" in rows["impossible"]["reason"]
    assert all(rows[m]["score"] == "" for m in ("broken", "none", "impossible"))
    # python -m logparse on the folder: each json job's recorded status and reason, not "no BigDL training line"
    assert json.loads((out / "manifest.json").read_text())["results"] == "json"
    parsed = cli("logparse", str(out), "--format", "json")
    assert parsed.returncode == 3, parsed.stderr
    by_log = {Path(r["path"]).name: r for r in json.loads(parsed.stdout)}
    for row in rows.values():
        got = by_log[Path(row["log"]).name]
        assert (got["status"], got["reason"], got["accuracy"]) == (
            row["status"], row["reason"], float(row["accuracy"]) if row["accuracy"] else None)


PROPERTY_SCRIPT = '''
from pyspark import SparkContext

sc = SparkContext.getOrCreate()
system = sc._jvm.java.lang.System
bigdl = sc._jvm.java.lang.Class.forName("com.intel.analytics.bigdl.dllib.utils.Engine").getName()
print("PROPS", system.getProperty("sparkdl.mine"), system.getProperty("log4j2.configurationFile"), bigdl)
sc.stop()
'''


@pytest.mark.slow
def test_a_jobs_own_jvm_option_reaches_the_driver_with_ours(tmp_path):
    """A job's spark.driver.extraJavaOptions is added to the harness's (log setup, BigDL's class path), not instead."""
    from harness.command import SubmitOptions, submit_argv
    from harness.job import JobChoice, load_job
    from sparkdl.runspec import RunSpec

    (tmp_path / "props.py").write_text(PROPERTY_SCRIPT)
    (tmp_path / "job.toml").write_text('[job]\nname = "props"\napp = "props.py"\nargs = []\n'
                                       '[spark]\n"spark.driver.extraJavaOptions" = "-Dsparkdl.mine=yes"\n')
    spec = RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1)
    options = SubmitOptions(master_url="local[1]", driver_memory="1g",
                            jobs=JobChoice(load_job(tmp_path / "job.toml")))
    env = discover()
    proc = subprocess.run(submit_argv(spec, options, env), env=env.environ(), capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("PROPS ")]
    assert line.split()[1:] == ["yes", str(env.log_config), "com.intel.analytics.bigdl.dllib.utils.Engine"]
