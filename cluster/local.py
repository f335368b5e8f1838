"""A real Spark standalone cluster on one machine: a master and N workers on loopback.

:class:`LocalCluster` starts, scales, inspects and stops it; ``sparkdl cluster`` (:mod:`cluster.cli`) is its command
line.

The processes are pip's pyspark ``spark-class`` Master and Worker (the pip wheel has no
``sbin/start-*.sh``), each in its own session with its log under ``STATE_DIR/logs``.
``STATE_DIR/state.json`` records every pid the backend started together with the
process start time, so ``stop`` never signals a recycled pid.

Crash safety: a daemon's intent (role, ports, size) is saved before it is spawned and its pid
right after, so a command killed at any instant leaves a state that the next command can
reconcile. Every command first matches ``state.json`` against the Spark processes of the state
directory (found by their cwd and ``--work-dir``, see :mod:`cluster.processes`): one that matches
an intent is adopted, any other is stopped; ``stop`` ends all of them. Every operation is
idempotent and waits until the master's JSON agrees.

The state also lists the campaign folders whose drivers ran on the cluster: ``stop`` removes
the driver scratch (``spark-tmp``) that killed runs left in those of them no harness still runs. The
executors' scratch is under ``STATE_DIR/scratch`` (never /tmp), which ``stop`` removes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from cluster.errors import ClusterError, NotRunning, PortInUse, StartupTimeout
from cluster.master import MasterState, fetch_state
from cluster.processes import (EXECUTOR_SCRATCH, MASTER_CLASS, WORKER_CLASS, Intent, ProcessRecord,  # noqa: F401
                               end_groups, end_process_group, executor_scratch_env, free_port, listener, log_tail,
                               port_free, reconcile, start_ticks, started_port, START_MARKER)
from cluster import runtime as runtimes
from cluster.sparkenv import SparkEnv
from cluster.runtime import discover
from sparkdl.cli import run_cli
from sparkdl.options import DEFAULT_MASTER_PORT, DEFAULT_STATE_DIR, DEFAULT_WEBUI_PORT, memory_mb as _memory_mb
from sparkdl.campaign import CampaignDir
from sparkdl.crash import crash_point
from sparkdl.errors import CampaignBusyError

Progress = Callable[[str], None]
#: How often a start asks the master's JSON whether the master, or a new worker, is up. Each wait ends on the first
#: poll after the event, so half this interval is lost on average, at every start and rescale of a campaign.
STARTUP_POLL_S = 0.1


def _quiet(_: str) -> None:
    pass


def parse_memory_mb(text: str | int) -> int:
    """'2g' -> 2048, '700m' -> 700, '1024' -> 1024 (MB), at least 256 MB and at most 16 TB
    (:func:`sparkdl.options.memory_mb`)."""
    try:
        return _memory_mb(text)
    except ValueError as e:
        raise ClusterError(str(e)) from None


# ---------------------------------------------------------------- state


@dataclass
class ClusterState:
    """``STATE_DIR/state.json``: the daemons started, the ones about to be, and who started the cluster.

    ``pending`` holds the write-ahead intents (saved before a daemon is spawned, replaced by its
    record once its pid is known); ``owner`` names the campaign that started the master, so a
    resumed campaign can adopt the cluster its killed predecessor started.
    """

    host: str
    port: int
    webui_port: int
    master: ProcessRecord | None = None
    workers: list[ProcessRecord] = field(default_factory=list)
    pending: list[Intent] = field(default_factory=list)
    owner: str | None = None
    runtime: str | None = None  # the runtime whose Spark the master and workers run (cluster/runtime.py)
    #: the campaign folders whose drivers ran on this cluster, until ``stop`` sweeps their scratch
    campaigns: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> "ClusterState | None":
        if not path.exists():
            return None
        try:
            d = json.loads(path.read_text())
            return cls(
                host=d["host"], port=d["port"], webui_port=d["webui_port"],
                master=ProcessRecord(**d["master"]) if d.get("master") else None,
                workers=[ProcessRecord(**w) for w in d.get("workers", [])],
                pending=[Intent(**i) for i in d.get("pending", [])],
                owner=d.get("owner"), runtime=d.get("runtime"),
                campaigns=[str(c) for c in d.get("campaigns", [])],
            )
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ClusterError(f"{path} is corrupt ({e}); run `sparkdl cluster stop --state-dir "
                               f"{path.parent}` after deleting it (stop finds the daemons without it)") from e

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps(asdict(self), indent=2))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def records(self) -> list[ProcessRecord]:
        return ([self.master] if self.master else []) + list(self.workers)


@dataclass(frozen=True)
class ClusterStatus:
    """What ``status`` reports: our processes, and what the master says."""

    master_url: str
    webui_url: str
    running: bool
    workers_started: int
    master: MasterState | None
    owner: str | None = None
    runtime: str | None = None

    def describe(self) -> str:
        if not self.running or self.master is None:
            return f"no local cluster running ({self.master_url})"
        lines = [f"master {self.master_url} ({self.master.status}), web UI {self.webui_url}"
                 + (f", runtime {self.runtime}" if self.runtime else "")]
        for w in self.master.alive_workers:
            lines.append(f"  {w.id}: {w.cores} cores ({w.cores_used} used), {w.memory_mb} MB ({w.memory_used_mb} used)")
        for a in self.master.active_apps:
            lines.append(f"  running app {a.id} {a.name!r}: {a.cores} cores")
        lines.append(f"{len(self.master.alive_workers)} worker(s) alive, {self.master.cores} cores"
                     + (f"; started by {self.owner}" if self.owner else ""))
        return "\n".join(lines)


# ---------------------------------------------------------------- the backend


class LocalCluster:
    """A standalone master and workers on ``host``, tracked under ``state_dir``.

    Every operation first reconciles ``state.json`` with the processes of the state directory
    (:func:`cluster.processes.reconcile`): daemons a killed command started are adopted when
    they match its write-ahead intent, any other stray is stopped. If an operation is
    interrupted (Ctrl-C, or SIGTERM/SIGHUP through :func:`sparkdl.cli.run_cli`), the daemons it
    started are stopped before the interrupt goes on.
    """

    def __init__(
        self,
        state_dir: Path = DEFAULT_STATE_DIR,
        host: str = "127.0.0.1",
        port: int = DEFAULT_MASTER_PORT,
        webui_port: int = DEFAULT_WEBUI_PORT,
        env: SparkEnv | None = None,
        progress: Progress = _quiet,
    ) -> None:
        self.state_dir = Path(state_dir).absolute()
        self.host, self.port, self.webui_port = host, port, webui_port
        self._env = env
        self.progress = progress
        self._spawned: list[ProcessRecord] = []
        self._starting = False  # inside start(): its spawns are the `cluster-start` crash point

    # -- paths and urls
    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{self.host}:{self.webui_port}"

    @property
    def env(self) -> SparkEnv:
        if self._env is None:  # the running cluster's runtime (a `scale` must start workers of the same Spark)
            state = ClusterState.load(self._state_path)
            self._env = discover(local_ip=self.host, runtime=(state and state.runtime) or runtimes.DEFAULT)
        return self._env

    def use(self, env: SparkEnv) -> None:
        """Start daemons from now on with ``env`` (a runtime's): stop the cluster first if it runs another."""
        self._env = env

    @property
    def _state_path(self) -> Path:
        return self.state_dir / "state.json"

    def _reconcile(self, state: ClusterState | None) -> ClusterState:
        """The state with every record alive, intents adopted or dropped and strays stopped."""
        if state is None:
            state = ClusterState(self.host, self.port, self.webui_port)
        found = reconcile(self.state_dir, state.records(), state.pending, progress=self.progress)
        master = next((r for r in found.records if r.role == "master"), None)
        workers = [r for r in found.records if r.role != "master"]
        if master is None:
            for w in workers:  # workers whose master died are of no use
                w.terminate()
            state = ClusterState(self.host, self.port, self.webui_port, campaigns=state.campaigns)
        else:
            # A running cluster keeps its own ports; later commands need not repeat them.
            self.host, self.port, self.webui_port = state.host, state.port, state.webui_port
            state.master, state.workers, state.pending = master, sorted(workers, key=_worker_order), []
        return state

    @contextlib.contextmanager
    def _locked(self) -> Iterator[ClusterState]:
        """Hold the state-dir lock; yield the reconciled state and save it afterwards."""
        (self.state_dir / "logs").mkdir(parents=True, exist_ok=True)
        with open(self.state_dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._reconcile(ClusterState.load(self._state_path))
            state.save(self._state_path)
            self._spawned = []
            try:
                yield state
            except KeyboardInterrupt:
                self._undo(state)
                raise
            finally:
                state.save(self._state_path)

    def _undo(self, state: ClusterState) -> None:
        """Stop what this operation started (it was interrupted), and any daemon it had not yet recorded."""
        for rec in reversed(self._spawned):
            rec.terminate()
            self.progress(f"{rec.role} stopped (the command was interrupted)")
            if rec is state.master:
                state.master, state.owner = None, None
            elif rec in state.workers:
                state.workers.remove(rec)
        state.pending = []
        if state.master is None:
            for w in state.workers:
                w.terminate()
            state.workers = []
        reconcile(self.state_dir, state.records(), (), progress=self.progress)
        self._spawned = []

    def _spawn(self, state: ClusterState, intent: Intent, argv: list[str],
               env: dict[str, str] | None = None) -> ProcessRecord:
        """Start one daemon: its intent is saved first, its pid right after (write-ahead). ``env``: added to the
        daemon's environment."""
        state.pending.append(intent)
        state.save(self._state_path)
        with open(intent.log, "ab") as out:
            out.write(f"{START_MARKER}{time.strftime('%Y-%m-%d %H:%M:%S')} starting {intent.role}\n".encode())
            out.flush()
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env={**self.env.daemon_environ(), **(env or {})}, cwd=self.state_dir, start_new_session=True,
            )
        crash_point(f"{'master' if intent.role == 'master' else 'worker'}-spawned")
        if self._starting:
            crash_point("cluster-start")
        rec = intent.record(proc.pid, start_ticks(proc.pid))
        state.pending.remove(intent)
        if rec.role == "master":
            state.master = rec
        else:
            state.workers.append(rec)
        self._spawned.append(rec)
        state.save(self._state_path)
        return rec

    def _master_state(self) -> MasterState | None:
        try:
            return fetch_state(self.webui_url, timeout=2.0)
        except NotRunning:
            return None

    # -- master
    def _ensure_master(self, state: ClusterState, timeout: float, owner: str | None) -> None:
        if state.master is not None:
            return
        for what, port in (("master port", self.port), ("master web UI port", self.webui_port)):
            if not port_free(self.host, port):
                who = listener(self.host, port)
                raise PortInUse(
                    f"{what} {self.host}:{port} is taken by another process{f' ({who})' if who else ''}: stop it, "
                    f"or pick another with --{'port' if what == 'master port' else 'webui-port'}")
        argv = [str(self.env.spark_class), MASTER_CLASS, "--host", self.host,
                "--port", str(self.port), "--webui-port", str(self.webui_port)]
        state.owner = owner
        state.runtime = self.env.runtime or None
        log = str(self.state_dir / "logs" / "master.log")
        master = self._spawn(state, Intent("master", self.port, self.webui_port, log), argv)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not master.alive():
                state.master, state.owner = None, None
                raise StartupTimeout(f"the Spark master exited at start: {log_tail(master.log)} (log {master.log})")
            ms = self._master_state()
            if ms is not None and ms.status == "ALIVE":
                if ms.url != self.master_url:  # its port was taken between our check and its bind: Spark moved on
                    master.terminate()
                    state.master, state.owner = None, None
                    raise PortInUse(f"master port {self.host}:{self.port} was taken by another process as the master "
                                    f"started (it came up at {ms.url} instead, now stopped): start again, or pick "
                                    "another with --port")
                self.progress(f"master {self.master_url} up (web UI {self.webui_url})")
                return
            time.sleep(STARTUP_POLL_S)
        master.terminate()
        state.master, state.owner = None, None
        raise StartupTimeout(f"the Spark master did not answer at {self.webui_url}/json/ within {timeout:.0f} s; "
                             f"see {self.state_dir}/logs/master.log")

    # -- workers
    def _start_worker(self, state: ClusterState, cores: int, memory_mb: int) -> ProcessRecord:
        used = {w.role for w in state.workers}
        n = next(i for i in range(1, len(used) + 2) if f"worker-{i}" not in used)
        role = f"worker-{n}"
        port, webui = free_port(self.host), free_port(self.host)
        work_dir = self.state_dir / "work" / role
        work_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(self.env.spark_class), WORKER_CLASS, self.master_url, "--host", self.host,
                "--port", str(port), "--webui-port", str(webui), "--cores", str(cores),
                "--memory", f"{memory_mb}m", "--work-dir", str(work_dir)]
        log = str(self.state_dir / "logs" / f"{role}.log")
        return self._spawn(state, Intent(role, port, webui, log, cores, memory_mb), argv,
                           executor_scratch_env(self.state_dir, role))

    def _wait_workers(self, state: ClusterState, timeout: float) -> MasterState:
        deadline = time.monotonic() + timeout
        while True:
            for w in state.workers:
                if not w.alive():
                    raise StartupTimeout(f"{w.role} exited at start: {log_tail(w.log)} (log {w.log})")
            ms = self._master_state()
            alive = {w.port for w in ms.alive_workers} if ms else set()
            for w in state.workers:
                if w.port not in alive:  # only a worker not yet seen at its port has its log read
                    self._adopt_started_port(w)
            wanted = {w.port: w for w in state.workers}
            others = [w for w in ms.alive_workers if w.host == self.host and w.port not in wanted] if ms else []
            if ms and set(wanted) <= alive and not others:
                return ms
            if time.monotonic() > deadline:
                missing = [wanted[p].role for p in set(wanted) - alive]
                if missing:
                    detail = f"{', '.join(missing)} did not register with {self.master_url}"
                else:
                    who = "; ".join(f"{w.host}:{w.port} ({listener(w.host, w.port) or 'process unknown'})"
                                    for w in others)
                    detail = (f"workers that are not processes of {self.state_dir} are registered with "
                              f"{self.master_url}: {who}; stop them")
                raise StartupTimeout(f"{detail} within {timeout:.0f} s; see the logs in {self.state_dir}/logs")
            time.sleep(STARTUP_POLL_S)

    def _adopt_started_port(self, w: ProcessRecord) -> None:
        """A worker whose port was taken before it bound it runs on the port Spark moved it to: record that one."""
        port = started_port(w.log, "sparkWorker")
        if port is not None and port != w.port:
            self.progress(f"{w.role}: port {w.port} was taken before it bound it; Spark started it on {port}")
            w.port = port

    def _scale(self, state: ClusterState, workers: int, cores: int, memory_mb: int, timeout: float) -> MasterState:
        if workers < 0:
            raise ClusterError(f"--workers must be >= 0, got {workers}")
        # Workers that offer other resources than asked are replaced.
        for w in [w for w in state.workers if (w.cores, w.memory_mb) != (cores, memory_mb)]:
            self.progress(f"{w.role}: replacing ({w.cores} cores, {w.memory_mb} MB -> {cores} cores, {memory_mb} MB)")
            w.terminate()
            state.workers.remove(w)
            state.save(self._state_path)
        while len(state.workers) > workers:
            w = state.workers[-1]
            w.terminate()
            state.workers.pop()
            state.save(self._state_path)
            self.progress(f"{w.role} stopped")
        new = []
        while len(state.workers) < workers:
            new.append(self._start_worker(state, cores, memory_mb))
        ms = self._wait_workers(state, timeout)
        for w in new:
            self.progress(f"{w.role} registered: {cores} cores, {memory_mb} MB (log {w.log})")
        return ms

    # -- public operations
    def start(self, workers: int, cores: int, memory: str | int, timeout: float = 120.0,
              owner: str | None = None) -> ClusterStatus:
        """Start (or reuse) the master and make exactly ``workers`` workers of this size run.

        ``owner`` (e.g. a campaign folder) is recorded when this call starts the master.
        """
        if cores < 1:
            raise ClusterError(f"--cores must be >= 1, got {cores}")
        memory_mb = parse_memory_mb(memory)
        with self._locked() as state:
            self._starting = True
            try:
                self._ensure_master(state, timeout, owner)
                self._scale(state, workers, cores, memory_mb, timeout)
            finally:
                self._starting = False
        return self.status()

    def scale(self, workers: int, cores: int | None = None, memory: str | int | None = None,
              timeout: float = 120.0) -> ClusterStatus:
        """Change the number of workers; size defaults to that of the running workers."""
        with self._locked() as state:
            if state.master is None:
                raise NotRunning(f"no local cluster under {self.state_dir}: run `sparkdl cluster start` first")
            like = state.workers[0] if state.workers else None
            c = cores if cores is not None else (like.cores if like else None)
            m = parse_memory_mb(memory) if memory is not None else (like.memory_mb if like else None)
            if c is None or m is None:
                raise ClusterError("the cluster has no workers to copy the size from: pass --cores and --memory")
            self._scale(state, workers, c, m, timeout)
        return self.status()

    def stop(self) -> list[str]:
        """End every daemon of this state dir (recorded, adopted or stray); return their roles."""
        stopped: list[str] = []
        with self._locked() as state:
            daemons = [*reversed(state.workers), *([state.master] if state.master is not None else [])]
            end_groups([(d.pid, d.start_ticks, d.role) for d in daemons])  # side by side
            stopped += [d.role for d in daemons]
            state.workers, state.master = [], None
            state.owner, state.runtime = None, None
            left = reconcile(self.state_dir, (), (), progress=self.progress)  # executors orphaned on the way
            stopped += [p.role or "stray Spark process" for p in left.stopped]
            shutil.rmtree(self.state_dir / EXECUTOR_SCRATCH, ignore_errors=True)  # no worker or executor left
        for role in stopped:
            self.progress(f"{role} stopped")
        return stopped

    def serve(self, campaign: str | Path) -> None:
        """Record that ``campaign``'s drivers run on this cluster, so that ``stop`` can sweep what they leave."""
        path = str(Path(campaign).absolute())
        with self._locked() as state:
            if path not in state.campaigns:
                state.campaigns.append(path)

    def sweep_campaigns(self) -> list[str]:
        """Remove the driver scratch of every campaign served whose harness has ended; return their folders.

        A driver killed with SIGKILL leaves its ``spark-*`` folders in its campaign's ``spark-tmp``. A
        campaign whose lock this process can take has no harness running, so nothing of it is in use; a
        running one keeps its scratch (and its record, for the next ``stop``).
        """
        swept: list[str] = []
        with self._locked() as state:
            running: list[str] = []
            for path in state.campaigns:
                folder = CampaignDir(path)
                if not folder.path.is_dir():
                    continue
                try:
                    folder.lock()
                except CampaignBusyError:
                    running.append(path)
                    continue
                try:
                    left = folder.sweep_scratch()
                finally:
                    folder.unlock()
                if left:
                    swept.append(path)
                    self.progress(f"removed the driver scratch of {len(left)} run(s) of the ended campaign {path}")
            state.campaigns = running
        return swept

    def worker_pids(self) -> list[int]:
        """Pids of the alive workers this backend started (their children are the executor JVMs)."""
        state = ClusterState.load(self._state_path)
        return [w.pid for w in state.workers if w.alive()] if state else []

    def status(self) -> ClusterStatus:
        """What runs, from the state (reconciled unless another command holds the lock) and the master."""
        state = self._peek()
        running = bool(state and state.master and state.master.alive())
        if state is not None and running:
            self.host, self.port, self.webui_port = state.host, state.port, state.webui_port
        workers = len([w for w in state.workers if w.alive()]) if state else 0
        return ClusterStatus(self.master_url, self.webui_url, running, workers,
                             self._master_state() if running else None, state.owner if state and running else None,
                             state.runtime if state and running else None)

    def _peek(self) -> ClusterState | None:
        if not self.state_dir.is_dir():
            return None
        (self.state_dir / "logs").mkdir(parents=True, exist_ok=True)
        with open(self.state_dir / "lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another command is reconciling right now: report what it recorded
                return ClusterState.load(self._state_path)
            state = self._reconcile(ClusterState.load(self._state_path))
            state.save(self._state_path)
            return state


def _worker_order(rec: ProcessRecord) -> tuple[int, str]:
    tail = rec.role.rsplit("-", 1)[-1]
    return (int(tail) if tail.isdigit() else 0, rec.role)


if __name__ == "__main__":
    from cluster.cli import main
    sys.exit(run_cli(main))
