"""What a campaign becomes in MLflow, checked without a tracker: the mapping, the options, MLflow kept out of start-up.

The campaign is a scripted one (tests/test_campaign.py: real BigDL logs played by a runner); the
real tracker, a real campaign and the UI are in tests/test_mlflow_server.py.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.mlflow_export import (CampaignFacts, LiveExport, MlflowExporter, TrackerUnreachableError, read_campaign,
                                   run_payload)
from sparkdl.campaign import CampaignDir
from logparse import Status
from optimize.harvest import epoch_figures
from sparkdl.options import TrackingOptionError, mlflow_uri
from tests.test_campaign import campaign, spec

ROOT = Path(__file__).resolve().parent.parent
DESIGN_COLUMNS = ("nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size", "model")


def scripted_campaign(folder: Path) -> CampaignDir:
    """Three real logs: an ok 2-epoch LeNet, BigDL rejecting batch 65, a killed run; then one ok run marked pruned."""
    c, _, _ = campaign(folder, ["lenet-4000-2ep", "birnn-batch65", "lenet-killed", "lenet-4000-2ep"], retries=0)
    c.run([spec(1), spec(2, batch_size=65), spec(3)])
    pruned = c.execute(spec(4))
    c.record(replace(pruned, outcome=replace(pruned.outcome, status=Status.PRUNED,
                                             reason="pruned at epoch 2: below the median")))
    c.store.close()
    return CampaignDir(folder)


@pytest.fixture
def scripted(tmp_path: Path) -> CampaignDir:
    return scripted_campaign(tmp_path / "camp")


def payloads(folder: CampaignDir, cap_bytes: int = 20_000_000) -> dict[str, object]:
    records, meta = read_campaign(folder)
    facts = CampaignFacts.read(folder, meta, "time_per_squared_percent")
    return {r.key: run_payload(r, folder, facts, cap_bytes) for r in records}


def rows(folder: CampaignDir) -> dict[str, dict[str, str]]:
    with open(folder.results_csv, newline="") as f:
        return {f"{r['run']}-{r['replicate']}": r for r in csv.DictReader(f)}


def test_every_run_carries_its_results_row(scripted: CampaignDir) -> None:
    table, made = rows(scripted), payloads(scripted)
    assert set(made) == set(table) == {"1-1", "2-1", "3-1", "4-1"}
    for key, row in table.items():
        p = made[key]
        assert {c: p.params[c] for c in DESIGN_COLUMNS} == {c: row[c] for c in DESIGN_COLUMNS}
        assert p.params["job"] == "lenet" and p.params["total_cores"] == "1"
        for tag in ("status", "reason", "failure_kind", "app_id", "replicate", "run"):
            assert p.tags[tag] == row[tag], tag
        assert p.tags["sparkdl.run_key"] == key and p.tags["attempt"] == row["attempts"]
        latest: dict[str, tuple[int, int, float]] = {}
        for m in p.metrics:  # MLflow's latest value: the highest step, then the latest time
            if m.name not in latest or (m.step, m.timestamp_ms) >= latest[m.name][:2]:
                latest[m.name] = (m.step, m.timestamp_ms, m.value)
        numbers = {c: float(v) for c, v in row.items()
                   if v not in ("",) and c not in (*DESIGN_COLUMNS, "run", "replicate") and _is_number(v)}
        assert numbers and {c: latest[c][2] for c in numbers} == numbers
        t, a = float(row["wall_clock_s"] or "nan"), float(row["accuracy"] or "nan")
        if row["accuracy"] and a > 0:
            assert latest["cost"][2] == pytest.approx(t / (a * 100) ** 2)  # the default cost, by hand
    assert {k: made[k].status for k in made} == {"1-1": "FINISHED", "2-1": "FAILED", "3-1": "FAILED",
                                                  "4-1": "KILLED"}
    assert made["4-1"].tags["status"] == "pruned"


def test_a_results_table_alone_gives_the_same_numbers_as_the_store(scripted: CampaignDir) -> None:
    """An ingested campaign (results.csv, no store): every number of a row is a metric, as from the store."""
    from_store = {k: {m.name for m in p.metrics} for k, p in payloads(scripted).items()}
    for path in scripted.path.glob("campaign.sqlite*"):
        path.unlink()
    from_table = {k: {m.name for m in p.metrics} for k, p in payloads(scripted).items()}
    assert from_table == from_store and "train_loop_s" in from_table["1-1"]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_histories_are_the_logs_validated_epochs(scripted: CampaignDir) -> None:
    made = payloads(scripted)
    for key in ("1-1", "4-1"):
        history = sorted((m for m in made[key].metrics if m.name == "accuracy"), key=lambda m: m.step)
        expected = epoch_figures(scripted.logs / f"{key}.out")  # optimize.harvest reads the same log on its own
        assert [(m.step, m.value) for m in history] == [(e, acc) for e, _, acc in expected]
        assert len(history) == 2
        times = [m.timestamp_ms for m in history]
        assert times == sorted(times) and made[key].start_ms <= times[0] and times[-1] <= made[key].end_ms
        losses = [m for m in made[key].metrics if m.name == "loss"]
        assert [m.step for m in losses] == [1, 2] and all(0 < m.value < 10 for m in losses)


def test_artifacts_are_the_runs_files_and_the_cap_leaves_big_ones_out(scripted: CampaignDir) -> None:
    made = payloads(scripted)
    assert {(a.dest, a.path.name) for a in made["1-1"].artifacts} >= {("logs", "1-1.out"), ("logs", "1-1.err")}
    small = payloads(scripted, cap_bytes=1000)
    assert ("logs", "1-1.out") not in {(a.dest, a.path.name) for a in small["1-1"].artifacts}
    assert "1-1.out" in small["1-1"].tags["sparkdl.artifacts_skipped"]


def test_the_fingerprint_changes_exactly_when_the_run_does(scripted: CampaignDir) -> None:
    first = {k: p.fingerprint for k, p in payloads(scripted).items()}
    assert first == {k: p.fingerprint for k, p in payloads(scripted).items()}
    with open(scripted.logs / "3-1.err", "a") as f:
        f.write("one more line\n")
    again = {k: p.fingerprint for k, p in payloads(scripted).items()}
    assert [k for k in first if first[k] != again[k]] == ["3-1"]


def test_an_ingested_campaign_is_read_from_its_results_table(scripted: CampaignDir) -> None:
    from_store = payloads(scripted)
    scripted.store_path.unlink()
    for extra in scripted.path.glob("campaign.sqlite-*"):
        extra.unlink()
    from_csv = payloads(scripted)
    assert set(from_csv) == set(from_store)
    for key in from_store:
        assert from_csv[key].params == from_store[key].params
        assert from_csv[key].tags["status"] == from_store[key].tags["status"]


def test_a_folder_without_a_campaign_is_one_clear_error(tmp_path: Path) -> None:
    from harness.mlflow_export import MlflowExportError

    with pytest.raises(MlflowExportError, match="no campaign here"):
        read_campaign(CampaignDir(tmp_path))


def test_the_option_takes_a_uri_or_the_environments() -> None:
    assert mlflow_uri(None, {"MLFLOW_TRACKING_URI": "http://x:5000"}) is None  # not asked: no export
    assert mlflow_uri("http://a:1", {"MLFLOW_TRACKING_URI": "http://x:5000"}) == "http://a:1"
    assert mlflow_uri("", {"MLFLOW_TRACKING_URI": "http://x:5000"}) == "http://x:5000"
    with pytest.raises(TrackingOptionError, match="MLFLOW_TRACKING_URI"):
        mlflow_uri("", {})


OPTIMIZERS = {"optimize.search.__main__": ["--job", "lenet", "--space", "s.toml", "--budget", "1m", "--out", "o"],
              "optimize.cli.lr": ["--out", "o"], "optimize.cli.concurrent": ["--out", "o"],
              "optimize.cli.epochs": ["c", "--budget", "60"]}


@pytest.mark.parametrize("module", sorted(OPTIMIZERS))
def test_every_optimizer_takes_the_option_into_its_campaign(module: str) -> None:
    import importlib

    from optimize.session import ClusterOptions

    parser = importlib.import_module(module).build_parser()
    args = parser.parse_args([*OPTIMIZERS[module], "--mlflow", "http://127.0.0.1:5000"])
    assert ClusterOptions.from_args(args).mlflow == "http://127.0.0.1:5000"


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=300)


NO_MLFLOW = "import sys; sys.modules['mlflow'] = None  # as if MLflow were not installed\n"


def test_without_mlflow_the_option_says_how_to_install_it_and_runs_nothing(tmp_path: Path) -> None:
    design = tmp_path / "design.csv"
    design.write_text("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
                      "1,lenet,1,1,1,1,0.05,32\n")
    out = tmp_path / "out"
    submit = _python(NO_MLFLOW + "from harness.submit import main\nfrom sparkdl.cli import run_cli\n"
                     "sys.exit(run_cli(main, sys.argv[1:]))", str(design), "--out", str(out), "--state-dir",
                     str(tmp_path / "cluster"), "--mlflow", "http://127.0.0.1:9")
    assert submit.returncode == 2, submit.stderr
    assert "MLflow is not installed" in submit.stderr and "pip install 'sparkdl-lab[mlflow]'" in submit.stderr
    assert len(submit.stderr.strip().splitlines()) == 1 and "Traceback" not in submit.stderr
    assert not out.exists() and not (tmp_path / "cluster").exists()  # no campaign, no cluster
    export = _python(NO_MLFLOW + "from harness.mlflow import main\nfrom sparkdl.cli import run_cli\n"
                     "sys.exit(run_cli(main, sys.argv[1:]))", str(tmp_path), "--tracking-uri", "http://127.0.0.1:9")
    assert export.returncode == 2 and "pip install 'sparkdl-lab[mlflow]'" in export.stderr, export.stderr


def test_commands_that_do_not_export_never_import_mlflow() -> None:
    done = _python("import sys\nimport harness.submit, harness.campaign, harness.mlflow, optimize.search.__main__, "
                   "optimize.cli.lr, report.cli, report\n"
                   "from harness.mlflow import build_parser\nbuild_parser()\n"
                   "print(sorted(m for m in sys.modules if m.split('.')[0] == 'mlflow'))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_tracker_that_does_not_answer_is_a_note_and_the_next_sync_tries_again(scripted: CampaignDir) -> None:
    from cluster.local import free_port

    uri = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    notes: list[str] = []
    live = LiveExport(uri, scripted, notes.append)
    records, meta = read_campaign(scripted)
    with pytest.raises(TrackerUnreachableError, match="does not answer"):
        live.exporter.sync(records, meta)
    assert live.sync(records, meta) is False and live.sync(records, meta) is False
    assert len(notes) == 1 and notes[0].startswith("note: MLflow export paused") and "sparkdl mlflow" in notes[0]
    live.finish(records, meta)
    assert notes[-1].startswith("MLflow: the experiment is behind") and str(scripted.path) in notes[-1]
    assert isinstance(live.exporter, MlflowExporter)


def test_a_json_jobs_epoch_lines_and_lists_become_histories(tmp_path: Path) -> None:
    from harness.mlflow_export import epoch_histories

    log = tmp_path / "1-1.out"
    log.write_text("starting\n"
                   'INFO x sparkdl-epoch {"epoch": 1, "wall_clock_s": 2.5, "accuracy": 0.5, "loss": 1.25}\n'
                   'sparkdl-epoch {"epoch": 2, "wall_clock_s": 4.0, "accuracy": 0.75, "loss": 0.5}\n'
                   'sparkdl-epoch {"epoch": 2, "wall_clock_s": 4.5, "accuracy": 0.8, "loss": 0.4}\n'  # the last counts
                   "sparkdl-epoch {not json}\n")
    got = epoch_histories(log, {"loss_history": (3.0, 2.0, 1.5), "loss": (9.0,)}, start_ms=1_000_000, end_ms=1_010_000)
    assert [(m.step, m.value, m.timestamp_ms) for m in got["accuracy"]] == [(1, 0.5, 1_002_500), (2, 0.8, 1_004_500)]
    assert [(m.step, m.value) for m in got["loss"]] == [(1, 1.25), (2, 0.4)]  # the log's, not metrics.json's
    assert [(m.step, m.value) for m in got["epoch_wall_clock_s"]] == [(1, 2.5), (2, 4.5)]
    assert [(m.step, m.value, m.timestamp_ms) for m in got["loss_history"]] == [(1, 3.0, 1_010_000), (2, 2.0, 1_010_000),
                                                                                 (3, 1.5, 1_010_000)]
    assert epoch_histories(tmp_path / "missing.out", {}, 0, 1) == {}
