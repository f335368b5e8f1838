"""Runs on real machines: the inventory's hosts, provisioned and rescaled over SSH.

    backend = RemoteBackend(RemoteCluster(load_inventory("inventory.toml")), executor_memory_mb=700,
                            logs_dir=out / "cluster-logs")
    backend.open(specs)                   # provision (idempotent), master, first run's workers
    Campaign(settings, backend, backend.spark_env, backend.runner(), store).run(specs)
    backend.close()                       # executor and daemon logs into logs_dir

Where the driver runs: on the master host, through SSH (``python -m cluster.daemon run``),
with spark-submit's stdout and stderr streamed back into the campaign's ``logs/`` files as
they are written. A driver on this machine in client mode would need every worker to
reach this machine (executors connect back to the driver: fails behind NAT or a cloud
firewall) and this machine's paths (python, BigDL jars) to exist on every worker. On the
master host both hold by construction, and the only port the controller needs is SSH.
The run's argv is built by :func:`harness.command.submit_argv` from the master host's
:class:`~cluster.sparkenv.SparkEnv` (remote paths); the one local path in it, the job
script, is swapped for the installed copy on the host.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from cluster.errors import ClusterError, NotRunning
from cluster.inventory import Inventory
from cluster.master import AppInfo
from cluster.remote import RemoteCluster
from cluster.sparkenv import SparkEnv
from cluster.ssh import CommandTimeout, SSHError
from harness.backends import _latest_app
from harness.command import JOB_SCRIPT
from harness.errors import CapacityError
from harness.runner import Completed, OnStart
from harness.runspec import RunSpec

Progress = Callable[[str], None]


def inventory_problems(spec: RunSpec, inventory: Inventory, executor_memory_mb: int) -> list[str]:
    """Why ``spec`` cannot run on the first ``nodes`` workers of the inventory (empty when it can)."""
    workers = inventory.workers
    if spec.nodes > len(workers):
        return [f"nodes={spec.nodes} but the inventory lists {len(workers)} worker(s): add [[workers]] or lower nodes"]
    need_mb = spec.executors * executor_memory_mb
    problems = []
    for w in workers[:spec.nodes]:
        if w.cores < spec.cores_per_node or w.memory_mb < need_mb:
            problems.append(
                f"executors x executor_cores = {spec.executors} x {spec.executor_cores} needs {spec.cores_per_node} "
                f"cores and {need_mb} MB on each worker; {w.name} ({w.host}) offers {w.cores} cores and "
                f"{w.memory_mb} MB: raise its cores/memory in the inventory or lower executors/executor_cores")
    return problems


class RemoteRunner:
    """The campaign's :class:`~harness.runner.Runner`: spark-submit runs on the master host."""

    def __init__(self, cluster: RemoteCluster, job_script: str) -> None:
        self.cluster = cluster
        self.paths = {str(JOB_SCRIPT): job_script}

    def remote_argv(self, argv: list[str]) -> list[str]:
        """This machine's job files (jobs/*.py of the built-in jobs) as the master host's copies."""
        local_dir, remote_dir = str(JOB_SCRIPT.parent) + "/", self.paths[str(JOB_SCRIPT)].rsplit("/", 1)[0] + "/"
        return [self.paths.get(a, remote_dir + a[len(local_dir):] if a.startswith(local_dir) else a) for a in argv]

    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path, timeout: float | None,
            on_start: OnStart | None = None) -> Completed:
        """Stream the driver's output into ``out``/``err``; ``env`` is this machine's and is not used.

        ``on_start`` is not called: there is no local process to record. A harness that dies
        closes the SSH channel, and ``cluster.daemon run`` then ends the driver on the host.
        """
        started = time.monotonic()
        code, timed_out = 255, False
        with open(out, "w", encoding="utf-8", errors="replace") as fout, \
                open(err, "w", encoding="utf-8", errors="replace") as ferr:
            try:
                code = self.cluster.run_driver(self.remote_argv(argv), fout, ferr, timeout).exit_code
            except CommandTimeout:
                code, timed_out = -9, True
            except SSHError as e:
                ferr.write(f"error: {e}\n")
        return Completed(tuple(argv), code, time.monotonic() - started, timed_out)


class RemoteBackend:
    """The inventory's cluster, rescaled to each run's ``nodes``; logs collected on close."""

    def __init__(self, cluster: RemoteCluster, executor_memory_mb: int, logs_dir: Path | None = None,
                 keep_running: bool = False, provision: bool = True, progress: Progress = lambda _: None) -> None:
        self.cluster = cluster
        self.executor_memory_mb = executor_memory_mb
        self.logs_dir = logs_dir
        self.keep_running = keep_running
        self.provision = provision
        self.progress = progress
        self.started_here = False
        self.workers: int | None = None
        self._env: tuple[SparkEnv, str] | None = None

    @property
    def master_url(self) -> str:
        return self.cluster.master_url

    @property
    def spark_env(self) -> SparkEnv:
        """The master host's Spark environment; the campaign builds each argv from it."""
        assert self._env is not None, "open() first"
        return self._env[0]

    def runner(self) -> RemoteRunner:
        assert self._env is not None, "open() first"
        return RemoteRunner(self.cluster, self._env[1])

    def environment(self) -> tuple[SparkEnv, RemoteRunner]:
        """Drivers run on the master host, with its paths and its spark-submit."""
        return self.spark_env, self.runner()

    def open(self, specs: Sequence[RunSpec]) -> None:
        try:
            if self.provision:
                self.progress(f"provisioning {len(self.cluster.inv.hosts)} host(s) (idempotent)")
                self.progress(self.cluster.provision().raise_on_failure().describe())
            try:
                self.cluster.master_state()
            except NotRunning:
                self.started_here = True
            self.progress(f"{'starting' if self.started_here else 'reusing'} the master {self.master_url}")
            self.cluster.start_master().raise_on_failure()
            self._env = self.cluster.spark_env()
            if specs:
                self.prepare(specs[0])
        except ClusterError as e:
            raise CapacityError(f"cannot start the remote cluster: {e}") from e

    def check(self, spec: RunSpec) -> list[str]:
        return inventory_problems(spec, self.cluster.inv, self.executor_memory_mb)

    def prepare(self, spec: RunSpec) -> None:
        if self.workers != spec.nodes:
            self.progress(f"scaling the remote cluster to {spec.nodes} worker(s)")
        self.cluster.scale(spec.nodes)
        self.workers = spec.nodes

    def describe(self) -> dict[str, object]:
        inv = self.cluster.inv
        return {"backend": "remote", "inventory": str(inv.path), "master": self.master_url,
                "master_host": inv.master.host, "base_dir": str(inv.remote.base_dir),
                "workers": [{"name": w.name, "host": w.host, "cores": w.cores, "memory_mb": w.memory_mb}
                            for w in inv.workers]}

    def find_app(self, name: str) -> AppInfo | None:
        try:
            return _latest_app(self.cluster.master_state(), name)
        except ClusterError:
            return None

    def close(self) -> None:
        try:
            if self.logs_dir is not None:
                result = self.cluster.collect_logs(self.logs_dir)
                self.progress(f"cluster logs in {self.logs_dir}" + ("" if result.ok else f"; {len(result.failed)} host(s) "
                              f"failed: {'; '.join(r.describe() for r in result.failed)}"))
            if self.started_here and not self.keep_running:
                self.cluster.stop()
        finally:
            self.cluster.close()
