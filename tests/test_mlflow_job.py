"""``results = "mlflow"``: an unchanged script that logs to MLflow (mlflow.log_metric and pyspark.ml's autolog)
runs as a campaign; what it logged becomes results.csv's columns and epochs.csv's rows.

Pure parts first (names, epochs from metric histories); then one real campaign on the spark4 runtime
(Spark 4.3 with MLflow 3.17.2 in its environment) against the campaign's own SQLite store, and one
against a real tracking server (``mlflow server``, SQLite behind it), where the script's run is the
design run's run that ``--mlflow``'s export fills.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.metrics import Metrics
from harness.mlflow_run import ProgramFigures, column_name

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "mlflow_job"


# ---------------------------------------------------------------- pure


@pytest.mark.parametrize("metric, column", [
    ("loss", "loss"), ("val/acc", "val_acc"), ("train-loss 2", "train_loss_2"), ("1st", "m_1st"),
    ("x" * 80, "x" * 64),
])
def test_a_metric_name_becomes_a_column_name(metric, column):
    assert column_name(metric) == column


def test_histories_of_several_steps_become_epochs_counted_from_one():
    figures = ProgramFigures(Metrics({"loss": 0.5}), {
        "loss": ((0, 2.0), (1, 1.0), (2, 0.5)), "accuracy": ((0, 0.9),), "lr": ((1, 0.1), (2, 0.05))})
    assert figures.epoch_rows() == [
        {"epoch": 1, "step": 0, "loss": 2.0, "lr": None},
        {"epoch": 2, "step": 1, "loss": 1.0, "lr": 0.1},
        {"epoch": 3, "step": 2, "loss": 0.5, "lr": 0.05}]  # one point at one step is no history
    from_one = ProgramFigures(Metrics(), {"loss": ((1, 2.0), (2, 1.0))})
    assert [r["epoch"] for r in from_one.epoch_rows()] == [1, 2]  # steps counted from 1 are epochs as logged
    assert ProgramFigures(Metrics(), {"accuracy": ((0, 0.9),)}).epoch_rows() == []


# ---------------------------------------------------------------- real campaigns


def submit(out: Path, cluster, *extra: str, design: Path = EXAMPLE / "design.csv") -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "harness.submit", str(design), "--job", str(EXAMPLE / "job.toml"),
            "--out", str(out), "--timeout", "900", "--state-dir", str(cluster.state_dir), "--port", str(cluster.port),
            "--webui-port", str(cluster.webui_port), *extra]
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"}
    return subprocess.run(argv, capture_output=True, text=True, timeout=2400, cwd=ROOT, env=env)


def check_figures(out: Path, client) -> dict[str, dict]:
    """results.csv and epochs.csv hold what the script logged, equal to what MLflow holds; returns rows by run."""
    rows = {r["run"]: r for r in csv.DictReader(open(out / "results.csv"))}
    assert {r["status"] for r in rows.values()} == {"ok"}, [r["reason"] for r in rows.values()]
    epochs = list(csv.DictReader(open(out / "epochs.csv")))
    for run, row in rows.items():
        logged = client.get_run(row["mlflow_run_id"])
        assert logged.info.status == "FINISHED"
        # the script's own metrics are columns, equal to MLflow's latest values
        for name in ("accuracy", "fit_s", "loss"):
            assert float(row[name]) == logged.data.metrics[name], (name, row[name], logged.data.metrics)
        assert 0.5 < float(row["accuracy"]) <= 1.0  # logistic regression learns the 8x8 digits
        assert row["wall_clock_of"] == "" and row["wall_clock_s"] == ""  # the script reported no wall_clock_s
        # autolog's params went into the same run: the design's values as the estimator saw them
        assert logged.data.params["maxIter"] == row["max_iter"] and float(logged.data.params["regParam"]) == 0.0
        # the loss history is the run's per-epoch figures, step for step (steps from 0: epoch = step + 1)
        history = sorted((m.step, m.value) for m in client.get_metric_history(row["mlflow_run_id"], "loss"))
        mine = [e for e in epochs if e["run"] == run]
        assert [(int(e["step"]), float(e["loss"])) for e in mine] == history and len(history) > 2
        assert [int(e["epoch"]) for e in mine] == [s + 1 for s, _ in history]
        assert {e["max_iter"] for e in mine} == {row["max_iter"]}  # led by the design row
        assert float(row["loss"]) == history[-1][1] and history[-1][1] < history[0][1]  # it learns
    return rows


@pytest.mark.slow
@pytest.mark.cluster
def test_a_script_logging_to_mlflow_fills_results_and_epochs_in_the_local_store_and_on_a_server(
        tmp_path, spark4_cluster):
    import mlflow

    from tests.test_mlflow_server import Tracker

    (tmp_path / "server").mkdir()
    tracker = Tracker(tmp_path / "server")  # starts while the first campaign runs
    try:
        # 1. no --mlflow: the campaign's own SQLite store (the example's first row)
        local = tmp_path / "local"
        first_row = tmp_path / "one.csv"
        first_row.write_text("".join((EXAMPLE / "design.csv").read_text().splitlines(keepends=True)[:2]))
        proc = submit(local, spark4_cluster, design=first_row)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert (local / "mlflow.db").is_file()
        client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{local / 'mlflow.db'}")
        rows = check_figures(local, client)
        local_runs = client.search_runs([client.get_experiment_by_name("local").experiment_id])
        (parent,) = [r for r in local_runs if r.data.tags.get("sparkdl.kind") == "campaign"]
        nested = [r for r in local_runs if r.data.tags.get("sparkdl.kind") == "run"]
        assert len(rows) == len(nested) == len(local_runs) - 1 == 1  # the design run, nested under the campaign's
        assert {r.data.tags["mlflow.parentRunId"] for r in nested} == {parent.info.run_id}
        assert json.loads((local / "manifest.json").read_text())["results"] == "mlflow"

        # 2. --mlflow URI: the script's run is the design run's run, which the live export fills
        uri = tracker.wait()
        remote = tmp_path / "remote"
        second_row = tmp_path / "two.csv"  # the example's second row, alone
        lines = (EXAMPLE / "design.csv").read_text().splitlines(keepends=True)
        second_row.write_text(lines[0] + lines[2])
        proc = submit(remote, spark4_cluster, "--mlflow", uri, design=second_row)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        client = mlflow.MlflowClient(tracking_uri=uri)
        rows = check_figures(remote, client)
        experiment = client.get_experiment_by_name("remote")
        runs = client.search_runs([experiment.experiment_id])
        by_key = {}
        for run in runs:
            by_key.setdefault(run.data.tags.get("sparkdl.run_key", run.info.run_name), []).append(run)
        assert sorted(by_key) == ["2-1", "campaign"] and all(len(v) == 1 for v in by_key.values())
        run_id = rows["2"]["mlflow_run_id"]
        logged = client.get_run(run_id)
        assert logged.data.tags["mlflow.parentRunId"] == by_key["campaign"][0].info.run_id
        assert logged.data.tags["sparkdl.program_run"] == "1" and logged.data.tags["status"] == "ok"
        assert "elapsed_s" in logged.data.metrics and logged.data.params["max_iter"] == "20"
        assert len(client.get_metric_history(run_id, "loss")) > 2  # the script's history was kept, not replaced
        # exporting again after the fact adds nothing
        again = subprocess.run([sys.executable, "-m", "harness.mlflow", str(remote), "--tracking-uri", uri],
                               capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert again.returncode == 0, again.stderr[-2000:]
        assert len(client.search_runs([experiment.experiment_id])) == 2
    finally:
        tracker.stop()
