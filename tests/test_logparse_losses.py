"""Lost executors anywhere in a log, even when Spark recovered (real logs)."""

from pathlib import Path

from logparse import parse
from logparse.losses import resource_losses

LOGS = Path(__file__).parent / "fixtures" / "logs"


def test_losses_found_in_a_job_that_recovered():
    path = LOGS / "lenet-worker-killed.out.gz"
    assert parse(path).status == "ok"  # BigDL retried and finished
    losses = resource_losses(path)
    assert losses[0] == "ERROR TaskSchedulerImpl:73 - Lost executor 0 on 127.0.0.1: worker lost"
    assert any("ExecutorLostFailure" in line for line in losses) and len(losses) == 3


def test_no_losses_in_clean_logs():
    for name in ("lenet-4000-2ep", "cluster-lenet-1ep", "birnn-4000-1ep", "lenet-lr2.5-3ep"):
        assert resource_losses(LOGS / f"{name}.out.gz") == ()


def test_limit_and_missing_err(tmp_path):
    out = tmp_path / "x.out"
    out.write_bytes(b"".join(b"2026-01-01 00:00:00 ERROR TaskSchedulerImpl:73 - Lost executor %d on h: gone\n" % i
                             for i in range(10)))
    assert len(resource_losses(out, limit=2)) == 2

