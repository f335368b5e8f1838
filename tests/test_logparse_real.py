"""Slow: real BigDL jobs (spark-submit, local[2]) produce fresh logs that logparse must read right.

``real_job`` is the helper other slow tests can use: it runs jobs/train.py and returns the
.out path (the .err is beside it); ``kill_after`` SIGKILLs the job's process group as soon
as that text appears in the .out, the way a lost machine ends a job.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from logparse import parse
from tests.test_logparse import reference

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["--sample", "--train-samples", "256", "--test-samples", "128", "--batch-size", "64"]


def scratch_environ(env, folder: Path) -> dict[str, str]:
    """The job's environment with its driver's scratch (block manager, fetched files) in ``folder``, not /tmp: a
    job killed mid-run (as some here are) leaves it there, with the test's other files. (Its JVM's own
    temporary files, lz4-java's unpacked library among them, follow ``java.io.tmpdir``: see run_real_job.)"""
    folder.mkdir(parents=True, exist_ok=True)
    return {**env.environ(), "SPARK_LOCAL_DIRS": str(folder)}


def run_real_job(out_dir: Path, name: str, job_args: list[str], *, kill_after: str | None = None,
                 timeout_s: float = 300.0) -> Path:
    """Run jobs/train.py through spark-submit in local[2] mode; returns ``out_dir/name.out``."""
    from cluster.runtime import discover

    env = discover()
    scratch = out_dir / "spark-tmp" / name
    tmpdir = {"spark.driver.extraJavaOptions": f"-Djava.io.tmpdir={scratch}"}  # joined after the runtime's own
    argv = [str(env.spark_submit), "--master", "local[2]", "--driver-memory", "1g", *env.submit_args(tmpdir),
            str(ROOT / "jobs" / "train.py"), *job_args]
    out, err = out_dir / f"{name}.out", out_dir / f"{name}.err"
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(argv, env=scratch_environ(env, scratch), stdout=o, stderr=e, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}: job still running after {timeout_s} s")
            if kill_after is not None and kill_after.encode() in out.read_bytes():
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.2)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return out


@pytest.fixture(scope="session")
def real_job(tmp_path_factory):
    """Factory fixture: ``real_job(name, job_args, kill_after=None) -> Path`` of a fresh real .out."""
    base = tmp_path_factory.mktemp("real_jobs")
    return lambda name, job_args, **kw: run_real_job(base, name, job_args, **kw)


@pytest.mark.slow
def test_fresh_real_log_is_read_exactly(real_job):
    out = real_job("lenet-lr1.75", ["--model", "lenet", "--learning-rate", "1.75", "--epochs", "2", *SMALL])
    text = out.read_text()
    ref = reference(text)
    log = parse(out)
    assert log.status == "ok", log.reason
    assert (log.learning_rate, log.batch_size, log.epochs_completed, log.planned_epochs) == (1.75, 64, 2, 2)
    assert (log.accuracy, log.wall_clock_s, log.epoch_wall_clock_ms) == (
        ref["accuracy"], ref["wall_clock_s"], ref["epoch_wall_clock_ms"])
    full = parse(out, full=True)
    assert full.summary() == log.summary() and len(full.iterations) == ref["iterations"] == 8
    # The same log cut just before its final validation line is not ok.
    raw = out.read_bytes()
    cut = out.with_name("cut.out")
    cut.write_bytes(raw[:raw.rindex(b"Top1Accuracy is")])
    assert parse(cut).status == "incomplete"


@pytest.mark.slow
def test_fresh_job_killed_mid_training_is_incomplete(real_job):
    out = real_job("lenet-killed", ["--model", "lenet", "--learning-rate", "0.05", "--epochs", "3", *SMALL],
                   kill_after="[Epoch 2 ")
    log = parse(out)
    assert (log.status, log.failure_kind) == ("incomplete", "infrastructure"), log.reason
    # Killed within ~0.2 s of epoch 2's first line: epoch 1 validated, epoch 3 never reached.
    assert log.epochs_completed in (1, 2) and log.epochs_validated >= 1 and log.planned_epochs == 3
    assert parse(out, full=True).summary() == log.summary()
    # what the SIGKILLed driver could not remove is in the test's folder, not /tmp: lz4-java's unpacked library
    assert list((out.parent / "spark-tmp" / "lenet-killed").glob("liblz4-java-*.so"))


def run_variant(out_dir: Path, variant: str, timeout_s: float = 300.0) -> Path:
    """Run tests/fixtures/logs/variant_job.py VARIANT in local[2]; returns the .out path (the .err beside it)."""
    from cluster.runtime import discover

    env = discover()
    job = ROOT / "tests" / "fixtures" / "logs" / "variant_job.py"
    argv = [str(env.spark_submit), "--master", "local[2]", "--driver-memory", "1g", *env.submit_args(),
            str(job), variant, str(out_dir)]
    out, err = out_dir / f"{variant}.out", out_dir / f"{variant}.err"
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen(argv, env=scratch_environ(env, out_dir / "spark-tmp" / variant), stdout=o, stderr=e,
                                start_new_session=True, cwd=out_dir)
    try:
        proc.wait(timeout=timeout_s)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return out


@pytest.mark.slow
def test_fresh_local_optimizer_log_with_evaluation(tmp_path):
    """LocalOptimizer (no "Epoch finished" line), 3 validation methods, evaluate after training: ok, exact figures."""
    out = run_variant(tmp_path, "local")
    text = out.read_text()
    log = parse(out)
    assert log.status == "ok", log.reason
    lines = [l for l in text.splitlines() if "Top1Accuracy is Accuracy(" in l]
    assert len(lines) == 2 and log.epochs_completed == 2 and log.batch_size == 64
    assert log.accuracy == float(lines[-1].split("accuracy: ")[1].rstrip(")"))
    evaluated = {l.split("method: ")[1]: float(l.split(", ")[0].split(": ")[1])
                 for l in text.splitlines() if l.startswith("Evaluated result: ")}
    s = log.summary()
    assert {k: s[f"evaluated_{k.lower()}"] for k in evaluated} == evaluated and len(evaluated) == 3
    # Cut anywhere before the final validation line: never ok.
    raw = out.read_bytes()
    end = raw.rindex(b"Top1Accuracy is Accuracy(")
    for k in range(raw.index(b"[Epoch "), end, max(1, (end - raw.index(b"[Epoch ")) // 25)):
        (tmp_path / "cut.out").write_bytes(raw[:k])
        assert parse(tmp_path / "cut.out").status != "ok", k
