"""Running single RunSpecs through the harness: a campaign directory, a cluster, one cell at a time.

The optimizers decide the next job from the last results, so they cannot hand the harness a design
up front. :class:`JobSession` wraps :class:`harness.submit.Campaign`: ``run(spec)`` returns the stored
result of a finished cell (that is how ``--resume`` replays a search without running anything) or
executes the spec and records it. The settings that define the search are hashed and kept as the
campaign's ``design_sha256``, so a directory never mixes two different searches.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from cluster.local import DEFAULT_STATE_DIR, LocalCluster, parse_memory_mb
from cluster.sparkenv import SparkEnv, discover
from harness.backends import Backend, LocalBackend
from harness.command import SubmitOptions
from harness.runner import ProcessRunner, Runner
from harness.runspec import RunSpec, batch_problem
from harness.store import ResultStore, RunResult
from harness.submit import Campaign, CampaignSettings, now
from optimize.errors import SearchOptionError

Progress = Callable[[str], None]


@dataclass(frozen=True)
class JobConfig:
    """The factors of a job other than the one an optimizer varies (seed 001's search settings by default)."""

    model: str = "birnn"
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


@dataclass
class ClusterOptions:
    """Where jobs run: the local loopback cluster under ``state_dir`` (started if needed)."""

    state_dir: Path = DEFAULT_STATE_DIR
    port: int = 7077
    webui_port: int = 8080
    keep_cluster: bool = False
    executor_memory: str = "700m"
    driver_memory: str = "2g"
    timeout: float = 3600.0
    retries: int = 1


def settings_digest(settings: dict[str, object]) -> str:
    """The sha256 of the search's defining settings (stable JSON)."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


class JobSession:
    """One campaign directory and one cluster; ``run(spec)`` is resumable per (run, replicate) cell."""

    def __init__(self, campaign: Campaign, store: ResultStore, progress: Progress = lambda _: None) -> None:
        self.campaign, self.store, self.progress = campaign, store, progress
        self.finished: dict[tuple[int, int], RunResult] = {(r.run, r.replicate): r for r in store.results()}
        self.executed = 0

    @property
    def out(self) -> Path:
        return self.campaign.settings.out

    def run(self, spec: RunSpec) -> RunResult:
        """The stored result of this cell, else a new job (recorded before returning)."""
        known = self.finished.get((spec.run, spec.replicate))
        if known is not None:
            return known
        problem = batch_problem(spec)
        if problem:
            raise SearchOptionError(problem)
        self.progress(f"run {spec.key}: {spec.model} lr={spec.learning_rate!r} batch={spec.batch_size} "
                      f"epochs={spec.epochs} cores={spec.total_cores}")
        result = self.campaign.execute(spec)
        self.store.record(result)
        self.finished[(spec.run, spec.replicate)] = result
        self.executed += 1
        figures = (f"wall clock {result.wall_clock_s:.1f} s, accuracy {result.accuracy:.4f}"
                   if result.status == "ok" else result.reason)
        self.progress(f"run {spec.key} {result.status}: {figures} (elapsed {result.elapsed_s:.0f} s)")
        return result


def submit_options(out: Path, cluster: ClusterOptions, train_samples: int | None, test_samples: int | None,
                   seed: int = 42, data_dir: Path | None = None) -> SubmitOptions:
    return SubmitOptions(master_url=f"spark://127.0.0.1:{cluster.port}", executor_memory=cluster.executor_memory,
                         driver_memory=cluster.driver_memory, data_dir=data_dir, train_samples=train_samples,
                         test_samples=test_samples, seed=seed)


@contextmanager
def open_session(out: Path, settings: dict[str, object], options: SubmitOptions, cluster: ClusterOptions,
                 shapes: Sequence[RunSpec], resume: bool, progress: Progress = lambda _: None,
                 backend: Backend | None = None, runner: Runner | None = None,
                 env: SparkEnv | None = None) -> Iterator[JobSession]:
    """Open the store (refusing another search's directory), start the cluster, yield a session.

    ``shapes`` are specs of every job shape the session may run (they size the local workers).
    ``backend``/``runner``/``env`` replace the local cluster and spark-submit (tests pass fakes).
    """
    store = ResultStore(out)
    try:
        store.check_design(settings_digest(settings), resume)
        if backend is None:
            local = LocalCluster(cluster.state_dir, port=cluster.port, webui_port=cluster.webui_port,
                                 progress=progress)
            backend = LocalBackend(local, parse_memory_mb(cluster.executor_memory), cluster.keep_cluster, progress)
        env = env or discover()
        backend.open(list(shapes))
        try:
            store.set_meta({"design_sha256": settings_digest(settings), "search": settings,
                            "cluster": backend.describe(), "created": store.meta().get("created", now()),
                            "updated": now()})
            campaign_settings = CampaignSettings(out=Path(out), options=options, timeout=cluster.timeout,
                                                 retries=cluster.retries, resume=resume)
            campaign = Campaign(campaign_settings, backend, env, runner or ProcessRunner(), store, progress)
            campaign.recover_interrupted()  # ends jobs a killed search left running; their cells run again
            yield JobSession(campaign, store, progress)
        finally:
            backend.close()
    finally:
        store.close()
