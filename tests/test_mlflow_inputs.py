"""Hostile inputs to the MLflow export: URIs checked before anything is sent, results tables read by the one reader,
one export per campaign at a time, SQLite stores in the campaign folder, credentials never echoed.

Exports go to real MLflow stores (a SQLite file read back through MLflow's own client); the HTTP forms are
refused before any connection is tried, so no server is needed here (tests/test_mlflow_server.py has one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.mlflow_export import (ExportBusyError, LiveExport, MlflowExportError, MlflowExporter, export_lock,
                                   read_campaign)
from sparkdl.campaign import CampaignDir
from sparkdl.options import mlflow_uri
from sparkdl.tracking import TrackingURIError, tracking_uri
from tests.test_mlflow_export import scripted_campaign

ROOT = Path(__file__).resolve().parent.parent
QUIET_ENV = {"MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}

REFUSED = {
    "http://[::1": "not a URI",
    "ftp://host/path": "scheme 'ftp'",
    "127.0.0.1:5000": "did you mean http://127.0.0.1:5000",
    "localhost:5000": "did you mean http://localhost:5000",
    "file://otherhost/x": "on this machine",
    "file://localhost//": "one slash before the folder",  # found by bench/fuzz.py: accepted as a store at /
    "file:/#": "no ?query",  # found by bench/fuzz.py: an empty fragment passed
    "file://localhost/?": "no ?query",
    "sqlite:///m.db?": "no ?query",
    "sqlite://": "in-memory",
    "sqlite:///:memory:": "in-memory",
    "sqlite:relative.db": "sqlite:///FILE.db",
    "sqlite://host/x.db": "sqlite:///FILE.db",
    "http://127.0.0.1:99999": "not a URI",
    "http://127.0.0.1:0": "port 0",
    "http://": "no host",
    "http://exa mple:5000": "space",
    "http://127.0.0.1:5000/\x1b[2J": "control character",
    "mlruns": "no scheme",
    "http://127.0.0.1:5000/?x=1": "no ?query",
    "postgresql://db/mlflow": "scheme 'postgresql'",
}


@pytest.mark.parametrize("uri", sorted(REFUSED))
def test_a_uri_of_no_accepted_form_is_refused_naming_the_forms(uri: str) -> None:
    with pytest.raises(TrackingURIError) as caught:
        tracking_uri(uri, Path("/tmp/campaign"))
    message = str(caught.value)
    assert REFUSED[uri] in message
    assert "accepted: http://HOST[:PORT][/PATH]" in message and "sqlite:///FILE.db" in message
    assert "\n" not in message and "\x1b" not in message


def test_a_password_in_the_uri_is_refused_and_never_echoed() -> None:
    for uri in ("http://alice:s3cret-pw@127.0.0.1:5000", "https://alice:s3cret-pw@mlflow.example.org/",
                "alice:s3cret-pw@127.0.0.1:5000", "file://alice:s3cret-pw@:2/x"):  # the last found by bench/fuzz.py
        with pytest.raises(TrackingURIError) as caught:
            tracking_uri(uri)
        assert "s3cret-pw" not in str(caught.value) and "alice" not in str(caught.value)
    with pytest.raises(TrackingURIError, match="MLFLOW_TRACKING_PASSWORD"):
        tracking_uri("http://alice:s3cret-pw@127.0.0.1:5000")


def test_accepted_uris_are_the_values_given_with_store_paths_made_absolute(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    assert tracking_uri(" http://127.0.0.1:5000 ") == "http://127.0.0.1:5000"
    assert tracking_uri("https://mlflow.example.org/prefix/") == "https://mlflow.example.org/prefix"
    assert tracking_uri("http://[::1]:5000") == "http://[::1]:5000"
    assert tracking_uri("sqlite:///mlflow.db", camp) == f"sqlite:///{camp.absolute()}/mlflow.db"
    assert tracking_uri("sqlite:///sub/m.db", camp) == f"sqlite:///{camp.absolute()}/sub/m.db"
    assert tracking_uri(f"sqlite:///{tmp_path}/abs.db", camp) == f"sqlite:///{tmp_path}/abs.db"
    assert tracking_uri("sqlite:///mlflow.db") == "sqlite:///mlflow.db"  # no campaign yet: checked, left as written
    assert tracking_uri(f"file://{tmp_path}/store", camp) == f"file://{tmp_path}/store"
    assert tracking_uri("file:store", camp) == f"file://{camp.absolute()}/store"
    assert tracking_uri("file:@", camp) == f"file://{camp.absolute()}/@"  # a folder named @, not a password


def test_the_option_checks_the_uri_and_the_environments() -> None:
    with pytest.raises(TrackingURIError, match="did you mean"):
        mlflow_uri("127.0.0.1:5000", {})
    with pytest.raises(TrackingURIError, match="scheme 'ftp'"):
        mlflow_uri("", {"MLFLOW_TRACKING_URI": "ftp://x/y"})


def _run(module: str, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **QUIET_ENV, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=600)


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory: pytest.TempPathFactory) -> CampaignDir:
    return scripted_campaign(tmp_path_factory.mktemp("mlflow-inputs") / "camp")


@pytest.mark.parametrize("uri", ["http://[::1", "ftp://x/y", "127.0.0.1:5000", "file://h/x", "sqlite://",
                                 "http://u:pw-42@127.0.0.1:9"])
def test_the_export_refuses_a_bad_uri_in_one_line_and_leaves_nothing(campaign_dir: CampaignDir, tmp_path: Path,
                                                                      uri: str) -> None:
    before = sorted(p.name for p in campaign_dir.path.iterdir())
    done = _run("harness.mlflow", str(campaign_dir.path), "--tracking-uri", uri, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "tracking URI" in done.stderr
    assert "pw-42" not in done.stderr + done.stdout
    assert sorted(p.name for p in campaign_dir.path.iterdir()) == before and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("size", ["inf", "nan", "-1", "0", "1e400", "9" * 1000])
def test_a_size_cap_that_is_not_a_size_is_refused(campaign_dir: CampaignDir, tmp_path: Path, size: str) -> None:
    done = _run("harness.mlflow", str(campaign_dir.path), "--tracking-uri", "sqlite:///m.db",
                f"--max-artifact-mb={size}", cwd=tmp_path)
    assert done.returncode == 2 and "--max-artifact-mb" in done.stderr and "Traceback" not in done.stderr, done.stderr
    with pytest.raises(MlflowExportError, match="max-artifact-mb"):
        MlflowExporter("sqlite:///m.db", campaign_dir, max_artifact_mb=float(size) if len(size) < 10 else float("inf"),
                       client=object())


def test_a_dry_run_checks_the_uri(tmp_path: Path) -> None:
    design = tmp_path / "design.csv"
    design.write_text("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
                      "1,lenet,1,1,1,1,0.05,32\n")
    args = [str(design), "--out", str(tmp_path / "out"), "--state-dir", str(tmp_path / "cluster"), "--dry-run"]
    bad = _run("harness.submit", *args, "--mlflow", "127.0.0.1:5000", cwd=tmp_path)
    assert bad.returncode == 2 and "did you mean http://127.0.0.1:5000" in bad.stderr, bad.stderr
    good = _run("harness.submit", *args, "--mlflow", "http://127.0.0.1:5000", cwd=tmp_path)
    assert good.returncode == 0 and "spark-submit" in good.stdout, good.stderr
    assert not (tmp_path / "out").exists()


def _client(uri: str):  # noqa: ANN202 - MLflow's client
    import mlflow

    return mlflow.MlflowClient(tracking_uri=uri)


def _runs(uri: str, experiment: str) -> list:
    client = _client(uri)
    found = client.get_experiment_by_name(experiment)
    return client.search_runs([found.experiment_id]) if found else []


def test_a_relative_sqlite_store_is_in_the_campaign_folder_and_nothing_lands_in_the_current_one(
        campaign_dir: CampaignDir, tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    import shutil

    shutil.copytree(campaign_dir.path, camp)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    done = _run("harness.mlflow", str(camp), "--tracking-uri", "sqlite:///mlflow.db", cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert list(cwd.iterdir()) == []  # no ./mlruns, no ./mlflow.db
    uri = f"sqlite:///{camp.absolute()}/mlflow.db"
    runs = _runs(uri, "camp")
    assert sorted(r.data.tags.get("sparkdl.run_key", "campaign") for r in runs) == ["1-1", "2-1", "3-1", "4-1",
                                                                                     "campaign"]
    one = next(r for r in runs if r.data.tags.get("sparkdl.run_key") == "1-1")
    assert one.info.artifact_uri.startswith((camp.absolute() / "mlartifacts").as_uri())
    assert (camp / "mlartifacts").is_dir() and any((camp / "mlartifacts").rglob("1-1.out"))


def _table(folder: Path, body: bytes) -> CampaignDir:
    folder.mkdir()
    (folder / "results.csv").write_bytes(body)
    return CampaignDir(folder)


HEADER = b"run,replicate,nodes,executors,executor_cores,model,status,wall_clock_s,accuracy\n"


@pytest.mark.parametrize("body, named", [
    (HEADER + b"1,1,1,1,1,lenet,ok,12.5,0.9\xff\n", "not UTF-8"),
    (HEADER + b"1,1,1,1,1,lenet,ok,12.5," + b"9" * (128 << 10) + b"\n", "characters"),
    (HEADER + b"1,1,1,1,1,lenet,ok,12.5,0.9\n1,1,1,1,1,lenet,ok,13.0,0.8\n", "run 1-1 is also on line 2"),
    (HEADER + b"1,1,1,1,1,lenet,ok,nan,0.9\n", "wall_clock_s 'nan' is not a finite number"),
    (HEADER + b"1,1,1,1,1,lenet,ok,12.5,inf\n", "accuracy 'inf'"),
    (HEADER + b"1" + b"0" * 400 + b",1,1,1,1,lenet,ok,12.5,0.9\n", "not a whole number"),
    (HEADER + b"1,1,1,1,1,lenet,fine,12.5,0.9\n", "status 'fine'"),
    (HEADER + b"1,1,1,1,lenet,ok,12.5,0.9\n", "fields for"),
    (b"a,b\n1,2\n", "no column run"),
])
def test_a_results_table_is_read_by_the_one_reader_and_checked(tmp_path: Path, body: bytes, named: str) -> None:
    folder = _table(tmp_path / "camp", body)
    with pytest.raises(MlflowExportError) as caught:
        read_campaign(folder)
    assert named in str(caught.value) and "results.csv" in str(caught.value)


def test_a_fifo_results_table_is_refused_without_waiting(tmp_path: Path) -> None:
    folder = tmp_path / "camp"
    folder.mkdir()
    os.mkfifo(folder / "results.csv")
    with pytest.raises(MlflowExportError, match="FIFO"):
        read_campaign(CampaignDir(folder))


def test_a_good_results_table_keeps_its_values(tmp_path: Path) -> None:
    folder = _table(tmp_path / "camp", HEADER + b"1,1,1,1,1,lenet,ok,12.5,0.9\n2,1,1,1,1,lenet,failed,,\n")
    records, meta = read_campaign(folder)
    assert meta == {} and [(r.key, str(r.status), r.wall_clock_s, r.accuracy) for r in records] == [
        ("1-1", "ok", 12.5, 0.9), ("2-1", "failed", None, None)]


def test_a_second_export_of_the_same_campaign_is_refused_naming_the_first(campaign_dir: CampaignDir,
                                                                          tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom harness.mlflow_export import export_lock\n"
                               "from sparkdl.campaign import CampaignDir\n"
                               "with export_lock(CampaignDir(sys.argv[1])):\n    print('held', flush=True)\n"
                               "    time.sleep(120)\n", str(campaign_dir.path)],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert holder.stdout.readline().strip() == "held"
        done = _run("harness.mlflow", str(campaign_dir.path), "--tracking-uri", f"sqlite:///{tmp_path}/m.db",
                    cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"pid {holder.pid}" in done.stderr and "another MLflow export" in done.stderr
        with pytest.raises(ExportBusyError):
            with export_lock(campaign_dir):
                pass
        notes: list[str] = []  # a campaign's live export only pauses
        live = LiveExport(f"sqlite:///{tmp_path}/m.db", campaign_dir, notes.append)
        assert live.sync(*read_campaign(campaign_dir)) is False and "another MLflow export" in notes[0]
    finally:
        holder.kill()
        holder.wait()
    with export_lock(campaign_dir):  # the lock died with its process
        pass


def test_two_exports_at_once_make_each_run_once(campaign_dir: CampaignDir, tmp_path: Path) -> None:
    import shutil

    camp = tmp_path / "camp"
    shutil.copytree(campaign_dir.path, camp)
    uri = f"sqlite:///{tmp_path}/m.db"
    env = {**os.environ, **QUIET_ENV, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "harness.mlflow", str(camp), "--tracking-uri", uri]
    both = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
            for _ in range(2)]
    outcomes = [(p.wait(timeout=600), p.stderr.read()) for p in both]
    for code, err in outcomes:
        assert code == 0 or (code == 2 and "another MLflow export" in err), err
    if any(code == 2 for code, _ in outcomes):  # the refused one, run again, adds nothing
        again = _run("harness.mlflow", str(camp), "--tracking-uri", uri, cwd=tmp_path)
        assert again.returncode == 0 and "0 run(s) added" in again.stdout, again.stderr
    keys = [r.data.tags.get("sparkdl.run_key", "campaign") for r in _runs(uri, "camp")]
    assert sorted(keys) == ["1-1", "2-1", "3-1", "4-1", "campaign"]


def test_the_export_lock_takes_no_file(tmp_path: Path) -> None:
    folder = CampaignDir(tmp_path)
    with export_lock(folder):
        assert [p.name for p in tmp_path.iterdir()] == ["mlflow-export.owner.json"]
    assert list(tmp_path.iterdir()) == []


def test_the_dispatcher_refuses_an_unknown_command_in_one_short_escaped_line(tmp_path: Path) -> None:
    for name in ("x" * 5000, "ab\x1b[31mc", "run\nforged"):  # found by bench/fuzz.py: a 5,000-character echo
        done = _run("sparkdl", name, cwd=tmp_path)
        assert done.returncode == 2 and "no command" in done.stderr, done.stderr
        assert len(done.stderr) < 400 and "\x1b" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
