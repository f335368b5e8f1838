"""Running single RunSpecs through the harness: a campaign folder, a cluster, one cell at a time.

The optimizers decide the next job from the last results, so they cannot hand the harness a design
up front. :func:`open_session` opens the same :class:`harness.campaign.Campaign` that harness.submit
runs (one owner per folder, the same provenance); :meth:`JobSession.run` returns the stored record of
a finished cell (that is how ``--resume`` replays a search without running anything) or executes the
spec and records it. The settings that define the search are hashed and kept as the campaign's
``design_sha256``, so a folder never mixes two different searches.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

from cluster.local import parse_memory_mb
from cluster.sparkenv import SparkEnv
from harness.backends import Backend
from harness.campaign import (Campaign, CampaignPlan, CampaignSettings, ClusterChoice, describe_outcome, make_backend,
                              open_campaign)
from harness.command import SubmitOptions
from harness.job import HARNESS_FIELDS, OPTION_FIELDS, Job, JobChoice, JobFileError, builtin
from harness.runner import Runner
from sparkdl.runspec import LEGACY_PARAMS, RunSpec, Value, batch_problem, format_value
from sparkdl.campaign import CampaignDir, Manifest, RunRecord
from optimize.errors import SearchOptionError
from sparkdl.options import (DEFAULT_DRIVER_MEMORY, DEFAULT_EXECUTOR_MEMORY, DEFAULT_JOB, DEFAULT_RETRIES,
                             DEFAULT_TIMEOUT_S, add_job, mlflow_uri)

Progress = Callable[[str], None]

#: The design columns an optimizer sets on every job it runs (besides the cluster's).
OPTIMIZER_COLUMNS = ("epochs", "learning_rate", "batch_size")


def optimizer_jobs() -> tuple[str, ...]:
    """The built-in jobs the optimizers run: those with :data:`OPTIMIZER_COLUMNS` (from the job registry)."""
    from harness.job import builtins_with

    return builtins_with(OPTIMIZER_COLUMNS)


def add_optimizer_job(parser: argparse.ArgumentParser) -> None:
    """``--job`` of a command that runs built-in jobs (the vocabulary's, with the jobs it can run)."""
    add_job(parser, optimizer_jobs(), "the job to run (a job description runs with sparkdl submit)")


def check_job(name: str) -> str:
    """``name`` when the optimizers can run it, else :class:`SearchOptionError` naming those they can."""
    jobs = optimizer_jobs()
    if name not in jobs:
        what = "a job description" if name.endswith(".toml") or Path(name).exists() else "not such a built-in job"
        raise SearchOptionError(f"--job {name!r} is {what}: this command runs the built-in jobs with the columns "
                                f"{', '.join(OPTIMIZER_COLUMNS)}: {', '.join(jobs)} (a job description runs with "
                                "sparkdl submit)")
    return name


#: The LeNet-style built-in jobs' own parameters when neither the space nor ``--fixed`` gives them (Marinos 2021's
#: search settings): batch 256, 1 epoch, learning rate 0.002.
LENET_DEFAULTS: tuple[tuple[str, Value], ...] = (("batch_size", 256), ("epochs", 1), ("learning_rate", 0.002))


def job_params(job: Job) -> tuple[str, ...]:
    """The parameters of ``job`` a run must be given: the fields of its args the harness does not fill, in order."""
    filled = set(HARNESS_FIELDS) | set(OPTION_FIELDS)
    return tuple(f for f in job.fields() if f not in filled)


@dataclass(frozen=True, init=False)
class JobConfig:
    """A job and the values of everything an optimizer does not vary: the cluster factors and the job's parameters.

    ``model`` names a built-in job; ``job`` is a job description of the user's (``--job FILE``, its name then in
    ``model``), None for a built-in. ``params`` are the job's own parameters, in the order of its args; a LeNet-style
    built-in (lenet, birnn, torch-lenet: :func:`optimizer_jobs`) has :data:`LENET_DEFAULTS` for those not given.
    Parameters read as attributes (``config.epochs``), and keyword arguments set them
    (``JobConfig(model="xgboost", rounds=20)``, ``replace(config, epochs=3)``).
    """

    model: str = DEFAULT_JOB
    nodes: int = 1
    executors: int = 1
    executor_cores: int = 1
    params: tuple[tuple[str, Value], ...] = ()
    job: Job | None = field(default=None, compare=False, repr=False)

    def __init__(self, model: str = DEFAULT_JOB, nodes: int = 1, executors: int = 1, executor_cores: int = 1,
                 params: tuple[tuple[str, Value], ...] | Mapping[str, Value] = (), job: Job | None = None,
                 **more: Value) -> None:
        given = {**dict(params.items() if isinstance(params, Mapping) else params), **more}
        if job is None and model in optimizer_jobs():
            given = {**dict(LENET_DEFAULTS), **given}
        try:
            order = job_params(job if job is not None else builtin(model))
        except JobFileError:  # not a built-in: refused where it runs (JobChoice), its parameters kept as given
            order = tuple(given)
        ordered = tuple((k, given[k]) for k in order if k in given) + tuple(
            (k, v) for k, v in given.items() if k not in order)
        for name, value in (("model", model), ("nodes", nodes), ("executors", executors),
                            ("executor_cores", executor_cores), ("params", ordered), ("job", job)):
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Value:
        if name.startswith("__") or name in ("params", "job", "model"):
            raise AttributeError(name)
        for key, value in self.params:
            if key == name:
                return value
        raise AttributeError(f"the job {self.model} has no parameter {name!r} here")

    def get(self, name: str, default: Value | None = None) -> Value | None:
        """A parameter of the job by name, or ``default``."""
        return dict(self.params).get(name, default)

    @property
    def lenet_style(self) -> bool:
        """A built-in job of the columns epochs, learning_rate and batch_size (what every optimizer can run)."""
        return self.job is None and self.model in optimizer_jobs()

    def described(self) -> Job:
        """The job description that runs (the built-in's, or the user's file)."""
        return self.job if self.job is not None else _builtin(self.model)

    def choice(self) -> JobChoice:
        """How the campaign picks each run's job: a LeNet-style built-in by its ``model`` column (as every
        optimizer's folder always did), any other job as ``--job`` does."""
        return JobChoice() if self.lenet_style else JobChoice(self.described())

    def settings(self) -> dict[str, object]:
        """What defines the job in a search's settings digest: for a LeNet-style built-in the same mapping as
        before other jobs could run (model, the cluster factors, batch_size, epochs, learning_rate), so that a
        folder started then resumes."""
        base: dict[str, object] = {"model": self.model, "nodes": self.nodes, "executors": self.executors,
                                   "executor_cores": self.executor_cores}
        if self.lenet_style and {k for k, _ in self.params} == {k for k, _ in LENET_DEFAULTS}:
            return {**base, **dict(self.params)}
        if self.job is not None:
            base["job"] = str(self.job.source)
        return {**base, "params": dict(self.params)}

    def spec(self, run: int, replicate: int, **change: object) -> RunSpec:
        cluster = {k: change.pop(k, getattr(self, k)) for k in ("nodes", "executors", "executor_cores")}
        params = {**dict(self.params), **change}
        if not self.lenet_style:  # in the order of the job's args (a LeNet-style spec has its own order)
            order = job_params(self.described())
            params = {**{k: params[k] for k in order if k in params}, **params}
        if self.job is None:
            params["model"] = change.get("model", self.model)
        return RunSpec(run=run, replicate=replicate, **cluster, **params)  # type: ignore[arg-type]


def _builtin(name: str) -> Job:
    """The built-in job ``name``; one that is not is :class:`SearchOptionError` naming them."""
    try:
        return builtin(name)
    except JobFileError as e:
        raise SearchOptionError(str(e)) from None


@dataclass(frozen=True)
class ClusterOptions(ClusterChoice):
    """Where jobs run (:class:`harness.campaign.ClusterChoice`) and with what: the resources and limits of
    :func:`sparkdl.options.cluster_options`, with its defaults."""

    executor_memory: str = DEFAULT_EXECUTOR_MEMORY
    driver_memory: str = DEFAULT_DRIVER_MEMORY
    timeout: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    mlflow: str | None = None  # a tracking URI: every stored run is exported to MLflow (--mlflow)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "ClusterOptions":
        """From the parsed options of :func:`sparkdl.options.cluster_options`."""
        return cls(**vars(ClusterChoice.from_args(args)), executor_memory=args.executor_memory,
                   driver_memory=args.driver_memory, timeout=args.timeout, retries=args.retries,
                   mlflow=mlflow_uri(getattr(args, "mlflow", None)))


def settings_digest(settings: dict[str, object]) -> str:
    """The sha256 of the search's defining settings (stable JSON)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


class JobSession:
    """One campaign, driven one cell at a time; ``run(spec)`` is resumable per (run, replicate) cell."""

    def __init__(self, campaign: Campaign, progress: Progress = lambda _: None) -> None:
        self.campaign, self.progress = campaign, progress
        self.finished: dict[tuple[int, int], RunRecord] = {r.cell: r for r in campaign.store.results()}
        self.executed = 0

    @property
    def out(self) -> Path:
        return self.campaign.folder.path

    def describe(self, spec: RunSpec) -> str:
        """A run's job and parameters as its progress line shows them (a LeNet-style run as it always did)."""
        if set(spec.param_names) == set(LEGACY_PARAMS):
            return f"{spec.model} lr={spec.learning_rate!r} batch={spec.batch_size} epochs={spec.epochs}"
        name = self.campaign.options.jobs.for_spec(spec).name
        return " ".join([name, *(f"{k}={format_value(v)}" for k, v in spec.params if k != "model")])

    def run(self, spec: RunSpec) -> RunRecord:
        """The stored record of this cell, else a new job (recorded before returning)."""
        known = self.finished.get((spec.run, spec.replicate))
        if known is not None:
            return known
        problem = batch_problem(spec)
        if problem:
            raise SearchOptionError(problem)
        self.progress(f"run {spec.key}: {self.describe(spec)} cores={spec.total_cores}")
        record = self.campaign.run_one(spec)
        self.finished[record.cell] = record
        self.executed += 1
        self.progress(f"run {spec.key} {record.status}: {describe_outcome(record)} (elapsed {record.elapsed_s:.0f} s)")
        return record


def submit_options(out: Path, cluster: ClusterOptions, train_samples: int | None, test_samples: int | None,
                   seed: int = 42, data_dir: Path | None = None) -> SubmitOptions:
    return SubmitOptions(master_url=cluster.master or f"spark://127.0.0.1:{cluster.port}",
                         executor_memory=cluster.executor_memory, driver_memory=cluster.driver_memory,
                         data_dir=data_dir, train_samples=train_samples, test_samples=test_samples, seed=seed)


@contextmanager
def open_session(out: Path, settings: dict[str, object], options: SubmitOptions, cluster: ClusterOptions,
                 shapes: Sequence[RunSpec], resume: bool, progress: Progress = lambda _: None,
                 backend: Backend | None = None, runner: Runner | None = None,
                 env: SparkEnv | None = None) -> Iterator[JobSession]:
    """Lock the folder, open the store (refusing another search's folder), start the cluster, yield a session.

    ``shapes`` are specs of every job shape the session may run (they size the local workers).
    ``backend``/``runner``/``env`` replace the cluster and spark-submit (tests pass fakes).
    """
    folder = CampaignDir(out)
    plan = CampaignPlan(design_id=settings_digest(settings), shapes=tuple(shapes),
                        settings=CampaignSettings(options=options, timeout=cluster.timeout, retries=cluster.retries,
                                                  mlflow=cluster.mlflow),
                        manifest=Manifest.for_design(list(shapes)), provenance={"search": settings})
    if backend is None:
        backend = make_backend(cluster, folder, parse_memory_mb(cluster.executor_memory), progress)
    with open_campaign(folder, plan, backend, resume=resume, progress=progress, runner=runner, env=env) as campaign:
        yield JobSession(campaign, progress)
