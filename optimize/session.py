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
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from cluster.local import parse_memory_mb
from cluster.sparkenv import SparkEnv
from harness.backends import Backend
from harness.campaign import (Campaign, CampaignPlan, CampaignSettings, ClusterChoice, describe_outcome, make_backend,
                              open_campaign)
from harness.command import SubmitOptions
from harness.runner import Runner
from sparkdl.runspec import RunSpec, batch_problem
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


@dataclass(frozen=True)
class JobConfig:
    """The factors of a job other than the one an optimizer varies (Marinos 2021's search settings by default)."""

    model: str = DEFAULT_JOB
    nodes: int = 1
    executors: int = 1
    executor_cores: int = 1
    batch_size: int = 256
    epochs: int = 1
    learning_rate: float = 0.002

    def spec(self, run: int, replicate: int, **change: object) -> RunSpec:
        values = dict(model=self.model, nodes=self.nodes, executors=self.executors,
                      executor_cores=self.executor_cores, batch_size=self.batch_size, epochs=self.epochs,
                      learning_rate=self.learning_rate)
        values.update(change)
        return RunSpec(run=run, replicate=replicate, **values)  # type: ignore[arg-type]


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

    def run(self, spec: RunSpec) -> RunRecord:
        """The stored record of this cell, else a new job (recorded before returning)."""
        known = self.finished.get((spec.run, spec.replicate))
        if known is not None:
            return known
        problem = batch_problem(spec)
        if problem:
            raise SearchOptionError(problem)
        self.progress(f"run {spec.key}: {spec.model} lr={spec.learning_rate!r} batch={spec.batch_size} "
                      f"epochs={spec.epochs} cores={spec.total_cores}")
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
