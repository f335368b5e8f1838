"""Any program, unchanged: a job that is not BigDL is judged by what every program has (its exit code, its own
last error line, Spark's event log), reports figures from what it prints (``results = "output"``) or its time
alone (``results = "none"``: ``spark_jobs_span_s``), and never loses a run over a figure's name.

The fast checks are pure logic on texts and event logs; one slow test runs Apache Spark's own examples
``gradient_boosted_tree_classifier_example.py`` and ``als.py`` unchanged, as pyspark 4.3.0 ships them in its wheel
(``pyspark/examples/src/main/python/``, with ``pyspark/data/mllib/sample_libsvm_data.txt``), on a real local
standalone Spark 4 cluster.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cluster import runtime as runtimes
from harness.figurespec import FigureSpec, FigureSpecError, figure_spec
from harness.job import JobFileError, load_job
from harness.outputfigures import read_output_figures
from logparse import FailureKind, ProcessFacts, SparkRecord, Status, judge_program_run
from logparse.errorline import error_line_of
from logparse.eventlog import parse_events
from models.results import load_results
from sparkdl.cost import formula

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "anyprogram"


# ---------------------------------------------------------------- a failed program's own words


PY_TRACEBACK = b"""26/11/27 22:01:02 INFO SparkContext: Running Spark version 4.3.0
Traceback (most recent call last):
  File "/home/u/train.py", line 3, in <module>
    from bigdl.dllib.nn.layer import Linear
ModuleNotFoundError: No module named 'bigdl'
26/11/27 22:01:03 INFO ShutdownHookManager: Shutdown hook called
"""

CHAINED = b"""Traceback (most recent call last):
  File "a.py", line 2, in <module>
    int("x")
ValueError: invalid literal for int() with base 10: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "a.py", line 4, in <module>
    raise RuntimeError("could not parse the learning rate")
RuntimeError: could not parse the learning rate
"""

PY4J = b"""Traceback (most recent call last):
  File "/u/job.py", line 9, in <module>
    model = pipeline.fit(train)
py4j.protocol.Py4JJavaError: An error occurred while calling o61.fit.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times
\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)
"""

JAVA = b"""26/11/27 22:01:02 INFO SparkContext: Running Spark version 4.3.0
Exception in thread "main" java.lang.IllegalArgumentException: requirement failed: maxIter must be > 0
\tat scala.Predef$.require(Predef.scala:337)
Caused by: java.io.FileNotFoundException: /data/train.csv (No such file or directory)
\tat java.base/java.io.FileInputStream.open0(Native Method)
"""


@pytest.mark.parametrize("text, line", [
    (PY_TRACEBACK, "ModuleNotFoundError: No module named 'bigdl'"),
    (CHAINED, "RuntimeError: could not parse the learning rate"),  # the last traceback is the final error
    (PY4J, "py4j.protocol.Py4JJavaError: An error occurred while calling o61.fit. org.apache.spark.SparkException: "
           "Job aborted due to stage failure: Task 0 in stage 3.0 failed 4 times"),
    (JAVA, "java.io.FileNotFoundException: /data/train.csv (No such file or directory)"),  # the last one: the cause
    (b"usage: job.py [-h]\njob.py: error: argument --epochs: invalid int value: 'x'\n",
     "job.py: error: argument --epochs: invalid int value: 'x'"),
    (b"26/11/27 22:01:02 INFO SparkContext: Running Spark version 4.3.0\nall good\n", None),
])
def test_the_last_error_line_is_the_program_s_own(text, line):
    assert error_line_of(text) == line


def _run_logs(tmp_path: Path, out: bytes, err: bytes) -> Path:
    (tmp_path / "1-1.out").write_bytes(out)
    (tmp_path / "1-1.err").write_bytes(err)
    return tmp_path / "1-1.out"


def test_a_failed_program_s_reason_is_its_last_error_line_and_exit_code_never_a_missing_bigdl_line(tmp_path):
    out = _run_logs(tmp_path, b"starting\n", PY_TRACEBACK)
    j = judge_program_run(out, ProcessFacts(1, False, 9.0))
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert j.reason == "the job exited with code 1: ModuleNotFoundError: No module named 'bigdl'"
    out = _run_logs(tmp_path, b"", b"")  # the program gave nothing: the exit code alone, still no "BigDL"
    j = judge_program_run(out, ProcessFacts(2, False, 1.0))
    assert j.reason == "the job exited with code 2 (see its .err)"


def test_a_python_error_in_the_out_wins_over_a_java_stack_trace_spark_logged_as_a_warning():
    # real logs: the unchanged GBT example run where its data is missing (tests/fixtures/anyprogram/README.md)
    j = judge_program_run(FIXTURES / "path-not-found.out", ProcessFacts(1, False, 229.0))
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert j.reason == ("the job exited with code 1: pyspark.errors.exceptions.captured.AnalysisException: "
                        "[PATH_NOT_FOUND] Path does not exist: file:/work/wt-anyprogram-a/data/mllib/"
                        "sample_libsvm_data.txt. SQLSTATE: 42K03")


def test_spark_s_record_judges_a_program_that_exited_0(tmp_path):
    out = _run_logs(tmp_path, b"Test Error = 0.05\n", b"")
    ok = judge_program_run(out, ProcessFacts(0, False, 30.0), None, SparkRecord(ended=True, jobs=12))
    assert ok.status == Status.OK and ok.reason == ""
    failed = judge_program_run(out, ProcessFacts(0, False, 30.0), None,
                               SparkRecord(ended=True, jobs=12, failed_jobs=1, failed_stage="Job aborted: boom"))
    assert (failed.status, failed.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert failed.reason == "1 of the application's 12 Spark job(s) failed: Job aborted: boom"
    cut = judge_program_run(out, ProcessFacts(0, False, 30.0), None, SparkRecord(ended=False, jobs=3))
    assert (cut.status, cut.failure_kind) == (Status.FAILED, FailureKind.INFRASTRUCTURE)
    assert "never records the application's end" in cut.reason
    missing = judge_program_run(out, ProcessFacts(0, False, 30.0), "the job's output has no line matching ...",
                                SparkRecord(ended=True, jobs=12))
    assert missing.status == Status.FAILED and missing.reason.startswith("the job's output has no line matching")


def _event(kind: str, **fields: object) -> str:
    return json.dumps({"Event": kind, **fields})


def test_spark_jobs_span_runs_from_the_first_job_s_submission_to_the_last_job_s_completion():
    lines = [_event("SparkListenerApplicationStart", **{"App ID": "app-1", "App Name": "x", "Timestamp": 1_000}),
             _event("SparkListenerJobStart", **{"Job ID": 0, "Submission Time": 5_000}),
             _event("SparkListenerJobEnd", **{"Job ID": 0, "Completion Time": 6_500, "Job Result": {"Result": "JobSucceeded"}}),
             _event("SparkListenerJobStart", **{"Job ID": 1, "Submission Time": 7_000}),
             _event("SparkListenerJobEnd", **{"Job ID": 1, "Completion Time": 12_250,
                                              "Job Result": {"Result": "JobFailed"}}),
             _event("SparkListenerStageCompleted", **{"Stage Info": {"Stage ID": 3, "Stage Attempt ID": 0,
                                                                     "Failure Reason": "boom\nat x"}}),
             _event("SparkListenerApplicationEnd", Timestamp=20_000)]
    app = parse_events(lines)
    assert app.jobs_span_s == (12_250 - 5_000) / 1000 and app.columns()["spark_jobs_span_s"] == 7.25
    assert app.columns()["spark_app_s"] == 19.0  # start-up and shutdown are outside the span
    assert SparkRecord.of(app) == SparkRecord(ended=True, jobs=2, failed_jobs=1, failed_stage="boom")
    assert parse_events(lines[:1]).jobs_span_s is None  # no job: no span


# ---------------------------------------------------------------- figures from what a program prints


def _spec(patterns: list[str], derived: dict[str, str] | None = None) -> FigureSpec:
    return figure_spec(patterns, derived, "test")


def test_the_last_match_wins_stdout_first_and_derived_figures_use_the_cost_s_language(tmp_path):
    out = _run_logs(tmp_path, b"Test Error = 0.2\nepoch 2\nTest Error = 0.0833333\nTrees: 10\n",
                    b"26/11/27 INFO SparkContext: Running Spark version 4.3.0\nTest Error = 0.9\n")
    spec = _spec(["Test Error = (?P<test_error>[0-9.eE+-]+)", r"Trees: (?P<trees>\d+)",
                  r"Running Spark version (?P<spark_version>[0-9.]+)"],
                 {"accuracy": "1 - test_error", "error_pct": "test_error * 100"})
    m = read_output_figures(out, spec, reserved={"status"})
    assert m.problem is None
    assert m.accuracy == pytest.approx(1 - 0.0833333) and m.figures["test_error"] == 0.0833333
    assert m.figures["trees"] == 10.0 and m.figures["error_pct"] == pytest.approx(8.33333)
    # a figure named like the harness's own measurements is kept, renamed, with a note
    assert m.figures["job_spark_version"] == "4.3.0" and "spark_version" not in m.figures
    assert m.notes == ("the job's figure spark_version is kept as job_spark_version: spark_version is a name the "
                       "harness writes itself",)
    assert m.extra() == {"test_error": 0.0833333, "trees": 10.0, "error_pct": pytest.approx(8.33333),
                         "job_spark_version": "4.3.0"}


def test_a_declared_figure_missing_from_the_output_fails_the_run_with_its_regex(tmp_path):
    out = _run_logs(tmp_path, b"Test Error = 0.1\n", b"")
    m = read_output_figures(out, _spec(["Test Error = (?P<e>[0-9.]+)", r"Validation loss (?P<loss>[0-9.]+)"]))
    assert m.problem == ("the job's output has no line matching its figures regex 'Validation loss (?P<loss>[0-9.]+)': "
                         "check what the program prints (its .out and .err)")
    bad = read_output_figures(out, _spec(["Test Error = (?P<e>[0-9.]+)"], {"accuracy": "e + 0.95"}))
    assert "accuracy is 1.05" in bad.problem and "fraction in [0, 1]" in bad.problem
    echo = read_output_figures(out, _spec(["Test Error = (?P<max_iter>[0-9.]+)"]), design={"max_iter": 20})
    assert "it ran another configuration" in echo.problem


def test_a_derived_time_may_be_the_harness_s_span_so_the_default_cost_has_its_t(tmp_path):
    out = _run_logs(tmp_path, b"Test Error = 0.25\n", b"")
    spec = _spec(["Test Error = (?P<test_error>[0-9.]+)"], {"accuracy": "1 - test_error", "wall_clock_s": "spark_jobs_span_s"})
    m = read_output_figures(out, spec, measured={"spark_jobs_span_s": 12.5})
    assert (m.accuracy, m.wall_clock_s) == (0.75, 12.5) and "spark_jobs_span_s" not in m.figures
    assert "spark_jobs_span_s is missing" in read_output_figures(out, spec, measured={}).problem


@pytest.mark.parametrize("patterns, derived, needle", [
    (["Test Error = ([0-9.]+)"], None, "names no group"),
    (["(?P<a>[0-9]+"], None, "is not a regular expression"),
    (["a=(?P<x>\\d+)", "b=(?P<x>\\d+)"], None, "captured by two regexes"),
    (["a=(?P<x>\\d+)"], {"y": "x + z"}, "unknown name 'z'; use x"),
    (["a=(?P<x>\\d+)"], {"y": "__import__('os')"}, "may be called"),
    (["a=(?P<x>\\d+)"], {"x": "1"}, "also a group"),
    ("a=(?P<x>\\d+)", None, "must be a list of regexes"),
])
def test_bad_figures_are_refused_with_the_fix(patterns, derived, needle):
    with pytest.raises(FigureSpecError, match=re.escape(needle)):
        figure_spec(patterns, derived, "job.toml")


def test_a_derived_figure_is_the_cost_s_arithmetic():
    f = formula("1 - test_error", ["test_error"])
    assert f({"test_error": 0.083}) == pytest.approx(0.917) and f.names == ("test_error",)
    assert formula("log10(max(a, b)) / 2", ["a", "b"])({"a": 1.0, "b": 100.0}) == pytest.approx(1.0)


# ---------------------------------------------------------------- job descriptions


def _job(tmp_path: Path, body: str, app: str = "print('hi')\n") -> Path:
    (tmp_path / "app.py").write_text(app)
    path = tmp_path / "job.toml"
    path.write_text('[job]\nname = "mine"\napp = "app.py"\n' + body)
    return path


def test_the_default_results_follow_the_job(tmp_path):
    assert load_job(_job(tmp_path, "")).results == "none"
    assert load_job(_job(tmp_path, "")).time_column == "spark_jobs_span_s"
    bigdl = load_job(_job(tmp_path, 'runtime = "bigdl"\n', app="from bigdl.dllib.nn.layer import Linear\n"))
    assert bigdl.results == "bigdl" and bigdl.time_column == "wall_clock_s"
    assert load_job(_job(tmp_path, 'runtime = "bigdl"\n')).results == "none"  # the runtime alone is not BigDL


@pytest.mark.parametrize("body, app, why", [
    ('results = "bigdl"\n', "print('hi')\n", 'results = "bigdl"'),
    ("", "import numpy\n\ndef main():\n    import bigdl.dllib\n", "its app imports bigdl"),
])
def test_a_bigdl_job_on_a_runtime_without_bigdl_is_refused_naming_the_runtime_to_use(tmp_path, body, app, why):
    with pytest.raises(JobFileError) as e:
        load_job(_job(tmp_path, body, app))
    assert f"is a BigDL job ({why}) but its runtime spark4 has no BigDL: name runtime = \"bigdl\"" in str(e.value)
    assert runtimes.bigdl_runtimes() == ("bigdl",)


def test_a_bigdl_row_on_a_runtime_without_bigdl_is_refused_before_anything_runs(tmp_path):
    design = tmp_path / "design.csv"
    design.write_text("nodes,executors,executor_cores,learning_rate,batch_size,epochs,runtime\n"
                      "1,1,2,0.01,64,1,spark4\n")
    proc = subprocess.run([sys.executable, "-m", "harness.submit", str(design), "--job", "lenet", "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "row 1: the job lenet is a BigDL job (results = \"bigdl\") but its runtime spark4 has no BigDL: " \
           "name runtime = \"bigdl\"" in proc.stderr
    assert not (tmp_path / "out").exists()  # nothing ran, nothing was written


@pytest.mark.parametrize("body, needle", [
    ('results = "output"\n', "needs figures = ["),
    ('figures = ["a=(?P<a>1)"]\n', "are read with results = \"output\""),
    ('results = "ouptut"\n', "use \"bigdl\""),
    ('workdir = "nowhere"\n', "no such folder"),
])
def test_bad_job_keys_name_the_fix(tmp_path, body, needle):
    with pytest.raises(JobFileError, match=re.escape(needle)):
        load_job(_job(tmp_path, body))


# ---------------------------------------------------------------- an unchanged upstream script, on a real Spark 4 cluster


def _pyspark_dir() -> Path:
    """pyspark as the spark4 runtime installed it: its wheel ships Apache Spark's examples and their data."""
    return runtimes.site_packages(runtimes.home(runtimes.resolve("spark4"))) / "pyspark"


def _submit(design: Path, job: Path, out: Path, cluster) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.submit", str(design), "--job", str(job), "--out", str(out),
                           "--state-dir", str(cluster.state_dir), "--port", str(cluster.port), "--webui-port",
                           str(cluster.webui_port), "--keep-cluster", "--retries", "0", "--timeout", "1200"],
                          capture_output=True, text=True, timeout=3600, cwd=ROOT)


def _rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(open(out / "results.csv")))


def _events(run_dir: Path) -> list[dict]:
    """Every event of the run's Spark event log, read here with lz4 directly (not through logparse)."""
    from logparse.eventlog import iter_lines  # the bytes only (lz4 blocks decoded): the fold into jobs is the test's

    (log,) = [p for p in run_dir.iterdir() if p.name.startswith(("eventlog_v2_", "app-"))]
    return [json.loads(line) for line in iter_lines(log) if line.strip()]


@pytest.mark.slow
@pytest.mark.cluster
def test_an_unchanged_spark_example_is_judged_by_what_every_program_has(tmp_path, spark4_cluster):
    pyspark = _pyspark_dir()
    example = pyspark / "examples" / "src" / "main" / "python" / "ml" / "gradient_boosted_tree_classifier_example.py"
    text = example.read_text()
    assert 'load("data/mllib/sample_libsvm_data.txt")' in text and 'print("Test Error = %g" % (1.0 - accuracy))' in text
    user = tmp_path / "user"  # a user's folder: the script as Spark ships it, its data at the relative path it expects
    (user / "data" / "mllib").mkdir(parents=True)
    shutil.copy(example, user)
    shutil.copy(pyspark / "data" / "mllib" / "sample_libsvm_data.txt", user / "data" / "mllib")
    shutil.copy(pyspark / "examples" / "src" / "main" / "python" / "als.py", user)  # prints each iteration's RMSE
    head = '[job]\nname = "gbt"\napp = "gradient_boosted_tree_classifier_example.py"\nruntime = "spark4"\n'
    (user / "gbt.toml").write_text(head + 'workdir = "."\n')  # no results line
    (user / "gbt-output.toml").write_text(
        head + 'workdir = "."\nresults = "output"\n'
        "figures = ['Test Error = (?P<test_error>[0-9.eE+-]+)', 'Running Spark version (?P<spark_version>[0-9.]+)']\n"
        '[derived]\naccuracy = "1 - test_error"\nwall_clock_s = "spark_jobs_span_s"\n')
    (user / "als.toml").write_text('[job]\nname = "als"\napp = "als.py"\nruntime = "spark4"\nresults = "output"\n'
                                   'args = ["40", "100", "5", "{iterations}", "2"]\n'  # M U F iterations partitions
                                   "figures = ['Iteration (?P<epoch>\\d+):\\s+RMSE: (?P<rmse>[0-9.]+)']\n")
    (user / "gbt-elsewhere.toml").write_text(head)  # runs where the harness runs: its data is not there
    one, iterations = user / "one.csv", user / "iterations.csv"
    one.write_text("nodes,executors,executor_cores\n1,1,2\n")
    iterations.write_text("nodes,executors,executor_cores,iterations\n1,1,2,3\n1,1,2,0\n")

    # 1. no results line: the run is ok, with the time of its work from Spark's event log
    proc = _submit(one, user / "gbt.toml", tmp_path / "none", spark4_cluster)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "BigDL" not in proc.stdout + proc.stderr
    manifest = json.loads((tmp_path / "none" / "manifest.json").read_text())
    assert (manifest["results"], manifest["time"]) == ("none", "spark_jobs_span_s")
    assert "spark_jobs_span_s" in manifest["responses"]
    for row in _rows(tmp_path / "none"):
        assert (row["status"], row["reason"], row["exit_code"]) == ("ok", "", "0")
        events = _events(tmp_path / "none" / "runs" / f"{row['run']}-{row['replicate']}")
        starts = [e["Submission Time"] for e in events if e["Event"] == "SparkListenerJobStart"]
        ends = [e["Completion Time"] for e in events if e["Event"] == "SparkListenerJobEnd"]
        assert len(starts) == len(ends) == int(row["spark_jobs"]) > 0
        span = (max(ends) - min(starts)) / 1000
        assert float(row["spark_jobs_span_s"]) == pytest.approx(span, abs=1e-3)
        assert 0 < span < float(row["spark_app_s"]) < float(row["elapsed_s"])

    # 2. results = "output": the printed figure is a column, the derived ones too; a name of the harness's is kept
    proc = _submit(one, user / "gbt-output.toml", tmp_path / "output", spark4_cluster)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (row,) = _rows(tmp_path / "output")
    printed = [line for line in (tmp_path / "output" / row["log"]).read_text().splitlines()
               if line.startswith("Test Error = ")]
    assert len(printed) == 1 and row["status"] == "ok"
    assert float(row["test_error"]) == float(printed[0].split(" = ")[1])
    assert float(row["accuracy"]) == pytest.approx(1 - float(printed[0].split(" = ")[1]))
    assert float(row["wall_clock_s"]) == float(row["spark_jobs_span_s"]) > 0
    assert row["job_spark_version"] == "4.3.0" and "spark_version" not in row
    assert "kept as job_spark_version" in (tmp_path / "output" / "runs" / "1-1" / "notes.txt").read_text()
    table = load_results(tmp_path / "output")  # the default cost, as every analysis computes it
    expected = float(row["wall_clock_s"]) / (float(row["accuracy"]) * 100) ** 2  # T / (A*100)^2
    assert table.frame["cost"].tolist() == [pytest.approx(expected)]

    # 3. Spark's als.py prints "Iteration i:" then "RMSE: x" (i from 0): a regex with an epoch group makes one
    # row per iteration; with 0 iterations it prints none, and the declared figure missing fails the run
    proc = _submit(iterations, user / "als.toml", tmp_path / "als", spark4_cluster)
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {row["iterations"]: row for row in _rows(tmp_path / "als")}
    ran, row = rows["3"], rows["0"]
    rmse = [float(line.split(": ")[1]) for line in (tmp_path / "als" / ran["log"]).read_text().splitlines()
            if line.startswith("RMSE: ")]
    assert len(rmse) == 3 and ran["status"] == "ok" and float(ran["rmse"]) == rmse[-1]
    assert ran["epochs_completed"] == "3"
    epochs = list(csv.DictReader(open(tmp_path / "als" / "epochs.csv")))  # the ok run's rows, led by its design
    assert [(e["run"], e["iterations"], e["epoch"], float(e["rmse"])) for e in epochs] == [
        (ran["run"], "3", str(i + 1), r) for i, r in enumerate(rmse)]
    assert (tmp_path / "als" / "runs" / f"{ran['run']}-1" / "epochs.csv").is_file()
    assert (row["status"], row["failure_kind"], row["exit_code"]) == ("failed", "job", "0")
    assert row["reason"] == ("the job's output has no line matching its figures regex 'Iteration (?P<epoch>\\\\d+):"
                             "\\\\s+RMSE: (?P<rmse>[0-9.]+)': check what the program prints (its .out and .err)")

    # 4. a failing program: its own last error line and exit code are the reason
    proc = _submit(one, user / "gbt-elsewhere.toml", tmp_path / "failed", spark4_cluster)
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    (row,) = _rows(tmp_path / "failed")
    assert (row["status"], row["failure_kind"]) == ("failed", "job")
    assert row["reason"].startswith(f"the job exited with code {row['exit_code']}: ") and row["exit_code"] != "0"
    assert "AnalysisException: [PATH_NOT_FOUND] Path does not exist: " in row["reason"]
    assert "data/mllib/sample_libsvm_data.txt" in row["reason"]
    assert "BigDL" not in row["reason"]
