"""The spark-submit command line of one run: a pure function of the run spec, its job and the options.

How a design row maps onto Spark standalone (Marinos 2021's meaning of the factors, whatever the job):

* ``nodes`` workers take part: the backend scales the cluster to exactly that many
  workers before the run (standalone spreads executors over all alive workers).
* ``--executor-cores executor_cores`` and
  ``--total-executor-cores nodes x executors x executor_cores``: with the master's
  default spread-out scheduling every worker then runs ``executors`` executors.
* ``--executor-memory`` is the same for every executor; each worker offers at least
  ``executors x executor-memory`` so all executors of a node fit.

The job (:mod:`harness.job`) gives the application and its argument template; ``spark.*``
design columns and the job's ``[spark]`` table become ``--conf`` settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jobs
from cluster.sparkenv import MERGED, SparkEnv
from harness.job import Job, JobChoice, harness_values, job_confs
from sparkdl.runspec import RunSpec, Value, format_value
from harness.scratch import driver_confs

JOB_SCRIPT = Path(jobs.__file__).resolve().with_name("train.py")
METRICS_FLAG = "--metrics-out"
METRICS_FILE = "metrics.json"


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
    jobs: JobChoice = JobChoice()  # the --job, or the built-in named by the model column
    out: Path | None = None  # the campaign folder: json jobs write OUT/runs/<key>/metrics.json
    data_cache: Path | None = None  # the MNIST split decoded once per campaign (jobs.mnist.ensure_cache)
    driver_scratch: bool = False  # drivers run here: their temp files go to OUT/spark-tmp/<key> (harness.scratch)

    def option_values(self) -> dict[str, Value | None]:
        """The optional template fields this campaign gives (None: not given)."""
        return {"data_dir": None if self.data_dir is None else str(self.data_dir),
                "train_samples": self.train_samples or None, "test_samples": self.test_samples or None,
                "learning_rate_decay": self.learning_rate_decay,
                "data_cache": None if self.data_cache is None else str(self.data_cache)}

    def option_fields(self) -> tuple[str, ...]:
        return tuple(k for k, v in self.option_values().items() if v is not None)


def job_for(spec: RunSpec, options: SubmitOptions) -> Job:
    return options.jobs.for_spec(spec)


def metrics_path(spec: RunSpec, options: SubmitOptions) -> Path:
    """Where a ``json`` job writes its figures: ``OUT/runs/<key>/metrics.json``."""
    return (options.out or Path(".")) / "runs" / spec.key / METRICS_FILE


def job_args(spec: RunSpec, options: SubmitOptions) -> list[str]:
    """The application's arguments for this run (every value is one argv element)."""
    job = job_for(spec, options)
    args = job.fill(harness_values(spec, options.seed, options.option_values()))
    if job.results == "json":
        args += [METRICS_FLAG, str(metrics_path(spec, options))]
    return args


def app_args(job: Job) -> list[str]:
    """spark-submit's arguments that ship the job's program: its --py-files and its --class."""
    app: list[str] = []
    if job.py_files:
        app += ["--py-files", ",".join(str(p) for p in job.py_files)]
    if job.main_class:
        app += ["--class", job.main_class]
    return app


def app_name(spec: RunSpec, job: Job) -> str:
    """The Spark application name: the job, its parameters and the cell, readable in the master's UI."""
    params = " ".join(f"{k}={format_value(v)}" for k, v in spec.params if k != "model" and v is not None)
    return f"{job.name} {params} run={spec.key}".replace("  ", " ")


def event_log_conf(directory: Path) -> list[str]:
    """spark-submit options that make the job write Spark's event log (lz4) into ``directory``.

    The directory must exist before the submit (Spark refuses to start otherwise). lz4 is Spark 3's
    default codec; Spark 4 (default zstd) writes lz4 too when asked, so every runtime's logs are
    alike. :mod:`logparse.eventlog` reads lz4, zstd and Spark 4's rolling ``eventlog_v2_*`` folders.
    """
    return [
        "--conf", "spark.eventLog.enabled=true",
        "--conf", f"spark.eventLog.dir={Path(directory).resolve().as_uri()}",
        "--conf", "spark.eventLog.compress=true",
        "--conf", "spark.eventLog.compression.codec=lz4",
    ]


def runtime_args(env: SparkEnv, own: dict[str, str], drop: tuple[str, ...], python: str) -> list[str]:
    """The runtime's spark-submit options for executors that are not on this machine (a pod, a YARN container): the
    settings ``drop`` names (this machine's paths) go unless the job gives its own value, ``--jars`` goes when
    ``"--jars"`` is in ``drop``, and the executors run ``python``."""
    args = env.submit_args(own)
    out: list[str] = []
    for flag, value in zip(args[::2], args[1::2]):
        key, _, _ = value.partition("=")
        if flag == "--jars" and flag in drop:
            continue
        if flag == "--conf" and key in drop:
            if own.get(key):
                out += [flag, f"{key}={own[key]}"]
            continue
        if flag == "--conf" and key == "spark.pyspark.python":
            value = f"{key}={python}"
        out += [flag, value]
    return out


def submit_argv(spec: RunSpec, options: SubmitOptions, env: SparkEnv, event_log_dir: Path | None = None) -> list[str]:
    """The complete spark-submit argv for one run (no shell is ever involved).

    ``event_log_dir``: the run's folder, where Spark writes its event log (None: no event log).
    """
    job = job_for(spec, options)
    own = dict(job_confs(job, spec))
    confs = [a for k, v in own.items() if k not in MERGED for a in ("--conf", f"{k}={v}")]
    if options.out is not None and options.driver_scratch:  # the driver's scratch in the campaign, not /tmp
        scratch, own = driver_confs(options.out, spec.key, own)
        confs += scratch
    app = app_args(job)
    return [
        str(env.spark_submit),
        "--master", options.master_url,
        "--deploy-mode", "client",
        "--name", app_name(spec, job),
        "--executor-cores", str(spec.executor_cores),
        "--total-executor-cores", str(spec.total_cores),
        "--executor-memory", options.executor_memory,
        "--driver-memory", options.driver_memory,
        # Spark would otherwise wait forever for resources it cannot get.
        "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
        "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
        *env.submit_args(own),
        *confs,
        *(event_log_conf(event_log_dir) if event_log_dir is not None else []),
        *app,
        str(job.application),
        *job_args(spec, options),
    ]
