"""A real YARN and HDFS on loopback: a ResourceManager (CapacityScheduler), N NodeManagers, a NameNode and a DataNode.

    sparkdl cluster start --yarn --nodes 2 --cores 2 --memory 3g
    export HADOOP_CONF_DIR=.cluster/yarn/conf
    sparkdl cluster status
    sparkdl cluster stop

HDFS is Hadoop's MiniDFSCluster in one JVM (``MiniHdfs.java``, as Spark's YARN tests start it). The YARN daemons
are Hadoop's own ``ResourceManager`` and ``NodeManager`` main classes, one JVM each, from the same jars: the
departure from a one-JVM MiniYARNCluster is deliberate. In one JVM the ResourceManager's and the NodeManagers' web
applications share Guice's static filter pipeline, and the ResourceManager's REST API answers 404 ("controller for
v1 not found", a NodeManager's filter in the stack) -- the API every campaign reads. Separate JVMs are also what a
real cluster is: a NodeManager lost mid-run is a JVM that dies.

Every JVM runs with ``-Dsparkdl.yarn.dir=STATE_DIR`` and its containers in ``STATE_DIR/nm-I/local``: so the
processes of a state directory are found from ``/proc`` alone, and ``stop`` (or the next ``start``, after a
``kill -9`` mid-start) ends every one of them, recorded or not.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from cluster.errors import ClusterError, StartupTimeout
from cluster.processes import _running, end_groups, free_port, log_tail, start_ticks
from cluster.yarn import hadoop
from cluster.yarn.config import site_xml, write_site
from cluster.yarn.rest import Metrics, Node, ResourceManager
from sparkdl.crash import crash_point

Progress = Callable[[str], None]
MARKER = "-Dsparkdl.yarn.dir="
RM_CLASS = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NM_CLASS = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
HDFS_CLASS = "MiniHdfs"
#: The smallest NodeManager that holds a Spark executor of the default 700m with YARN's overhead (384 MB)
MIN_NODE_MEMORY_MB = 1536
#: What each daemon JVM may take (their heaps; the containers' are the NodeManagers' memory-mb)
DAEMON_HEAP = {"hdfs": "-Xmx512m", "rm": "-Xmx512m", "nm": "-Xmx384m"}
#: A NodeManager that stops heartbeating is LOST after this long (YARN's default is 10 minutes)
NM_EXPIRY_MS = 10_000
#: The memory the daemons themselves take, beside what the NodeManagers offer containers
DAEMONS_MB = 512 + 512


class YarnClusterError(ClusterError):
    """The local YARN cannot be started as asked (bad --nodes, --memory...): exit 2, nothing started."""

    exit_code = 2


@dataclass
class Daemon:
    role: str  # "hdfs", "rm", "nm-0", ...
    pid: int
    start_ticks: int | None
    log: str

    def alive(self) -> bool:
        return _running(self.pid, self.start_ticks)  # a JVM whose first thread exited still runs its shutdown


@dataclass
class YarnState:
    """``STATE_DIR/state.json``: the daemons, their addresses and the size the cluster was started with."""

    nodes: int
    cores: int
    memory_mb: int
    rm_webapp: str
    default_fs: str
    nm_webapps: list[str]
    daemons: list[Daemon] = field(default_factory=list)
    ready: bool = False  # set once every NodeManager registered: a state without it is a start that was cut short

    @classmethod
    def load(cls, path: Path) -> "YarnState | None":
        try:
            d = json.loads(path.read_text())
            return cls(**{**d, "daemons": [Daemon(**x) for x in d.get("daemons", [])]})
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError):
            return None  # a state cut short by a crash: what runs is found from /proc and stopped

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2))
        os.replace(tmp, path)


@dataclass(frozen=True)
class YarnStatus:
    """What ``status`` reports: the ResourceManager's nodes and metrics, or why there is no cluster."""

    running: bool
    state_dir: str
    conf_dir: str
    rm_url: str | None = None
    default_fs: str | None = None
    nodes: tuple[Node, ...] = ()
    metrics: Metrics | None = None
    problem: str | None = None

    def describe(self) -> str:
        if not self.running or self.metrics is None:
            return f"no local YARN running under {self.state_dir}" + (f" ({self.problem})" if self.problem else "")
        m = self.metrics
        lines = [f"YARN ResourceManager {self.rm_url}, HDFS {self.default_fs}",
                 f"export HADOOP_CONF_DIR={self.conf_dir}"]
        for n in self.nodes:
            lines.append(f"  NodeManager {n.id} ({n.state}): {n.vcores_free} of {n.vcores} vcores free, "
                         f"{n.memory_free_mb} of {n.memory_mb} MB free")
        lines.append(f"{m.active_nodes} NodeManager(s) running, {m.lost_nodes} lost; {m.vcores_free} of {m.vcores} "
                     f"vcores and {m.memory_free_mb} of {m.memory_mb} MB free; {m.apps_running} application(s) "
                     f"running, {m.apps_pending} pending")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def found_processes(state_dir: Path) -> list[tuple[int, int | None, str]]:
    """Every process of ``state_dir`` now running, in one pass over the process table: its daemons (by their marker)
    and the containers and their children (by a working folder under a NodeManager's, ``STATE_DIR/nm-I/...``)."""
    import psutil

    root = Path(os.path.realpath(state_dir))
    marker = f"{MARKER}{root}"
    me = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found = []
    for p in psutil.process_iter():
        try:
            if p.pid in me:
                continue
            if marker in p.cmdline():
                found.append((p.pid, start_ticks(p.pid), f"stray daemon {p.pid} ({p.cmdline()[-1][-60:]})"))
                continue
            cwd = Path(os.path.realpath(p.cwd()))
            if cwd.is_relative_to(root) and cwd != root and cwd.relative_to(root).parts[0].startswith("nm-"):
                found.append((p.pid, start_ticks(p.pid), f"container process {p.pid} ({p.name()})"))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, ProcessLookupError, OSError):
            continue
    return found

class LocalYarn:
    """The loopback YARN + HDFS of ``state_dir`` (``.cluster/yarn`` by default)."""

    def __init__(self, state_dir: Path, progress: Progress = lambda _: None) -> None:
        self.state_dir = Path(state_dir).absolute()
        self.progress = progress

    @property
    def conf_dir(self) -> Path:
        """The HADOOP_CONF_DIR a client (spark-submit, the tool) reads."""
        return self.state_dir / "conf"

    @property
    def _state_path(self) -> Path:
        return self.state_dir / "state.json"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self.state_dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    # -- start

    def start(self, nodes: int, cores: int, memory_mb: int, timeout: float = 120.0,
              available_mb: int | None = None) -> YarnStatus:
        """Start (idempotent: a running cluster of this size is kept) and wait until every NodeManager registered."""
        check_size(nodes, cores, memory_mb, available_mb)
        with self._locked():
            state = YarnState.load(self._state_path)
            if state is not None and state.ready and all(d.alive() for d in state.daemons):
                if (state.nodes, state.cores, state.memory_mb) == (nodes, cores, memory_mb):
                    return self._status(state)
                raise YarnClusterError(f"the local YARN under {self.state_dir} runs {state.nodes} NodeManager(s) of "
                                       f"{state.cores} vcores and {state.memory_mb} MB: stop it first (sparkdl "
                                       "cluster stop) to start another size")
            self._stop_all(state)  # a start cut short (kill -9), or daemons that died: nothing half is kept
            built = hadoop.prepare(progress=self.progress)
            try:
                state = self._spawn_all(built, nodes, cores, memory_mb)
                self._wait_ready(state, timeout)
            except BaseException:
                self._stop_all(YarnState.load(self._state_path))
                raise
            state.ready = True
            state.save(self._state_path)
            return self._status(state)

    def _spawn_all(self, built: hadoop.Hadoop, nodes: int, cores: int, memory_mb: int) -> YarnState:
        for old in ("conf", "hdfs", "rm", *(p.name for p in self.state_dir.glob("nm-*"))):
            shutil.rmtree(self.state_dir / old, ignore_errors=True)
        (self.state_dir / "logs").mkdir(parents=True, exist_ok=True)
        ports = _Ports()
        nn, nn_http = ports.take(), ports.take()
        default_fs = f"hdfs://127.0.0.1:{nn}"
        rm = {k: f"127.0.0.1:{ports.take()}" for k in ("address", "scheduler.address", "resource-tracker.address",
                                                       "admin.address", "webapp.address")}
        rm_site = {"yarn.resourcemanager.hostname": "127.0.0.1",
                   **{f"yarn.resourcemanager.{k}": v for k, v in rm.items()}}
        nm_webapps = [f"127.0.0.1:{ports.take()}" for _ in range(nodes)]
        state = YarnState(nodes, cores, memory_mb, rm["webapp.address"], default_fs, nm_webapps)
        state.save(self._state_path)
        client = {**rm_site, "yarn.resourcemanager.scheduler.class": SCHEDULER}
        write_site(self.conf_dir / "core-site.xml", {"fs.defaultFS": default_fs})
        write_site(self.conf_dir / "hdfs-site.xml", {"dfs.replication": 1, "dfs.client.use.datanode.hostname": "false"})
        write_site(self.conf_dir / "yarn-site.xml", client)
        rm_dir = self.state_dir / "rm"
        write_site(rm_dir / "conf" / "yarn-site.xml", {**rm_site, **rm_properties(nodes, cores, memory_mb)})
        write_site(rm_dir / "conf" / "capacity-scheduler.xml", capacity_scheduler())
        write_site(rm_dir / "conf" / "core-site.xml", {"fs.defaultFS": default_fs})
        self._spawn(state, built, "hdfs", HDFS_CLASS, [str(self.state_dir / "hdfs"), str(nn), str(nn_http)], None)
        crash_point("yarn-spawned")
        self._spawn(state, built, "rm", RM_CLASS, [], rm_dir / "conf")
        for i, webapp in enumerate(nm_webapps):
            nm_dir = self.state_dir / f"nm-{i}"
            props = {**rm_site, **nm_properties(nm_dir, cores, memory_mb, ports.take(), ports.take(), webapp)}
            write_site(nm_dir / "conf" / "yarn-site.xml", props)
            write_site(nm_dir / "conf" / "core-site.xml", {"fs.defaultFS": default_fs})
            self._spawn(state, built, f"nm-{i}", NM_CLASS, [], nm_dir / "conf")
        return state

    def _spawn(self, state: YarnState, built: hadoop.Hadoop, role: str, main: str, args: list[str],
               conf: Path | None) -> None:
        log = self.state_dir / "logs" / f"{role}.log"
        kind = role.split("-")[0]
        cwd = self.state_dir / ("hdfs" if kind == "hdfs" else "rm" if kind == "rm" else role)
        cwd.mkdir(parents=True, exist_ok=True)
        classpath = f"{conf}:{built.classpath}" if conf is not None else built.classpath
        argv = [str(built.java), f"{MARKER}{os.path.realpath(self.state_dir)}", DAEMON_HEAP[kind],
                "-Djava.net.preferIPv4Stack=true", f"-Dhadoop.log.dir={self.state_dir / 'logs'}",
                f"-Dyarn.log.dir={self.state_dir / 'logs'}", "-Dhadoop.root.logger=INFO,console",
                f"-Dlog4j.configuration=file:{hadoop.HERE / 'log4j.properties'}",
                *hadoop.JAVA_OPENS, "-cp", classpath, main, *args]
        environ = {**os.environ, "JAVA_HOME": str(built.java_home)}
        for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "CLASSPATH"):  # the daemon's conf is its own, on its classpath
            environ.pop(name, None)
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=cwd,
                                    env=environ, start_new_session=True)
        state.daemons.append(Daemon(role, proc.pid, start_ticks(proc.pid), str(log)))
        state.save(self._state_path)

    def _wait_ready(self, state: YarnState, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        rm = ResourceManager(f"http://{state.rm_webapp}", timeout=2.0)
        self.progress(f"local YARN: waiting for HDFS, the ResourceManager and {state.nodes} NodeManager(s)")
        while True:
            dead = [d for d in state.daemons if not d.alive()]
            if dead:
                raise StartupTimeout(f"{dead[0].role} exited while starting: {log_tail(dead[0].log)} "
                                     f"(its log: {dead[0].log})")
            hdfs_up = (self.state_dir / "hdfs" / "hdfs.json").is_file()
            try:
                running = len(rm.nodes()) if hdfs_up else 0
            except ClusterError:
                running = 0
            if hdfs_up and running >= state.nodes:
                return
            if time.monotonic() > deadline:
                raise StartupTimeout(f"the local YARN did not come up in {timeout:.0f} s ({running} of {state.nodes} "
                                     f"NodeManagers registered, HDFS {'up' if hdfs_up else 'not up'}); see the logs "
                                     f"in {self.state_dir / 'logs'}")
            time.sleep(0.5)

    # -- status and stop

    def _status(self, state: YarnState) -> YarnStatus:
        rm = ResourceManager(f"http://{state.rm_webapp}")
        return YarnStatus(True, str(self.state_dir), str(self.conf_dir), rm.url, state.default_fs, tuple(rm.nodes()),
                          rm.metrics())

    def status(self) -> YarnStatus:
        state = YarnState.load(self._state_path)
        if state is None or not state.ready:
            return YarnStatus(False, str(self.state_dir), str(self.conf_dir),
                              problem=None if state is None else "a start was cut short: run sparkdl cluster stop")
        if not any(d.alive() for d in state.daemons if d.role == "rm"):
            return YarnStatus(False, str(self.state_dir), str(self.conf_dir),
                              problem="its ResourceManager is not running: sparkdl cluster stop, then start again")
        try:
            return self._status(state)
        except ClusterError as e:
            return YarnStatus(False, str(self.state_dir), str(self.conf_dir), problem=str(e))

    def _stop_all(self, state: YarnState | None, grace: float = 15.0) -> list[str]:
        """End every daemon (NodeManagers first, so they end their containers), then anything of the folder left."""
        order = {"nm": 0, "rm": 1, "hdfs": 2}
        recorded = sorted((d for d in (state.daemons if state else []) if d.alive()),
                          key=lambda d: order.get(d.role.split("-")[0], 0))
        stopped = [d.role for d in recorded]
        for kind in ("nm", "rm", "hdfs"):
            group = [(d.pid, d.start_ticks, d.role) for d in recorded if d.role.split("-")[0] == kind]
            if group:
                end_groups(group, grace)
        strays = found_processes(self.state_dir)
        if strays:
            end_groups(strays, grace)
            stopped += [what for _, _, what in strays]
        for local in self.state_dir.glob("nm-*/local"):  # the localized runtimes (800 MB each) and containers' folders:
            shutil.rmtree(local, ignore_errors=True)      # the next start is a new cluster, nothing of them is reused
        if self._state_path.exists():
            self._state_path.unlink()
        return stopped

    def stop(self) -> list[str]:
        """Stop every JVM (and container) of the state directory; the names of what was stopped."""
        if not self.state_dir.is_dir():  # `cluster stop` of a standalone cluster: no folder made, daemons looked for
            strays = found_processes(self.state_dir)
            end_groups(strays)
            return [what for _, _, what in strays]
        with self._locked():
            stopped = self._stop_all(YarnState.load(self._state_path))
        for what in stopped:
            self.progress(f"stopped {what}")
        return stopped


SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"


def check_size(nodes: int, cores: int, memory_mb: int, available_mb: int | None) -> None:
    """One line for a size the local YARN cannot be: no nodes, no cores, too little memory per node or in all."""
    if not 1 <= nodes <= 16:
        raise YarnClusterError(f"--nodes {nodes}: give 1 to 16 NodeManagers")
    if not 1 <= cores <= 256:
        raise YarnClusterError(f"--cores {cores}: give 1 to 256 vcores per NodeManager")
    if memory_mb < MIN_NODE_MEMORY_MB:
        raise YarnClusterError(f"--memory {memory_mb} MB per NodeManager holds no Spark executor with YARN's overhead: "
                               f"give at least {MIN_NODE_MEMORY_MB // 1024 + 1}g")
    if available_mb is not None and nodes * memory_mb + DAEMONS_MB > available_mb:
        raise YarnClusterError(f"{nodes} NodeManager(s) x {memory_mb} MB (+ {DAEMONS_MB} MB for the daemons) is more "
                               f"than the {available_mb} MB this machine has available: lower --nodes or --memory")


def rm_properties(nodes: int, cores: int, memory_mb: int) -> dict[str, object]:
    """The ResourceManager's settings: vcores count as well as memory, an application's master may take the cluster,
    a lost NodeManager is noticed in 10 s, and an application that fails is not attempted again."""
    return {
        "yarn.resourcemanager.scheduler.class": SCHEDULER,
        "yarn.scheduler.minimum-allocation-mb": 128,
        "yarn.scheduler.maximum-allocation-mb": memory_mb,
        "yarn.scheduler.minimum-allocation-vcores": 1,
        "yarn.scheduler.maximum-allocation-vcores": cores,
        "yarn.nm.liveness-monitor.expiry-interval-ms": NM_EXPIRY_MS,
        "yarn.resourcemanager.nm.liveness-monitor.interval-ms": 1000,
        "yarn.resourcemanager.am.max-attempts": 1,
        "yarn.resourcemanager.recovery.enabled": "false",
        "yarn.log-aggregation-enable": "false",
        "yarn.resourcemanager.max-completed-applications": 1000,
    }


def capacity_scheduler() -> dict[str, object]:
    """One queue, ``default``, with all of the cluster; DominantResourceCalculator so vcores are scheduled too."""
    return {
        "yarn.scheduler.capacity.root.queues": "default",
        "yarn.scheduler.capacity.root.default.capacity": 100,
        "yarn.scheduler.capacity.root.default.maximum-capacity": 100,
        "yarn.scheduler.capacity.root.default.user-limit-factor": 1,
        "yarn.scheduler.capacity.root.default.state": "RUNNING",
        "yarn.scheduler.capacity.maximum-am-resource-percent": 1.0,
        "yarn.scheduler.capacity.resource-calculator": "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        "yarn.scheduler.capacity.node-locality-delay": -1,
    }


def nm_properties(nm_dir: Path, cores: int, memory_mb: int, port: int, localizer: int, webapp: str) -> dict[str, object]:
    """One NodeManager's settings: its own ports and folders; containers' logs kept an hour on the node, where the
    NodeManager's web services serve them; no memory checks (the JVMs' virtual memory is far above their heap)."""
    return {
        "yarn.nodemanager.hostname": "127.0.0.1",
        "yarn.nodemanager.address": f"127.0.0.1:{port}",
        "yarn.nodemanager.localizer.address": f"127.0.0.1:{localizer}",
        "yarn.nodemanager.webapp.address": webapp,
        "yarn.nodemanager.local-dirs": str(nm_dir / "local"),
        "yarn.nodemanager.log-dirs": str(nm_dir / "logs"),
        "yarn.nodemanager.resource.memory-mb": memory_mb,
        "yarn.nodemanager.resource.cpu-vcores": cores,
        "yarn.nodemanager.vmem-check-enabled": "false",
        "yarn.nodemanager.pmem-check-enabled": "false",
        "yarn.nodemanager.recovery.enabled": "false",
        "yarn.nodemanager.log.retain-seconds": 3600,
        "yarn.nodemanager.delete.debug-delay-sec": 600,
        "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": 100.0,
        "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb": 0,
        "yarn.nodemanager.env-whitelist": "JAVA_HOME,PATH,LANG,TZ,HADOOP_CONF_DIR,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,"
                                          "HADOOP_YARN_HOME,HADOOP_MAPRED_HOME,CLASSPATH_PREPEND_DISTCACHE",
    }


class _Ports:
    """Free ports outside the kernel's ephemeral range, each handed out once."""

    def __init__(self) -> None:
        self.taken: set[int] = set()

    def take(self) -> int:
        while True:
            port = free_port()
            if port not in self.taken:
                self.taken.add(port)
                return port

