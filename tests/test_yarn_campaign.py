"""Campaigns on YARN (harness/yarn.py): `sparkdl submit DESIGN --master yarn` as a user runs it, on a real local YARN +
HDFS (a ResourceManager, two NodeManagers, a NameNode and a DataNode on loopback, cluster/yarn/), the runtime reaching
the containers as an archive on HDFS; and the backend's pure parts (the argv, the capacity rule, the dry run)."""

from __future__ import annotations

import csv
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.yarn.config import read_conf_dir
from cluster.yarn.local import LocalYarn, found_processes
from cluster.yarn.rest import Node, ResourceManager
from harness.yarn import LAUNCHED, campaign_tag, capacity_problems, container_mb
from sparkdl.errors import EXIT_RUNS_FAILED
from sparkdl.runspec import RunSpec

ROOT = Path(__file__).resolve().parents[1]
HEADER = "run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size"


def submit(design: Path, out: Path, conf: Path | None, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    if conf is not None:
        env["HADOOP_CONF_DIR"] = str(conf)
    return subprocess.run([sys.executable, "-m", "sparkdl", "submit", str(design), "--master", "yarn", "--out", str(out),
                           "--train-samples", "512", "--test-samples", "256", *extra],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def write_design(path: Path, *rows: str) -> Path:
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


def rows_of(out: Path) -> list[dict[str, str]]:
    with open(out / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- pure parts


def spec(nodes: int = 1, executors: int = 2, cores: int = 1) -> RunSpec:
    return RunSpec(run=1, replicate=1, nodes=nodes, executors=executors, executor_cores=cores)


def test_the_capacity_rule_counts_the_master_and_yarns_overhead() -> None:
    nodes = [Node("a:1", "RUNNING", "a:2", 2, 3072, 0, 0), Node("b:1", "RUNNING", "b:2", 2, 3072, 0, 0)]
    assert container_mb(700) == 700 + 384 and container_mb(8192) == 8192 + 819
    assert capacity_problems(spec(executors=3), nodes, 700) == []  # 3 executors + the master: 4 vcores, 4,148 MB
    (memory,) = capacity_problems(spec(executors=3), nodes[:1] + [Node("b:1", "RUNNING", "b:2", 2, 1024, 0, 0)], 700)
    assert "needs 4 vcores and 4148 MB and the cluster has 4 vcores and 4096 MB" in memory
    (big,) = capacity_problems(spec(executors=4), nodes, 700)  # 5 vcores on a cluster of 4
    assert "needs 5 vcores and 5232 MB and the cluster has 4 vcores and 6144 MB" in big
    (wide,) = capacity_problems(spec(executors=1, cores=3), nodes, 700)
    assert "the largest NodeManager offers 2 vcores" in wide
    (placed,) = capacity_problems(spec(nodes=2), None, 700)
    assert placed.startswith("nodes=2: YARN places executors") and "nodes=1" in placed
    assert capacity_problems(spec(), [], 700) == ["the ResourceManager lists no running NodeManager: start the "
                                                   "cluster's NodeManagers"]


def test_an_application_masters_launch_lines_name_its_executors() -> None:
    # Spark 3.1.3's YarnAllocator, as the master of a campaign on the local YARN wrote it
    line = ("2026-12-08 01:10:39 INFO  YarnAllocator:57 - Launching container container_1796691906658_0002_01_000002 "
            "on host localhost for executor with ID 1 for ResourceProfile Id 0")
    assert LAUNCHED.findall(line) == ["container_1796691906658_0002_01_000002"]
    assert campaign_tag("h:/a") == campaign_tag("h:/a") != campaign_tag("h:/b")
    assert campaign_tag("h:/a") == campaign_tag("h:/a").lower()  # YARN lowercases tags


def test_the_dry_run_prints_the_archive_path_and_refuses_what_yarn_cannot_do(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text("<configuration><property><name>yarn.resourcemanager.hostname</name>"
                                        "<value>rm.example</value></property></configuration>")
    (conf / "core-site.xml").write_text("<configuration><property><name>fs.defaultFS</name>"
                                        "<value>hdfs://nn.example:8020</value></property></configuration>")
    design = write_design(tmp_path / "d.csv", "1,lenet,1,2,1,1,0.05,64")
    done = submit(design, tmp_path / "out", conf, "--dry-run", "--queue", "research", timeout=120)
    assert done.returncode == 0, done.stderr
    (argv,) = [shlex.split(line) for line in done.stdout.splitlines() if line and not line.startswith("#")]
    at = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--") and a != "--conf"}
    assert at["--master"] == "yarn" and at["--deploy-mode"] == "client" and at["--queue"] == "research"
    assert at["--num-executors"] == "2" and at["--executor-cores"] == "1"
    assert at["--archives"].startswith("hdfs://nn.example:8020/user/") and at["--archives"].endswith(".tar#env")
    confs = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "--conf")
    assert confs["spark.pyspark.python"] == "./env/bin/python" and confs["spark.yarn.config.replacementPath"] == "{{PWD}}/env"
    assert "--jars" not in argv and "--total-executor-cores" not in argv
    assert not (tmp_path / "out").exists()  # a dry run writes nothing
    two = submit(write_design(tmp_path / "n.csv", "1,lenet,2,1,1,1,0.05,64"), tmp_path / "out", conf, "--dry-run",
                 timeout=120)
    assert two.returncode == 2 and two.stderr.strip().splitlines()[-1].startswith("error: run 1-1: nodes=2: YARN places")
    none = submit(design, tmp_path / "out", None, "--dry-run", timeout=120)
    assert none.returncode == 2 and "HADOOP_CONF_DIR" in none.stderr and len(none.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- a real YARN


@pytest.fixture(scope="module")
def yarn(tmp_path_factory: pytest.TempPathFactory):
    state = tmp_path_factory.mktemp("yarn") / "yarn"
    cluster = LocalYarn(state)
    cluster.start(nodes=2, cores=2, memory_mb=3072)
    try:
        yield state / "conf"
    finally:
        cluster.stop()
        assert found_processes(state) == []


@pytest.mark.slow
def test_a_campaign_on_yarn_runs_each_row_as_an_application_and_leaves_none_running(yarn: Path, tmp_path: Path) -> None:
    rm = ResourceManager(read_conf_dir(yarn).rm_url)
    # refused before any application: more vcores than the cluster's 4
    big = submit(write_design(tmp_path / "big.csv", "1,lenet,1,4,1,1,0.05,64"), tmp_path / "big", yarn, timeout=120)
    assert big.returncode == 2, big.stdout + big.stderr
    assert "needs 5 vcores" in big.stderr and "the cluster has 4 vcores" in big.stderr and rm.apps() == []

    design = write_design(tmp_path / "d.csv", "1,lenet,1,1,1,1,0.05,64", "2,lenet,1,2,1,1,0.05,64",
                          "3,lenet,1,2,1,1,0.1,64", "4,lenet,1,1,2,1,0.1,64")
    done = submit(design, tmp_path / "c", yarn)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    rows = rows_of(tmp_path / "c")
    assert [r["status"] for r in rows] == ["ok"] * 4
    assert all(float(r["wall_clock_s"]) > 0 and 0 < float(r["accuracy"]) <= 1 for r in rows)
    apps = {a.id: a for a in rm.apps()}
    assert sorted(r["app_id"] for r in rows) == sorted(apps)  # one application per row, each in the results
    assert all(a.state == "FINISHED" and a.final_status == "SUCCEEDED" for a in apps.values())
    # each run's containers' logs are in its folder: the master's and an executor's per executor
    for r, want in zip(rows, (1, 2, 2, 1)):
        logs = sorted((tmp_path / "c" / "runs" / f"{r['run']}-1" / "containers").glob("container_*/stderr"))
        assert len(logs) == 1 + want, (r["run"], logs)

    # a run stopped by its timeout: its application is killed through the ResourceManager
    slow = write_design(tmp_path / "s.csv", "1,lenet,1,1,1,80,0.05,64")
    stopped = submit(slow, tmp_path / "t", yarn, "--timeout", "25", "--retries", "0")
    assert stopped.returncode == EXIT_RUNS_FAILED, stopped.stdout[-2000:] + stopped.stderr[-2000:]
    (row,) = rows_of(tmp_path / "t")
    assert row["status"] == "failed" and "raise --timeout" in row["reason"] and row["app_id"].startswith("application_")
    assert rm.app(row["app_id"]).state == "KILLED"
    assert [a.id for a in rm.apps() if not a.done] == []  # none left RUNNING or ACCEPTED
