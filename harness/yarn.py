"""A campaign on a YARN cluster (``sparkdl submit DESIGN --master yarn``), client mode: the driver runs here.

The cluster is the one ``HADOOP_CONF_DIR`` (else ``YARN_CONF_DIR``) describes, as spark-submit reads it: the
ResourceManager's web services answer every question the campaign asks (capacity, an application's state and
diagnostics, the kill), and its file system holds the runtime. How a design row maps onto YARN:

* ``executors`` executors (``--num-executors``, dynamic allocation off) of ``executor_cores`` vcores and
  ``--executor-memory`` each. YARN places the containers on the NodeManagers itself; this backend does not pin
  them (that takes node labels or placement constraints the cluster's admin sets up), so a design with ``nodes``
  above 1 is refused in one line rather than run on a placement nobody chose.
* the runtime reaches the containers as an archive (``--archives hdfs://.../RUNTIME.tar#env``, Spark's Python
  package management): the runtime's folder, tarred once and put on the cluster's file system once per runtime
  version (:func:`ensure_archive`). Paths of this machine's runtime in Spark's settings (class path, library path)
  become ``{{PWD}}/env/...`` in the containers (``spark.yarn.config.gatewayPath``/``replacementPath``); the
  executors' Python is ``./env/bin/python``; the project's ``jobs`` and ``sparkdl`` packages and the runtime's
  ``sitecustomize`` go as one ``--py-files`` zip.
* every application carries the campaign's tag (``spark.yarn.tags``), so the backend finds its applications by
  tag and name, and ends any that outlived its driver: after each attempt (a timeout, a driver killed by a signal),
  when the campaign closes, and when a ``--resume`` opens the folder a killed campaign left.
* an application that never left ACCEPTED is a run the queue had no room for (its reason says so); an application
  YARN failed keeps YARN's diagnostics in the run's reason; the executors' logs are fetched from the NodeManagers'
  web services into ``logs/<run>.yarn/`` while they still serve them.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import socket
import subprocess
import time
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from cluster import runtime as runtimes
from cluster.errors import ClusterError, NotRunning
from cluster.master import AppInfo
from cluster.sparkenv import MERGED, SparkEnv
from cluster.yarn import config as yarn_config
from cluster.yarn.rest import App, NodeManager, ResourceManager, YarnRestError
from harness.command import SubmitOptions, app_args, app_name, event_log_conf, job_args, job_for, runtime_args
from harness.errors import CapacityError, HarnessError
from harness.job import job_confs
from harness.runner import ProcessRunner, Runner
from sparkdl.campaign import Outcome
from sparkdl.runspec import RunSpec

Progress = Callable[[str], None]

MASTER = "yarn"
#: The archive's link name in every container's working directory.
LINK = "env"
#: Where runtimes go on the cluster's file system, under the submitting user's home.
REMOTE_DIR = ".sparkdl/runtimes"
#: What of a runtime's folder stays out of its archive: the class-data archives and MKL unpacked for this machine.
ARCHIVE_EXCLUDES = ("./share/sparkdl",)
#: Spark settings a YARN run sets itself: a design column or a job's [spark] table may not.
OWNED_CONFS = ("spark.yarn.tags", "spark.yarn.queue", "spark.executor.instances", "spark.dynamicAllocation.enabled",
               "spark.yarn.config.gatewayPath", "spark.yarn.config.replacementPath", "spark.yarn.dist.archives")
#: YARN's default executor memory overhead: max(384 MB, 10 %), as Spark computes it.
MIN_OVERHEAD_MB, OVERHEAD_FRACTION = 384, 0.10
#: The application master of client mode (``spark.yarn.am.memory`` and its overhead, one vcore).
AM_MEMORY_MB = 512 + MIN_OVERHEAD_MB
#: An application's states before YARN gave it its master's container.
QUEUED = frozenset({"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED"})
#: What an application master's log says for each executor container it starts (Spark's YarnAllocator).
LAUNCHED = re.compile(r"Launching container (container_[0-9e_]+) on host")
#: How much of a container's log is kept in the run's folder.
MAX_LOG_BYTES = 64 * 1024 * 1024


class YarnError(HarnessError):
    """The YARN cluster cannot take this campaign (the message names the fix)."""


def is_yarn(master: str | None) -> bool:
    return master is not None and master.strip().lower() == MASTER


def container_mb(executor_memory_mb: int) -> int:
    """The memory YARN gives an executor's container: the heap plus Spark's default overhead."""
    return executor_memory_mb + max(MIN_OVERHEAD_MB, int(executor_memory_mb * OVERHEAD_FRACTION))


def campaign_tag(owner: str) -> str:
    """The tag of a campaign's applications (YARN lowercases tags; this one already is)."""
    return "sparkdl-" + hashlib.sha256(owner.encode()).hexdigest()[:16]


# ---------------------------------------------------------------- the runtime on the cluster's file system


def runtime_root(env: SparkEnv) -> Path:
    """The runtime's folder (its ``bin/python`` is the environment's Python)."""
    return env.python.parent.parent


def archive_name(env: SparkEnv) -> str:
    """The archive's file name: the runtime folder's own (``bigdl-<lock key>``), so a new lock is a new archive."""
    return f"{runtime_root(env).name}.tar"


def local_archive(env: SparkEnv, progress: Progress) -> Path:
    """The runtime's folder as an uncompressed tar (Spark unpacks .tar archives too), made once beside the runtime's
    other derived files; written to a temporary name and renamed, so a killed tar leaves no half archive."""
    root = runtime_root(env)
    path = env.cache_dir / "yarn" / archive_name(env)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}")
    progress(f"yarn: packing the runtime {root.name} for the containers")
    argv = ["tar", "-cf", str(part), *(f"--exclude={e}" for e in ARCHIVE_EXCLUDES), "-C", str(root), "."]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        part.unlink(missing_ok=True)
        raise YarnError(f"cannot pack the runtime {root} for YARN (tar exited {done.returncode}: "
                        f"{done.stderr.strip()[-200:]}): is there room on {path.parent}?")
    part.rename(path)
    return path


def fs_shell(env: SparkEnv, conf_dir: Path, *args: str, timeout: float = 600.0) -> subprocess.CompletedProcess[str]:
    """Hadoop's FsShell (``hadoop fs ARGS``) through the runtime's own Hadoop client, on the cluster's file system."""
    environ = {**env.environ(), "HADOOP_CONF_DIR": str(conf_dir)}
    argv = [str(env.spark_class), "org.apache.hadoop.fs.FsShell", *args]
    return subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=timeout)


def _fs_error(done: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in done.stderr.splitlines() if ln.strip() and "WARN" not in ln and "log4j" not in ln]
    return (lines[-1] if lines else done.stderr.strip()[-200:])[:300]


def remote_dir(default_fs: str, user: str) -> str:
    """Where runtimes go on the cluster's file system: ``REMOTE_DIR`` in the user's home there, as a full URI (a
    relative ``--archives`` path would be read as this machine's)."""
    return f"{default_fs.rstrip('/')}/user/{user}/{REMOTE_DIR}"


def ensure_archive(env: SparkEnv, conf: yarn_config.ClusterConf, progress: Progress = lambda _: None) -> str:
    """The runtime's archive on the cluster's file system (``remote_dir()/<name>.tar``), put there once; its URI as
    spark-submit's ``--archives`` takes it. A cluster without a file system of its own (no fs.defaultFS) gets this
    machine's archive, which only NodeManagers on this machine can read."""
    if conf.default_fs is None or conf.default_fs.startswith("file:"):
        return local_archive(env, progress).as_uri()
    folder = remote_dir(conf.default_fs, getpass.getuser())
    remote = f"{folder}/{archive_name(env)}"
    if fs_shell(env, conf.conf_dir, "-test", "-e", remote).returncode == 0:
        return remote
    local = local_archive(env, progress)
    progress(f"yarn: putting {local.name} ({local.stat().st_size // 2**20} MB) on {conf.default_fs}")
    part = f"{remote}.part-{os.getpid()}"
    for args in (("-mkdir", "-p", folder), ("-put", "-f", str(local), part), ("-mv", part, remote)):
        done = fs_shell(env, conf.conf_dir, *args)
        if done.returncode != 0 and not (args[0] == "-mv" and
                                         fs_shell(env, conf.conf_dir, "-test", "-e", remote).returncode == 0):
            fs_shell(env, conf.conf_dir, "-rm", "-f", part)
            raise YarnError(f"cannot put the runtime on {conf.default_fs} (hadoop fs {' '.join(args[:1])}: "
                            f"{_fs_error(done)}): check fs.defaultFS in {conf.conf_dir / 'core-site.xml'} and that "
                            "the file system is up")
    return remote


def project_zip(folder: Path, env: SparkEnv) -> Path:
    """The packages a job's executors import (``jobs``, ``sparkdl``) and the runtime's ``sitecustomize`` (its fixes for
    every Python of a job), as one ``--py-files`` zip in the campaign folder."""
    path = folder / "yarn" / f"project-{runtime_root(env).name}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        for base in env.python_dirs():
            base_path = Path(base)
            for package in ("jobs", "sparkdl"):
                for f in sorted((base_path / package).rglob("*.py")) if (base_path / package).is_dir() else ():
                    z.write(f, f.relative_to(base_path).as_posix())
            for f in sorted(base_path.glob("*.py")) if base_path.name == "site" else ():
                z.write(f, f.name)
    part.replace(path)
    return path


# ---------------------------------------------------------------- argv


@dataclass(frozen=True)
class YarnTarget:
    """What every run of a YARN campaign shares."""

    queue: str | None
    tag: str
    archive: Callable[[SparkEnv], str]  # a runtime's archive on the cluster (put there on first use)
    py_files: Callable[[SparkEnv], Path]  # the project's zip for a runtime


def _runtime_args(env: SparkEnv, own: dict[str, str]) -> list[str]:
    """The runtime's spark-submit options with the containers' Python; its jars are not uploaded (the archive has
    them) and the Python path of this machine's folders goes (the project's zip replaces it)."""
    return runtime_args(env, own, ("--jars", "spark.executorEnv.PYTHONPATH"), f"./{LINK}/bin/python")


def _java_in_archive(env: SparkEnv) -> str | None:
    """The runtime's own Java as the containers see it (``./env/...``), None when Java is not inside the runtime (the
    NodeManagers' own Java is then used)."""
    try:
        rel = env.java_home.resolve().relative_to(runtime_root(env).resolve())
    except ValueError:
        return None
    return f"./{LINK}/{rel.as_posix()}"


def yarn_argv(spec: RunSpec, options: SubmitOptions, env: SparkEnv, target: YarnTarget,
              event_log_dir: Path | None = None) -> list[str]:
    """The spark-submit argv of one run on YARN, client mode (never a shell string)."""
    job = job_for(spec, options)
    own = dict(job_confs(job, spec))
    for key in own:
        if key in OWNED_CONFS:
            raise YarnError(f"run {spec.key}: {key} is set by the YARN backend itself (from the design's cluster "
                            "factors and --queue): drop that column or [spark] setting")
    confs = [a for k, v in own.items() if k not in MERGED for a in ("--conf", f"{k}={v}")]
    java = _java_in_archive(env)
    py_files = [str(target.py_files(env)), *(str(p) for p in job.py_files)]
    app = app_args(job)
    if "--py-files" in app:  # the job's own files join the project's zip in the one --py-files
        at = app.index("--py-files")
        app = app[:at] + app[at + 2:]
    return [
        str(env.spark_submit),
        "--master", MASTER,
        "--deploy-mode", "client",
        "--name", app_name(spec, job),
        *(("--queue", target.queue) if target.queue else ()),
        "--num-executors", str(spec.nodes * spec.executors),
        "--executor-cores", str(spec.executor_cores),
        "--executor-memory", options.executor_memory,
        "--driver-memory", options.driver_memory,
        "--archives", f"{target.archive(env)}#{LINK}",
        "--py-files", ",".join(py_files),
        "--conf", "spark.dynamicAllocation.enabled=false",
        # Spark's own jars from the archive, not uploaded for every application (``local:``: on the node already)
        "--conf", f"spark.yarn.jars=local:{env.spark_home / 'jars'}/*",
        "--conf", f"spark.yarn.tags={target.tag}",
        "--conf", f"spark.yarn.config.gatewayPath={runtime_root(env)}",
        "--conf", f"spark.yarn.config.replacementPath={{{{PWD}}}}/{LINK}",
        *(a for k in ("spark.executorEnv.JAVA_HOME", "spark.yarn.appMasterEnv.JAVA_HOME") if java
          for a in ("--conf", f"{k}={java}")),
        # Spark would otherwise start the job with whatever executors it has after 30 s
        "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
        "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
        *_runtime_args(env, own),
        *confs,
        *(event_log_conf(event_log_dir) if event_log_dir is not None else []),
        *app,
        str(job.application),
        *job_args(spec, options),
    ]


def planned_argv(folder: Path, queue: str | None) -> Callable[..., list[str]]:
    """The argv of a dry run on YARN: the runtime's archive and the project's zip where the campaign will put them
    (``HADOOP_CONF_DIR`` is read for the file system; nothing is asked of the cluster or written)."""
    conf = yarn_config.read_conf_dir(yarn_config.conf_dir_from(os.environ))

    def archive(env: SparkEnv) -> str:
        if conf.default_fs is None or conf.default_fs.startswith("file:"):
            return (env.cache_dir / "yarn" / archive_name(env)).as_uri()
        return f"{remote_dir(conf.default_fs, getpass.getuser())}/{archive_name(env)}"

    target = YarnTarget(queue, campaign_tag(f"{socket.gethostname()}:{folder.resolve()}"), archive,
                        lambda env: folder / "yarn" / f"project-{runtime_root(env).name}.zip")
    return lambda spec, options, env, event_log_dir=None: yarn_argv(spec, options, env, target, event_log_dir)


# ---------------------------------------------------------------- capacity


def capacity_problems(spec: RunSpec, nodes: Sequence | None, executor_memory_mb: int) -> list[str]:
    """Why ``spec`` cannot run on NodeManagers ``nodes`` (rest.Node records; empty when it can; None: the cluster is
    not asked, only what no YARN cluster can do is)."""
    if spec.nodes != 1:
        return [f"nodes={spec.nodes}: YARN places executors on NodeManagers itself and this backend does not pin them "
                "(that needs node labels the cluster's admin sets up): write nodes=1 and give the executors "
                "as executors"]
    if nodes is None:
        return []
    need_mb = container_mb(executor_memory_mb)
    total_v = sum(n.vcores for n in nodes)
    total_m = sum(n.memory_mb for n in nodes)
    want_v = spec.executors * spec.executor_cores + 1
    want_m = spec.executors * need_mb + AM_MEMORY_MB
    problems = []
    if not nodes:
        return ["the ResourceManager lists no running NodeManager: start the cluster's NodeManagers"]
    if spec.executor_cores > max(n.vcores for n in nodes) or need_mb > max(n.memory_mb for n in nodes):
        problems.append(f"one executor needs {spec.executor_cores} vcores and {need_mb} MB (--executor-memory "
                        f"{executor_memory_mb} MB + YARN's overhead) and the largest NodeManager offers "
                        f"{max(n.vcores for n in nodes)} vcores and {max(n.memory_mb for n in nodes)} MB: lower "
                        "executor_cores or --executor-memory")
    elif want_v > total_v or want_m > total_m:
        problems.append(f"executors x executor_cores = {spec.executors} x {spec.executor_cores} (+ the application "
                        f"master) needs {want_v} vcores and {want_m} MB and the cluster has {total_v} vcores and "
                        f"{total_m} MB: lower executors/executor_cores or --executor-memory")
    return problems


# ---------------------------------------------------------------- the backend


class YarnBackend:
    """The YARN cluster of ``HADOOP_CONF_DIR``: drivers here, executors in YARN containers."""

    drivers_here = True
    master_url = MASTER

    def __init__(self, executor_memory_mb: int, folder: Path, owner: str, queue: str | None = None,
                 environ: dict[str, str] | None = None, progress: Progress = lambda _: None,
                 accepted_limit_s: float = 120.0) -> None:
        self.conf = yarn_config.read_conf_dir(yarn_config.conf_dir_from(os.environ if environ is None else environ))
        self.rm = ResourceManager(self.conf.rm_url)
        self.executor_memory_mb, self.folder, self.queue = executor_memory_mb, folder, queue
        self.tag = campaign_tag(owner)
        self.progress = progress
        self.accepted_limit_s = accepted_limit_s
        self.runtime = runtimes.DEFAULT
        self._nodes: list = []
        self._archives: dict[str, str] = {}
        self._zips: dict[str, Path] = {}
        self.target = YarnTarget(queue, self.tag, self._archive, self._zip)

    # -- the runtime, once per runtime
    def _archive(self, env: SparkEnv) -> str:
        key = str(runtime_root(env))
        if key not in self._archives:
            self._archives[key] = ensure_archive(env, self.conf, self.progress)
        return self._archives[key]

    def _zip(self, env: SparkEnv) -> Path:
        key = str(runtime_root(env))
        if key not in self._zips:
            self._zips[key] = project_zip(self.folder, env)
        return self._zips[key]

    # -- Backend
    def open(self, specs: Sequence[RunSpec], runtime: str = runtimes.DEFAULT) -> None:
        try:
            self._nodes = self.rm.nodes()
            if self.queue is not None and self.queue not in (queues := self.rm.queues()):
                raise YarnError(f"--queue {self.queue}: the cluster has no such queue (its queues: "
                                f"{', '.join(queues)})")
        except NotRunning as e:
            raise CapacityError(str(e)) from None
        except YarnRestError as e:
            raise CapacityError(f"the ResourceManager {self.conf.rm_url} ({e}): is HADOOP_CONF_DIR "
                                f"{self.conf.conf_dir} the cluster's?") from None
        self.runtime = runtime
        self.reap("a campaign before this one")  # a killed campaign's applications, on --resume

    def environment(self) -> tuple[SparkEnv, Runner]:
        """The first runtime's environment, and a runner that kills a run's application through the ResourceManager
        before it ends the run's driver (a driver that goes first lets its master report SUCCEEDED)."""
        return self.environment_for(self.runtime, "stock"), ProcessRunner(before_stop=self.stop_app)

    def stop_app(self, argv: Sequence[str]) -> None:
        """Kill the application of the run ``argv`` submits, if YARN has it queued or running."""
        argv = list(argv)
        if "--name" not in argv:
            return
        for app in self._apps(argv[argv.index("--name") + 1]):
            if not app.done:
                self._kill(app)

    def environment_for(self, runtime: str, jvm: str) -> SparkEnv:
        """The runtime's stock environment: the cluster's JVMs are not ours to tune."""
        from harness.backends import prepared_env

        env = prepared_env(runtime, progress=self.progress)
        self._archive(env)
        return env

    def check(self, spec: RunSpec) -> list[str]:
        return capacity_problems(spec, self._nodes, self.executor_memory_mb)

    def prepare(self, spec: RunSpec) -> None:
        pass  # YARN queues the application until its containers fit

    def submit_argv(self, spec: RunSpec, options: SubmitOptions, env: SparkEnv,
                    event_log_dir: Path | None = None) -> list[str]:
        return yarn_argv(spec, options, env, self.target, event_log_dir)

    def describe(self) -> dict[str, object]:
        return {"backend": "yarn", "resourcemanager": self.conf.rm_url, "conf_dir": str(self.conf.conf_dir),
                "queue": self.queue, "tag": self.tag,
                "nodemanagers": [{"id": n.id, "vcores": n.vcores, "memory_mb": n.memory_mb} for n in self._nodes]}

    def _apps(self, name: str | None = None) -> list[App]:
        apps = self.rm.apps(tags=(self.tag,))
        return sorted((a for a in apps if name is None or a.name == name), key=lambda a: (a.started_ms, a.id))

    def find_app(self, name: str) -> AppInfo | None:
        apps = self._apps(name)
        if not apps:
            return None
        app = apps[-1]
        duration = (app.finished_ms or int(time.time() * 1000)) - app.started_ms if app.started_ms else 0
        return AppInfo(id=app.id, name=app.name, state=app.state, cores=0, memory_per_executor_mb=self.executor_memory_mb,
                       duration_ms=max(0, duration))

    def settle(self, spec: RunSpec, argv: Sequence[str], outcome: Outcome, logs_dir: Path) -> Outcome:
        """After an attempt: its application ended (killed through the ResourceManager if it outlived the driver),
        its id, YARN's word on a failure, and its containers' logs in ``logs_dir``."""
        name = argv[list(argv).index("--name") + 1]
        try:
            apps = self._apps(name)
        except (NotRunning, YarnRestError) as e:
            return outcome if outcome.ok else replace(outcome, reason=f"{outcome.reason}; YARN: {e}")
        if not apps:
            return outcome
        app = apps[-1]
        never_ran = app.state in QUEUED
        if not app.done and not never_ran:  # the driver has ended: its master follows within seconds
            app = self._final(app, wait_s=10.0)
        if not app.done:
            self._kill(app)
            app = self._final(app)
        self._fetch_logs(app, logs_dir)
        outcome = replace(outcome, app_id=outcome.app_id or app.id)
        if outcome.ok:
            return outcome
        if never_ran:
            word = app.diagnostics.strip()[:300] or "no word from YARN"
            return replace(outcome, reason=f"the queue has no room: application {app.id} stayed {app.state} in queue "
                                           f"{app.queue or '?'} ({word}); {outcome.reason}")
        if app.final_status == "FAILED" and app.diagnostics.strip():
            return replace(outcome, reason=f"{outcome.reason}; YARN: {app.diagnostics.strip().splitlines()[0][:300]}")
        return outcome

    def _kill(self, app: App) -> None:
        self.progress(f"yarn: killing {app.id} ({app.state}) through the ResourceManager")
        try:
            self.rm.kill(app.id)
        except YarnRestError:
            pass  # it ended meanwhile

    def _final(self, app: App, wait_s: float = 30.0) -> App:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            now = self.rm.app(app.id)
            if now.done:
                return now
            time.sleep(0.5)
        return self.rm.app(app.id)

    def _fetch_logs(self, app: App, logs_dir: Path) -> None:
        """Each container's log files of ``app`` into ``logs_dir/<container>/``: its masters' (the ResourceManager's
        attempts) and the executors' each master launched (its log names them), from whichever NodeManager holds
        them (a container's host name alone does not tell NodeManagers of one host apart)."""
        try:
            managers = [NodeManager(n.http_address) for n in self.rm.nodes()]
            masters = self.rm.attempts(app.id)
        except (NotRunning, YarnRestError):
            return
        by_address = {nm.url.removeprefix("http://"): nm for nm in managers}
        for cid, address in masters:
            nm = by_address.get(address)
            if nm is None or not _copy_container(nm, cid, logs_dir):
                continue
            launched = set()
            for name in ("stderr", "stdout"):
                log = logs_dir / cid / name
                if log.is_file():
                    launched |= set(LAUNCHED.findall(log.read_text(errors="replace")))
            for executor in sorted(launched - {cid}):
                for nm in sorted(managers, key=lambda m: m is not by_address.get(address)):
                    if _copy_container(nm, executor, logs_dir):
                        break

    def reap(self, whose: str = "this campaign") -> list[str]:
        """Kill every application of this campaign still queued or running (none is left by the tool)."""
        try:
            alive = [a for a in self._apps() if not a.done]
        except (NotRunning, YarnRestError):
            return []
        for app in alive:
            self.progress(f"yarn: {app.id} of {whose} is still {app.state}: killing it")
            self._kill(app)
        for app in alive:
            try:
                self._final(app)
            except (NotRunning, YarnRestError):
                pass
        return [a.id for a in alive]

    def close(self) -> None:
        self.reap()


def _copy_container(nm: NodeManager, cid: str, logs_dir: Path) -> bool:
    """Copy container ``cid``'s log files from ``nm`` into ``logs_dir/cid/``; False when ``nm`` holds none of it."""
    try:
        names = nm.log_files(cid)
        if not names:
            return False
        dest = logs_dir / cid
        dest.mkdir(parents=True, exist_ok=True)
        for name in names:
            (dest / name).write_bytes(nm.log(cid, name, limit=MAX_LOG_BYTES))
        return True
    except (NotRunning, YarnRestError, ValueError, OSError):
        return False


def yarn_backend(executor_memory_mb: int, folder: Path, owner: str, queue: str | None,
                 progress: Progress) -> YarnBackend:
    try:
        return YarnBackend(executor_memory_mb, folder, owner, queue, progress=progress)
    except ClusterError as e:
        raise YarnError(str(e)) from None
