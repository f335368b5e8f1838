"""Where runs go: a cluster the harness may rescale (local), or a fixed one (``--master URL``).

A backend answers three questions for the campaign loop: which master to submit to,
whether every run fits (checked before the first job: Spark standalone would wait
forever otherwise), and how to make the cluster match one run (``prepare``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Protocol, Sequence

from cluster import cds, natives
from cluster import runtime as runtimes
from cluster.errors import ClusterError, EnvironmentProblem, NotRunning
from cluster.local import LocalCluster
from cluster.master import AppInfo, MasterState, fetch_state
from cluster.processes import available_memory_mb  # noqa: F401 (part of this module's interface)
from cluster.sparkenv import SparkEnv
from harness.errors import CapacityError
from harness.runner import ProcessRunner, Runner
from sparkdl.runspec import RunSpec
from sparkdl.crash import crash_point

Progress = Callable[[str], None]


class Backend(Protocol):
    """Where runs go. ``open`` first; ``environment`` then gives the Spark environment and runner of its drivers.

    ``environment_for(runtime, jvm)`` is the Spark environment of one run: its runtime's (prepared
    on first use), with the start-up tuning when ``jvm`` is ``tuned`` and the backend applies any.
    """

    master_url: str
    drivers_here: bool  # spark-submit runs on this machine: the runs' runtimes are prepared here

    def open(self, specs: Sequence[RunSpec], runtime: str = ...) -> None: ...
    def environment(self) -> tuple[SparkEnv, Runner]: ...
    def environment_for(self, runtime: str, jvm: str) -> SparkEnv: ...
    def check(self, spec: RunSpec) -> list[str]: ...
    def prepare(self, spec: RunSpec) -> None: ...
    def describe(self) -> dict[str, object]: ...
    def find_app(self, name: str) -> AppInfo | None: ...
    def close(self) -> None: ...


@dataclass(frozen=True)
class WorkerSize:
    """What each worker offers so that every run of a design fits on its nodes."""

    cores: int
    memory_mb: int

    @classmethod
    def for_design(cls, specs: Sequence[RunSpec], executor_memory_mb: int) -> "WorkerSize":
        most = max(s.executors for s in specs)
        return cls(cores=max(s.cores_per_node for s in specs), memory_mb=most * executor_memory_mb)


def capacity_problems(spec: RunSpec, state: MasterState, executor_memory_mb: int, need_exact_nodes: bool) -> list[str]:
    """Why ``spec`` cannot run on the cluster ``state`` describes (empty when it can)."""
    workers = state.alive_workers
    problems = []
    if len(workers) < spec.nodes:
        problems.append(f"nodes={spec.nodes} but the cluster has {len(workers)} alive worker(s): "
                        "add workers or lower nodes")
    elif need_exact_nodes and len(workers) != spec.nodes:
        problems.append(f"nodes={spec.nodes} but the fixed cluster has {len(workers)} alive workers and Spark spreads "
                        "executors over all of them: use --local (it rescales) or a cluster of that size")
    fitting = [w for w in workers
               if w.cores >= spec.cores_per_node and w.memory_mb >= spec.executors * executor_memory_mb]
    if len(fitting) < spec.nodes and workers:
        best = max(workers, key=lambda w: (w.cores, w.memory_mb))
        problems.append(
            f"executors x executor_cores = {spec.executors} x {spec.executor_cores} needs {spec.cores_per_node} cores "
            f"and {spec.executors * executor_memory_mb} MB on each of {spec.nodes} worker(s); the largest worker offers "
            f"{best.cores} cores and {best.memory_mb} MB: lower executors/executor_cores or --executor-memory")
    return problems


class FixedBackend:
    """An existing standalone cluster that the harness does not rescale."""

    drivers_here = True

    def __init__(self, master_url: str, webui_url: str, executor_memory_mb: int) -> None:
        self.master_url, self.webui_url = master_url, webui_url
        self.executor_memory_mb = executor_memory_mb
        self._state: MasterState | None = None
        self.runtime = runtimes.DEFAULT

    def open(self, specs: Sequence[RunSpec], runtime: str = runtimes.DEFAULT) -> None:
        try:
            self._state = fetch_state(self.webui_url)
        except NotRunning as e:
            raise CapacityError(f"{e} (pass --master-webui if its web UI is not on port 8080)") from e
        self.runtime = runtime

    def environment(self) -> tuple[SparkEnv, Runner]:
        """Drivers run on this machine, with spark-submit from the first run's runtime."""
        return self.environment_for(self.runtime, "stock"), ProcessRunner()

    def environment_for(self, runtime: str, jvm: str) -> SparkEnv:
        """The runtime's stock environment: the master is someone else's, its JVMs are not ours to tune."""
        return prepared_env(runtime)

    def check(self, spec: RunSpec) -> list[str]:
        assert self._state is not None, "open() first"
        return capacity_problems(spec, self._state, self.executor_memory_mb, need_exact_nodes=True)

    def prepare(self, spec: RunSpec) -> None:
        problems = capacity_problems(spec, fetch_state(self.webui_url), self.executor_memory_mb, True)
        if problems:
            raise CapacityError(f"run {spec.key}: {problems[0]}")

    def describe(self) -> dict[str, object]:
        st = self._state
        return {"backend": "fixed", "master": self.master_url,
                "workers": [{"id": w.id, "cores": w.cores, "memory_mb": w.memory_mb} for w in st.alive_workers] if st else []}

    def find_app(self, name: str) -> AppInfo | None:
        return _latest_app(fetch_state(self.webui_url), name)

    def close(self) -> None:
        pass


def prepared_env(runtime: str, local_ip: str = "127.0.0.1", progress: Progress = lambda _: None) -> SparkEnv:
    """A runtime's Spark environment, its environment built first if it was never prepared."""
    rt = runtimes.resolve(runtime)
    done = runtimes.prepare(rt, progress=progress)
    return runtimes.spark_env(rt, done.path, local_ip=local_ip)


def _latest_app(state: MasterState, name: str) -> AppInfo | None:
    apps = [a for a in (*state.active_apps, *state.completed_apps) if a.name == name]
    return max(apps, key=lambda a: a.id) if apps else None


class LocalBackend:
    """The loopback cluster of :mod:`cluster.local`, rescaled to each run's ``nodes``, restarted on each runtime change.

    ``owner`` names the campaign (its folder). The cluster records the owner that started its
    master, so a campaign resumed after its harness was killed adopts the cluster its
    predecessor started and stops it at the end, as the original would have; a cluster that
    was already running for someone else is reused (when it runs the run's runtime) and left running.

    A Spark 4 application does not run on a Spark 3.1 master: the cluster runs one runtime at a
    time (recorded in its state), and a run of another runtime restarts it with that runtime's Spark.
    """

    drivers_here = True
    #: Tuned JVMs: the parallel collector, Java 8's default, which Spark 3.1 was built for.
    #: JDK 11 picks G1 on any machine of 2 cores; G1's start-up and concurrent threads cost each
    #: executor's first tasks CPU that the others need (on 2 cores, a run of 4 executors spent
    #: 1.3 s less outside training with it; training itself took as long).
    GC = ("-XX:+UseParallelGC",)
    #: Tuned JVMs compile with C1 only. The driver and the executors share this machine's
    #: few cores, and C2's compiler threads took CPU the tasks needed on short BigDL runs (bench/jit.py):
    #: on 2 cores a LeNet run of 4 executors took 19.5 s tuned instead of 48.3 s stock. On long runs C2's
    #: faster code wins: MLlib's perceptron trained 400 iterations in 622 s with C1 against 72 s (bench/jit.py),
    #: a pyspark.ml random forest 48 % slower. So a job gets it only when it asks (``jvm = "tuned"``).
    JIT = ("-XX:TieredStopAtLevel=1",)

    def __init__(self, cluster: LocalCluster, executor_memory_mb: int, keep_running: bool = False,
                 progress: Progress = lambda _: None, owner: str | None = None, plain_jvm: bool = False) -> None:
        self.cluster = cluster
        self.plain_jvm = plain_jvm  # --plain-jvm: stock JVMs even for jobs that ask for the tuning
        self.executor_memory_mb = executor_memory_mb
        self.keep_running = keep_running
        self.progress = progress
        self.owner = owner
        self.size: WorkerSize | None = None
        self.started_here = False
        self.runtime: str | None = None  # the runtime the cluster runs now
        self._envs: dict[str, SparkEnv] = {}
        self._tuning: dict[str, tuple[cds.Archive | None, Path | None]] = {}
        self.tuned_used = False

    @property
    def master_url(self) -> str:
        return self.cluster.master_url

    def open(self, specs: Sequence[RunSpec], runtime: str = runtimes.DEFAULT) -> None:
        """Start (or adopt, or reuse) the cluster on the first run's ``runtime``."""
        self.size = WorkerSize.for_design(specs, self.executor_memory_mb)
        if self.owner is not None:
            self.cluster.serve(self.owner)  # `cluster stop` sweeps what its killed drivers leave
        low = low_disk_warning(self.cluster.state_dir)
        if low:
            self.progress(low)
        status = self.cluster.status()
        adopted = status.running and self.owner is not None and status.owner == self.owner
        # opened again (a bench's campaigns share one backend): the cluster this backend started stays its own
        self.started_here = self.started_here or not status.running or adopted
        if status.running and status.runtime != runtime and not self.started_here:
            raise ClusterError(f"the local cluster at {self.cluster.master_url} runs runtime {status.runtime} for "
                               f"someone else, and the first run needs {runtime}: stop it (sparkdl cluster "
                               "stop) or use another --state-dir and --port")
        # a running cluster keeps its workers until the first run's prepare() rescales it
        first = status.workers_started if status.running and status.workers_started else (specs[0].nodes if specs else 1)
        how = ("starting" if not status.running else
               "adopting the cluster this campaign started before it was stopped:" if adopted else "reusing")
        self.progress(f"local cluster: workers of {self.size.cores} cores and {self.size.memory_mb} MB "
                      f"({how} {self.cluster.master_url}, runtime {runtime})")
        self._switch(runtime, first)

    def _env(self, runtime: str) -> SparkEnv:
        if runtime not in self._envs:
            self._envs[runtime] = replace(prepared_env(runtime, self.cluster.host, self.progress), ship_jars=False)
        return self._envs[runtime]

    def _switch(self, runtime: str, workers: int) -> None:
        """Make the cluster run ``runtime`` with ``workers`` workers (a restart when it ran another)."""
        assert self.size is not None, "open() first"
        env = self._env(runtime)
        status = self.cluster.status()
        if status.running and status.runtime not in (None, runtime):
            if not self.started_here:
                raise ClusterError(f"a run needs runtime {runtime} but the local cluster runs {status.runtime} for "
                                   "someone else: stop it (sparkdl cluster stop), or run one runtime")
            self.progress(f"restarting the local cluster on runtime {runtime} (it ran {status.runtime})")
            self.cluster.stop()
            crash_point("runtime-switch")  # the old cluster stopped, the new one not started
        self.cluster.use(env)
        try:
            self.cluster.start(workers, self.size.cores, self.size.memory_mb, owner=self.owner)
        except ClusterError as e:
            raise ClusterError(f"cannot start the local cluster: {e}") from e  # exit 4: the environment
        self.runtime = runtime

    def _tuned(self, runtime: str, env: SparkEnv) -> tuple[cds.Archive | None, Path | None]:
        """The runtime's class-data archive and unpacked MKL, built once each (when it has them)."""
        if runtime not in self._tuning:
            archive = self._archive(env) if env.class_data_list is not None else None
            mkl = self._natives(env) if env.natives_jar is not None else None
            self._tuning[runtime] = (archive, mkl)
        return self._tuning[runtime]

    def _natives(self, env: SparkEnv) -> Path | None:
        """BigDL's MKL, unpacked once; without it (said once) every JVM unpacks its own copy, as Spark would."""
        try:
            return natives.ensure(env, env.cache_dir)
        except EnvironmentProblem as e:
            self.progress(f"warning: {e}; every JVM unpacks BigDL's MKL itself")
            return None

    def _archive(self, env: SparkEnv) -> cds.Archive | None:
        """This runtime's class-data archive; without one (said once) runs start as plain JVMs."""
        try:
            archive = cds.ensure(env, progress=self.progress, class_list=env.class_data_list or cds.CLASS_LIST)
        except EnvironmentProblem as e:
            self.progress(f"warning: {e}; the runs' JVMs start without a class-data archive")
            return None
        if any(c.isspace() for c in str(archive.path)):  # Spark splits extraJavaOptions at white space
            self.progress(f"warning: the class-data archive's path {archive.path} has a space; runs start without it")
            return None
        return archive

    def environment(self) -> tuple[SparkEnv, Runner]:
        """Drivers run on this machine, with spark-submit from the cluster's current runtime (stock JVMs)."""
        return self._env(self.runtime or runtimes.DEFAULT), ProcessRunner()

    def environment_for(self, runtime: str, jvm: str) -> SparkEnv:
        """One run's environment: its runtime's, read in place by executors, tuned when the job asks.

        A run of another runtime than the cluster's restarts the cluster on it (the next prepare()
        sizes it).
        """
        env = self._env(runtime)
        if self.runtime != runtime:
            self._switch(runtime, self.cluster.status().workers_started or 1)
        if jvm != "tuned" or self.plain_jvm:
            return env
        self.tuned_used = True
        archive, mkl = self._tuned(runtime, env)
        return self.local_env(env, True, archive, mkl)

    @classmethod
    def local_env(cls, env: SparkEnv, tuned_jvm: bool, archive: cds.Archive | None, mkl: Path | None) -> SparkEnv:
        """env as the local backend runs it (see :meth:`environment_for`); also what a dry run prints."""
        env = replace(env, ship_jars=False)
        if not tuned_jvm:
            return env
        shared = archive.java_options() if archive is not None else ()
        tuned = (*shared, *cls.GC, *cls.JIT)
        return replace(env, driver_java_options=tuned, executor_java_options=tuned, library_path=mkl)

    def check(self, spec: RunSpec) -> list[str]:
        """Workers are sized for the design; what can still not fit is the machine's memory."""
        need = spec.nodes * spec.executors * self.executor_memory_mb
        available = available_memory_mb()
        if available is not None and need > available:
            return [f"{spec.nodes} node(s) x {spec.executors} executor(s) x {self.executor_memory_mb} MB = {need} MB "
                    f"of executor memory, but this machine has {available} MB available: lower --executor-memory, "
                    "nodes or executors"]
        return []

    def prepare(self, spec: RunSpec) -> None:
        assert self.size is not None, "open() first"
        if self.cluster.status().workers_started != spec.nodes:
            self.progress(f"scaling the local cluster to {spec.nodes} worker(s)")
            crash_point("rescale")
        self.cluster.scale(spec.nodes, self.size.cores, self.size.memory_mb)

    def reset(self, spec: RunSpec, runtime: str) -> None:
        """Start a new whole plot on a newly started cluster of ``spec.nodes`` workers running ``runtime`` (one
        restart, also when the runtime changes; a cluster of someone else's is left as it is: not ours to restart)."""
        assert self.size is not None and self.runtime is not None, "open() first"
        if not self.started_here:
            return
        crash_point("rescale")
        switching = runtime != self.runtime
        if switching:
            self.progress(f"restarting the local cluster on runtime {runtime} (it ran {self.runtime})")
        self.cluster.stop()
        if switching:
            crash_point("runtime-switch")  # the old cluster stopped, the new one not started
        self._switch(runtime, spec.nodes)

    def describe(self) -> dict[str, object]:
        assert self.size is not None
        tuned = {name: {"class_data_archive": None if a is None else str(a.path),
                        "mkl_library_path": None if m is None else str(m)} for name, (a, m) in self._tuning.items()}
        return {"backend": "local", "master": self.master_url, "worker_cores": self.size.cores,
                "worker_memory_mb": self.size.memory_mb, "state_dir": str(self.cluster.state_dir),
                "runtime": self.runtime, "plain_jvm": self.plain_jvm,
                "tuned_jvm_options": list((*self.GC, *self.JIT)), "tuning": tuned}

    def find_app(self, name: str) -> AppInfo | None:
        return _latest_app(fetch_state(self.cluster.webui_url), name)

    def close(self) -> None:
        if self.started_here and not self.keep_running:
            self.cluster.stop()


#: Below this much free disk under the cluster's folder, a campaign warns (remote hosts: ``remote.min_free``).
MIN_FREE_MB = 2048


def low_disk_warning(path: Path, floor_mb: int = MIN_FREE_MB) -> str | None:
    """A warning when the file system of ``path`` (or its nearest existing folder) has less than ``floor_mb`` free."""
    probe = Path(path).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    st = os.statvfs(probe)
    free = st.f_bavail * st.f_frsize // (1024 * 1024)
    if free >= floor_mb:
        return None
    return (f"warning: this machine has {free} MB free under {path}, below {floor_mb} MB: runs may fail with "
            "`No space left on device` (free some space, or use another --state-dir)")
