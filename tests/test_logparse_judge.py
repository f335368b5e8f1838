"""logparse.judgement: the run-level rules the harness used to apply itself (timeout, plan, lost executors, exit code)."""

from __future__ import annotations

from logparse import Planned, ProcessFacts, Status, judge, judge_run, parse
from logparse.records import FailureKind
from tests.test_logparse import FIXTURES

OK = FIXTURES / "lenet-lr2.5-3ep.out.gz"           # lr 2.5, batch 64, 3 epochs
PLAN = Planned(epochs=3, learning_rate=2.5, batch_size=64)


def test_ok_run_as_planned_is_ok():
    j = judge_run(OK, PLAN, ProcessFacts(exit_code=0, elapsed_s=40.0))
    assert (j.status, j.reason, j.failure_kind, j.notes) == (Status.OK, "", None, ())
    assert j.log.accuracy == parse(OK).accuracy


def test_timeout_fails_whatever_the_log_says():
    j = judge_run(OK, PLAN, ProcessFacts(exit_code=-9, timed_out=True, elapsed_s=600.4))
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.TIMEOUT)
    assert j.reason == "no result within 600 s: the run was stopped (raise --timeout)"


def test_each_difference_from_the_plan_fails_the_run():
    for plan, said in ((Planned(3, 0.25, 64), "learning rate 2.5 (asked 0.25)"),
                       (Planned(3, 2.5, 128), "batch size 64 (asked 128)"),
                       (Planned(None, 2.5, 64), None)):
        j = judge(parse(OK), plan)
        if said is None:
            assert j.status == Status.OK
        else:
            assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.JOB) and said in j.reason
    # 2 epochs planned: the log (parsed with that plan) shows 3.
    j = judge_run(OK, Planned(epochs=2))
    assert j.status == Status.FAILED and "3 epochs (asked 2)" in j.reason


def test_fewer_epochs_than_planned_is_incomplete_not_a_difference():
    j = judge_run(OK, Planned(epochs=4, learning_rate=2.5, batch_size=64))
    assert (j.status, j.reason) == (Status.INCOMPLETE, "3 of 4 planned epochs done")


def test_nonzero_exit_after_training_keeps_ok_with_a_note():
    j = judge_run(OK, PLAN, ProcessFacts(exit_code=1))
    assert j.status == Status.OK and j.notes == ("spark-submit exited with code 1 after training finished",)


def test_lost_executor_that_spark_survived_is_an_infrastructure_failure():
    # Real: worker-2 SIGKILLed at iteration 5 of a 3-epoch lenet on a 2-worker cluster; BigDL finished.
    p = FIXTURES / "lenet-worker-killed.out.gz"
    assert parse(p).status == Status.OK
    j = judge_run(p, Planned(epochs=3), ProcessFacts(exit_code=0))
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.INFRASTRUCTURE)
    assert "Lost executor" in j.reason or "orker" in j.reason


def test_a_log_that_is_not_ok_keeps_its_status_and_reason():
    p = FIXTURES / "birnn-batch65.out.gz"
    j = judge_run(p, Planned(1, 0.01, 65), ProcessFacts(exit_code=1))
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert j.reason == parse(p).reason


def test_the_harness_stores_exactly_logparse_judgement(tmp_path):
    """harness.campaign decides nothing itself: every stored status is judge_run's on the same log and facts."""
    from logparse import judge_run
    from tests.test_campaign import campaign, spec

    logs = ["lenet-4000-2ep", "dllib-error-after-training", "birnn-batch65", "lenet-lr2.5-3ep", "lenet-killed"]
    specs = [spec(1), spec(2, epochs=1, learning_rate=0.5), spec(3, epochs=1, learning_rate=0.01, batch_size=65),
             spec(4, epochs=3, learning_rate=0.25), spec(5, epochs=4, learning_rate=0.05)]
    c, _, _ = campaign(tmp_path, logs, retries=0)
    records = c.run(specs).records
    got = [(r.status, r.reason) for r in records]
    assert [s for s, _ in got] == ["ok", "ok", "failed", "failed", "incomplete"]
    assert "learning rate 2.5 (asked 0.25)" in got[3][1]
    for r, s in zip(records, specs):
        j = judge_run(tmp_path / r.execution.log, Planned(s.epochs, s.learning_rate, s.batch_size),
                      ProcessFacts(r.execution.exit_code, False, r.execution.elapsed_s))
        assert (j.status, j.reason) == (r.status, r.reason)
        if j.status != Status.FAILED or "asked" not in j.reason:  # the CLI knows no plan beyond the log's own
            assert parse(tmp_path / r.execution.log, expected_epochs=s.epochs).status == j.status


def test_a_log_that_cannot_be_read_is_a_failed_run_not_an_exception(tmp_path, monkeypatch):
    """One bad log inside a campaign must not stop it: it once stopped it and left the run marked running."""
    import gzip as gz

    from logparse import source

    monkeypatch.setattr(source, "MAX_GUNZIP", 1 << 20)
    bomb = tmp_path / "1-1.out.gz"
    bomb.write_bytes(gz.compress(b"\0" * (4 << 20)))
    j = judge_run(bomb, PLAN, ProcessFacts(exit_code=0))
    assert (j.status, j.failure_kind) == (Status.FAILED, FailureKind.JOB)
    assert j.reason.startswith("cannot read the log: ") and "expands beyond" in j.reason
    j = judge_run(tmp_path / "missing.out", PLAN, ProcessFacts(exit_code=1))
    assert j.status == Status.FAILED and "no such file" in j.reason
