"""The Spark daemons of one state directory: records of what we started, and what really runs.

A daemon is started in its own session (its pid is its process group and session id) with
its cwd set to the state directory; a worker also gets ``--work-dir STATE_DIR/work/<name>``
and its executors run in a folder below that. So the processes of a state directory can be
found without any record, from ``/proc`` alone (:func:`processes_of`): that is what lets
``stop`` and ``start`` clean up after a command that was killed between starting a daemon
and writing its pid down.

Write-ahead: before a daemon is started, an :class:`Intent` (role, ports, size) is saved;
after it started, its :class:`ProcessRecord` (pid with the kernel's start time) replaces the
intent. :func:`reconcile` turns what it finds into records again: a process that matches an
intent is adopted, any other process of the state directory is stopped.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, NamedTuple, Sequence

from cluster.errors import ClusterError


#: ``STATE_DIR/scratch/<worker>``: a worker's ``SPARK_LOCAL_DIRS`` and ``TMPDIR``, where its executors' scratch goes
#: (a driver's is the campaign's ``spark-tmp``, :mod:`harness.scratch`); local and Fabric workers alike
EXECUTOR_SCRATCH = "scratch"


def executor_scratch_env(state_dir: Path, worker: str) -> dict[str, str]:
    """Where a worker's executors keep their scratch: ``STATE_DIR/scratch/<worker>``, not /tmp (made here).

    An executor writes its block manager and the files it fetches under the worker's ``SPARK_LOCAL_DIRS``
    (``spark-*/executor-*``), its Python workers (TorchDistributor's ``torchelastic_*`` among them) under
    ``TMPDIR``, and its JVM under ``java.io.tmpdir``, which Java does not take from ``TMPDIR``: the native
    libraries lz4-java and snappy-java unpack there (``liblz4-java-*.so``), deleted only when the JVM exits
    cleanly. ``JAVA_TOOL_OPTIONS`` carries it to every JVM the worker starts (a user's own options come after and
    win; each such JVM prints "Picked up JAVA_TOOL_OPTIONS: ..." first on its stderr). The worker removes an
    application's scratch when it ends, but not when it is killed with it: the cluster's ``stop`` removes
    ``STATE_DIR/scratch`` with its last daemon."""
    folder = state_dir / EXECUTOR_SCRATCH / worker
    folder.mkdir(parents=True, exist_ok=True)
    env = {"SPARK_LOCAL_DIRS": str(folder), "TMPDIR": str(folder)}
    if not any(c.isspace() for c in str(folder)):  # the JVM splits JAVA_TOOL_OPTIONS at white space
        user = os.environ.get("JAVA_TOOL_OPTIONS", "")
        env["JAVA_TOOL_OPTIONS"] = f"-Djava.io.tmpdir={folder} {user}".strip()
    return env

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
_SPARK_CLASSES = (MASTER_CLASS, WORKER_CLASS, EXECUTOR_CLASS)

Progress = Callable[[str], None]


def start_ticks(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])


def remove_dead_leftovers(directory: Path) -> list[Path]:
    """Remove the ``.<name>.<pid>.tmp`` files and folders under ``directory`` whose writer is gone.

    Atomic writers (write a temporary, then rename) leave one when killed mid-write; the one of a
    process still running is kept. Returns what was removed.
    """
    removed = []
    for path in Path(directory).glob(".*.tmp"):
        pid = path.name[:-len(".tmp")].rpartition(".")[2]
        if pid.isdigit() and start_ticks(int(pid)) is None:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _running(pid: int, ticks: int | None) -> bool:
    """``pid`` is the process that started at ``ticks`` and has not exited.

    A JVM's first thread can exit (its /proc state reads Z) while its other threads still run
    its shutdown and hold its ports: the process has ended only when no thread is left.
    """
    if ticks is None or start_ticks(pid) != ticks:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
        if state[state.rindex(")") + 2] != "Z":
            return True
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _end_group(pid: int, ticks: int | None, what: str, grace: float) -> None:
    """SIGTERM the process group led by ``pid`` (or ``pid`` alone), then SIGKILL after ``grace`` s.

    Done when no process of the group is left, not only its leader: spark-class (bash) dies at once
    on SIGTERM while the JVM it started (its launcher, before it execs) is still shutting down."""
    end_groups([(pid, ticks, what)], grace)


class _Target(NamedTuple):
    pid: int
    ticks: int | None
    what: str
    group: bool  # it leads a process group (or has members): the signal goes to the group

    def alive(self) -> bool:
        return _running(self.pid, self.ticks) or (self.group and bool(group_members(self.pid)))


def end_groups(targets: Sequence[tuple[int, int | None, str]], grace: float = 15.0) -> None:
    """:func:`_end_group` for several ``(pid, start ticks, what)`` at once: each signal goes to all of them, then
    the wait is for all, so their JVMs shut down side by side (a master and two workers: 1.22 s one after another)."""
    left = [_Target(pid, ticks, what, _leads_group(pid) or bool(group_members(pid))) for pid, ticks, what in targets]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        left = [t for t in left if t.alive()]
        for t in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if t.group:
                    os.killpg(t.pid, sig)
                else:
                    os.kill(t.pid, sig)
        deadline = time.monotonic() + wait
        while left and time.monotonic() < deadline:
            for t in left:
                _reap(t.pid)
            left = [t for t in left if t.alive()]
            if left:
                time.sleep(0.1)
        if not left:
            return
    raise ClusterError(f"{left[0].what} (pid {left[0].pid}) or a process of its group survived SIGKILL; "
                       f"check `ps -g {left[0].pid}`")


def group_members(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` that have not exited (from /proc; a JVM whose first
    thread is a zombie while others still run counts, as in :func:`_running`)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != pgid:
                continue
            if fields[0] != "Z" or len(os.listdir(f"/proc/{entry.name}/task")) > 1:
                members.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return members


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


@dataclass
class ProcessRecord:
    """One daemon this backend started."""

    role: str  # "master" or "worker-N" (or the inventory's worker name)
    pid: int
    start_ticks: int | None
    port: int
    webui_port: int
    log: str
    cores: int = 0
    memory_mb: int = 0

    def alive(self) -> bool:
        return _running(self.pid, self.start_ticks)

    def terminate(self, grace: float = 15.0) -> None:
        """SIGTERM the process group, then SIGKILL after ``grace`` seconds."""
        _end_group(self.pid, self.start_ticks, self.role, grace)


@dataclass
class Intent:
    """A daemon about to be started: saved before it exists, replaced by its record once it does."""

    role: str
    port: int
    webui_port: int
    log: str
    cores: int = 0
    memory_mb: int = 0

    def record(self, pid: int, ticks: int | None) -> ProcessRecord:
        return ProcessRecord(self.role, pid, ticks, self.port, self.webui_port, self.log, self.cores, self.memory_mb)


@dataclass(frozen=True)
class FoundProcess:
    """A Spark process of a state directory, as ``/proc`` shows it."""

    pid: int
    start_ticks: int | None
    role: str | None  # "master", a worker's name, or None (an executor, the launcher)
    port: int | None
    leader: bool  # it leads its own session: a daemon as we start them, not one of its children
    session: int

    def terminate(self, grace: float = 15.0) -> None:
        _end_group(self.pid, self.start_ticks, f"stray {self.role or 'Spark process'}", grace)


def _option(argv: Sequence[str], name: str) -> str | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == name:
            return argv[i + 1]
    return None


def _within(path: str | None, root: Path) -> bool:
    if not path:
        return False
    try:
        return Path(path).is_relative_to(root)
    except (OSError, ValueError):
        return False


def classify(argv: Sequence[str], cwd: str | None, state_dir: Path) -> str | None:
    """The role of a process of ``state_dir`` ("master", a worker name, "" for other Spark
    processes of the folder), or None when the process is not one of its Spark processes."""
    root = Path(os.path.realpath(state_dir))
    work = root / "work"
    if not any(c in argv for c in _SPARK_CLASSES):
        return None
    cwd_real = os.path.realpath(cwd) if cwd else None
    work_dir = _option(argv, "--work-dir")
    work_real = os.path.realpath(work_dir) if work_dir else None
    ours = (cwd_real is not None and (Path(cwd_real) == root or _within(cwd_real, work))) or \
        (work_real is not None and Path(work_real).parent == work)
    if not ours:
        return None
    if EXECUTOR_CLASS in argv:
        return ""
    if WORKER_CLASS in argv:
        return Path(work_real).name if work_real and Path(work_real).parent == work else ""
    return "master"


def processes_of(state_dir: Path) -> list[FoundProcess]:
    """Every Spark process (master, worker, executor, launcher) of ``state_dir`` now running."""
    import psutil  # here, not at the top: the runtimes' prepare imports this module before the tool's packages exist

    found = []
    for p in psutil.process_iter():
        try:
            if p.pid == os.getpid():
                continue
            argv = p.cmdline()
            if not any(c in argv for c in _SPARK_CLASSES):
                continue
            try:
                cwd = p.cwd()
            except (psutil.AccessDenied, psutil.ZombieProcess):
                cwd = None
            role = classify(argv, cwd, state_dir)
            ticks = start_ticks(p.pid)
            if role is None or not _running(p.pid, ticks):
                continue
            port = _option(argv, "--port")
            session = os.getsid(p.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError, PermissionError):
            continue
        # the launcher (org.apache.spark.launcher.Main) that spark-class runs before its exec is a child: not a leader
        found.append(FoundProcess(p.pid, ticks, role or None,
                                  int(port) if port and port.isdigit() else None, session == p.pid, session))
    return found


def _matches(intent: Intent, proc: FoundProcess) -> bool:
    if proc.role != intent.role or not proc.leader:
        return False
    return proc.role != "master" or proc.port in (None, intent.port)


@dataclass
class Reconciled:
    """What :func:`reconcile` did: the records to keep (old and adopted) and the strays it stopped."""

    records: list[ProcessRecord]
    adopted: list[ProcessRecord]
    stopped: list[FoundProcess]


def reconcile(state_dir: Path, records: Iterable[ProcessRecord], intents: Iterable[Intent],
              may_adopt: Callable[[Intent], bool] = lambda _: True, progress: Progress = lambda _: None,
              grace: float = 15.0) -> Reconciled:
    """Match the records and intents of ``state_dir`` against its running processes.

    Dead records are dropped; a running daemon that matches an intent is adopted (when
    ``may_adopt`` agrees); every other Spark process of the folder that is neither recorded nor a
    child of a recorded daemon's session is stopped, so nothing unknown keeps a port.
    """
    live = [r for r in records if r.alive()]
    sessions = {r.pid for r in live}
    pending = list(intents)
    adopted: list[ProcessRecord] = []
    strays: list[FoundProcess] = []
    for proc in sorted(processes_of(state_dir), key=lambda p: (not p.leader, p.pid)):
        if proc.session in sessions:
            continue  # a recorded daemon, or one of its executors / its launcher
        intent = next((i for i in pending if _matches(i, proc)), None)
        if intent is not None and may_adopt(intent):
            rec = intent.record(proc.pid, proc.start_ticks)
            pending.remove(intent)
            live.append(rec)
            adopted.append(rec)
            sessions.add(proc.pid)
            progress(f"{rec.role} (pid {rec.pid}): adopted; it was started by a command that was killed before "
                     "recording it")
        else:
            strays.append(proc)
    # workers first, executors with them, the master last, so the master sees them leave
    for proc in sorted(strays, key=lambda p: p.role == "master"):
        proc.terminate(grace)
        progress(f"stray {proc.role or 'Spark process'} (pid {proc.pid}) of {state_dir}: stopped")
    return Reconciled(live, adopted, strays)


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


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


#: The kernel's ephemeral ports when /proc does not say (Linux's default ``ip_local_port_range``).
EPHEMERAL_DEFAULT = (32768, 60999)
#: :func:`free_port` offers nothing below this: the ports services listen on by convention.
LOWEST_FREE_PORT = 10000
_PORT_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_range(path: Path = _PORT_RANGE_FILE) -> tuple[int, int]:
    """The ports the kernel hands out to ``bind(port 0)`` and to outgoing connections, both ends included."""
    try:
        low, high = (int(v) for v in path.read_text().split())
    except (OSError, ValueError):
        return EPHEMERAL_DEFAULT
    return low, high


def free_port(host: str = "127.0.0.1", rng: random.Random | None = None) -> int:
    """A port that is free right now, outside the kernel's ephemeral range.

    A port the kernel picks (``bind`` to port 0) comes from the range every JVM's own ports (a driver's, a block
    manager's, an executor's, py4j's) and every outgoing connection come from. In the seconds between picking it
    and a daemon binding it, one of those may take it; Spark then starts the daemon on the next port
    (``spark.port.maxRetries``), where nobody looks for it, and a cluster start waits for a worker that never
    registers at its port. Outside that range only another explicit pick can take it. ``rng`` draws the
    candidates (default: the OS's entropy; a port is not a result to replay). The kernel's pick is the fallback
    when the range leaves nothing outside it."""
    low, high = ephemeral_range()
    spans = [(lo, hi) for lo, hi in ((LOWEST_FREE_PORT, low - 1), (high + 1, 65535)) if lo <= hi]
    sizes = [hi - lo + 1 for lo, hi in spans]
    draw = rng or random.SystemRandom()
    for _ in range(200 if spans else 0):
        k = draw.randrange(sum(sizes))
        for (lo, _hi), size in zip(spans, sizes):
            if k < size:
                break
            k -= size
        if port_free(host, lo + k):
            return lo + k
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


_STARTED = re.compile(r"Successfully started service '([^']+)' on port (\d+)\.")
#: The line a backend writes to a daemon's log before it starts the daemon (the log is appended to).
START_MARKER = "\n==== "


def started_port(log: str | Path, service: str, tail: int = 1 << 18) -> int | None:
    """The port Spark says ``service`` (``sparkWorker``, ``WorkerUI``...) started on in this daemon's run: its
    log after the last start marker, in the log's last ``tail`` bytes; None before it says so. It differs from
    the port asked for when that one was taken by the time the daemon bound it (Spark then tries the next ones)."""
    try:
        with open(log, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - tail))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    if START_MARKER not in text:
        return None
    ports = [int(port) for name, port in _STARTED.findall(text.rsplit(START_MARKER, 1)[1]) if name == service]
    return ports[0] if ports else None


def listener(host: str, port: int) -> str:
    """Who listens on ``host:port`` ("pid N (name)"), or "" when it cannot be told."""
    import psutil  # see processes_of

    with contextlib.suppress(psutil.Error, OSError):
        for c in psutil.net_connections(kind="tcp"):
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
                with contextlib.suppress(psutil.Error):
                    return f"pid {c.pid} ({' '.join(psutil.Process(c.pid).cmdline()[:1]) or '?'})"
                return f"pid {c.pid}"
    return ""


def log_tail(path: str, lines: int = 3) -> str:
    """The last error lines of a daemon's log (or its last lines), joined on one line."""
    try:
        text = Path(path).read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    interesting = [ln for ln in text if "ERROR" in ln or "Exception" in ln] or text
    return " | ".join(ln.strip() for ln in interesting[-lines:])


def available_memory_mb(meminfo: str = "/proc/meminfo") -> int | None:
    """MemAvailable of this machine in MB (None where /proc/meminfo does not exist)."""
    try:
        with open(meminfo) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None

