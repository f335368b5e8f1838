"""The spark-submit command line of one run: a pure function of the run spec and the options.

How a design row maps onto Spark standalone (seed 001's meaning of the factors):

* ``nodes`` workers take part: the backend scales the cluster to exactly that many
  workers before the run (standalone spreads executors over all alive workers).
* ``--executor-cores executor_cores`` and
  ``--total-executor-cores nodes x executors x executor_cores``: with the master's
  default spread-out scheduling every worker then runs ``executors`` executors.
* ``--executor-memory`` is the same for every executor; each worker offers at least
  ``executors x executor-memory`` so all executors of a node fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jobs
from jobs.train import app_name
from cluster.sparkenv import SparkEnv
from harness.runspec import RunSpec

JOB_SCRIPT = Path(jobs.__file__).with_name("train.py")


@dataclass(frozen=True)
class SubmitOptions:
    """Everything about a submission that is not a design factor."""

    master_url: str
    executor_memory: str = "700m"
    driver_memory: str = "2g"
    data_dir: Path | None = None  # None: the bundled 5,000-digit sample
    train_samples: int | None = None
    test_samples: int | None = None
    seed: int = 42
    learning_rate_decay: float | None = None  # None: the job's default (0.0002)
    data_cache: Path | None = None  # the split decoded once per campaign (jobs.mnist.ensure_cache)


def job_args(spec: RunSpec, options: SubmitOptions) -> list[str]:
    """Arguments of jobs/train.py for this run (every value is one argv element)."""
    args = [
        "--model", spec.model,
        "--learning-rate", repr(float(spec.learning_rate)),
        "--batch-size", str(spec.batch_size),
        "--epochs", str(spec.epochs),
        "--seed", str(options.seed + spec.replicate - 1),
    ]
    args += ["--sample"] if options.data_dir is None else ["--data-dir", str(options.data_dir)]
    if options.train_samples:
        args += ["--train-samples", str(options.train_samples)]
    if options.test_samples:
        args += ["--test-samples", str(options.test_samples)]
    if options.data_cache is not None:
        args += ["--data-cache", str(options.data_cache)]
    if options.learning_rate_decay is not None:
        args += ["--learning-rate-decay", repr(float(options.learning_rate_decay))]
    return args


def event_log_conf(directory: Path) -> list[str]:
    """spark-submit options that make the job write Spark's event log (lz4) into ``directory``.

    The directory must exist before the submit (Spark refuses to start otherwise); lz4 is
    Spark's default codec, the one :mod:`logparse.eventlog` and the History Server read.
    """
    return [
        "--conf", "spark.eventLog.enabled=true",
        "--conf", f"spark.eventLog.dir={Path(directory).resolve().as_uri()}",
        "--conf", "spark.eventLog.compress=true",
        "--conf", "spark.eventLog.compression.codec=lz4",
    ]


def submit_argv(spec: RunSpec, options: SubmitOptions, env: SparkEnv, event_log_dir: Path | None = None) -> list[str]:
    """The complete spark-submit argv for one run (no shell is ever involved).

    ``event_log_dir``: the run's folder, where Spark writes its event log (None: no event log).
    """
    return [
        str(env.spark_submit),
        "--master", options.master_url,
        "--deploy-mode", "client",
        "--name", f"{app_name(spec.model, float(spec.learning_rate), spec.batch_size, spec.epochs)} run={spec.key}",
        "--executor-cores", str(spec.executor_cores),
        "--total-executor-cores", str(spec.total_cores),
        "--executor-memory", options.executor_memory,
        "--driver-memory", options.driver_memory,
        # Spark would otherwise wait forever for resources it cannot get.
        "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
        "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
        *env.submit_args(),
        *(event_log_conf(event_log_dir) if event_log_dir is not None else []),
        str(JOB_SCRIPT),
        *job_args(spec, options),
    ]
