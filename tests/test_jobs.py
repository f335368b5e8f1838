"""The BigDL jobs themselves: argument checks (pure), and both networks training for real in local[2]."""

from __future__ import annotations

import subprocess
import sys

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
    assert names == ["python", "pyspark", "bigdl-dllib-spark3", "numpy", "java", "bigdl", "mnist", "cloudpickle",
                     "ports"]
    assert all(line.startswith("OK ") for line in proc.stdout.splitlines())
