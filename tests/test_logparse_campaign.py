"""python -m logparse on a campaign folder: a job that reports JSON gets its recorded status, not "no BigDL line".

The folders are written with the harness's own writers (sparkdl.campaign.CampaignDir, Manifest, RunRecord) around
real logs: a TorchDistributor run that failed on a gloo timeout (tests/fixtures/frameworks) and a real BigDL run.
tests/test_jobspec_real.py checks the same on a campaign the harness really ran (slow).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from harness.command import METRICS_FILE
from sparkdl.runspec import RunSpec
from sparkdl.campaign import CampaignDir, Execution, Manifest, Outcome, RunRecord
from logparse import Status, campaign, cli
from tests.test_logparse import FIXTURES

FRAMEWORKS = FIXTURES.parent / "frameworks"


def test_logparse_knows_the_campaign_layout_as_the_harness_declares_it():
    assert (campaign.MANIFEST, campaign.RESULTS, campaign.LOGS, campaign.RUNS) == (
        CampaignDir.MANIFEST, CampaignDir.RESULTS, CampaignDir.LOGS, CampaignDir.RUNS)
    assert campaign.METRICS == METRICS_FILE


def run(*argv: str) -> tuple[int, list[dict[str, object]], str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(list(argv)), out, err)
    return code, json.loads(out.getvalue()) if out.getvalue().startswith("[") else out.getvalue(), err.getvalue()


def make_campaign(root: Path, results: str) -> tuple[CampaignDir, list[RunRecord]]:
    """Run 1: a torch job (json), recorded failed with the figures of its one validated epoch and a reason of
    the campaign's own wording (so a test can tell the record from the log); run 2: a BigDL job and its real log."""
    folder = CampaignDir(root).create()
    out1, err1 = folder.log_paths("1-1")
    shutil.copy(FRAMEWORKS / "gloo-timeout.out", out1)
    shutil.copy(FRAMEWORKS / "gloo-timeout.err", err1)
    out2, _ = folder.log_paths("2-1")
    out2.write_bytes(__import__("gzip").decompress((FIXTURES / "lenet-lr2.5-3ep.out.gz").read_bytes()))
    spec1 = RunSpec(1, 1, 1, 1, 1, params=(("model", "torch-lenet"), ("epochs", 40)))
    spec2 = RunSpec(2, 1, 1, 1, 1, params=(("model", "lenet"), ("epochs", 3)))
    json_outcome = Outcome(Status.FAILED, "Timed out waiting 15000ms for recv operation to complete (recorded)",
                           "infrastructure", wall_clock_s=0.9707, accuracy=0.589, app_id="local-1764150000000")
    ex = Execution(1, "2026-11-26T10:00:00+00:00", "2026-11-26T10:01:00+00:00", 60.0, 1, "logs/1-1.out")
    ex2 = Execution(1, "2026-11-26T10:01:00+00:00", "2026-11-26T10:02:00+00:00", 30.0, 0, "logs/2-1.out")
    import logparse

    records = [RunRecord(spec1, json_outcome, ex), RunRecord(spec2, Outcome.from_log(logparse.parse(out2)), ex2)]
    folder.write_results(records)
    folder.write_manifest(Manifest(("model", "epochs"), results=results))
    return folder, records


def test_a_json_job_reports_its_record_and_a_bigdl_job_its_log(tmp_path):
    folder, records = make_campaign(tmp_path / "c", "mixed")
    code, rows, err = run("--format", "json", str(folder.path))
    by_log = {Path(r["path"]).name: r for r in rows}
    torch, bigdl = by_log["1-1.out"], by_log["2-1.out"]
    assert (torch["status"], torch["reason"], torch["failure_kind"]) == (
        "failed", records[0].reason, "infrastructure")
    assert (torch["wall_clock_s"], torch["accuracy"], torch["app_id"]) == (0.9707, 0.589, "local-1764150000000")
    assert "recorded" in torch["notes"] and "no BigDL training line" not in json.dumps(rows)
    assert bigdl["status"] == "ok" and bigdl["epochs_completed"] == 3 and "recorded" not in bigdl["notes"]
    assert code == 3 and err == ""
    # per epoch: the json job's own sparkdl-epoch lines
    code, rows, _ = run("--per-epoch", "--format", "json", str(folder.logs / "1-1.out"))
    assert rows == [{"path": str(folder.logs / "1-1.out"), "epoch": 1, "wall_clock_s": 0.9707,
                     "accuracy": 0.5889999866485596, "epochs": 40, "correct": 589, "count": 1000,
                     "loss": 2.187370538711548, "throughput": 4315.02, "epoch_s": 0.9707, "processes": 2}]


def test_the_same_log_outside_a_json_campaign_is_read_as_a_log(tmp_path):
    folder, _ = make_campaign(tmp_path / "c", "bigdl")
    code, rows, _ = run("--format", "json", str(folder.logs / "1-1.out"))
    assert rows[0]["reason"] == "Timed out waiting 15000ms for recv operation to complete"  # the log's own marker
    assert "recorded" not in rows[0]["notes"]


def test_a_manifest_from_before_the_field_falls_back_on_the_jobs_figures_file(tmp_path):
    folder, records = make_campaign(tmp_path / "c", "")
    data = json.loads(folder.manifest_path.read_text())
    data.pop("results")
    folder.manifest_path.write_text(json.dumps(data))
    code, rows, _ = run("--format", "json", str(folder.logs / "1-1.out"))
    assert "recorded" not in rows[0]["notes"]  # no figures file: nothing says it was a json job
    (folder.run_dir("1-1") / METRICS_FILE).write_text('{"accuracy": 0.589, "wall_clock_s": 0.9707}')
    code, rows, _ = run("--format", "json", str(folder.logs / "1-1.out"))
    assert rows[0]["reason"] == records[0].reason and "recorded" in rows[0]["notes"]
    # a log the campaign did not record (an earlier attempt) is read as it is
    shutil.copy(folder.logs / "1-1.out", folder.logs / "1-1.attempt1.out")
    code, rows, _ = run("--format", "json", str(folder.logs / "1-1.attempt1.out"))
    assert "recorded" not in rows[0]["notes"]


def test_csv_output_of_a_json_campaign_keeps_one_row_per_log(tmp_path):
    folder, _ = make_campaign(tmp_path / "c", "json")
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(cli.parse_args(["--format", "csv", str(folder.path)]), out, err)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert code == 3 and [Path(r["path"]).name for r in rows] == ["1-1.out", "2-1.out"]
    assert rows[0]["status"] == "failed" and rows[1]["status"] == "ok"


def test_the_manifest_says_where_a_plans_runs_get_their_figures():
    """harness.campaign.plan_results: what open_campaign writes as the manifest's ``results``."""
    from harness.campaign import CampaignPlan, CampaignSettings, plan_results
    from harness.command import SubmitOptions

    def plan(models: list[str]) -> CampaignPlan:
        shapes = tuple(RunSpec(i, 1, 1, 1, 1, params=(("model", m), ("epochs", 1))) for i, m in enumerate(models, 1))
        return CampaignPlan("x", shapes, CampaignSettings(SubmitOptions("spark://127.0.0.1:7077")), Manifest(("model",)), {})

    assert plan_results(plan(["lenet", "birnn"])) == "bigdl"
    assert plan_results(plan(["torch-lenet"])) == "json"
    assert plan_results(plan(["lenet", "torch-lenet"])) == "mixed"
    assert Manifest.from_json(Manifest(("a",), results="json").to_json()).results == "json"
    assert Manifest.from_json('{"factors": ["a"]}').results == ""  # written before the field
