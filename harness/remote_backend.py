"""Runs on real machines: the inventory's hosts, provisioned and rescaled over SSH.

    backend = RemoteBackend(RemoteCluster(load_inventory("inventory.toml")), executor_memory_mb=700,
                            logs_dir=out / "cluster-logs")
    backend.open(specs, "bigdl")          # provision and prepare the runtime (idempotent), master, first workers
    env = backend.environment_for("spark4", "stock")   # the cluster restarted on another runtime
    backend.close()                       # executor and daemon logs into logs_dir

Runtimes: every host prepares the runtimes the runs need under ``<base>/runtimes`` (at ``open``
for the first run's, on first use for the others). The master and workers run one runtime: a run
of another restarts them on it (the campaign runs the rows of one runtime together, so a design
that mixes two restarts the cluster once). The hosts' JVMs are the runtime's stock JVMs: the
local backend's start-up tuning (``jvm = "tuned"``) is not applied there, only recorded.

Where the driver runs: on the master host, through SSH (``python -m cluster.daemon run``),
with spark-submit's stdout and stderr streamed back into the campaign's ``logs/`` files as
they are written. A driver on this machine in client mode would need every worker to
reach this machine (executors connect back to the driver: fails behind NAT or a cloud
firewall) and this machine's paths (python, BigDL jars) to exist on every worker. On the
master host both hold by construction, and the only port the controller needs is SSH.
The run's argv is built by :func:`harness.command.submit_argv` from the master host's
:class:`~cluster.sparkenv.SparkEnv` (remote paths); the one local path in it, the job
script, is swapped for the installed copy on the host.

Lost hosts. A host that stops answering SSH is an infrastructure failure with its cause, never a
bug. After a run fails on the infrastructure, :meth:`RemoteBackend.lost` probes the run's hosts
(a fresh SSH connection running ``true``) and names the ones down; their workers are not used
until a probe finds them back (:meth:`RemoteBackend.unavailable`, before each attempt: a retry
waits up to ``remote.host_wait`` seconds for them). Runs that fit on the remaining workers go
on; a run that needs more workers, or any run once the master's host is lost, is not run
(:class:`~cluster.errors.HostLost`). The campaign that starts the master and workers is recorded
on the hosts as their owner (``cluster.daemon --owner``): a resumed campaign adopts what its
predecessor started and stops it at its end; a host it cannot reach then is named in one line
with the ``fab stop`` command. Before the first run each host's free disk under its workers'
folders is checked against ``remote.min_free`` (a warning below it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from cluster import runtime as runtimes
from cluster.errors import ClusterError, HostLost, NotRunning
from cluster.inventory import Inventory
from cluster.master import AppInfo
from cluster.remote import RemoteCluster
from cluster.sparkenv import SparkEnv
from cluster.ssh import CommandTimeout, SSHError
from harness.backends import _latest_app
from harness.command import JOB_SCRIPT, METRICS_FLAG
from harness.errors import CapacityError
from harness.runner import Completed, OnStart
from sparkdl.runspec import RunSpec

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
    """The campaign's :class:`~harness.runner.Runner`: spark-submit runs on the master host.

    A ``json`` job writes its figures on the master host (``<base>/hosts/<master>/runs/<key>/``);
    they are fetched into the campaign's run folder when the job succeeds.
    """

    def __init__(self, cluster: RemoteCluster, job_script: str) -> None:
        self.cluster = cluster
        self.paths = {str(JOB_SCRIPT): job_script}

    def remote_metrics(self, local: str) -> str:
        """Where the master host's driver writes the figures meant for ``local`` (OUT/runs/<key>/metrics.json)."""
        path = Path(local)
        return f"{self.cluster.layout.host_dir(self.cluster.inv.master.host)}/runs/{path.parent.name}/{path.name}"

    def remote_argv(self, argv: list[str]) -> list[str]:
        """This machine's job files (jobs/*.py of the built-in jobs) and figures file as the master host's."""
        local_dir, remote_dir = str(JOB_SCRIPT.parent) + "/", self.paths[str(JOB_SCRIPT)].rsplit("/", 1)[0] + "/"
        out = [self.paths.get(a, remote_dir + a[len(local_dir):] if a.startswith(local_dir) else a) for a in argv]
        return [self.remote_metrics(a) if i and out[i - 1] == METRICS_FLAG else a for i, a in enumerate(out)]

    def _metrics(self, argv: list[str]) -> str | None:
        return argv[argv.index(METRICS_FLAG) + 1] if METRICS_FLAG in argv[:-1] else None

    def _fetch_metrics(self, local: str) -> None:
        """Bring the job's figures back; without them the campaign reports the run's missing figures."""
        try:
            self.cluster.transport.get(self.cluster.inv.master.host, self.remote_metrics(local), Path(local))
        except SSHError:
            pass

    def run(self, argv: list[str], env: Mapping[str, str], out: Path, err: Path, timeout: float | None,
            on_start: OnStart | None = None) -> Completed:
        """Stream the driver's output into ``out``/``err``; ``env`` is this machine's and is not used.

        ``on_start`` is not called: there is no local process to record. A harness that dies
        closes the SSH channel, and ``cluster.daemon run`` then ends the driver on the host.
        """
        started = time.monotonic()
        code, timed_out = 255, False
        metrics = self._metrics(argv)
        with open(out, "w", encoding="utf-8", errors="replace") as fout, \
                open(err, "w", encoding="utf-8", errors="replace") as ferr:
            try:
                if metrics is not None:  # figures an earlier attempt left there must not count for this one
                    self.cluster.transport.run(self.cluster.inv.master.host,
                                               ["rm", "-f", "--", self.remote_metrics(metrics)], 60)
                code = self.cluster.run_driver(self.remote_argv(argv), fout, ferr, timeout).exit_code
            except CommandTimeout:
                code, timed_out = -9, True
            except SSHError as e:  # the master's host went away under the driver: the cluster's failure, not the job's
                ferr.write(f"error: Spark lost its driver: SSH to the master host broke ({e})\n")
        if metrics is not None and code == 0:
            self._fetch_metrics(metrics)
        return Completed(tuple(argv), code, time.monotonic() - started, timed_out)


class RemoteBackend:
    """The inventory's cluster, rescaled to each run's ``nodes``; logs collected on close."""

    #: Drivers run on the master host, with its runtimes: nothing is prepared on this machine.
    drivers_here = False

    def __init__(self, cluster: RemoteCluster, executor_memory_mb: int, logs_dir: Path | None = None,
                 keep_running: bool = False, provision: bool = True, progress: Progress = lambda _: None,
                 owner: str | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.cluster = cluster
        self.owner = cluster.owner = owner
        self.sleep = sleep
        self.used: tuple[str, ...] = ()  # the hosts of the current run's workers (prepare)
        self.not_stopped: list[str] = []  # hosts whose daemons close() could not stop
        self.executor_memory_mb = executor_memory_mb
        self.logs_dir = logs_dir
        self.keep_running = keep_running
        self.provision = provision
        self.progress = progress
        self.started_here = False
        self.workers: int | None = None
        self.runtime: str | None = None  # the runtime the cluster runs now
        self._envs: dict[str, tuple[SparkEnv, str]] = {}  # per runtime: the master host's env, its jobs/train.py
        self._prepared: set[str] = set()  # runtimes prepared on every host by this backend
        self.jvm_requested: dict[str, list[str]] = {}  # per runtime: the JVM choices runs asked for (not applied)

    @property
    def master_url(self) -> str:
        return self.cluster.master_url

    @property
    def spark_env(self) -> SparkEnv:
        """The master host's Spark environment of the current runtime; the campaign builds each argv from it."""
        assert self.runtime is not None, "open() first"
        return self._envs[self.runtime][0]

    def runner(self) -> RemoteRunner:
        assert self.runtime is not None, "open() first"
        return RemoteRunner(self.cluster, self._envs[self.runtime][1])

    def environment(self) -> tuple[SparkEnv, RemoteRunner]:
        """Drivers run on the master host, with its paths and its spark-submit."""
        return self.spark_env, self.runner()

    def open(self, specs: Sequence[RunSpec], runtime: str = runtimes.DEFAULT) -> None:
        """Provision the hosts and prepare ``runtime`` on them, start the master on it and the first run's workers."""
        try:
            if self.provision:
                self.progress(f"provisioning {len(self.cluster.inv.hosts)} host(s) and runtime {runtime} (idempotent)")
                self.progress(self.cluster.provision(runtimes=[runtime]).raise_on_failure().describe())
                self._prepared.add(runtime)
            for line in self.disk_warnings():
                self.progress(line)
            adopted = False
            try:
                self.cluster.master_state()
            except NotRunning:
                self.started_here = True
            else:
                adopted = self.owner is not None and self.cluster.master_host_state().get("owner") == self.owner
                self.started_here = self.started_here or adopted
            if not self.started_here:
                self._refuse_other_runtime(runtime)
            how = ("adopting the master this campaign started before it stopped:" if adopted else
                   "starting" if self.started_here else "reusing")
            self.progress(f"{how} the master {self.master_url} (runtime {runtime})")
            self._start(runtime)
            if specs:
                self.prepare(specs[0])
        except HostLost:
            raise
        except ClusterError as e:
            down = self.cluster.check_hosts(self.cluster.inv.hosts)
            if down:  # one line naming the host, not a line per failed command
                host, why = next(iter(down.items()))
                raise HostLost(host, self._role(host), why, f"cannot start the remote cluster: lost the "
                               f"{self._role(host)} {host}: SSH fails ({why})", fatal=True) from e
            raise CapacityError(f"cannot start the remote cluster: {e}") from e

    def disk_warnings(self) -> list[str]:
        """One line per host whose state or work folders have less free disk than ``remote.min_free``."""
        floor = self.cluster.inv.remote.min_free_mb
        lines = []
        result = self.cluster.free_space()
        for r in result.results:
            if not r.ok:
                lines.append(f"warning: cannot measure the free disk of {r.host}: {r.detail}")
                continue
            low = {path: mb for path, mb in r.data.get("free_mb", {}).items() if mb < floor}
            if low:
                path, mb = min(low.items(), key=lambda kv: kv[1])
                lines.append(f"warning: {r.host} has {mb} MB free under {path}, below remote.min_free = {floor} MB: "
                             "its runs may fail with `No space left on device` (free some space, or lower min_free)")
        return lines

    # -- lost hosts
    def _role(self, host: str) -> str:
        inv = self.cluster.inv
        names = [w.name for w in inv.workers if w.host == host]
        roles = (["master"] if host == inv.master.host else []) + names
        return f"{'/'.join(roles)} host"

    def lost(self, spec: RunSpec) -> list[HostLost]:
        """After ``spec`` failed on the infrastructure: which of its hosts do not answer SSH (marked down)."""
        down = self.cluster.check_hosts([self.cluster.inv.master.host, *self.used])
        return [HostLost(h, self._role(h), why) for h, why in down.items()]

    def unavailable(self, spec: RunSpec, retry: bool = False) -> HostLost | None:
        """Why ``spec`` cannot start because a host is down (None when it can), after an SSH health check.

        Hosts known down are probed again; a host that answers is used again. A ``retry`` keeps probing
        every few seconds for up to ``remote.host_wait`` seconds. With the master's host down no run can start.
        """
        deadline = time.monotonic() + (self.cluster.inv.remote.host_wait_s if retry else 0.0)
        while self.cluster.down:
            before = set(self.cluster.down)
            self.cluster.check_hosts(sorted(before))
            for host in sorted(before - set(self.cluster.down)):
                self.progress(f"{host} answers over SSH again: its workers are used again")
            blocked = self._blocked(spec)
            if blocked is None or time.monotonic() >= deadline:
                return blocked
            self.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
        return None

    def _blocked(self, spec: RunSpec) -> HostLost | None:
        down = self.cluster.down
        master = self.cluster.inv.master.host
        if master in down:
            return HostLost(master, self._role(master), down[master], fatal=True)
        if len(self.cluster.usable_workers()) < spec.nodes:
            host = next(w.host for w in self.cluster.inv.workers if w.host in down)
            return HostLost(host, self._role(host), down[host],
                            f"nodes={spec.nodes} needs the workers of {host}, which does not answer over SSH "
                            f"({down[host]})")
        return None

    def _refuse_other_runtime(self, runtime: str) -> None:
        """A master someone else started is reused only when it runs the runtime the runs need."""
        running = self.cluster.running_runtime()
        wanted = runtimes.resolve(runtime).name
        if running is not None and running != wanted:
            raise ClusterError(f"the master {self.master_url} was already running, on runtime {running}, and the first "
                               f"run needs {wanted}: stop it (fab stop) or run runtime {running}")

    def _start(self, runtime: str) -> None:
        """Start the master (idempotent) with ``runtime`` and learn its environment on the master host."""
        self.cluster.use(runtime)
        self.cluster.start_master().raise_on_failure()
        if runtime not in self._envs:
            self._envs[runtime] = self.cluster.spark_env()
        self.runtime = runtime

    def environment_for(self, runtime: str, jvm: str) -> SparkEnv:
        """One run's environment: its runtime's on the master host; the cluster restarts on it when it runs another.

        ``jvm`` is recorded only: the hosts' JVMs are the runtime's own (no start-up tuning remotely).
        """
        choices = self.jvm_requested.setdefault(runtimes.resolve(runtime).name, [])
        if jvm not in choices:
            choices.append(jvm)
            if jvm != "stock":
                self.progress(f"runtime {runtime}: jvm = {jvm} is not applied on remote hosts (their JVMs are stock)")
        if runtime != self.runtime:
            self._switch(runtime)
        return self._envs[runtime][0]

    def _switch(self, runtime: str) -> None:
        """Stop the workers and the master, prepare ``runtime`` on every host (once), start them again on it."""
        if not self.started_here:
            raise ClusterError(f"a run needs runtime {runtime} but the master {self.master_url} runs {self.runtime} for "
                               "someone else: stop it (fab stop), or run one runtime")
        self.progress(f"restarting the remote cluster on runtime {runtime} (it ran {self.runtime})")
        if runtime not in self._prepared:
            self.progress(self.cluster.prepare_runtimes([runtime]).raise_on_failure().describe())
            self._prepared.add(runtime)
        self.cluster.stop().raise_on_failure()
        workers, self.workers = self.workers, None
        self._start(runtime)
        if workers:  # the next prepare() sizes it for its run
            self.cluster.scale(workers)
            self.workers = workers

    def check(self, spec: RunSpec) -> list[str]:
        return inventory_problems(spec, self.cluster.inv, self.executor_memory_mb)

    def prepare(self, spec: RunSpec) -> None:
        """Scale to the run's workers (the first ``nodes`` on hosts not down); a host found down raises HostLost."""
        if self.workers != spec.nodes:
            self.progress(f"scaling the remote cluster to {spec.nodes} worker(s)")
        try:
            self.cluster.scale(spec.nodes)
        except HostLost:
            raise
        except ClusterError as e:
            self.workers = None
            down = self.cluster.check_hosts(self.cluster.inv.hosts)
            if not down:
                raise
            for host, why in down.items():
                self.progress(f"{host} does not answer over SSH ({why}): its workers are not used until it does")
            blocked = self._blocked(spec)
            if blocked is not None:
                raise blocked from e
            self.cluster.scale(spec.nodes)  # on the remaining hosts
        self.workers = spec.nodes
        self.used = tuple(dict.fromkeys(w.host for w in self.cluster.workers_for(spec.nodes)))

    def describe(self) -> dict[str, object]:
        inv = self.cluster.inv
        return {"backend": "remote", "inventory": str(inv.path), "master": self.master_url,
                "master_host": inv.master.host, "base_dir": str(inv.remote.base_dir), "runtime": self.runtime,
                "runtimes_dir": self.cluster.layout.runtimes, "jvm_requested": dict(self.jvm_requested),
                "workers": [{"name": w.name, "host": w.host, "cores": w.cores, "memory_mb": w.memory_mb}
                            for w in inv.workers]}

    def find_app(self, name: str) -> AppInfo | None:
        try:
            return _latest_app(self.cluster.master_state(), name)
        except ClusterError:
            return None

    def close(self) -> None:
        """Collect the hosts' logs and stop what this campaign started; a host it cannot reach is named in one line."""
        try:
            if self.logs_dir is not None:
                result = self.cluster.collect_logs(self.logs_dir)
                self.progress(f"cluster logs in {self.logs_dir}" + ("" if result.ok else f"; {len(result.failed)} host(s) "
                              f"failed: {'; '.join(r.describe() for r in result.failed)}"))
            if self.started_here and not self.keep_running:
                failed = self.cluster.stop().failed
                self.not_stopped = list(dict.fromkeys(r.host for r in failed))
                if failed:
                    inv = self.cluster.inv
                    self.progress(f"could not stop the Spark daemons on {', '.join(self.not_stopped)} "
                                  f"({failed[0].detail}): they may still run; stop them with "
                                  f"`fab stop --inventory {inv.path}` once the host answers")
        finally:
            self.cluster.close()
