"""The campaign loop's logic with a scripted runner and backend (the real path: test_submit_cluster.py).

The runner writes real BigDL logs (fixtures from real jobs) as if the job had produced them.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cluster.runtime import discover
from harness.command import SubmitOptions
from harness.runner import Completed
from sparkdl.runspec import RunSpec
from harness.campaign import Campaign, CampaignSettings
from sparkdl.campaign import CampaignDir
from harness.store import ResultStore

FIXTURES = Path(__file__).parent / "fixtures" / "logs"


def spec(run: int, **kw) -> RunSpec:
    base = dict(run=run, replicate=1, nodes=1, executors=1, executor_cores=1, epochs=2, learning_rate=0.1,
                batch_size=64, model="lenet")
    base.update(kw)
    return RunSpec(**base)


@dataclass
class ScriptedRunner:
    """Plays one fixture log per call, in order."""

    logs: list[str]
    calls: list[list[str]] = field(default_factory=list)

    def run(self, argv, env, out: Path, err: Path, timeout, on_start=None) -> Completed:
        name = self.logs[len(self.calls)]
        self.calls.append(argv)
        if on_start:
            on_start(999_999_999)  # no such pid: resume must not kill anything
        out.write_bytes(gzip.decompress((FIXTURES / f"{name}.out.gz").read_bytes()))
        err.write_bytes((FIXTURES / f"{name}.err").read_bytes())
        ok = name not in ("lenet-killed", "birnn-batch65", "bad-data-dir")
        return Completed(tuple(argv), 0 if ok else 1, 12.5)


@dataclass
class RecordingBackend:
    master_url: str = "spark://127.0.0.1:7077"
    prepared: list[int] = field(default_factory=list)

    def open(self, specs, runtime="bigdl"): ...
    def check(self, spec): return []
    def prepare(self, spec): self.prepared.append(spec.nodes)
    def describe(self): return {"backend": "test"}
    def find_app(self, name): return None
    def close(self): ...


def campaign(tmp_path: Path, logs: list[str], retries: int = 1) -> tuple[Campaign, ScriptedRunner, RecordingBackend]:
    runner, backend = ScriptedRunner(logs), RecordingBackend()
    settings = CampaignSettings(options=SubmitOptions(master_url="x"), retries=retries)
    folder = CampaignDir(tmp_path)
    return Campaign(folder, settings, backend, discover(), runner, ResultStore(folder)), runner, backend


def test_good_runs_are_recorded_with_figures_from_the_log(tmp_path):
    c, runner, backend = campaign(tmp_path, ["lenet-4000-2ep"])
    summary = c.run([spec(1, nodes=2)])
    (r,) = summary.records
    assert (r.status, r.accuracy, r.outcome.epochs_completed, r.outcome.learning_rate_used, r.outcome.batch_size_used) == ("ok", 0.877, 2, 0.1, 64)
    assert r.wall_clock_s == pytest.approx(17.346180029) and r.elapsed_s == 12.5 and r.execution.attempts == 1
    assert backend.prepared == [2]
    assert (tmp_path / "logs" / "1-1.out").exists() and (tmp_path / "results.csv").read_text().count("\n") == 2


def test_infrastructure_failure_is_retried_and_logs_kept(tmp_path):
    c, runner, _ = campaign(tmp_path, ["lenet-killed", "lenet-4000-2ep"])
    (r,) = c.run([spec(1)]).records
    assert r.status == "ok" and r.execution.attempts == 2 and len(runner.calls) == 2
    assert (tmp_path / "logs" / "1-1.attempt1.out").exists()
    rows = list(c.store.db.execute("SELECT attempt, status, failure_kind FROM attempts ORDER BY attempt"))
    assert rows == [(1, "incomplete", "infrastructure"), (2, "ok", None)]


def test_retries_are_capped(tmp_path):
    c, runner, _ = campaign(tmp_path, ["lenet-killed", "lenet-killed"], retries=1)
    (r,) = c.run([spec(1)]).records
    assert r.status == "incomplete" and r.outcome.failure_kind == "infrastructure" and len(runner.calls) == 2


def test_job_errors_are_not_retried_and_the_campaign_goes_on(tmp_path):
    c, runner, _ = campaign(tmp_path, ["birnn-batch65", "lenet-4000-2ep"])
    results = {r.run: r for r in c.run([spec(1, batch_size=65), spec(2)]).records}
    assert results[1].status == "failed" and results[1].outcome.failure_kind == "job"
    assert "65 should be divided" in results[1].reason and results[1].execution.exit_code == 1
    assert results[2].status == "ok" and len(runner.calls) == 2


def test_a_job_that_ran_other_values_than_asked_is_failed(tmp_path):
    # Marinos 2021's optimizer ran every rate above 1.0 at 1.024; we read the rate back from the log.
    c, _, _ = campaign(tmp_path, ["lenet-lr2.5-3ep"])
    (r,) = c.run([spec(1, learning_rate=9.011, epochs=3)]).records
    assert r.status == "failed" and "learning rate 2.5 (asked 9.011)" in r.reason


def test_epochs_short_of_the_design_are_not_ok(tmp_path):
    c, _, _ = campaign(tmp_path, ["lenet-4000-2ep"])
    (r,) = c.run([spec(1, epochs=3)]).records
    assert r.status != "ok"


def test_resume_skips_finished_cells_and_reruns_the_one_in_flight(tmp_path):
    c, runner, _ = campaign(tmp_path, ["lenet-4000-2ep"])
    c.run([spec(1)])
    # simulate a harness killed while run 2 was in flight
    c.store.begin_attempt(spec(2), "2026-01-01T00:00:00+00:00", ["spark-submit"])
    (tmp_path / "logs" / "2-1.out").write_text("half a log")
    c2, runner2, _ = campaign(tmp_path, ["lenet-4000-2ep"])
    c2.recover_interrupted()  # open_campaign does this, with the folder's lock held
    summary = c2.run([spec(1), spec(2)])
    assert summary.skipped == 1 and len(runner2.calls) == 1
    assert sorted((r.run, r.replicate) for r in summary.records) == [(1, 1), (2, 1)]
    assert (tmp_path / "logs" / "2-1.attempt1.out").read_text() == "half a log"
    states = list(c2.store.db.execute("SELECT attempt, status FROM attempts WHERE run=2 ORDER BY attempt"))
    assert states == [(1, "interrupted"), (2, "ok")]
    assert [r.execution.attempts for r in summary.records if r.run == 2] == [2]


def test_a_run_that_survived_a_lost_worker_is_not_a_valid_measurement(tmp_path):
    # Real log: a worker was SIGKILLed mid-training; BigDL retried and finished "ok" on fewer cores.
    c, runner, _ = campaign(tmp_path, ["lenet-worker-killed", "lenet-worker-killed"])
    (r,) = c.run([spec(1, nodes=2, epochs=3, learning_rate=0.05)]).records
    assert len(runner.calls) == 2  # infrastructure: retried once
    assert r.status == "failed" and r.outcome.failure_kind == "infrastructure"
    assert "Lost executor 0 on 127.0.0.1: worker lost" in r.reason and r.accuracy is not None
