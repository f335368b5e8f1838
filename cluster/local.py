"""A real Spark standalone cluster on one machine: a master and N workers on loopback.

    python -m cluster.local start --workers 2 --cores 2 --memory 2g
    python -m cluster.local status
    python -m cluster.local scale --workers 1
    python -m cluster.local stop

The processes are pip's pyspark ``spark-class`` Master and Worker (the pip wheel has no
``sbin/start-*.sh``), each in its own session with its log under ``STATE_DIR/logs``.
``STATE_DIR/state.json`` records every pid the backend started together with the
process start time, so ``stop`` ends exactly those processes and never a recycled pid.
Every operation is idempotent and waits until the master's JSON agrees.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from cluster.errors import ClusterError, NotRunning, PortInUse, StartupTimeout
from cluster.master import MasterState, fetch_state
from cluster.sparkenv import SparkEnv, discover

DEFAULT_STATE_DIR = Path(".cluster")
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def parse_memory_mb(text: str | int) -> int:
    """'2g' -> 2048, '700m' -> 700, '1024' -> 1024 (MB)."""
    if isinstance(text, int):
        value = text
    else:
        m = re.fullmatch(r"\s*(\d+)\s*([mMgG]?)[bB]?\s*", str(text))
        if not m:
            raise ClusterError(f"memory {text!r} is not a size: use e.g. 700m or 2g")
        value = int(m.group(1)) * (1024 if m.group(2).lower() == "g" else 1)
    if value < 256:
        raise ClusterError(f"memory {text!r} is below 256 MB: a Spark worker needs at least 256m")
    return value


# ---------------------------------------------------------------- processes


def start_ticks(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])


@dataclass
class ProcessRecord:
    """One daemon this backend started."""

    role: str  # "master" or "worker-N"
    pid: int
    start_ticks: int | None
    port: int
    webui_port: int
    log: str
    cores: int = 0
    memory_mb: int = 0

    def alive(self) -> bool:
        ticks = start_ticks(self.pid)
        if ticks is None or ticks != self.start_ticks:
            return False
        try:
            state = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return False
        return state[state.rindex(")") + 2] != "Z"

    def terminate(self, grace: float = 15.0) -> None:
        """SIGTERM the process group, then SIGKILL after ``grace`` seconds."""
        if not self.alive():
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                _reap(self.pid)
                if not self.alive():
                    return
                time.sleep(0.1)
        raise ClusterError(f"{self.role} (pid {self.pid}) survived SIGKILL; check `ps -p {self.pid}`")


def end_process_group(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """SIGTERM ``proc``'s process group, then SIGKILL it if it is still there after ``grace`` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _tail(path: str, lines: int = 3) -> str:
    try:
        text = Path(path).read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    interesting = [ln for ln in text if "ERROR" in ln or "Exception" in ln] or text
    return " | ".join(ln.strip() for ln in interesting[-lines:])


# ---------------------------------------------------------------- state


@dataclass
class ClusterState:
    host: str
    port: int
    webui_port: int
    master: ProcessRecord | None = None
    workers: list[ProcessRecord] = field(default_factory=list)

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
            )
        except (ValueError, KeyError, TypeError) as e:
            raise ClusterError(f"{path} is corrupt ({e}); stop any leftover Spark processes and delete it") from e

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        os.replace(tmp, path)


@dataclass(frozen=True)
class ClusterStatus:
    """What ``status`` reports: our processes, and what the master says."""

    master_url: str
    webui_url: str
    running: bool
    workers_started: int
    master: MasterState | None

    def describe(self) -> str:
        if not self.running or self.master is None:
            return f"no local cluster running ({self.master_url})"
        lines = [f"master {self.master_url} ({self.master.status}), web UI {self.webui_url}"]
        for w in self.master.alive_workers:
            lines.append(f"  {w.id}: {w.cores} cores ({w.cores_used} used), {w.memory_mb} MB ({w.memory_used_mb} used)")
        for a in self.master.active_apps:
            lines.append(f"  running app {a.id} {a.name!r}: {a.cores} cores")
        lines.append(f"{len(self.master.alive_workers)} worker(s) alive, {self.master.cores} cores")
        return "\n".join(lines)


# ---------------------------------------------------------------- the backend


class LocalCluster:
    """A standalone master and workers on ``host``, tracked under ``state_dir``."""

    def __init__(
        self,
        state_dir: Path = DEFAULT_STATE_DIR,
        host: str = "127.0.0.1",
        port: int = 7077,
        webui_port: int = 8080,
        env: SparkEnv | None = None,
        progress: Progress = _quiet,
    ) -> None:
        self.state_dir = Path(state_dir).absolute()
        self.host, self.port, self.webui_port = host, port, webui_port
        self._env = env
        self.progress = progress

    # -- paths and urls
    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{self.host}:{self.webui_port}"

    @property
    def env(self) -> SparkEnv:
        if self._env is None:
            self._env = discover(local_ip=self.host)
        return self._env

    @property
    def _state_path(self) -> Path:
        return self.state_dir / "state.json"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[ClusterState]:
        """Hold the state-dir lock; yield the reconciled state and save it afterwards."""
        (self.state_dir / "logs").mkdir(parents=True, exist_ok=True)
        with open(self.state_dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = ClusterState.load(self._state_path)
            if state is not None and state.master is not None and state.master.alive():
                # A running cluster keeps its own ports; later commands need not repeat them.
                self.host, self.port, self.webui_port = state.host, state.port, state.webui_port
                state.workers = [w for w in state.workers if w.alive()]
            else:
                for leftover in state.workers if state else []:
                    leftover.terminate()  # workers whose master died are of no use
                state = ClusterState(self.host, self.port, self.webui_port)
            try:
                yield state
            finally:
                state.save(self._state_path)

    def _spawn(self, role: str, argv: list[str], port: int, webui_port: int, cores: int = 0, memory_mb: int = 0) -> ProcessRecord:
        log = self.state_dir / "logs" / f"{role}.log"
        with open(log, "ab") as out:
            out.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting {role}\n".encode())
            out.flush()
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=self.env.environ(), cwd=self.state_dir, start_new_session=True,
            )
        return ProcessRecord(role, proc.pid, start_ticks(proc.pid), port, webui_port, str(log), cores, memory_mb)

    def _master_state(self) -> MasterState | None:
        try:
            return fetch_state(self.webui_url, timeout=2.0)
        except NotRunning:
            return None

    # -- master
    def _ensure_master(self, state: ClusterState, timeout: float) -> None:
        if state.master is not None:
            return
        for what, port in (("master port", self.port), ("master web UI port", self.webui_port)):
            if not port_free(self.host, port):
                raise PortInUse(
                    f"{what} {self.host}:{port} is taken by another process: stop it, or pick another with "
                    f"--{'port' if what == 'master port' else 'webui-port'}")
        argv = [str(self.env.spark_class), MASTER_CLASS, "--host", self.host,
                "--port", str(self.port), "--webui-port", str(self.webui_port)]
        state.master = self._spawn("master", argv, self.port, self.webui_port)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not state.master.alive():
                raise StartupTimeout(f"the Spark master exited at start: {_tail(state.master.log)} (log {state.master.log})")
            ms = self._master_state()
            if ms is not None and ms.status == "ALIVE":
                self.progress(f"master {self.master_url} up (web UI {self.webui_url})")
                return
            time.sleep(0.5)
        state.master.terminate()
        state.master = None
        raise StartupTimeout(f"the Spark master did not answer at {self.webui_url}/json/ within {timeout:.0f} s; see {self.state_dir}/logs/master.log")

    # -- workers
    def _start_worker(self, state: ClusterState, cores: int, memory_mb: int) -> ProcessRecord:
        used = {w.role for w in state.workers}
        n = next(i for i in range(1, len(used) + 2) if f"worker-{i}" not in used)
        port, webui = free_port(self.host), free_port(self.host)
        work_dir = self.state_dir / "work" / f"worker-{n}"
        work_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(self.env.spark_class), WORKER_CLASS, self.master_url, "--host", self.host,
                "--port", str(port), "--webui-port", str(webui), "--cores", str(cores),
                "--memory", f"{memory_mb}m", "--work-dir", str(work_dir)]
        return self._spawn(f"worker-{n}", argv, port, webui, cores, memory_mb)

    def _wait_workers(self, state: ClusterState, timeout: float) -> MasterState:
        wanted = {w.port: w for w in state.workers}
        deadline = time.monotonic() + timeout
        while True:
            for w in state.workers:
                if not w.alive():
                    raise StartupTimeout(f"{w.role} exited at start: {_tail(w.log)} (log {w.log})")
            ms = self._master_state()
            alive = {w.port for w in ms.alive_workers} if ms else set()
            ours_gone = [w for w in ms.alive_workers if w.host == self.host and w.port not in wanted] if ms else []
            if ms and set(wanted) <= alive and not ours_gone:
                return ms
            if time.monotonic() > deadline:
                missing = [wanted[p].role for p in set(wanted) - alive]
                detail = f"{', '.join(missing)} did not register with {self.master_url}" if missing else \
                    "stopped workers are still listed as alive by the master"
                raise StartupTimeout(f"{detail} within {timeout:.0f} s; see the logs in {self.state_dir}/logs")
            time.sleep(0.5)

    def _scale(self, state: ClusterState, workers: int, cores: int, memory_mb: int, timeout: float) -> MasterState:
        if workers < 0:
            raise ClusterError(f"--workers must be >= 0, got {workers}")
        # Workers that offer other resources than asked are replaced.
        for w in [w for w in state.workers if (w.cores, w.memory_mb) != (cores, memory_mb)]:
            self.progress(f"{w.role}: replacing ({w.cores} cores, {w.memory_mb} MB -> {cores} cores, {memory_mb} MB)")
            w.terminate()
            state.workers.remove(w)
        while len(state.workers) > workers:
            w = state.workers.pop()
            w.terminate()
            self.progress(f"{w.role} stopped")
        new = []
        while len(state.workers) < workers:
            w = self._start_worker(state, cores, memory_mb)
            state.workers.append(w)
            new.append(w)
        ms = self._wait_workers(state, timeout)
        for w in new:
            self.progress(f"{w.role} registered: {cores} cores, {memory_mb} MB (log {w.log})")
        return ms

    # -- public operations
    def start(self, workers: int, cores: int, memory: str | int, timeout: float = 120.0) -> ClusterStatus:
        """Start (or reuse) the master and make exactly ``workers`` workers of this size run."""
        if cores < 1:
            raise ClusterError(f"--cores must be >= 1, got {cores}")
        memory_mb = parse_memory_mb(memory)
        with self._locked() as state:
            self._ensure_master(state, timeout)
            self._scale(state, workers, cores, memory_mb, timeout)
        return self.status()

    def scale(self, workers: int, cores: int | None = None, memory: str | int | None = None,
              timeout: float = 120.0) -> ClusterStatus:
        """Change the number of workers; size defaults to that of the running workers."""
        with self._locked() as state:
            if state.master is None:
                raise NotRunning(f"no local cluster under {self.state_dir}: run `python -m cluster.local start` first")
            like = state.workers[0] if state.workers else None
            c = cores if cores is not None else (like.cores if like else None)
            m = parse_memory_mb(memory) if memory is not None else (like.memory_mb if like else None)
            if c is None or m is None:
                raise ClusterError("the cluster has no workers to copy the size from: pass --cores and --memory")
            self._scale(state, workers, c, m, timeout)
        return self.status()

    def stop(self) -> list[str]:
        """End exactly the processes this backend started; return their roles."""
        stopped: list[str] = []
        with self._locked() as state:
            for w in reversed(state.workers):
                w.terminate()
                stopped.append(w.role)
            state.workers = []
            if state.master is not None:
                state.master.terminate()
                stopped.append("master")
                state.master = None
        for role in stopped:
            self.progress(f"{role} stopped")
        return stopped

    def worker_pids(self) -> list[int]:
        """Pids of the alive workers this backend started (their children are the executor JVMs)."""
        state = ClusterState.load(self._state_path)
        return [w.pid for w in state.workers if w.alive()] if state else []

    def status(self) -> ClusterStatus:
        state = ClusterState.load(self._state_path)
        running = bool(state and state.master and state.master.alive())
        if state is not None and running:
            self.host, self.port, self.webui_port = state.host, state.port, state.webui_port
        workers = len([w for w in state.workers if w.alive()]) if state else 0
        return ClusterStatus(self.master_url, self.webui_url, running, workers,
                             self._master_state() if running else None)


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help="pids, logs and work dirs (default .cluster)")
    p = argparse.ArgumentParser(prog="python -m cluster.local", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", parents=[common], help="start a master and N workers (idempotent)")
    start.add_argument("--workers", type=int, default=2)
    start.add_argument("--cores", type=int, default=2, help="cores each worker offers")
    start.add_argument("--memory", default="2g", help="memory each worker offers, e.g. 2g or 700m")
    start.add_argument("--host", default="127.0.0.1")
    start.add_argument("--port", type=int, default=7077)
    start.add_argument("--webui-port", type=int, default=8080)
    start.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for registration")
    scale = sub.add_parser("scale", parents=[common], help="change the number of workers")
    scale.add_argument("--workers", type=int, required=True)
    scale.add_argument("--cores", type=int)
    scale.add_argument("--memory")
    scale.add_argument("--timeout", type=float, default=120.0)
    status = sub.add_parser("status", parents=[common], help="what runs, from the master's JSON")
    status.add_argument("--format", choices=("text", "json"), default="text")
    sub.add_parser("stop", parents=[common], help="stop exactly the processes `start` started")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    try:
        if args.command == "start":
            cluster = LocalCluster(args.state_dir, args.host, args.port, args.webui_port, progress=say)
            print(cluster.start(args.workers, args.cores, args.memory, args.timeout).describe())
        elif args.command == "scale":
            cluster = LocalCluster(args.state_dir, progress=say)
            print(cluster.scale(args.workers, args.cores, args.memory, args.timeout).describe())
        elif args.command == "status":
            st = LocalCluster(args.state_dir).status()
            if args.format == "json":
                print(json.dumps(asdict(st), indent=2, default=str))
            else:
                print(st.describe())
            return 0 if st.running else 3
        else:
            stopped = LocalCluster(args.state_dir, progress=say).stop()
            if not stopped:
                print("nothing to stop")
    except (PortInUse, NotRunning) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
