"""Today's distributed training on Spark: PyTorch through TorchDistributor (--job torch-lenet) and XGBoost's
Spark estimator (--job xgboost), beside BigDL, on real local clusters; and how their logs are read.

Fast checks read the per-epoch line format and real logs of failed TorchDistributor runs
(tests/fixtures/frameworks, made by Spark 4.3 and PyTorch 2.13); slow ones run real campaigns.
"""

from __future__ import annotations

import csv
import html
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import logparse
from cluster import runtime as runtimes
from logparse import FailureKind, ProcessFacts, Status
from logparse.epochlines import parse_line, read_epochs
from logparse.judgement import judge_json_run

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "frameworks"


# ---------------------------------------------------------------- the per-epoch line (pure)


@pytest.mark.parametrize("line, epoch", [
    (b'sparkdl-epoch {"epoch": 2, "wall_clock_s": 7.5, "accuracy": 0.874, "loss": 0.4}', 2),
    (b'12:00:01 INFO x sparkdl-epoch {"epoch": 1, "wall_clock_s": 0, "accuracy": 1}', 1),  # anywhere in the line
    (b'sparkdl-epoch {"epoch": 0, "wall_clock_s": 1, "accuracy": 0.5}', None),    # epochs count from 1
    (b'sparkdl-epoch {"epoch": true, "wall_clock_s": 1, "accuracy": 0.5}', None),  # a bool is no epoch
    (b'sparkdl-epoch {"epoch": 1, "wall_clock_s": -1, "accuracy": 0.5}', None),
    (b'sparkdl-epoch {"epoch": 1, "wall_clock_s": 1, "accuracy": 1.5}', None),
    (b'sparkdl-epoch {"epoch": 1, "wall_clock_s": NaN, "accuracy": 0.5}', None),
    (b'sparkdl-epoch {"epoch": 1, "wall_clock_s": 1}', None),
    (b'sparkdl-epoch [1, 2]', None),
    (b'sparkdl-epoch {"epoch": 1, "wall', None),
    (b'epoch 1 accuracy 0.9', None),
])
def test_an_epoch_line_is_read_exactly_or_not_at_all(line, epoch):
    found = parse_line(line)
    assert (None if found is None else found.epoch) == epoch


def test_the_last_line_of_an_epoch_counts_and_epochs_come_in_order(tmp_path):
    log = tmp_path / "x.out"
    log.write_bytes(b'noise\nsparkdl-epoch {"epoch": 2, "wall_clock_s": 4, "accuracy": 0.7}\n'
                    b'sparkdl-epoch {"epoch": 1, "wall_clock_s": 2, "accuracy": 0.5, "loss": 1.0}\n'
                    b'sparkdl-epoch {"epoch": 2, "wall_clock_s": 4.5, "accuracy": 0.75}\r\n')
    got = read_epochs(log)
    assert [(e.epoch, e.wall_clock_s, e.accuracy) for e in got] == [(1, 2.0, 0.5), (2, 4.5, 0.75)]
    assert got[0].extra == {"loss": 1.0}
    assert read_epochs(tmp_path / "missing.out") == []


def test_pruning_reads_the_epoch_lines_of_a_json_job():
    from optimize.search.pruning import EpochFigure, figure_of_line

    assert figure_of_line(b'sparkdl-epoch {"epoch": 3, "wall_clock_s": 9.5, "accuracy": 0.9}') == \
        EpochFigure(3, 9.5, 0.9)
    assert figure_of_line(b'sparkdl-epoch {"epoch": 3}') is None


# ---------------------------------------------------------------- failed runs, from real logs


@pytest.mark.parametrize("name, needle", [
    ("gloo-timeout", "Timed out waiting 15000ms for recv operation"),
    ("barrier-slots", "BarrierJobSlotsNumberCheckFailed"),
])
def test_a_lost_peer_or_missing_slots_is_an_infrastructure_failure_with_its_cause(name, needle):
    j = judge_json_run(FIXTURES / f"{name}.out", ProcessFacts(1, False, 60.0), None)
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.INFRASTRUCTURE)
    assert j.reason.startswith(needle), j.reason


def test_a_json_job_that_exits_on_its_own_error_says_so_not_that_bigdl_is_missing(tmp_path):
    out = tmp_path / "1-1.out"
    out.write_text("starting\n")
    (tmp_path / "1-1.err").write_text("jobs/torch_lenet.py: error: --batch-size 65 is not a multiple of the 2 "
                                      "training processes: use a multiple\n")
    j = judge_json_run(out, ProcessFacts(2, False, 5.0), None)
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert "--batch-size 65 is not a multiple" in j.reason and "BigDL" not in j.reason
    (tmp_path / "1-1.err").write_text("")
    j = judge_json_run(out, ProcessFacts(3, False, 5.0), None)
    assert j.reason == "the job exited with code 3 (see its .err)" and j.failure_kind == FailureKind.JOB
    j = judge_json_run(out, ProcessFacts(-9, False, 5.0), None)
    assert (j.failure_kind, j.reason) == (FailureKind.INFRASTRUCTURE, "the job was killed by signal 9")


def test_a_pruned_json_job_is_pruned(tmp_path):
    out = tmp_path / "1-1.out"
    out.write_text('sparkdl-epoch {"epoch": 1, "wall_clock_s": 1, "accuracy": 0.2}\n'
                   "sparkdl: pruned: epoch 1 of 3: accuracy 0.2000 cannot reach 0.99\n")
    j = judge_json_run(out, ProcessFacts(-15, False, 5.0), "the job wrote no metrics")
    assert j.status == Status.PRUNED and j.reason.startswith("pruned: epoch 1 of 3")


# ---------------------------------------------------------------- real campaigns


def cli(*argv: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def cluster_args(cluster) -> list[str]:
    return ["--state-dir", str(cluster.state_dir), "--port", str(cluster.port), "--webui-port", str(cluster.webui_port)]


def attempts(out: Path) -> dict[str, list[str]]:
    with sqlite3.connect(out / "campaign.sqlite") as db:
        return {f"{r}-{rep}": json.loads(a) for r, rep, a in db.execute("SELECT run, replicate, argv FROM attempts")}


def test_gloo_binds_to_the_interface_that_reaches_the_rendezvous_host():
    """On hosts whose name resolves to no cluster address (namespaces, containers) gloo falls back to
    loopback and peers on other hosts are refused; the job picks the interface routing to MASTER_ADDR."""
    import socket

    from jobs.torch_lenet import interface_towards

    assert interface_towards("127.0.0.1") == "lo"
    names = {name for _, name in socket.if_nameindex()}
    routed = subprocess.run(["ip", "-o", "route", "get", "192.0.2.123"], capture_output=True, text=True)
    if routed.returncode == 0:  # the machine has a route off-host: ip(8) names its device independently
        device = routed.stdout.split(" dev ")[1].split()[0]
        assert interface_towards("192.0.2.123") == device and device in names
    assert interface_towards("0.0.0.0") in names | {None}


@pytest.mark.slow
@pytest.mark.cluster
def test_a_search_prunes_a_torch_run_after_its_first_epoch(tmp_path, local_cluster):
    space = tmp_path / "space.toml"
    # batch 8: 64 steps an epoch, so that an epoch lasts longer than the runner's watch interval even on a fast
    # machine (batch 32's six epochs took 0.73 s in all there, and the watch saw them all at once: nothing to prune)
    space.write_text("[learning_rate]\nlow = 0.0001\nhigh = 0.0002\nlog = true\n\n[batch_size]\nchoices = [8]\n")
    out = tmp_path / "search"
    proc = subprocess.run(
        [sys.executable, "-m", "optimize.search", "--job", "torch-lenet", "--fixed", "epochs=6,executor_cores=2", "--space",
         str(space), "--budget", "30m", "--max-trials", "1", "--target-accuracy", "0.999", "--out", str(out),
         "--train-samples", "512", "--test-samples", "256", *cluster_args(local_cluster),
         "--executor-memory", "800m"], capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (row,) = list(csv.DictReader(open(out / "results.csv")))
    assert row["status"] == "pruned" and row["reason"].startswith("pruned: epoch "), row["reason"]
    lines = read_epochs(out / row["log"])
    pruned_at = int(row["reason"].split()[2])  # "pruned: epoch N of 6: ..."
    assert pruned_at < 6 and [e.epoch for e in lines] == list(range(1, pruned_at + 1))  # stopped at the epoch named
    assert (out / row["log"]).read_text().rstrip().splitlines()[-1].startswith("sparkdl: pruned: epoch")


@pytest.mark.slow
@pytest.mark.cluster
def test_more_processes_than_slots_fail_the_run_with_the_barrier_reason(tmp_path, spark4_cluster):
    job = tmp_path / "job.toml"
    job.write_text(f'[job]\nname = "torch8"\napp = "{ROOT / "jobs" / "torch_lenet.py"}"\n'
                   'args = ["--learning-rate", "0.05", "--batch-size", "64", "--epochs", "1", "--num-processes", "8",'
                   ' "--train-samples", "256", "--test-samples", "64"]\nresults = "json"\nruntime = "torch"\n'
                   '[spark]\n"spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures" = "2"\n'
                   '"spark.scheduler.barrier.maxConcurrentTasksCheck.interval" = "2s"\n')
    design = tmp_path / "design.csv"
    design.write_text("nodes,executors,executor_cores\n1,1,2\n")
    out = tmp_path / "b"
    proc = cli("harness.submit", str(design), "--job", str(job), "--out", str(out), "--retries", "0",
               "--timeout", "600", *cluster_args(spark4_cluster))
    assert proc.returncode == 3, proc.stdout[-3000:] + proc.stderr[-3000:]
    (row,) = list(csv.DictReader(open(out / "results.csv")))
    assert row["status"] == "failed" and row["failure_kind"] == "infrastructure"
    assert "BarrierJobSlotsNumberCheckFailed" in row["reason"]


# ---------------------------------------------------------------- one time vocabulary (harness.times)


def _float(row: dict, name: str) -> float:
    assert row.get(name) not in (None, ""), (name, row)
    return float(row[name])


@pytest.mark.slow
@pytest.mark.cluster
def test_four_frameworks_in_one_design_have_the_same_time_columns_with_the_same_meaning(tmp_path, local_cluster):
    design = tmp_path / "design.csv"
    # the model column picks each row's job; a column of another job's is left empty on a row
    design.write_text(
        "run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size,rounds,max_depth,max_iter,step_size,"
        "block_size\n"
        "1,lenet,1,1,2,2,0.05,64,,,,,\n"
        "2,torch-lenet,1,1,2,2,0.05,64,,,,,\n"
        "3,xgboost,1,1,2,,0.3,,3,3,,,\n"
        "4,mlp,1,1,2,,,,,,4,0.5,128\n")
    out = tmp_path / "four"
    proc = cli("harness.submit", str(design), "--out", str(out), "--train-samples", "512", "--test-samples", "128",
               "--timeout", "900", *cluster_args(local_cluster), timeout=3600)  # 3 runtimes, 4 frameworks
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # three runtimes, one whole plot each: the cluster restarts at the two boundaries, never inside one
    assert proc.stdout.count("resetting the cluster") == proc.stdout.count("restarting the local cluster on runtime") == 2
    rows = {r["model"]: r for r in csv.DictReader(open(out / "results.csv"))}
    assert {m: r["status"] for m, r in rows.items()} == dict.fromkeys(("lenet", "torch-lenet", "xgboost", "mlp"), "ok")
    argvs = attempts(out)
    for model, runtime in (("lenet", "bigdl"), ("torch-lenet", "torch"), ("xgboost", "spark4"), ("mlp", "spark4")):
        argv = argvs[f"{rows[model]['run']}-1"]
        assert argv[0].startswith(f"{runtimes.home(runtimes.resolve(runtime))}/"), (model, argv[0])  # its runtime's
    torch_argv = argvs[f"{rows['torch-lenet']['run']}-1"]
    assert torch_argv[torch_argv.index("--num-processes") + 1] == "2"  # nodes x executors x executor_cores
    for model, row in rows.items():
        elapsed, startup, fit, wall = (_float(row, c) for c in ("elapsed_s", "startup_s", "fit_s", "wall_clock_s"))
        # the spans nest: submit -> SparkContext up -> the training call -> exit
        assert 0 < startup < elapsed and 0 < fit < elapsed - startup, (model, startup, fit, elapsed)
        assert startup == _float(row, "phase_submit_s")  # the event log's application start, less the submit
        assert row["epochs_completed"].isdigit(), (model, row["epochs_completed"])  # an int, never "2.0"
    # wall_clock_s is the training call for every framework but BigDL, which keeps its log's own Wall Clock
    for model in ("torch-lenet", "xgboost", "mlp"):
        assert rows[model]["wall_clock_of"] == "fit" and _float(rows[model], "wall_clock_s") == _float(rows[model], "fit_s")
    lenet = rows["lenet"]
    assert lenet["wall_clock_of"] == "bigdl-wall-clock"
    log = logparse.parse(out / lenet["log"])
    assert _float(lenet, "wall_clock_s") == _float(lenet, "train_loop_s") == log.wall_clock_s
    assert _float(lenet, "fit_s") > _float(lenet, "wall_clock_s")  # optimize() holds more than BigDL's clock
    # torch: the training call includes TorchDistributor's start (torchrun, the processes importing PyTorch)
    torch = rows["torch-lenet"]
    lines = read_epochs(out / torch["log"])
    assert _float(torch, "train_loop_s") == lines[-1].wall_clock_s
    assert _float(torch, "fit_s") - _float(torch, "train_loop_s") > 1.0
    assert lines[0].extra["fit_s"] > lines[0].wall_clock_s  # epoch 1 reached the driver after the processes started
    assert [e.epoch for e in lines] == [1, 2]  # validated after every epoch, streamed to the driver's log
    assert lines[-1].extra["count"] == 128 and lines[-1].extra["processes"] == 2
    assert float(torch["accuracy"]) == lines[-1].accuracy
    # the per-epoch harvest puts both epochs of the torch run on the table, as for BigDL's
    from optimize.harvest import harvest
    import pandas as pd

    table = pd.read_csv(out / "results.csv")
    points = harvest(table[table["model"].isin(["lenet", "torch-lenet"])], out).table()
    assert sorted(points.groupby("run")["epoch"].count().to_dict().values()) == [2, 2]
    # counts are integers, epochs_completed what each job did
    figures = json.loads((out / "runs" / "2-1" / "metrics.json").read_text())
    assert (torch["epochs_completed"], torch["processes"], torch["train_samples"]) == ("2", "2", "512")
    assert figures["epochs_completed"] == figures["epochs_trained"] == len(lines) == 2
    assert (lenet["epochs_completed"], rows["xgboost"]["epochs_completed"]) == ("2", "3")
    # xgboost: every round validated and streamed, the last one its result, as XGBoost's own log says
    xgb = rows["xgboost"]
    rounds = read_epochs(out / xgb["log"])
    assert [e.epoch for e in rounds] == [1, 2, 3]
    xgb_figures = json.loads((out / "runs" / "3-1" / "metrics.json").read_text())
    assert float(xgb["accuracy"]) == xgb_figures["accuracy"] == rounds[-1].accuracy > 0.3  # it learns (chance 0.1)
    assert xgb_figures["workers"] == 2 and len(xgb_figures["accuracy_history"]) == 3
    # each round timed on the worker, in the boosting loop's time: in order, the last one the loop's whole time,
    # which the fit call holds with its start-up
    walls = [e.wall_clock_s for e in rounds]
    assert walls == sorted(walls) and walls[-1] == pytest.approx(xgb_figures["train_loop_s"], abs=1e-3)
    assert 0 < xgb_figures["train_loop_s"] < xgb_figures["fit_s"]
    text = (out / xgb["log"]).read_text() + (out / xgb["log"]).with_suffix(".err").read_text()
    merror = [float(t.split("validation-merror:")[1].split()[0]) for t in text.splitlines() if "validation-merror:" in t]
    assert merror and abs((1 - merror[-1]) - rounds[-1].accuracy) < 1e-5
    mlp = json.loads((out / "runs" / "4-1" / "metrics.json").read_text())
    assert rows["mlp"]["epochs_completed"] == str(mlp["epochs_completed"]) and 1 <= mlp["epochs_completed"] <= 4
    # the report says which span each job's wall_clock_s is
    report = cli("report", str(out), "--no-plots", "--response", "wall_clock_s")
    assert report.returncode == 0, report.stderr[-2000:]
    page = html.unescape((out / "report.html").read_text())
    assert ("lenet: BigDL's own Wall Clock in its log (train_loop_s); mlp: the training call (fit_s); "
            "torch-lenet: the training call (fit_s); xgboost: the training call (fit_s)") in page
    assert "So that they compare, wall_clock_s is each run's fit_s here (the training call)" in page  # one span
