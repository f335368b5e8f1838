"""Runtimes (cluster/runtime.py, harness/runtime.py): each job on the Spark it needs, the tool free of BigDL's pins.

Pure checks of reading runtime files and finding Java; then real ones: the tool's environment, a
stock pyspark.ml script on Spark 4 through a job description, a design with a runtime column
through ANOVA, and a runtime a user declares, prepared (killed once on the way) and used.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import pkgutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from cluster import runtime as runtimes
from cluster.runtime import RuntimeFileError, RuntimeProblem
from sparkdl.runspec import RunSpec

ROOT = Path(__file__).resolve().parent.parent


def cli(*argv: str, timeout: float = 1800, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=env)


# ---------------------------------------------------------------- reading runtimes (pure)


def test_the_built_in_runtimes():
    bigdl, spark4 = runtimes.resolve("bigdl"), runtimes.resolve("spark4")
    assert (bigdl.spark_version, bigdl.java_versions, bigdl.sitecustomize) == ("3.1.3", (11,), True)
    assert bigdl.log_config is not None and bigdl.log_config.is_file() and len(bigdl.class_path) == 2
    assert spark4.spark_version.startswith("4.") and set(spark4.java_versions) <= {17, 21}
    # the current runtime adds nothing to Spark's JVMs: no jars, no options, no log layout, no cloudpickle alias
    assert (spark4.class_path, spark4.java_options, spark4.log_config, spark4.sitecustomize) == ((), (), None, False)
    for rt in (bigdl, spark4):  # each lock pins the pyspark its TOML declares, and numpy as the issue says
        pins = dict(line.split("==") for line in rt.lock_text().splitlines() if "==" in line)
        assert pins["pyspark"] == rt.spark_version
        assert pins["numpy"].startswith("1.26." if rt is bigdl else "2.")
    assert "bigdl-dllib-spark3" not in runtimes.resolve("spark4").lock_text()


def write(tmp_path: Path, text: str, name: str = "rt.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = '[runtime]\nname = "spark35"\nspark = "3.5.3"\njava = [17]\nrequirements = ["pyspark==3.5.3"]\n'


@pytest.mark.parametrize("text, needle", [
    (GOOD.replace("[runtime]", "[runtim]"), "unknown table(s) runtim"),
    (GOOD + "colour = 1\n", "unknown key(s) colour"),
    (GOOD.replace('spark = "3.5.3"', 'spark = "latest"'), "spark must be a Spark version"),
    (GOOD.replace("java = [17]", "java = []"), "java must be the Java major version"),
    (GOOD.replace("java = [17]", 'java = "17"'), "java must be the Java major version"),
    (GOOD.replace('["pyspark==3.5.3"]', '["numpy<2"]'), "must name pyspark"),
    (GOOD.replace('["pyspark==3.5.3"]', '["pyspark==3.5.3", "--index-url=http://x"]'), "installer option"),
    (GOOD.replace('name = "spark35"', 'name = "../x"'), "name must be a word"),
    (GOOD + '[jvm]\nlog_config = "../../etc/passwd"\n', "log_config"),
    ("[runtime\n", "not valid TOML"),
])
def test_a_bad_runtime_file_is_one_line_naming_the_fix(tmp_path, text, needle):
    with pytest.raises(RuntimeFileError) as e:
        runtimes.load_runtime(write(tmp_path, text))
    assert needle in str(e.value) and "\n" not in str(e.value) and e.value.exit_code == 2


def test_unknown_names_and_files_are_input_errors(tmp_path):
    with pytest.raises(RuntimeFileError, match="no runtime 'spark9': use one of bigdl, spark4, torch"):
        runtimes.resolve("spark9")
    with pytest.raises(RuntimeFileError, match="no such runtime file"):
        runtimes.resolve(str(tmp_path / "missing.toml"))
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe[runtime]")
    with pytest.raises(RuntimeFileError, match="not UTF-8"):
        runtimes.resolve(str(tmp_path / "bin.toml"))


def test_the_environment_folder_follows_the_lock(tmp_path):
    rt = runtimes.load_runtime(write(tmp_path, GOOD))
    other = runtimes.load_runtime(write(tmp_path, GOOD.replace("pyspark==3.5.3", "pyspark==3.5.4"), "b.toml"))
    assert runtimes.home(rt, tmp_path) != runtimes.home(other, tmp_path)  # another lock, another environment
    again = runtimes.load_runtime(write(tmp_path, GOOD, "c.toml"))
    assert runtimes.home(again, tmp_path) == runtimes.home(rt, tmp_path)  # the same lock, shared


def test_a_shipped_wheelhouse_stays_beside_the_runtimes_own_wheel_folders(tmp_path, monkeypatch):
    """uv and pip drop UV_FIND_LINKS / PIP_FIND_LINKS when --find-links is given on the command line, so a
    runtime with its own folder (torch's CPU wheel) must name the host's wheelhouse too (found on Fabric hosts:
    'cloudpickle was not found in the cache')."""
    own = tmp_path / "wheels"
    own.mkdir()
    rt = runtimes.load_runtime(write(tmp_path, GOOD + f'find_links = ["{own}", "{tmp_path / "gone"}"]\n'))
    monkeypatch.delenv("UV_FIND_LINKS", raising=False)
    with pytest.raises(RuntimeProblem, match="gone"):
        runtimes._find_links(rt)  # here, a folder it names must exist
    monkeypatch.setenv("UV_FIND_LINKS", "/srv/wheelhouse")
    assert runtimes._find_links(rt) == ["--find-links", "/srv/wheelhouse", "--find-links", str(own)]
    plain = runtimes.load_runtime(write(tmp_path, GOOD, "plain.toml"))
    assert runtimes._find_links(plain) == []  # nothing on the command line: the variable stands


def fake_java(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\n")
    (home / "release").write_text(f'IMPLEMENTOR="x"\nJAVA_VERSION="{version}"\n')
    return home


def test_java_is_the_first_accepted_major_version_found(tmp_path, monkeypatch):
    jvms = tmp_path / "jvm"
    j17, j21, j11 = fake_java(jvms, "a17", "17.0.15"), fake_java(jvms, "b21", "21.0.2"), fake_java(jvms, "c11", "11.0.2")
    fake_java(jvms, "old8", "1.8.0_392")
    monkeypatch.setattr(runtimes, "JVM_DIRS", (jvms,))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert runtimes.java_major(jvms / "old8") == 8 and runtimes.java_major(j11) == 11
    rt = runtimes.load_runtime(write(tmp_path, GOOD.replace("java = [17]", "java = [21, 17]")))
    assert runtimes.find_java(rt, None) == j21  # preference order, not directory order
    rt = runtimes.load_runtime(write(tmp_path, GOOD))
    assert runtimes.find_java(rt, None) == j17
    rt = runtimes.load_runtime(write(tmp_path, GOOD.replace("java = [17]", "java = [25]")))
    with pytest.raises(RuntimeProblem, match="needs Java 25 and none was found.*apt-get install openjdk-25"):
        runtimes.find_java(rt, None)


def test_runtimes_run_in_whole_plots_one_per_replicate_interleaved_never_one_block_per_runtime():
    from harness.campaign import Campaign, CampaignSettings
    from harness.command import SubmitOptions
    from harness.job import JobChoice, builtin

    runtimes_ = ["spark4", "bigdl", "spark4", "bigdl", "bigdl", "spark4"]
    specs = [RunSpec(run=i, replicate=rep, nodes=1, executors=1, executor_cores=1,
                     params=(("max_iter", 1), ("step_size", 0.1), ("block_size", 64), ("runtime", rt)))
             for rep in (1, 2) for i, rt in enumerate(runtimes_, start=1)]
    settings = CampaignSettings(options=SubmitOptions(master_url="x", jobs=JobChoice(builtin("mlp"))))
    campaign = Campaign.__new__(Campaign)  # only its ordering: no folder, backend or store
    campaign.options = settings.options
    planned = campaign.whole_plots(specs)
    assert [(p.spec.run, p.spec.replicate, p.whole_plot) for p in planned] == [
        (1, 1, 1), (3, 1, 1), (6, 1, 1), (2, 1, 2), (4, 1, 2), (5, 1, 2),
        (1, 2, 3), (3, 2, 3), (6, 2, 3), (2, 2, 4), (4, 2, 4), (5, 2, 4)]
    # each runtime has one whole plot per replicate
    plots = {p.whole_plot: p.spec.get("runtime") for p in planned}
    assert sorted(plots.values()) == ["bigdl", "bigdl", "spark4", "spark4"]


def test_a_runtime_column_is_checked_like_any_other(tmp_path):
    from harness.designfile import check_design
    from harness.job import JobChoice, builtin

    design = write(tmp_path, "nodes,executors,executor_cores,max_iter,step_size,block_size,runtime,jvm\n"
                             "1,1,1,5,0.1,64,spark4,stock\n1,1,1,5,0.1,64,bigdl,tuned\n"
                             "1,1,1,5,0.1,64,spark9,stock\n1,1,1,5,0.1,64,bigdl,fast\n", "d.csv")
    checked = check_design(design, JobChoice(builtin("mlp")))
    assert [dict(s.params)["runtime"] for s in checked.specs] == ["spark4", "bigdl"]
    assert checked.problems[0].startswith("row 3: runtime='spark9': no runtime 'spark9'")
    assert checked.problems[1] == "row 4: jvm='fast': use stock or tuned"


def test_a_job_names_its_runtime_and_a_bad_one_fails_before_any_run(tmp_path):
    from harness.job import JobFileError, builtin, load_job

    assert (builtin("lenet").runtime, builtin("lenet").jvm) == ("bigdl", "tuned")
    assert (builtin("mlp").runtime, builtin("mlp").jvm) == ("spark4", "stock")
    (tmp_path / "a.py").write_text("")
    write(tmp_path, GOOD, "mine.toml")
    job = load_job(write(tmp_path, '[job]\nname = "a"\napp = "a.py"\nruntime = "mine.toml"\n', "job.toml"))
    assert job.runtime == str((tmp_path / "mine.toml").resolve())  # relative to the job file
    assert load_job(write(tmp_path, '[job]\nname = "a"\napp = "a.py"\n', "plain.toml")).runtime == "spark4"
    with pytest.raises(JobFileError, match=r"\[job\] runtime = 'spark2'"):
        load_job(write(tmp_path, '[job]\nname = "a"\napp = "a.py"\nruntime = "spark2"\n', "bad.toml"))
    with pytest.raises(JobFileError, match=r"\[job\] jvm = 'fast'"):
        load_job(write(tmp_path, '[job]\nname = "a"\napp = "a.py"\njvm = "fast"\n', "bad2.toml"))


# ---------------------------------------------------------------- the tool's own environment


def test_the_tools_environment_has_numpy_2_and_no_spark_and_every_module_imports():
    import numpy

    assert int(numpy.__version__.split(".")[0]) >= 2
    assert importlib.util.find_spec("pyspark") is None and importlib.util.find_spec("bigdl") is None
    # every module of the tool's stages imports here (jobs/ runs inside runtimes and imports pyspark lazily)
    for package in ("harness", "logparse", "models", "optimize", "cluster", "sparkdl"):
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
            if not info.name.endswith("__main__"):  # a command: importing it runs it
                importlib.import_module(info.name)


def test_runtime_list_says_what_each_runtime_is(tmp_path):
    empty = dict(os.environ, SPARKDL_RUNTIMES=str(tmp_path / "none"))
    proc = cli("harness.runtime", "list", "--format", "json", env=empty)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert set(rows) == {"bigdl", "spark4", "torch"}
    assert rows["bigdl"]["spark_version"] == "3.1.3" and rows["bigdl"]["java_version"] == "11"
    assert {r["python"] for r in rows.values()} == {"3.11"} and not any(r["prepared"] for r in rows.values())
    proc = cli("harness.runtime", "list")  # the real cache: make venv and make test prepared both
    assert proc.returncode == 0 and proc.stdout.splitlines()[0].split()[:5] == ["name", "spark", "java", "python",
                                                                                 "prepared"]
    proc = cli("harness.runtime", "prepare", "spark9")
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: no runtime 'spark9'")


@pytest.mark.slow
def test_doctor_checks_each_prepared_runtime_for_real(monkeypatch):
    monkeypatch.setenv("JDK_JAVA_OPTIONS", "-Xss1m")  # the launcher's "NOTE: Picked up ..." comes before the version
    proc = cli("harness.runtime", "doctor", timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.split(None, 3) for line in proc.stdout.splitlines()]
    assert {(rt, check) for _, rt, check, _ in lines if rt != "torch"} == {
        (rt, c) for rt in ("bigdl", "spark4") for c in ("prepared", "java", "python", "spark")}
    text = proc.stdout
    assert 'openjdk version "11.' in text and "pyspark 3.1.3" in text and "numpy 1.26" in text
    assert 'version "17.' in text or 'version "21.' in text
    assert "Picked up" not in text
    assert "pyspark 4." in text and "numpy 2." in text


# ---------------------------------------------------------------- real campaigns on the current runtime

#: A user's script, written outside the project: it says which Spark and Java ran it, and with what JVM options.
STOCK_SCRIPT = '''
import argparse, json
from pyspark.ml.classification import RandomForestClassifier
from pyspark.ml.evaluation import MulticlassClassificationEvaluator
from pyspark.ml.linalg import Vectors
from pyspark.sql import SparkSession

p = argparse.ArgumentParser()
p.add_argument("--trees", type=int, required=True)
p.add_argument("--metrics-out", required=True)
a = p.parse_args()
spark = SparkSession.builder.getOrCreate()
rows = [(Vectors.dense([float(i % 7), float(i % 3), float(i % 5)]), float(i % 7 > 3)) for i in range(600)]
df = spark.createDataFrame(rows, ["features", "label"])
model = RandomForestClassifier(numTrees=a.trees, maxDepth=4, seed=1).fit(df)
acc = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(model.transform(df))
jvm = spark.sparkContext._jvm
mx = jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
executor_opts = spark.sparkContext.getConf().get("spark.executor.extraJavaOptions", "")
json.dump({"accuracy": acc, "wall_clock_s": 1.0, "spark": spark.version,
           "java": jvm.java.lang.System.getProperty("java.version")}, open(a.metrics_out, "w"))
json.dump({"driver_jvm_args": " ".join(mx.getInputArguments()), "executor_opts": executor_opts,
           "class_path": jvm.java.lang.System.getProperty("java.class.path")}, open(a.metrics_out + ".jvm", "w"))
spark.stop()
'''


def cluster_args(cluster) -> list[str]:
    return ["--state-dir", str(cluster.state_dir), "--port", str(cluster.port), "--webui-port", str(cluster.webui_port)]


@pytest.mark.slow
@pytest.mark.cluster
def test_a_stock_pyspark_ml_script_runs_on_spark_4_with_nothing_of_bigdls(tmp_path, spark4_cluster, monkeypatch):
    monkeypatch.delenv("JDK_JAVA_OPTIONS", raising=False)  # the driver's JVM arguments below are the tool's alone
    user = tmp_path / "user"
    user.mkdir()
    (user / "forest.py").write_text(STOCK_SCRIPT)
    (user / "job.toml").write_text('[job]\nname = "forest"\napp = "forest.py"\nargs = ["--trees", "{trees}"]\n'
                                   'results = "json"\nruntime = "spark4"\n')
    (user / "design.csv").write_text("nodes,executors,executor_cores,trees\n1,2,1,10\n")  # two executor JVMs
    out = tmp_path / "c"
    proc = cli("harness.submit", str(user / "design.csv"), "--job", str(user / "job.toml"), "--out", str(out),
               "--timeout", "600", *cluster_args(spark4_cluster))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [r["status"] for r in rows] == ["ok"]
    for row in rows:
        figures = json.loads((out / "runs" / f"{row['run']}-1" / "metrics.json").read_text())
        assert figures["spark"] == runtimes.resolve("spark4").spark_version  # Spark 4 ran it
        assert figures["java"].split(".")[0] in ("17", "21")
        assert float(row["accuracy"]) == figures["accuracy"] > 0.8
        jvm = json.loads((out / "runs" / f"{row['run']}-1" / "metrics.json.jvm").read_text())
        assert "-Xmx" in jvm["driver_jvm_args"]  # the driver's real JVM arguments were read
        for text in (jvm["driver_jvm_args"], jvm["executor_opts"], jvm["class_path"]):
            assert "TieredStopAtLevel" not in text and "SharedArchiveFile" not in text and "bigdl" not in text.lower()
    with sqlite3.connect(out / "campaign.sqlite") as db:
        argvs = [json.loads(a) for (a,) in db.execute("SELECT argv FROM attempts")]
    assert len(argvs) == 1
    for argv in argvs:  # what was submitted: the runtime's spark-submit, no BigDL jar, no JVM tuning
        text = " ".join(argv)
        assert argv[0] == f"{runtimes.home(runtimes.resolve('spark4'))}/lib/python3.11/site-packages/pyspark/bin/spark-submit"
        assert "bigdl" not in text.lower() and "--jars" not in argv
        java_options = [a.split("=", 1)[1] for a in argv if "extraJavaOptions=" in a]
        # the one JVM option: the driver's temp folder in the campaign's scratch (harness/scratch.py)
        assert [o.split() for o in java_options] == [[f"-Djava.io.tmpdir={out.absolute() / 'spark-tmp' / '1-1'}"]], \
            java_options
        assert "TieredStopAtLevel" not in text and "UseParallelGC" not in text
    manifest = json.loads((out / "manifest.json").read_text())
    with sqlite3.connect(out / "campaign.sqlite") as db:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta")}
    assert manifest["job"] == "forest"
    assert list(meta["runtimes"]) == ["spark4"]  # the provenance names the runtime of every run
    assert meta["runtimes"]["spark4"]["spark_version"] == figures["spark"]


@pytest.mark.slow
@pytest.mark.cluster
def test_a_runtime_column_runs_the_mllib_job_on_both_and_anova_takes_it_as_a_factor(tmp_path, local_cluster):
    """The MLlib job's campaign end to end: its JSON figures become columns, each row runs on its runtime,
    ANOVA takes the runtime as a factor (checked against scipy), and the report names both factors."""
    from scipy import stats

    design = tmp_path / "design.csv"
    # alternating runtimes: the campaign blocks them, so the cluster restarts once, not twice
    cells = [(5, "spark4"), (5, "bigdl"), (2, "spark4")]
    design.write_text("nodes,executors,executor_cores,max_iter,step_size,block_size,runtime\n"
                      + "".join(f"1,1,1,{it},0.5,64,{rt}\n" for it, rt in cells))
    out = tmp_path / "upgrade"
    proc = cli("harness.submit", str(design), "--job", "mlp", "--out", str(out), "--train-samples", "400",
               "--test-samples", "200", "--timeout", "600", *cluster_args(local_cluster))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("restarting the local cluster on runtime") == 1
    assert proc.stdout.count("resetting the cluster") == 1  # two whole plots, one per runtime
    assert local_cluster.status().running is False  # the campaign started it, and stopped it
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert {r["status"] for r in rows} == {"ok"}
    assert sorted((int(r["max_iter"]), r["runtime"]) for r in rows) == sorted(cells)
    with sqlite3.connect(out / "campaign.sqlite") as db:
        argvs = {r: json.loads(a) for r, a in db.execute("SELECT run, argv FROM attempts")}
    for row in rows:
        argv = " ".join(argvs[int(row["run"])])
        home = runtimes.home(runtimes.resolve(row["runtime"]))
        assert argv.startswith(f"{home}/")  # each row ran with its runtime's spark-submit
        assert ("bigdl-dllib" in argv) == (row["runtime"] == "bigdl")  # the BigDL runtime's class path only there
        assert "TieredStopAtLevel" not in argv  # mlp asks for no tuning on either
        # the job's JSON figures: numbers became columns, exactly; lists stay in metrics.json
        figures = json.loads((out / "runs" / f"{row['run']}-1" / "metrics.json").read_text())
        assert float(row["accuracy"]) == figures["accuracy"] and float(row["wall_clock_s"]) == figures["wall_clock_s"]
        assert float(row["fit_s"]) == figures["fit_s"] and "loss_history" not in row
        assert 0 < figures["fit_s"] == figures["wall_clock_s"]  # the training call, as for every built-in job
        assert row["epochs_completed"] == str(figures["epochs_completed"])  # an integer, as every built-in job's
        assert (figures["train_samples"], figures["test_samples"]) == (400, 200)
        if row["max_iter"] == "5":  # it learns: loss falls, better than chance on 10 classes
            assert len(figures["loss_history"]) >= 2 and figures["loss_history"][-1] < figures["loss_history"][0]
            assert figures["accuracy"] > 0.1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["job"] == "mlp" and {"max_iter", "runtime"} <= set(manifest["factors"])
    assert "fit_s" in manifest["responses"]
    # one whole plot per runtime: the split-plot analysis (from the campaign's whole plots) prints no p-value
    split = cli("models.anova", str(out), "--terms", "runtime", "--response", "wall_clock_s", "--format", "json")
    assert split.returncode == 0, split.stderr
    (term,) = [t for t in json.loads(split.stdout)["rows"] if t["term"] == "runtime"]
    assert term["p"] is None and "one whole plot per level" in term["note"]
    anova = cli("models.anova", str(out), "--terms", "runtime", "--response", "wall_clock_s", "--whole-plot", "none",
                "--format", "json")
    assert anova.returncode == 0, anova.stderr
    table = json.loads(anova.stdout)
    (term,) = [t for t in table["rows"] if t["term"] == "runtime"]
    groups = [[float(r["wall_clock_s"]) for r in rows if r["runtime"] == rt] for rt in ("bigdl", "spark4")]
    assert term["F"] == pytest.approx(stats.f_oneway(*groups).statistic, rel=1e-6)  # one-way ANOVA, by scipy
    report = cli("report", str(out), "--out", str(tmp_path / "report.html"), timeout=600)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "report.html").read_text()
    assert "runtime" in html and "max_iter" in html


USER_RUNTIME = '''[runtime]
name = "spark35"
description = "a user's Spark 3.5 for jobs not moved yet"
spark = "3.5.3"
java = [17]
requirements = ["pyspark==3.5.3", "numpy<2"]
'''

VERSION_JOB = '''
import argparse, json, sys
from pyspark.sql import SparkSession
p = argparse.ArgumentParser()
p.add_argument("--n", type=int)
p.add_argument("--metrics-out")
a = p.parse_args()
spark = SparkSession.builder.getOrCreate()
total = spark.sparkContext.parallelize(range(a.n), 2).map(lambda x: x * x).sum()
import numpy
json.dump({"accuracy": 1.0, "wall_clock_s": 1.0, "total": total, "spark": spark.version,
           "numpy": numpy.__version__}, open(a.metrics_out, "w"))
spark.stop()
'''


@pytest.mark.slow
@pytest.mark.cluster
def test_a_user_declared_runtime_is_prepared_once_survives_a_kill_and_runs_a_job(tmp_path, local_cluster):
    cache = tmp_path / "runtimes"
    # uv's cache for this build is the test's own: where the index sends no caching headers (this machine's does
    # not), every build of pyspark's sdist adds 1.3 GB to the shared uv cache, never reused
    # and a temporary folder of its own, to see what uv leaves there (an empty uv-setuptools-<hash>.lock per sdist
    # it builds, astral-sh/uv#14385: the prepare gives uv a folder of its own and removes it)
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, SPARKDL_RUNTIMES=str(cache), UV_CACHE_DIR=str(tmp_path / "uv-cache"),
               TMPDIR=str(tmp_path / "tmp"))
    rt_file = write(tmp_path, USER_RUNTIME, "spark35.toml")
    # a prepare killed half-way leaves no environment that looks ready, and the next one finishes the work
    victim = subprocess.Popen([sys.executable, "-m", "harness.runtime", "prepare", str(rt_file)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(cache.glob(".spark35-*.tmp/bin/python")) and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.1)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    assert not [p for p in cache.glob("spark35-*") if (p / ".prepared").exists()] or victim.returncode == 0
    # installed only: make venv has the modules compiled by a second prepare, beside the class-data archive's dump
    proc = cli("harness.runtime", "prepare", str(rt_file), "--no-compile", env=env, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [home] = cache.glob("spark35-*")
    assert not (home / runtimes.BYTECODE_STAMP).exists()
    assert not list((runtimes.site_packages(home) / "pyspark").glob("__pycache__/*.pyc"))
    assert "installing" in proc.stderr and "ready in" in proc.stderr  # progress, on stderr
    assert [p.name for p in cache.iterdir()] == [p.name for p in cache.glob("spark35-*")]  # no leftover .tmp
    assert list((tmp_path / "tmp").iterdir()) == []
    # pyspark's wheel, built from its sdist, stores its jars as they are (deflating zip files again only cost time)
    built = list((tmp_path / "uv-cache").rglob("pyspark-3.5.3-*.whl"))
    assert len(built) == 1, built
    with zipfile.ZipFile(built[0]) as wheel:
        jars = [i for i in wheel.infolist() if i.filename.endswith(".jar")]
    assert len(jars) > 100 and {i.compress_type for i in jars} == {zipfile.ZIP_STORED}
    again = cli("harness.runtime", "prepare", str(rt_file), env=env)
    assert again.returncode == 0 and "already prepared" in again.stdout
    assert "compiling its Python modules once" in again.stderr and (home / runtimes.BYTECODE_STAMP).is_file()
    assert list((runtimes.site_packages(home) / "pyspark").glob("__pycache__/*.pyc"))
    listed = json.loads(cli("harness.runtime", "list", str(rt_file), "--format", "json", env=env).stdout)
    assert [r["prepared"] for r in listed if r["name"] == "spark35"] == [True]
    # a job naming it runs on it, on a local cluster started from that runtime's Spark
    (tmp_path / "version.py").write_text(VERSION_JOB)
    write(tmp_path, '[job]\nname = "version"\napp = "version.py"\nargs = ["--n", "{n}"]\nresults = "json"\n'
                    'runtime = "spark35.toml"\n', "job.toml")
    design = write(tmp_path, "nodes,executors,executor_cores,n\n1,1,2,10\n", "design.csv")
    out = tmp_path / "c"
    proc = cli("harness.submit", str(design), "--job", str(tmp_path / "job.toml"), "--out", str(out),
               "--timeout", "600", *cluster_args(local_cluster), env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    figures = json.loads((out / "runs" / "1-1" / "metrics.json").read_text())
    assert (figures["spark"], figures["total"]) == ("3.5.3", 285) and figures["numpy"].startswith("1.")


def test_uv_gets_a_temporary_folder_of_its_own_removed_after(tmp_path):
    """uv leaves an empty lock file in its temporary folder per sdist it builds: a runtime's installs get their own."""
    with runtimes._private_tmp(tmp_path / "bigdl-0123") as folder:
        assert folder.parent == tmp_path and folder.is_dir() and folder.name.endswith(f".{os.getpid()}.tmp")
        said = runtimes._run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"], "a probe",
                             tmpdir=folder)
        assert said.strip() == str(folder)
        (folder / "uv-setuptools-0123.lock").touch()
    assert not folder.exists()


def test_a_prepared_environment_is_compiled_once_so_no_process_compiles_its_imports(tmp_path):
    """With PYTHONDONTWRITEBYTECODE set nothing is cached at import: the runtime's modules are compiled at prepare.

    An environment built before that (no stamp) is compiled by the next prepare, in place, once.
    """
    rt = runtimes.resolve("bigdl")
    env_dir = runtimes.home(rt, tmp_path)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    pkg = runtimes.site_packages(env_dir) / "somepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VALUE = 41 + 1\n")
    (pkg / "broken.py").write_text("def (:\n")  # a file that does not compile stays source; the rest is compiled
    (env_dir / ".prepared").write_text(f"bigdl {rt.key()}\n")
    said = []
    got = runtimes.prepare(rt, tmp_path, progress=said.append)
    assert got.seconds == 0.0 and said == [f"runtime bigdl: compiling its Python modules once ({env_dir})"]
    assert list((pkg / "__pycache__").glob("__init__.cpython-*.pyc"))
    assert (env_dir / runtimes.BYTECODE_STAMP).is_file()
    said.clear()
    runtimes.prepare(rt, tmp_path, progress=said.append)
    assert said == []  # once


@pytest.mark.slow
def test_the_real_runtimes_are_compiled():
    """What make test prepared: the BigDL runtime's pyspark and bigdl load from bytecode (0.9 s of each driver)."""
    rt = runtimes.resolve("bigdl")
    assert runtimes.is_prepared(rt)
    site = runtimes.site_packages(runtimes.home(rt))
    assert (runtimes.home(rt) / runtimes.BYTECODE_STAMP).is_file()
    for module in ("pyspark", "bigdl/dllib"):
        assert list((site / module / "__pycache__").glob("__init__.cpython-*.pyc")), module
