"""The BigDL jobs themselves: argument checks (pure), and both networks training for real in local[2]."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from jobs.train import app_name, parse_args
from logparse import parse
from tests.test_logparse_real import run_real_job


def test_arguments():
    a = parse_args(["--model", "lenet", "--learning-rate", "9.011", "--batch-size", "64", "--epochs", "2",
                    "--sample", "--seed", "3"])
    assert (a.model, a.learning_rate, a.batch_size, a.epochs, a.data_dir, a.seed, a.split_seed) == \
        ("lenet", 9.011, 64, 2, None, 3, 42)
    assert parse_args(["--learning-rate", "0.1", "--batch-size", "64", "--epochs", "1"]).data_dir is None  # the sample
    assert a.learning_rate_decay == 0.0002  # BigDL's bi-RNN tutorial
    assert app_name("birnn", 0.01, 64, 3) == "birnn lr=0.01 batch=64 epochs=3"


@pytest.mark.parametrize("argv, needle", [
    (["--learning-rate", "0", "--batch-size", "64", "--epochs", "1", "--sample"], "--learning-rate must be > 0"),
    (["--learning-rate", "0.1", "--batch-size", "x", "--epochs", "1", "--sample"], "--batch-size must be a int"),
    (["--learning-rate", "0.1", "--batch-size", "64", "--epochs", "1", "--sample", "--data-dir", "/d"],
     "not allowed with argument"),
    (["--model", "resnet", "--learning-rate", "0.1", "--batch-size", "64", "--epochs", "1", "--sample"],
     "invalid choice: 'resnet'"),
])
def test_bad_arguments_exit_2(argv, needle):
    proc = subprocess.run([sys.executable, "-m", "jobs.train", *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and needle in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("model, lr", [("birnn", 0.5), ("lenet", 0.1)])
def test_network_trains_for_real_and_validates_every_epoch(tmp_path, model, lr):
    out = run_real_job(tmp_path, model, ["--model", model, "--learning-rate", str(lr), "--batch-size", "32",
                                         "--epochs", "2", "--sample", "--train-samples", "512",
                                         "--test-samples", "256"])
    log = parse(out, full=True, expected_epochs=2)
    assert log.status == "ok", log.reason
    assert log.learning_rate == lr and log.batch_size == 32 and log.epochs_completed == 2
    assert [v.epoch for v in log.validations] == [1, 2]  # Top1Accuracy after every epoch
    assert all(m.name == "Top1Accuracy" and m.fields[1] == ("count", 256.0) for v in log.validations for m in v.metrics)
    assert 0 < log.accuracy <= 1
    assert log.iterations[0].loss > log.iterations[-1].loss  # it learns
    # the job's own one-line summary is the last line of its stdout
    assert out.read_text().rstrip().splitlines()[-1].startswith("jobs.train: ") or "jobs.train: " in out.read_text()


def test_doctor_reports_every_piece_ok():
    proc = subprocess.run([sys.executable, "-m", "harness.doctor", "--ports", ""], capture_output=True, text=True,
                          timeout=300)
    names = [line.split()[1] for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stdout
    assert names == ["python", "tool", "runtime", "runtime", "runtime", "bigdl", "class-data", "mnist", "cloudpickle",
                     "ports"]
    assert "numpy 2." in proc.stdout and "pyspark 3.1.3" in proc.stdout  # the tool's numpy; the BigDL runtime's Spark
    assert all(line.startswith("OK ") for line in proc.stdout.splitlines())


# ---------------------------------------------------------------- the job waits for its executors itself
from jobs.train import executors_needed, seconds, wait_for_executors  # noqa: E402


@pytest.mark.parametrize("text, expected", [("120s", 120.0), ("2min", 120.0), ("500ms", 0.5), ("30", 30.0),
                                            ("1h", 3600.0), (" 3m ", 180.0)])
def test_spark_durations(text, expected):
    assert seconds(text) == expected


@pytest.mark.parametrize("conf, expected", [
    ({"spark.master": "spark://h:7077", "spark.cores.max": "4", "spark.executor.cores": "2",
      "spark.scheduler.minRegisteredResourcesRatio": "1.0"}, 2),
    ({"spark.master": "spark://h:7077", "spark.cores.max": "4", "spark.executor.cores": "1",
      "spark.scheduler.minRegisteredResourcesRatio": "0.5"}, 2),
    ({"spark.master": "spark://h:7077", "spark.cores.max": "3", "spark.executor.cores": "2",
      "spark.scheduler.minRegisteredResourcesRatio": "1.0"}, 2),  # Spark counts cores: 2 executors give 4 >= 3
    ({"spark.master": "spark://h:7077", "spark.cores.max": "4", "spark.executor.cores": "2"}, 0),  # no ratio set
    ({"spark.master": "local[2]", "spark.cores.max": "4", "spark.scheduler.minRegisteredResourcesRatio": "1"}, 0),
    ({"spark.master": "spark://h:7077", "spark.cores.max": "3", "spark.executor.cores": "1",
      "spark.scheduler.minRegisteredResourcesRatio": "0.5"}, 2),  # 1.5 cores: one executor of 1 core is not enough
    # without cores.max or executor.cores the job cannot tell: Spark waits, as without the job's help
    ({"spark.master": "spark://h:7077", "spark.scheduler.minRegisteredResourcesRatio": "1"}, None),
    ({"spark.master": "spark://h:7077", "spark.cores.max": "4", "spark.scheduler.minRegisteredResourcesRatio": "1"},
     None),
])
def test_executors_needed_mirrors_sparks_rule(conf, expected):
    assert executors_needed(conf) == expected


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def test_wait_returns_as_soon_as_the_executors_are_there():
    clock = FakeClock()
    arrivals = iter([0, 0, 1, 1, 2])
    assert wait_for_executors(lambda: next(arrivals), 2, 10.0, clock=clock, sleep=clock.sleep, poll_s=0.5)
    assert clock.now == 2.0  # four polls of 0.5 s before the fifth saw both


def test_wait_gives_up_after_the_timeout_as_spark_does():
    clock = FakeClock()
    assert not wait_for_executors(lambda: 1, 2, 3.0, clock=clock, sleep=clock.sleep, poll_s=0.5)
    assert 3.0 <= clock.now < 3.5
    assert wait_for_executors(lambda: 0, 0, 3.0, clock=clock, sleep=clock.sleep)  # nothing to wait for


@pytest.mark.slow
def test_pickled_samples_reach_the_jvm_as_through_bigdls_python_path(tmp_path):
    """Real BigDL in local[2]: jobs.train.pickled_rdd skips the Python pass and gives the JVM the same samples."""
    from cluster.runtime import discover

    env = discover()
    app = Path(__file__).parent / "fixtures" / "apps" / "pickled_samples_app.py"
    proc = subprocess.run([str(env.spark_submit), "--master", "local[2]", "--driver-memory", "1g", *env.submit_args(),
                           str(app)], env=env.environ(), capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 0 and "same 40" in proc.stdout, (proc.stdout[-1500:], proc.stderr[-3000:])


@pytest.mark.parametrize("conf, expected", [
    ({"spark.master": "spark://h:7077", "spark.cores.max": "4"}, 4),
    ({"spark.master": "spark://h:7077", "spark.cores.max": "1"}, 2),  # Spark's max(cores, 2)
    ({"spark.master": "spark://h:7077", "spark.cores.max": "4", "spark.default.parallelism": "7"}, 7),
    ({"spark.master": "local[3]", "spark.cores.max": "4"}, None),  # the context knows: local[N]
    ({"spark.master": "spark://h:7077"}, None),
])
def test_default_parallelism_is_the_one_with_every_executor_registered(conf, expected):
    from jobs.train import default_parallelism

    assert default_parallelism(conf) == expected


def test_app_name_is_spark_submits_name_or_what_the_job_trains():
    from jobs.train import chosen_app_name

    ours = app_name("lenet", 0.1, 64, 2)
    assert chosen_app_name("train.py", "/x/jobs/train.py", ours) == ours  # spark-submit's default: the script
    assert chosen_app_name(None, "/x/jobs/train.py", ours) == ours
    assert chosen_app_name("lenet run=1-1", "/x/jobs/train.py", ours) == "lenet run=1-1"  # --name wins
