"""Slow, real Spark: a user's stock pyspark.ml script runs as written; the MLlib job trains and reports JSON."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cluster.sparkenv import discover

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


@pytest.mark.slow
def test_the_mllib_job_writes_its_figures(tmp_path):
    metrics = tmp_path / "m.json"
    env = discover().environ()
    argv = [str(discover().spark_submit), "--master", "local[2]", "--driver-memory", "1g", *discover().submit_args(),
            str(ROOT / "jobs" / "mlp.py"), "--max-iter", "5", "--step-size", "0.5", "--block-size", "64",
            "--train-samples", "400", "--test-samples", "200", "--metrics-out", str(metrics)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(metrics.read_text())
    assert 0.0 <= figures["accuracy"] <= 1.0 and figures["accuracy"] > 0.1  # better than chance on 10 classes
    assert 0 < figures["train_time_s"] <= figures["wall_clock_s"]
    assert (figures["train_samples"], figures["test_samples"]) == (400, 200)
    assert len(figures["loss_history"]) >= 2 and figures["loss_history"][-1] < figures["loss_history"][0]


def test_jobs_do_not_import_the_cluster_package():
    for script in ("train.py", "mlp.py"):
        text = (ROOT / "jobs" / script).read_text()
        assert "cluster" not in {line.split()[1].split(".")[0] for line in text.splitlines()
                                 if line.strip().startswith(("import ", "from "))}
