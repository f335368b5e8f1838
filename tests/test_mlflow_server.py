"""Campaigns in a real MLflow: a tracking server with a SQLite store on loopback, read back through MLflow's client.

A real LeNet campaign on the local cluster runs with ``--mlflow`` while the tracker is down (a
loopback forwarder the test switches on after the first run), catches up, equals results.csv in
MLflow; ``harness.mlflow`` re-exports without duplicates; the UI lists the runs in Debian's
chromium (screenshots in the test's folder). A scripted search with a pruned trial is exported
after the fact from its results table alone.
"""

from __future__ import annotations

import csv
import html
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from cluster.processes import end_process_group, free_port
from optimize.harvest import epoch_figures
from tests.test_mlflow_export import DESIGN_COLUMNS, _is_number, scripted_campaign

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
#: No background job runner and no usage reports from the server or the clients the tests start.
QUIET_ENV = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", "MLFLOW_DISABLE_TELEMETRY": "true"}


class Tracker:
    """``mlflow server`` on a free loopback port, SQLite store and artifacts in a temporary folder.

    Started, not waited for: its start (15 s idle, 50 s on a loaded 2-core machine) overlaps the
    campaign's first run, during which the test wants the tracker down anyway; :meth:`wait` when needed.
    """

    def __init__(self, root: Path) -> None:
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.log = root / "server.log"
        argv = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
                "--artifacts-destination", str(root / "artifacts"), "--host", "127.0.0.1", "--port", str(self.port),
                "--workers", "1"]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(argv, cwd=root, env={**os.environ, **QUIET_ENV}, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.up = False

    def wait(self, timeout: float = 300) -> str:
        """The tracker's URI once its /health answers."""
        deadline = time.monotonic() + timeout
        while not self.up:
            assert self.proc.poll() is None, f"mlflow server exited {self.proc.returncode}: {self.log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"mlflow server not up after {timeout:.0f} s: {self.log.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(f"{self.uri}/health", timeout=5) as r:
                    self.up = r.status == 200
            except OSError:
                time.sleep(1)
        return self.uri

    def stop(self) -> None:
        end_process_group(self.proc, grace=10)


@pytest.fixture(scope="module")
def mlflow_tracker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tracker]:
    tracker = Tracker(tmp_path_factory.mktemp("mlflow-server"))
    try:
        yield tracker
    finally:
        tracker.stop()


class Switch:
    """A loopback TCP forwarder to the tracker, off until :meth:`on`: before that the tracker is down
    (connection refused), as a tracker that is stopped or not started yet is."""

    def __init__(self, target_port: int) -> None:
        self.target, self.port = target_port, free_port()
        self.listener: socket.socket | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def on(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        assert self.listener is not None
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def off(self) -> None:
        if self.listener is not None:
            self.listener.close()


def export(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``python -m harness.mlflow ARGS`` in this process (MLflow is imported once, not per export)."""
    from harness.mlflow import main
    from sparkdl.cli import run_cli

    capsys.readouterr()
    rc = run_cli(main, list(args))
    got = capsys.readouterr()
    return rc, got.out, got.err


def client(uri: str):  # noqa: ANN201 - mlflow's type, imported here only
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


def runs_by_key(c, experiment_id: str, deleted: bool = False) -> dict[str, list]:  # noqa: ANN001
    from mlflow.entities import ViewType

    found: dict[str, list] = {}
    view = ViewType.ALL if deleted else ViewType.ACTIVE_ONLY
    for run in c.search_runs([experiment_id], run_view_type=view, max_results=1000):
        key = run.data.tags.get("sparkdl.run_key") or run.data.tags.get("sparkdl.kind", "?")
        found.setdefault(key, []).append(run)
    return found


def check_equals_results(c, experiment_id: str, folder: Path) -> None:  # noqa: ANN001
    """Every results.csv row is exactly one MLflow run with its params, latest metrics, tags and accuracy history."""
    with open(folder / "results.csv", newline="") as f:
        table = {f"{r['run']}-{r['replicate']}": r for r in csv.DictReader(f)}
    runs = runs_by_key(c, experiment_id)
    assert set(runs) == set(table) | {"campaign"} and all(len(v) == 1 for v in runs.values()), runs.keys()
    (parent,) = runs["campaign"]
    assert parent.info.run_name == "campaign" and "mlflow.parentRunId" not in parent.data.tags
    for key, row in table.items():
        run = runs[key][0]
        assert run.info.run_name == f"run {key}"
        assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id, key  # nested under the campaign's run
        assert {k: run.data.params[k] for k in DESIGN_COLUMNS} == {k: row[k] for k in DESIGN_COLUMNS}
        for tag in ("status", "reason", "failure_kind", "app_id", "replicate"):
            assert run.data.tags[tag] == row[tag], (key, tag)
        numbers = {k: float(v) for k, v in row.items()
                   if v and k not in (*DESIGN_COLUMNS, "run", "replicate") and _is_number(v)}
        assert {k: run.data.metrics[k] for k in numbers} == numbers, key
        assert run.info.status == {"ok": "FINISHED", "pruned": "KILLED"}.get(row["status"], "FAILED")
        history = c.get_metric_history(run.info.run_id, "accuracy")
        expected = epoch_figures(folder / row["log"])  # the log's validated epochs, read by optimize.harvest
        assert sorted((m.step, m.value) for m in history) == [(e, acc) for e, _, acc in expected], key
        if row["status"] == "ok":
            assert expected[-1][2] == float(row["accuracy"])


@pytest.mark.cluster
def test_a_campaign_in_mlflow_live_through_an_outage_then_after_the_fact(tmp_path: Path, local_cluster,  # noqa: ANN001
                                                                        mlflow_tracker: Tracker,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    design = tmp_path / "design.csv"
    design.write_text("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
                      "1,lenet,1,1,1,2,0.05,32\n2,lenet,1,1,1,1,0.1,32\n")
    out = tmp_path / "lenet-mlflow"
    switch = Switch(mlflow_tracker.port)
    argv = [sys.executable, "-m", "harness.submit", str(design), "--out", str(out), "--train-samples", "256",
            "--test-samples", "128", "--executor-memory", "600m", "--state-dir", str(local_cluster.state_dir),
            "--port", str(local_cluster.port), "--webui-port", str(local_cluster.webui_port), "--keep-cluster",
            "--mlflow", switch.uri]
    proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **QUIET_ENV}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(900, proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("[1/2] run 1-1 ") and ":" in line and switch.listener is None:
                mlflow_tracker.wait()
                switch.on()  # the tracker comes back after the first run was stored (and its export failed)
        rc = proc.wait()
    finally:
        watchdog.cancel()
        switch.off()
    text = "\n".join(lines)
    assert rc == 0, text[-4000:]
    notes = [line for line in lines if line.startswith("note: MLflow export paused")]
    assert len(notes) == 1 and "does not answer" in notes[0] and "sparkdl mlflow" in notes[0], text
    back = [line for line in lines if line.startswith(f"MLflow at {switch.uri} answers again")]
    assert len(back) == 1 and "2 run(s) added" in back[0], text  # run 1 (missed) and run 2 together, after run 2
    assert lines.index(notes[0]) < lines.index(next(x for x in lines if x.startswith("[1/2] run 1-1 ok")))
    assert any(x.startswith("MLflow: 2 run(s) in experiment 'lenet-mlflow'") for x in lines), text

    mlflow_server = mlflow_tracker.uri
    c = client(mlflow_server)
    experiment = c.get_experiment_by_name("lenet-mlflow")
    assert experiment is not None and experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    from harness.store import ResultStore

    store = ResultStore(out)
    assert experiment.tags["sparkdl.design_sha256"] == store.meta()["design_sha256"]
    store.close()
    eid = experiment.experiment_id
    check_equals_results(c, eid, out)
    run1 = runs_by_key(c, eid)["1-1"][0]
    assert run1.data.params["runtime"] == "bigdl" and run1.data.params["job"] == "lenet"
    logs = {a.path for a in c.list_artifacts(run1.info.run_id, "logs")}
    assert logs == {"logs/1-1.out", "logs/1-1.err"}
    files = {a.path for a in c.list_artifacts(run1.info.run_id, "run")}
    assert any(p.startswith("run/app-") for p in files) and "run/host_samples.csv" in files  # the event log
    local = c.download_artifacts(run1.info.run_id, "logs/1-1.out", str(tmp_path / "dl"))
    assert Path(local).read_bytes() == (out / "logs" / "1-1.out").read_bytes()

    # after the fact: the report joins the campaign run; a second export adds nothing at all
    # the exporter uploads whatever report*.html the folder holds; the report's own page is tested in
    # tests/test_report*.py and takes 10-45 s here, so a stand-in page of the same name
    (out / "report.html").write_text("<!DOCTYPE html><title>lenet-mlflow</title><h1>Campaign report</h1>\n")
    rc, first, err = export(capsys, str(out), "--tracking-uri", mlflow_server)
    assert rc == 0, err
    assert "0 run(s) added, 0 updated, 2 unchanged; campaign files updated: report.html" in first, first
    rc, second, err = export(capsys, str(out), "--tracking-uri", mlflow_server)
    assert rc == 0 and "0 run(s) added, 0 updated, 2 unchanged" in second, second + err
    assert "campaign files updated" not in second
    every = runs_by_key(c, eid, deleted=True)
    assert {k: len(v) for k, v in every.items()} == {"1-1": 1, "2-1": 1, "campaign": 1}  # nothing deleted or doubled
    (campaign_run,) = every["campaign"]
    names = {a.path for a in c.list_artifacts(campaign_run.info.run_id)}
    assert {"results.csv", "manifest.json", "provenance.json", "report.html"} <= names
    got = c.download_artifacts(campaign_run.info.run_id, "report.html", str(tmp_path / "dl"))
    assert Path(got).read_bytes() == (out / "report.html").read_bytes()

    # what changed is brought up to date: a run missing in MLflow, a run exported from another record
    c.delete_run(runs_by_key(c, eid)["2-1"][0].info.run_id)
    c.set_tag(run1.info.run_id, "sparkdl.fingerprint", "an older export")
    rc, third, err = export(capsys, str(out), "--tracking-uri", mlflow_server)
    assert rc == 0 and "1 run(s) added, 1 updated, 0 unchanged" in third, third + err
    check_equals_results(c, eid, out)

    # the UI lists the campaign run with its 2 runs nested (collapsed, as MLflow shows a sweep); a run's page names
    # its parent and charts its per-epoch accuracy (screenshots kept in the test's folder)
    assert CHROMIUM.exists(), "Debian's chromium is needed: apt-get install -y chromium"
    url = f"{mlflow_server}/#/experiments/{eid}/runs?workflowType=machine_learning"
    browse(url, tmp_path / "mlflow-experiment.png", tmp_path, ("lenet-mlflow", "campaign", "3 matching runs"))
    run1 = runs_by_key(c, eid)["1-1"][0]
    browse(f"{mlflow_server}/#/experiments/{eid}/runs/{run1.info.run_id}", tmp_path / "mlflow-run.png", tmp_path,
           ("run 1-1", "Parent run", "campaign"))
    # the run's metrics page lists its model metrics (its charts draw lazily in headless Chromium, so the per-epoch
    # accuracy itself is checked through the API: check_equals_results reads its history)
    browse(f"{mlflow_server}/#/experiments/{eid}/runs/{run1.info.run_id}/model-metrics", tmp_path / "mlflow-metrics.png",
           tmp_path, ("run 1-1", "Model metrics"))


def browse(url: str, shot: Path, tmp_path: Path, want: tuple[str, ...], tries: int = 3) -> str:
    """Load ``url`` in headless chromium with its scripts run, save a screenshot, return the page's text once it
    shows every text of ``want``: the charts draw lazily, and on a loaded machine a visit can end before they did,
    so up to ``tries`` visits (later ones with the scripts cached)."""
    from PIL import Image

    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1400,1000",
           "--virtual-time-budget=30000", f"--screenshot={shot}", "--dump-dom", url]
    missing: list[str] = []
    page = ""
    for _ in range(tries):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        assert shot.is_file(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr[-500:]}"
        page = " ".join(html.unescape(re.sub(r"<[^>]*>", "", done.stdout)).split())  # React splits text with comments
        missing = [text for text in want if text not in page]
        if not missing:
            break
    assert not missing, f"{missing} not on the page after {tries} visits ({shot}): {page[:3000]}"
    with Image.open(shot) as im:
        colours = len(im.convert("RGB").getcolors(maxcolors=1 << 24) or ())
    assert colours > 50, f"{shot} is nearly blank ({colours} colours)"
    return page


def test_an_ingested_search_with_a_pruned_trial_exports_after_the_fact(tmp_path: Path, mlflow_tracker: Tracker,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    mlflow_server = mlflow_tracker.wait()
    folder = scripted_campaign(tmp_path / "a" / "search")
    for path in folder.path.glob("campaign.sqlite*"):
        path.unlink()  # results.csv and the logs only, as a campaign copied from elsewhere
    rc, done, err = export(capsys, str(folder.path), "--tracking-uri", mlflow_server)
    assert rc == 0, err
    assert "'search'" in done and "4 run(s) added" in done
    c = client(mlflow_server)
    eid = c.get_experiment_by_name("search").experiment_id
    check_equals_results(c, eid, folder.path)
    # an export cut short (the tracker went away between its calls) is replaced; nothing is doubled
    c.create_run(eid, run_name="run 1-1", tags={"sparkdl.kind": "run", "sparkdl.run_key": "1-1"})
    rc, again, err = export(capsys, str(folder.path), "--tracking-uri", mlflow_server)
    assert rc == 0 and "0 run(s) added, 0 updated, 4 unchanged" in again, again + err
    assert len(runs_by_key(c, eid)["1-1"]) == 1 and runs_by_key(c, eid)["1-1"][0].data.tags["sparkdl.export"]
    pruned = runs_by_key(c, eid)["4-1"][0]
    assert pruned.info.status == "KILLED" and pruned.data.tags["status"] == "pruned"
    # runs exported before they were nested, or whose campaign run was deleted, are nested under a new one
    old_parent = runs_by_key(c, eid)["campaign"][0].info.run_id
    c.delete_tag(runs_by_key(c, eid)["2-1"][0].info.run_id, "mlflow.parentRunId")
    c.delete_run(old_parent)
    rc, again, err = export(capsys, str(folder.path), "--tracking-uri", mlflow_server)
    assert rc == 0 and "0 run(s) added, 0 updated, 4 unchanged" in again, again + err
    check_equals_results(c, eid, folder.path)
    assert runs_by_key(c, eid)["campaign"][0].info.run_id != old_parent
    # MLflow's UI shows it so: the campaign run alone at the top (its runs nested under it), a run naming its parent
    assert CHROMIUM.exists(), "Debian's chromium is needed: apt-get install -y chromium"
    page = browse(f"{mlflow_server}/#/experiments/{eid}/runs?workflowType=machine_learning",
                  tmp_path / "mlflow-nested.png", tmp_path, ("campaign", "5 matching runs"))
    assert "run 1-1" not in page  # collapsed under the campaign run
    run1 = runs_by_key(c, eid)["1-1"][0].info.run_id
    browse(f"{mlflow_server}/#/experiments/{eid}/runs/{run1}", tmp_path / "mlflow-child.png", tmp_path,
           ("run 1-1", "Parent run", "campaign"))
    assert pruned.data.tags["reason"] == "pruned at epoch 2: below the median"
    # another campaign of the same folder name gets an experiment of its own; the first is left alone
    other = scripted_campaign(tmp_path / "b" / "search")
    rc, again, err = export(capsys, str(other.path), "--tracking-uri", mlflow_server)
    assert rc == 0, err
    assert "'search-" in again and "4 run(s) added" in again
    assert {k: len(v) for k, v in runs_by_key(c, eid).items()} == {"1-1": 1, "2-1": 1, "3-1": 1, "4-1": 1,
                                                                   "campaign": 1}
    rc, _, err = export(capsys, str(folder.path), "--tracking-uri", f"http://127.0.0.1:{free_port()}")
    assert rc == 4 and "does not answer" in err and len(err.strip().splitlines()) == 1


def test_a_search_exports_its_trials_live_pruned_ones_as_killed(tmp_path: Path, mlflow_tracker: Tracker) -> None:
    """optimize.search's session (fake Spark: tests/test_optimize_fakes.py) with ``--mlflow``: every trial live."""
    from harness.command import SubmitOptions
    from optimize.pareto import parse_objectives
    from optimize.search.pruning import make_rules
    from optimize.search.space import load_space
    from optimize.search.study import MultiObjectiveSearch, SearchConfig, open_study
    from optimize.session import ClusterOptions, JobConfig, open_session
    from tests.test_optimize_fakes import FakeBackend, WatchingFakeRunner, fake_env
    from tests.test_optimize_search import SPACE, curve, write

    uri = mlflow_tracker.wait()
    out = tmp_path / "search-live"
    config = SearchConfig(load_space(write(tmp_path, SPACE)), JobConfig(model="lenet", epochs=3),
                          parse_objectives("wall_clock_s:min,accuracy:max"), seed=3, startup_trials=3)
    notes: list[str] = []
    with open_session(out, {"test": "mlflow"}, SubmitOptions("spark://x:1"), ClusterOptions(mlflow=uri),
                      [config.job.spec(1, 1)], False, notes.append, backend=FakeBackend(),
                      runner=WatchingFakeRunner(curve), env=fake_env()) as session:
        MultiObjectiveSearch(session, open_study(out, config), config, make_rules("median", None)).run(300)
    assert not [n for n in notes if n.startswith("note:")], notes
    c = client(uri)
    experiment = c.get_experiment_by_name("search-live")
    check_equals_results(c, experiment.experiment_id, out)
    statuses = {r.data.tags["status"]: r.info.status for r in c.search_runs([experiment.experiment_id])
                if r.data.tags.get("sparkdl.kind") == "run"}
    assert statuses == {"ok": "FINISHED", "pruned": "KILLED"}, statuses


def test_a_programs_run_is_nested_under_the_campaign_run_in_a_tracker_and_in_the_campaigns_own_store(
        tmp_path: Path, mlflow_tracker: Tracker) -> None:
    """``results = "mlflow"``: the run the harness makes for a program (harness.mlflow_run) is nested from its start;
    with --mlflow the live export fills it in place and nests the other runs under the same campaign run."""
    from dataclasses import replace

    from harness.mlflow_export import LiveExport, read_campaign
    from harness.mlflow_run import ProgramRuns, local_uri

    uri = mlflow_tracker.wait()
    folder = scripted_campaign(tmp_path / "program")
    records, meta = read_campaign(folder)
    tracker = LiveExport(uri, folder)
    runs = ProgramRuns(folder, tracker, meta)
    made = runs.open("1-1", 1)
    c = client(uri)
    parent_id = c.get_run(made.run_id).data.tags["mlflow.parentRunId"]
    assert c.get_run(parent_id).data.tags["sparkdl.kind"] == "campaign"
    assert runs.open("1-1", 2).run_id != made.run_id  # a second attempt: another run, under the same parent
    c.log_metric(made.run_id, "loss", 0.25)  # what the program logs, as a script does into MLFLOW_RUN_ID
    runs.end(made, True)
    mine = [replace(r, metrics={**r.metrics, "mlflow_run_id": made.run_id}) if r.key == "1-1" else r for r in records]
    assert tracker.sync(mine, meta)
    eid = c.get_experiment_by_name("program").experiment_id
    by_key = runs_by_key(c, eid)
    assert {k: len(v) for k, v in by_key.items()} == {"1-1": 1, "2-1": 1, "3-1": 1, "4-1": 1, "campaign": 1}
    assert by_key["campaign"][0].info.run_id == parent_id and by_key["1-1"][0].info.run_id == made.run_id
    assert {r[0].data.tags["mlflow.parentRunId"] for k, r in by_key.items() if k != "campaign"} == {parent_id}
    assert by_key["1-1"][0].data.metrics["loss"] == 0.25 and by_key["1-1"][0].data.tags["status"] == "ok"

    # without --mlflow: the campaign's own SQLite store, one finished campaign run as the parent of every attempt
    local = ProgramRuns(folder, None, meta)
    first, second = local.open("1-1", 1), local.open("2-1", 1)
    store = client(local_uri(folder))
    (campaign,) = [r for r in store.search_runs([first.experiment_id]) if r.data.tags.get("sparkdl.kind") == "campaign"]
    assert campaign.info.status == "FINISHED" and first.experiment_name == "program"
    assert {store.get_run(r.run_id).data.tags["mlflow.parentRunId"] for r in (first, second)} == {campaign.info.run_id}
