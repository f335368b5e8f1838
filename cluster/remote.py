"""A Spark standalone cluster on the inventory's hosts, driven over SSH: the Fabric tasks' logic.

    cluster = RemoteCluster(load_inventory("inventory.toml"))
    cluster.provision(runtimes=["bigdl"])   # venv + this project, and the runtime, on every host
    cluster.use("bigdl")         # the runtime the daemons and drivers run from now on
    cluster.start_master()
    cluster.start_workers(2)     # the first 2 workers of the inventory
    cluster.scale(1)             # exactly worker-1 runs
    cluster.status()             # from the master's JSON
    cluster.collect_logs(Path("cluster-logs"))
    cluster.stop()

Every operation is idempotent and returns a :class:`~cluster.group.GroupResult` with one
result per host (or raises :class:`~cluster.group.GroupFailure`, which keeps them all).
On the hosts everything happens through two shipped programs, never through shell
strings built here: ``bootstrap.py`` (installs the tool) and ``python -m cluster.daemon``
(prepares runtimes, starts, tracks and stops daemons, runs a driver). Remote layout under
``remote.base_dir``::

    dist/<digest>/   the wheel, constraints.txt, bootstrap.py     venv/       the tool's environment
    wheelhouse/      shipped wheels (optional)                    hosts/<host>/{state.json,logs,work}
    runtimes/        the runtimes' environments (cluster.runtime)  runtimes-src/<name>-<key>/  a user runtime's files

A runtime (Spark, Java, the jobs' packages) is prepared on every host, built-in ones from the
tool's wheel, a user-declared TOML from its copy in ``runtimes-src``; the cluster's daemons and
drivers run the one chosen with :meth:`RemoteCluster.use`.

State lives in a folder per host, so hosts that share a file system (NFS) never mix up
each other's pids.
"""

from __future__ import annotations

import json
import tarfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Callable, Sequence

from cluster import runtime as runtimes
from cluster.bundle import Bundle, build_bundle, missing_runtime_wheels
from cluster.errors import ClusterError, HostLost, NotRunning, StartupTimeout
from cluster.group import GroupFailure, GroupResult, HostResult, on_hosts
from cluster.inventory import Inventory, WorkerSpec
from cluster.master import MasterState, parse_state
from cluster.runtime import Runtime
from cluster.sparkenv import SparkEnv
from cluster.ssh import CommandResult, FabricTransport, RemoteCommandFailed, SSHError, Transport

Progress = Callable[[str], None]
DEFAULT_BUNDLE_DIR = Path(".cluster") / "bundles"
LIST_DIR = ("import json, os, sys; d = sys.argv[1]; "
            "print(json.dumps({f: os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)} if os.path.isdir(d) else {}))")


def _quiet(_: str) -> None:
    pass


def serialized(progress: Progress) -> Progress:
    """``progress`` for the hosts' threads: one message at a time (a print's text and newline are two writes)."""
    lock = threading.Lock()

    def say(message: str) -> None:
        with lock:
            progress(message)

    return say


# ---------------------------------------------------------------- commands (pure)


@dataclass(frozen=True)
class Layout:
    """Where things live on every host."""

    base: PurePosixPath
    system_python: str = "python3"

    @property
    def python(self) -> str:
        return str(self.base / "venv" / "bin" / "python")

    @property
    def wheelhouse(self) -> str:
        return str(self.base / "wheelhouse")

    def dist(self, bundle: Bundle) -> PurePosixPath:
        return self.base / "dist" / bundle.short

    def host_dir(self, host: str) -> str:
        return str(self.base / "hosts" / host)

    @property
    def runtimes(self) -> str:
        return str(self.base / "runtimes")

    def runtime_src(self, rt: Runtime) -> str:
        """Where a user-declared runtime's files are copied (a folder per version of them)."""
        return str(self.base / "runtimes-src" / f"{rt.name}-{rt.key()}")

    def runtime_arg(self, rt: Runtime) -> str:
        """How the hosts name a runtime: a built-in one by name, another by its copied TOML."""
        return rt.name if rt.builtin else f"{self.runtime_src(rt)}/{rt.source.name}"

    def runtime_args(self, rt: Runtime) -> list[str]:
        return ["--runtime", self.runtime_arg(rt), "--runtimes", self.runtimes]

    def prepare_runtime(self, rt: Runtime, wheelhouse: bool) -> list[str]:
        argv = self.daemon("prepare-runtime", *self.runtime_args(rt))
        return argv + (["--wheelhouse", self.wheelhouse] if wheelhouse else [])

    # -- argv lists; each element reaches the remote program unchanged
    def mkdir(self, *paths: str) -> list[str]:
        return ["mkdir", "-p", "--", *paths]

    def list_dir(self, path: str) -> list[str]:
        return [self.system_python, "-c", LIST_DIR, path]

    def bootstrap(self, bundle: Bundle, wheelhouse: bool) -> list[str]:
        d = self.dist(bundle)
        argv = [self.system_python, str(d / "bootstrap.py"), "--base", str(self.base), "--digest", bundle.digest,
                "--wheel", str(d / bundle.wheel.name), "--constraints", str(d / "constraints.txt")]
        return argv + (["--wheelhouse", self.wheelhouse] if wheelhouse else [])

    def daemon(self, *args: str) -> list[str]:
        return [self.python, "-m", "cluster.daemon", *args]


def _owner_args(owner: str | None) -> list[str]:
    return ["--owner", owner] if owner else []


def master_argv(inv: Inventory, layout: Layout, timeout: float, rt: Runtime, owner: str | None = None) -> list[str]:
    m = inv.master
    return layout.daemon("start-master", "--state", layout.host_dir(m.host), "--host", m.spark_host,
                         "--port", str(m.port), "--webui-port", str(m.webui_port), "--timeout", f"{timeout:g}",
                         *layout.runtime_args(rt), *_owner_args(owner))


def worker_argv(inv: Inventory, layout: Layout, w: WorkerSpec, timeout: float, rt: Runtime,
                owner: str | None = None) -> list[str]:
    argv = layout.daemon("start-worker", "--state", layout.host_dir(w.host), "--name", w.name, "--host", w.spark_host,
                         "--master", inv.master_url, "--master-webui", inv.webui_url, "--cores", str(w.cores),
                         "--memory-mb", str(w.memory_mb), "--webui-port", str(w.webui_port), "--timeout", f"{timeout:g}",
                         *layout.runtime_args(rt), *_owner_args(owner))
    return argv + (["--oversubscribe"] if inv.remote.oversubscribe else [])


def driver_argv(inv: Inventory, layout: Layout, submit: list[str], rt: Runtime) -> list[str]:
    return layout.daemon("run", "--local-ip", inv.master.spark_host, *layout.runtime_args(rt), "--", *submit)


def env_from_json(out: dict) -> SparkEnv:
    """A host's Spark environment from ``cluster.daemon env`` (tolerant of fields an older daemon lacks)."""
    def path(key: str) -> Path | None:
        return Path(out[key]) if out.get(key) else None

    jars = out.get("class_path")
    if jars is None:  # a daemon from before runtimes: BigDL's two jars
        jars = [out[k] for k in ("dllib_jar", "core_jar") if out.get(k)]
    return SparkEnv(python=Path(out["python"]), java_home=Path(out["java_home"]), spark_home=Path(out["spark_home"]),
                    class_path=tuple(Path(j) for j in jars), local_ip=out.get("local_ip", "127.0.0.1"),
                    runtime=out.get("runtime") or "", site_dir=path("site_dir"), log_config=path("log_config"),
                    python_path=tuple(Path(p) for p in out.get("python_path") or ()),
                    java_options=tuple(out.get("java_options") or ()), class_data_list=path("class_data_list"),
                    natives_jar=path("natives_jar"))


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class ClusterReport:
    """What ``status`` finds: the master's view and each host's own processes."""

    master_url: str
    master: MasterState | None
    hosts: GroupResult
    problem: str | None = None

    def describe(self) -> str:
        lines = []
        if self.master is None:
            lines.append(f"no master answers for {self.master_url}: {self.problem}")
        else:
            lines.append(f"master {self.master_url} ({self.master.status})")
            for w in self.master.alive_workers:
                lines.append(f"  worker {w.host}:{w.port}: {w.cores} cores ({w.cores_used} used), {w.memory_mb} MB")
            for a in self.master.active_apps:
                lines.append(f"  running app {a.id} {a.name!r}: {a.cores} cores")
            lines.append(f"{len(self.master.alive_workers)} worker(s) alive, {self.master.cores} cores")
        lines += [r.describe() for r in self.hosts.results]
        return "\n".join(lines)


def _json(result: CommandResult) -> dict:
    if not result.ok:
        raise RemoteCommandFailed(result.host, result.command, result.exit_code, result.error_line())
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RemoteCommandFailed(result.host, result.command, result.exit_code,
                                  f"expected one JSON line, got {result.stdout.strip()[-200:]!r}") from None


# ---------------------------------------------------------------- the cluster


class RemoteCluster:
    """The inventory's hosts as one Spark standalone cluster."""

    def __init__(self, inventory: Inventory, transport: Transport | None = None, progress: Progress = _quiet,
                 bundle_dir: Path = DEFAULT_BUNDLE_DIR, start_timeout: float = 120.0,
                 install_timeout: float = 1800.0) -> None:
        self.inv = inventory
        self.transport = transport or FabricTransport(inventory)
        self.layout = Layout(inventory.remote.base_dir, inventory.remote.python)
        self.progress = serialized(progress)  # hosts report from their own threads
        self.bundle_dir = bundle_dir
        self.start_timeout, self.install_timeout = start_timeout, install_timeout
        self.runtime: Runtime = runtimes.resolve(runtimes.DEFAULT)  # what daemons and drivers run (use())
        self.owner: str | None = None  # the campaign that starts daemons (recorded on the hosts)
        self.down: dict[str, str] = {}  # hosts found unreachable over SSH, with why; their workers are not used

    @property
    def master_url(self) -> str:
        return self.inv.master_url

    def use(self, runtime: str | Runtime) -> Runtime:
        """Start daemons and drivers with ``runtime`` (a name or TOML) from now on; it must be prepared on the hosts."""
        self.runtime = runtime if isinstance(runtime, Runtime) else runtimes.resolve(runtime)
        return self.runtime

    def _call(self, host: str, argv: list[str], timeout: float | None = 120.0) -> dict:
        return _json(self.transport.run(host, argv, timeout))

    # -- provision
    def _ship_wheelhouse(self, host: str) -> int:
        local = self.inv.remote.wheelhouse
        assert local is not None
        have = self._call(host, self.layout.list_dir(self.layout.wheelhouse))
        sent = 0
        for wheel in sorted(local.glob("*.whl")):
            if have.get(wheel.name) != wheel.stat().st_size:
                self.transport.put(host, wheel, f"{self.layout.wheelhouse}/{wheel.name}")
                sent += 1
        return sent

    def _hosts(self, hosts: Sequence[str] | None) -> tuple[str, ...]:
        unknown = [h for h in hosts or () if h not in self.inv.hosts]
        if unknown:
            raise ClusterError(f"hosts {', '.join(unknown)} are not in the inventory {self.inv.path}: use one of "
                               f"{', '.join(self.inv.hosts)}")
        return tuple(hosts or self.inv.hosts)

    def provision(self, hosts: Sequence[str] | None = None, bundle: Bundle | None = None,
                  runtimes: Sequence[str | Runtime] = ()) -> GroupResult:
        """Install this project into ``<base>/venv`` on every host, then prepare ``runtimes`` (idempotent).

        ``hosts`` limits it to some of the inventory's hosts (default: all); ``bundle`` defaults
        to one built from the current source tree; ``runtimes`` (names or TOMLs) are prepared
        under ``<base>/runtimes`` on each host once the tool is there.
        """
        targets = self._hosts(hosts)
        wanted = self._runtimes(runtimes)
        bundle = bundle or build_bundle(self.bundle_dir)
        self.progress(f"bundle {bundle.short}: {bundle.wheel.name}")
        wheelhouse = self.inv.remote.wheelhouse is not None

        def step(host: str, role: str, _: None) -> HostResult:
            dist = str(self.layout.dist(bundle))
            _ok(self.transport.run(host, self.layout.mkdir(dist, self.layout.wheelhouse, self.layout.host_dir(host)), 60))
            for f in (bundle.wheel, bundle.constraints, bundle.bootstrap):
                self.transport.put(host, f, f"{dist}/{f.name}")
            sent = self._ship_wheelhouse(host) if wheelhouse else 0
            self.progress(f"{host}: installing (pip, up to a few minutes on a fresh host)")
            out = self._call(host, self.layout.bootstrap(bundle, wheelhouse), timeout=self.install_timeout)
            env = self._call(host, self.layout.daemon("env", "--local-ip", host), timeout=120)
            problems = self._size_problems(host, int(env["cpus"]), int(env["memory_mb"]))
            if problems:
                return HostResult(host, role, False, bool(out["changed"]), problems[0], data=env)
            prepared = [self._prepare_on(host, rt) for rt in wanted]
            what = "installed" if out["changed"] else "up to date"
            detail = f"{what} ({bundle.short}), {env['cpus']} CPUs, {env['memory_mb']} MB"
            if sent:
                detail += f", {sent} wheel(s) shipped"
            if prepared:
                detail += "; runtime " + ", ".join(_prepared_text(p) for p in prepared)
            changed = bool(out["changed"]) or sent > 0 or any(p["changed"] for p in prepared)
            return HostResult(host, role, True, changed, detail, data={**env, "runtimes": prepared})

        return on_hosts("provision", ((h, "host", None) for h in targets), step)

    # -- runtimes
    def _runtimes(self, names: Sequence[str | Runtime]) -> list[Runtime]:
        """Resolve runtimes here; with a wheelhouse, refuse one whose locked wheels it lacks (before any SSH)."""
        found = [n if isinstance(n, Runtime) else runtimes.resolve(n) for n in names]
        for rt in found:
            if not rt.builtin:
                runtime_files(rt)  # every file it names is in its folder (what is copied)
        local = self.inv.remote.wheelhouse
        for rt in found if local is not None else ():
            missing = missing_runtime_wheels(local, rt)
            if missing:
                raise ClusterError(
                    f"remote.wheelhouse {local} lacks {len(missing)} wheel(s) of runtime {rt.name} (e.g. {missing[0]}), "
                    f"and hosts without a package index install runtimes from it: run `fab wheelhouse --dest {local} "
                    f"--runtime {rt.name if rt.builtin else rt.source}`, or remove remote.wheelhouse for hosts that "
                    "reach the index")
        return found

    def _ship_runtime(self, host: str, rt: Runtime) -> None:
        """Copy a user-declared runtime's TOML and the files it names into ``runtimes-src`` on the host."""
        if rt.builtin:
            return  # inside the tool's wheel
        src = self.layout.runtime_src(rt)
        _ok(self.transport.run(host, self.layout.mkdir(src), 60))
        folder = rt.source.parent.resolve()
        files = runtime_files(rt)
        subdirs = sorted({f"{src}/{f.parent.relative_to(folder).as_posix()}" for f in files if f.parent != folder})
        if subdirs:
            _ok(self.transport.run(host, self.layout.mkdir(*subdirs), 60))
        for f in files:
            self.transport.put(host, f, f"{src}/{f.relative_to(folder).as_posix()}")

    def _prepare_on(self, host: str, rt: Runtime) -> dict:
        self._ship_runtime(host, rt)
        self.progress(f"{host}: runtime {rt.name}: preparing under {self.layout.runtimes} (once; minutes when new)")
        out = self._call(host, self.layout.prepare_runtime(rt, self.inv.remote.wheelhouse is not None),
                         timeout=self.install_timeout)
        self.progress(f"{host}: runtime {_prepared_text(out)}")
        return out

    def prepare_runtimes(self, names: Sequence[str | Runtime], hosts: Sequence[str] | None = None) -> GroupResult:
        """Prepare runtimes on every host (the tool must be installed: ``provision``); idempotent."""
        wanted, targets = self._runtimes(names), self._hosts(hosts)
        wheelhouse = self.inv.remote.wheelhouse is not None

        def step(host: str, role: str, _: None) -> HostResult:
            sent = self._ship_wheelhouse(host) if wheelhouse else 0
            prepared = [self._prepare_on(host, rt) for rt in wanted]
            detail = ", ".join(_prepared_text(p) for p in prepared) + (f"; {sent} wheel(s) shipped" if sent else "")
            return HostResult(host, role, True, sent > 0 or any(p["changed"] for p in prepared), detail,
                              data={"runtimes": prepared})

        return on_hosts("prepare-runtime", ((h, "host", None) for h in targets), step)

    def _size_problems(self, host: str, cpus: int, memory_mb: int) -> list[str]:
        if self.inv.remote.oversubscribe:
            return []
        problems = []
        for w in (w for w in self.inv.workers if w.host == host):
            if w.cores > cpus:
                problems.append(f"{w.name} offers cores={w.cores} but the host has {cpus} CPU(s): lower its cores in "
                                "the inventory (or set remote.oversubscribe = true)")
            elif memory_mb and w.memory_mb > memory_mb:
                problems.append(f"{w.name} offers memory={w.memory_mb} MB but the host has {memory_mb} MB: lower its "
                                "memory in the inventory (or set remote.oversubscribe = true)")
        return problems

    # -- daemons
    def start_master(self) -> GroupResult:
        m = self.inv.master

        def step(host: str, role: str, _: None) -> HostResult:
            out = self._call(host, master_argv(self.inv, self.layout, self.start_timeout, self.runtime, self.owner),
                             self.start_timeout + 30)
            return HostResult(host, role, True, bool(out["changed"]),
                              f"{self.master_url} (pid {out['pid']}, runtime {self.runtime.name}, log {out['log']})",
                              data=out)

        return on_hosts("start-master", [(m.host, "master", None)], step)

    def _workers(self, count: int | None) -> tuple[WorkerSpec, ...]:
        """The first ``count`` workers of the inventory whose hosts are not down (all by default)."""
        n = len(self.inv.workers) if count is None else count
        if not 0 <= n <= len(self.inv.workers):
            raise ClusterError(f"--count/--workers = {n} but the inventory lists {len(self.inv.workers)} worker(s): "
                               f"use 0..{len(self.inv.workers)} or add [[workers]] entries")
        usable = self.usable_workers()
        if n > len(usable):
            lost = sorted({w.host for w in self.inv.workers if w.host in self.down})
            raise HostLost(lost[0], "worker host", self.down[lost[0]])
        return usable[:n]

    def workers_for(self, count: int) -> tuple[WorkerSpec, ...]:
        """The workers a run of ``count`` nodes runs on (the first ones on hosts not down)."""
        return self._workers(count)

    def usable_workers(self) -> tuple[WorkerSpec, ...]:
        """The inventory's workers on hosts not known to be down, in inventory order."""
        return tuple(w for w in self.inv.workers if w.host not in self.down)

    # -- health
    def probe(self, host: str) -> str | None:
        """An SSH health check of ``host`` on a fresh connection: None when it runs a command, else why not."""
        forget = getattr(self.transport, "forget", None)
        if forget is not None:
            forget(host)  # a connection opened before a crash or partition may hang or lie
        try:
            self.transport.run(host, ["true"], self.inv.ssh.connect_timeout + 10)
        except SSHError as e:
            return str(e).removeprefix(f"{host}: ")
        return None  # it ran a command: SSH works (what the command said is not the question)

    def check_hosts(self, hosts: Sequence[str]) -> dict[str, str]:
        """Probe ``hosts`` side by side; mark the unreachable ones down (and the reachable ones up); return those down."""
        result = on_hosts("probe", ((h, "host", None) for h in dict.fromkeys(hosts)),
                          lambda host, role, _: HostResult(host, role, (why := self.probe(host)) is None, False,
                                                           why or "answers"))
        for r in result.results:
            if r.ok:
                self.down.pop(r.host, None)
            else:
                self.down[r.host] = r.detail
        return {r.host: r.detail for r in result.failed}

    def free_space(self) -> GroupResult:
        """Free disk (MB) on every host under its state folder and its workers' work folders (``data["free_mb"]``)."""
        def step(host: str, role: str, _: None) -> HostResult:
            paths = [self.layout.host_dir(host)] + [f"{self.layout.host_dir(host)}/work/{w.name}"
                                                     for w in self.inv.workers if w.host == host]
            args = [a for path in paths for a in ("--path", path)]
            out = self._call(host, self.layout.daemon("free", *args), 60)
            return HostResult(host, role, True, False, "", data=out)

        return on_hosts("free", ((h, "host", None) for h in self.inv.hosts if h not in self.down), step)

    def start_workers(self, count: int | None = None) -> GroupResult:
        """Start the first ``count`` workers of the inventory (all by default); others are left alone."""
        workers = self._workers(count)

        def step(host: str, role: str, w: WorkerSpec) -> HostResult:
            out = self._call(host, worker_argv(self.inv, self.layout, w, self.start_timeout, self.runtime, self.owner),
                             self.start_timeout + 30)
            return HostResult(host, role, True, bool(out["changed"]),
                              f"{w.cores} cores, {w.memory_mb} MB, port {out['port']}, runtime {self.runtime.name}",
                              data=out)

        return on_hosts("start-workers", ((w.host, w.name, w) for w in workers), step)

    def stop_workers(self, workers: tuple[WorkerSpec, ...]) -> GroupResult:
        by_host: dict[str, list[str]] = {}
        for w in workers:
            by_host.setdefault(w.host, []).append(w.name)

        def step(host: str, role: str, names: list[str]) -> HostResult:
            args = ["stop", "--state", self.layout.host_dir(host)]
            for name in names:
                args += ["--role", name]
            return _stopped(host, role, self.transport.run(host, self.layout.daemon(*args), 120))

        return on_hosts("stop-workers", ((h, ",".join(n), n) for h, n in by_host.items()), step)

    def scale(self, workers: int, timeout: float | None = None) -> GroupResult:
        """Make exactly the first ``workers`` workers run, and wait until the master agrees."""
        keep = self._workers(workers)
        others = tuple(w for w in self.inv.workers if w not in keep and w.host not in self.down)
        result = self.stop_workers(others) + self.start_workers(workers)
        result.raise_on_failure()
        wanted = {(self._spark_host(r.role), int(r.data["port"])) for r in result.results if "port" in r.data}
        self._await_workers(wanted, keep, timeout or self.start_timeout)
        return result

    # -- host sampling of one run (harness.sampler on each worker host)
    def _worker_hosts(self, workers: int) -> list[str]:
        return list(dict.fromkeys(w.host for w in self._workers(workers)))

    def start_sampling(self, key: str, workers: int, period_s: float = 1.0) -> GroupResult:
        """Start a host sampler on the hosts of the first ``workers`` workers, for run ``key``."""
        def step(host: str, role: str, _: None) -> HostResult:
            out = self._call(host, self.layout.daemon("sample-start", "--state", self.layout.host_dir(host),
                                                      "--key", key, "--period", f"{period_s:g}"))
            return HostResult(host, role, True, True, f"sampling (pid {out['pid']})", data=out)

        return on_hosts("sample-start", ((h, "sampler", None) for h in self._worker_hosts(workers)), step)

    def stop_sampling(self, key: str, workers: int) -> GroupResult:
        """Stop those samplers; each host's result carries its table (``data["csv"]``) and CPU cost."""
        def step(host: str, role: str, _: None) -> HostResult:
            out = self._call(host, self.layout.daemon("sample-stop", "--state", self.layout.host_dir(host),
                                                      "--key", key))
            return HostResult(host, role, bool(out["csv"]), False,
                              out.get("problem") or f"{out['csv'].count(chr(10)) - 1} sample(s)", data=out)

        return on_hosts("sample-stop", ((h, "sampler", None) for h in self._worker_hosts(workers)), step)

    def _spark_host(self, name: str) -> str:
        return next(w.spark_host for w in self.inv.workers if w.name == name)

    def _await_workers(self, wanted: set, keep: tuple[WorkerSpec, ...], timeout: float) -> MasterState:
        deadline = time.monotonic() + timeout
        while True:
            # a partitioned host's worker stays ALIVE in the master's view until Spark's worker timeout (60 s):
            # wait for it to go, or Spark would give the run an executor there
            state = self.master_state()
            alive = {(w.host, w.port) for w in state.alive_workers}
            if alive == wanted:
                return state
            if time.monotonic() > deadline:
                extra = sorted(f"{h}:{p}" for h, p in alive - wanted)
                missing = sorted(f"{h}:{p}" for h, p in wanted - alive)
                raise StartupTimeout(
                    f"after {timeout:.0f} s the master lists {len(alive)} alive worker(s), expected {len(keep)}"
                    + (f"; not registered: {', '.join(missing)}" if missing else "")
                    + (f"; not ours or not stopped: {', '.join(extra)} (stop them: Spark spreads executors over every "
                       "alive worker)" if extra else ""))
            time.sleep(1.0)

    def stop(self) -> GroupResult:
        """Stop every daemon this tool started on every host (workers first, then the master)."""
        def step(host: str, role: str, _: None) -> HostResult:
            return _stopped(host, role, self.transport.run(host, self.layout.daemon("stop", "--state",
                                                                                      self.layout.host_dir(host)), 120))

        workers_only = [h for h in self.inv.hosts if h != self.inv.master.host]
        result = on_hosts("stop", ((h, "host", None) for h in workers_only), step)
        return result + on_hosts("stop", [(self.inv.master.host, "host", None)], step)

    # -- status
    def master_state(self) -> MasterState:
        result = self.transport.run(self.inv.master.host, self.layout.daemon("master-state", "--webui",
                                                                              self.inv.webui_url), 60)
        if not result.ok:
            raise NotRunning(f"{self.inv.master.host}: {result.error_line()}")
        return parse_state(_json(result))

    def status(self) -> ClusterReport:
        def step(host: str, role: str, _: None) -> HostResult:
            out = self._call(host, self.layout.daemon("status", "--state", self.layout.host_dir(host)), 60)
            running = sorted(out["running"])
            on = f" (runtime {out['runtime']})" if running and out.get("runtime") else ""
            return HostResult(host, role, True, False, f"running: {', '.join(running) or 'nothing'}{on}", data=out)

        hosts = on_hosts("status", ((h, "host", None) for h in self.inv.hosts), step)
        try:
            return ClusterReport(self.master_url, self.master_state(), hosts)
        except (NotRunning, ClusterError) as e:
            return ClusterReport(self.master_url, None, hosts, str(e))

    # -- logs
    def collect_logs(self, dest: Path) -> GroupResult:
        """Copy every host's daemon logs and executor stdout/stderr into ``dest/<host>/``."""
        dest.mkdir(parents=True, exist_ok=True)

        def step(host: str, role: str, _: None) -> HostResult:
            remote = f"{self.layout.host_dir(host)}/logs-bundle.tar.gz"
            out = self._call(host, self.layout.daemon("pack-logs", "--state", self.layout.host_dir(host),
                                                      "--out", remote), 300)
            local = dest / f"{host}.tar.gz"
            self.transport.get(host, remote, local)
            target = dest / host
            target.mkdir(parents=True, exist_ok=True)
            with tarfile.open(local) as tar:
                tar.extractall(target, filter="data")
            local.unlink()
            return HostResult(host, role, True, True, f"{len(out['files'])} file(s) in {target}", data=out)

        return on_hosts("collect-logs", ((h, "host", None) for h in self.inv.hosts), step)

    # -- driver
    def running_runtime(self) -> str | None:
        """The runtime the master host's daemons run (its state), None when nothing runs there."""
        return self.master_host_state().get("runtime")

    def master_host_state(self) -> dict:
        """What runs on the master host per its state: ``runtime`` and ``owner`` (both None when nothing runs)."""
        host = self.inv.master.host
        out = self._call(host, self.layout.daemon("status", "--state", self.layout.host_dir(host)), 60)
        running = bool(out.get("running"))
        return {"runtime": out.get("runtime") if running else None, "owner": out.get("owner") if running else None}

    def spark_env(self) -> tuple[SparkEnv, str]:
        """The master host's Spark environment of the current runtime (remote paths) and its jobs/train.py."""
        host = self.inv.master.host
        out = self._call(host, self.layout.daemon("env", "--local-ip", self.inv.master.spark_host,
                                                  *self.layout.runtime_args(self.runtime)), 120)
        return env_from_json(out), str(out["job_script"])

    def run_driver(self, submit: list[str], out: IO[str], err: IO[str], timeout: float | None) -> CommandResult:
        """Run a spark-submit argv on the master host with the current runtime; its output streams into ``out``/``err``."""
        return self.transport.run(self.inv.master.host, driver_argv(self.inv, self.layout, submit, self.runtime),
                                  timeout, out, err)

    def close(self) -> None:
        self.transport.close()


def runtime_files(rt: Runtime) -> list[Path]:
    """A user-declared runtime's TOML and the files it names (requirements, lock, class list), all in its folder."""
    raw = tomllib.loads(rt.source.read_text()).get("runtime", {}).get("requirements")
    named = [rt.source.parent / raw] if isinstance(raw, str) else []
    files = [rt.source, *named, *(f for f in (rt.lock, rt.class_data_list) if f is not None and f.is_file())]
    folder = rt.source.parent.resolve()
    outside = [f for f in files if folder not in f.resolve().parents]
    if outside:
        raise ClusterError(f"runtime {rt.name}: {outside[0]} is not in the folder of {rt.source}, and only that folder "
                           "is copied to the hosts: move it next to the runtime file")
    return list(dict.fromkeys(f.resolve() for f in files))


def _prepared_text(out: dict) -> str:
    if not out.get("changed"):
        return f"{out.get('runtime')} already prepared"
    return f"{out.get('runtime')} prepared in {float(out.get('seconds') or 0):.0f} s"


def _ok(result: CommandResult) -> CommandResult:
    if not result.ok:
        raise RemoteCommandFailed(result.host, result.command, result.exit_code, result.error_line())
    return result


def _stopped(host: str, role: str, result: CommandResult) -> HostResult:
    if result.exit_code == 127:  # no venv: never provisioned, so nothing of ours runs there
        return HostResult(host, role, True, False, "not provisioned: nothing to stop")
    stopped = _json(result)["stopped"]
    return HostResult(host, role, True, bool(stopped), f"stopped: {', '.join(stopped) or 'nothing'}", data={"stopped": stopped})


__all__ = ["RemoteCluster", "ClusterReport", "Layout", "GroupFailure", "master_argv", "worker_argv", "driver_argv",
           "env_from_json", "runtime_files"]
