"""The remote end of ``cluster.remote``: starts, tracks and stops Spark daemons on one host.

Run over SSH inside the provisioned venv, always as an argv (the controller quotes every
element), e.g.

    <base>/venv/bin/python -m cluster.daemon prepare-runtime --runtime bigdl --runtimes <base>/runtimes
    <base>/venv/bin/python -m cluster.daemon start-master --state DIR --host 10.0.0.10 --port 7077 --webui-port 8080 \
        --runtime bigdl --runtimes <base>/runtimes
    <base>/venv/bin/python -m cluster.daemon start-worker --state DIR --name worker-1 --host 10.0.0.11 ... --runtime bigdl
    <base>/venv/bin/python -m cluster.daemon stop --state DIR
    <base>/venv/bin/python -m cluster.daemon env --local-ip 10.0.0.10 --runtime bigdl --runtimes <base>/runtimes
    <base>/venv/bin/python -m cluster.daemon run --local-ip 10.0.0.10 --runtime bigdl ... -- spark-submit ...
    <base>/venv/bin/python -m cluster.daemon sample-start --state DIR --key 1-1   # host sampler of one run
    <base>/venv/bin/python -m cluster.daemon sample-stop --state DIR --key 1-1    # its table, as JSON
    <base>/venv/bin/python -m cluster.daemon free --path DIR/work/worker-2          # free disk (MB) per path

Runtimes: the venv holds the tool only; Spark, Java and the jobs' packages come from a runtime
(:mod:`cluster.runtime`) prepared on the host under ``--runtimes`` (``<base>/runtimes``, so a
host's runtimes are removed with its base dir). Every command that starts a Spark process takes
``--runtime NAME|TOML``; the daemons of one state dir run one runtime, recorded in ``state.json``.

Daemons are started in their own session (``setsid``) with their output in
``DIR/logs/<role>.log``; ``DIR/state.json`` records each pid with its kernel start time
(as :mod:`cluster.local` does), so ``stop`` ends exactly those processes. Every command
prints one JSON object on stdout; a failure is one line on stderr with exit code 4, or 2
when the host cannot do what the inventory says (e.g. too few CPUs).

Ownership: ``start-master`` and ``start-worker`` take ``--owner`` (the campaign that starts them);
``state.json`` records it while anything runs, and ``status`` reports it, so a campaign resumed after
its predecessor stopped adopts the daemons that one started (and stops them at its end), while a
cluster someone else started is left running.

Crash safety: each daemon's intent is saved before it is spawned and its pid right after;
every command first reconciles ``state.json`` with the Spark processes of ``DIR`` (their cwd
and ``--work-dir``): a daemon a killed command started is adopted, any other is stopped, and
``stop`` ends everything of ``DIR``. A command interrupted by SIGTERM/SIGHUP (e.g. its SSH
channel closed) stops the daemons it started.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Iterator, Sequence

from cluster import runtime as runtimes
from cluster.bootstrap import facts
from cluster.errors import ClusterError, PortInUse, StartupTimeout
from cluster.errors import NotRunning
from cluster.master import fetch_state
from cluster.processes import (EXECUTOR_SCRATCH, MASTER_CLASS, WORKER_CLASS, FoundProcess, Intent, ProcessRecord,
                               end_process_group, executor_scratch_env, free_port, log_tail as _tail, port_free,
                               reconcile, start_ticks, started_port, START_MARKER)
from cluster.runtime import RuntimeProblem
from cluster.sparkenv import SparkEnv
from sparkdl.cli import run_cli
from sparkdl.crash import crash_point
from sparkdl.errors import EXIT_INPUT
from sparkdl.options import CommandParser


class HostTooSmall(ClusterError):
    """The host has fewer CPUs or less memory than the inventory says a worker offers."""

    exit_code = EXIT_INPUT




# ---------------------------------------------------------------- runtimes on this host


def runtimes_root(given: Path | None) -> Path:
    """Where this host's runtimes live: ``--runtimes`` (``<base>/runtimes``), else the user's cache."""
    return given.absolute() if given is not None else runtimes.cache_root()


def project_path() -> Path:
    """The folder a job's Python imports ``jobs.*`` from (see :func:`cluster.runtime.project_path`)."""
    return runtimes.project_path()


def runtime_env(runtime: str, root: Path | None, local_ip: str) -> SparkEnv:
    """The Spark environment of a runtime prepared on this host (say how to prepare it when it is not)."""
    rt = runtimes.resolve(runtime)
    where = runtimes_root(root)
    if not runtimes.is_prepared(rt, where):
        raise RuntimeProblem(f"runtime {rt.name} is not prepared on this host under {where}: run `fab provision "
                             f"--runtime {runtime}` (a campaign prepares the runtimes its rows need itself)")
    env = runtimes.spark_env(rt, runtimes.home(rt, where), local_ip=local_ip)
    return replace(env, python_path=(project_path(),))


def installer_settings(root: Path, wheelhouse: Path | None) -> dict[str, str]:
    """What uv (and pip, its fallback) read: their cache under ``root``; with a wheelhouse, no network at all."""
    settings = {"UV_CACHE_DIR": str(root / ".uv-cache"), "UV_PYTHON_DOWNLOADS": "never"}
    if wheelhouse is not None:  # the shipped wheels only (uv has no variable for --no-index; offline is stricter)
        settings.update({"UV_OFFLINE": "1", "UV_FIND_LINKS": str(wheelhouse),
                         "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)})
    return settings


def prepare_runtime(runtime: str, root: Path | None, wheelhouse: Path | None) -> dict:
    """Build the runtime's environment under ``root`` unless it is there (one host at a time per root).

    ``wheelhouse``: install from those wheels only (hosts without a package index).
    """
    rt = runtimes.resolve(runtime)
    where = runtimes_root(root)
    where.mkdir(parents=True, exist_ok=True)
    os.environ.update(installer_settings(where, wheelhouse))
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    with open(where / ".prepare.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # hosts that share the base dir (NFS) build it once
        was = runtimes.is_prepared(rt, where)
        done = runtimes.prepare(rt, where, progress=say)
    return {"changed": not was, "runtime": rt.name, "path": str(done.path), "seconds": round(done.seconds, 1),
            "installer": done.installer}


# ---------------------------------------------------------------- state


class HostState:
    """``DIR/state.json`` of one host: the daemons started (``records``) and about to be (``pending``).

    Write-ahead, as in :mod:`cluster.local`: a daemon's intent is saved before it is spawned
    and its pid right after. Opening the state reconciles it with the Spark processes of
    ``DIR`` (:func:`cluster.processes.reconcile`): one that matches an intent is adopted,
    any other is stopped, so a daemon whose start was cut short is never left unrecorded.
    """

    def __init__(self, state_dir: Path, records: dict[str, ProcessRecord], pending: dict[str, Intent],
                 runtime: str | None = None, owner: str | None = None) -> None:
        self.state_dir = state_dir
        self.records, self.pending = records, pending
        self.runtime = runtime  # the runtime whose Spark the recorded daemons run (None: nothing runs)
        self.owner = owner  # the campaign that started them (None: nothing runs, or started by hand)
        self.spawned: list[ProcessRecord] = []
        self.strays: list[FoundProcess] = []  # stopped by the reconciliation
        self.notes: list[str] = []

    @property
    def path(self) -> Path:
        return self.state_dir / "state.json"

    @classmethod
    def load(cls, state_dir: Path) -> "HostState":
        path = state_dir / "state.json"
        records: dict[str, ProcessRecord] = {}
        pending: dict[str, Intent] = {}
        runtime = owner = None
        if path.exists():
            try:
                raw = json.loads(path.read_text())
                if "records" in raw or "pending" in raw:
                    records = {k: ProcessRecord(**v) for k, v in raw.get("records", {}).items()}
                    pending = {k: Intent(**v) for k, v in raw.get("pending", {}).items()}
                    runtime = raw.get("runtime")
                    owner = raw.get("owner")
                else:  # the format before write-ahead intents: {role: record}
                    records = {k: ProcessRecord(**v) for k, v in raw.items()}
            except (ValueError, TypeError, AttributeError) as e:
                raise ClusterError(f"{path} is corrupt ({e}); delete it and run `cluster.daemon stop` (it finds the "
                                   "daemons without it)") from e
        return cls(state_dir, records, pending, runtime if isinstance(runtime, str) else None,
                   owner if isinstance(owner, str) else None)

    def save(self) -> None:
        if not self.records and not self.pending:
            self.runtime = self.owner = None
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps({"records": {k: asdict(r) for k, r in self.records.items()},
                                "pending": {k: asdict(i) for k, i in self.pending.items()},
                                "runtime": self.runtime, "owner": self.owner}, indent=2))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def reconcile(self) -> None:
        found = reconcile(self.state_dir, self.records.values(), self.pending.values(), progress=self.notes.append)
        self.records = {r.role: r for r in found.records}
        self.pending = {}
        self.strays = found.stopped

    def claim(self, role: str, runtime: str) -> bool:
        """Let ``role`` run ``runtime``; True when its recorded daemon runs another one (restart it).

        The daemons of one state dir run one runtime: another role still running another
        runtime is refused (the controller stops them all before it switches).
        """
        if self.runtime in (None, runtime):
            return False
        others = sorted(r for r in self.records if r != role)
        if others:
            raise ClusterError(f"{', '.join(others)} of this host run(s) runtime {self.runtime}, and {role} was asked "
                               f"to run {runtime}: stop them first (fab stop), a cluster runs one runtime")
        return role in self.records

    def spawn(self, intent: Intent, argv: list[str], env: SparkEnv, owner: str | None = None,
              extra: dict[str, str] | None = None) -> ProcessRecord:
        """Start one daemon in its own session, cwd the state dir, output in its log (write-ahead).

        ``owner`` (a campaign, or None) becomes the owner of this host's daemons when none runs yet; a
        daemon started beside running ones leaves the record as it is. ``extra``: added to its environment.
        """
        self.runtime = env.runtime or None
        if not self.records:
            self.owner = owner
        self.pending[intent.role] = intent
        self.save()
        with open(intent.log, "ab") as out:
            out.write(f"{START_MARKER}{time.strftime('%Y-%m-%d %H:%M:%S')} starting {intent.role} "
                      f"(runtime {env.runtime})\n".encode())
            out.flush()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    env={**env.daemon_environ(), **(extra or {})}, cwd=self.state_dir,
                                    start_new_session=True, close_fds=True)
        crash_point(f"{'master' if intent.role == 'master' else 'worker'}-spawned")
        rec = self.records[intent.role] = intent.record(proc.pid, start_ticks(proc.pid))
        del self.pending[intent.role]
        self.spawned.append(rec)
        self.save()
        return rec

    def undo(self) -> None:
        """Stop what this command started (it was interrupted) and anything it had not yet recorded."""
        for rec in reversed(self.spawned):
            rec.terminate()
            self.records.pop(rec.role, None)
        self.pending = {}
        reconcile(self.state_dir, self.records.values(), (), progress=self.notes.append)


@contextlib.contextmanager
def _host_state(state_dir: Path) -> Iterator[HostState]:
    """The reconciled state of this state dir, under its lock; saved on exit."""
    (state_dir / "logs").mkdir(parents=True, exist_ok=True)
    with open(state_dir / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        st = HostState.load(state_dir)
        st.reconcile()
        st.save()
        try:
            yield st
        except KeyboardInterrupt:
            st.undo()
            raise
        finally:
            st.save()


# ---------------------------------------------------------------- commands


def start_master(state_dir: Path, host: str, port: int, webui_port: int, timeout: float,
                 runtime: str = runtimes.DEFAULT, root: Path | None = None, owner: str | None = None) -> dict:
    webui = f"http://{host}:{webui_port}"
    env = runtime_env(runtime, root, host)
    with _host_state(state_dir) as st:
        records = st.records
        rec = records.get("master")
        other_runtime = st.claim("master", env.runtime)
        if rec is not None and (rec.port, rec.webui_port) == (port, webui_port) and not other_runtime:
            return {"changed": False, "role": "master", "pid": rec.pid, "log": rec.log, "runtime": st.runtime,
                    "owner": st.owner, "notes": st.notes}
        if rec is not None:
            rec.terminate()
            del records["master"]
        for what, p in (("master.port", port), ("master.webui_port", webui_port)):
            if not port_free(host, p):
                raise PortInUse(f"{what} {host}:{p} is taken by another process: stop it or change {what} in the inventory")
        argv = [str(env.spark_class), MASTER_CLASS, "--host", host, "--port", str(port), "--webui-port", str(webui_port)]
        rec = st.spawn(Intent("master", port, webui_port, str(state_dir / "logs" / "master.log")), argv, env, owner)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not rec.alive():
                del records["master"]
                raise StartupTimeout(f"the Spark master exited at start: {_tail(rec.log)} (log {rec.log})")
            with contextlib.suppress(NotRunning):
                if fetch_state(webui, timeout=2.0).status == "ALIVE":
                    return {"changed": True, "role": "master", "pid": rec.pid, "log": rec.log, "runtime": st.runtime,
                            "owner": st.owner, "notes": st.notes}
            time.sleep(0.5)
        rec.terminate()
        del records["master"]
        raise StartupTimeout(f"the Spark master did not answer at {webui}/json/ within {timeout:.0f} s; see {rec.log}")


def check_size(cores: int, memory_mb: int, oversubscribe: bool) -> None:
    """Refuse a worker that offers more than the host has (unless oversubscribing on purpose)."""
    have = facts()
    if oversubscribe:
        return
    if cores > have["cpus"]:
        raise HostTooSmall(f"the worker offers cores={cores} but this host has {have['cpus']} CPU(s): lower its cores "
                           "in the inventory (or set remote.oversubscribe = true)")
    if have["memory_mb"] and memory_mb > have["memory_mb"]:
        raise HostTooSmall(f"the worker offers memory={memory_mb} MB but this host has {have['memory_mb']} MB: lower its "
                           "memory in the inventory (or set remote.oversubscribe = true)")


def start_worker(state_dir: Path, name: str, host: str, master: str, master_webui: str, cores: int, memory_mb: int,
                 webui_port: int, oversubscribe: bool, timeout: float, runtime: str = runtimes.DEFAULT,
                 root: Path | None = None, owner: str | None = None) -> dict:
    check_size(cores, memory_mb, oversubscribe)
    env = runtime_env(runtime, root, host)
    with _host_state(state_dir) as st:
        records = st.records
        rec = records.get(name)
        other_runtime = st.claim(name, env.runtime)
        if (rec is not None and (rec.cores, rec.memory_mb, rec.webui_port) == (cores, memory_mb, webui_port)
                and not other_runtime):
            if _registered(master_webui, host, rec.port):
                return {"changed": False, "role": name, "pid": rec.pid, "port": rec.port, "log": rec.log,
                        "runtime": st.runtime, "notes": st.notes}
        if rec is not None:
            rec.terminate()
            del records[name]
        if not port_free(host, webui_port):
            raise PortInUse(f"{name}.webui_port {host}:{webui_port} is taken by another process: stop it or change "
                            "webui_port of this worker in the inventory")
        work_dir = state_dir / "work" / name
        work_dir.mkdir(parents=True, exist_ok=True)
        port = free_port(host)
        argv = [str(env.spark_class), WORKER_CLASS, master, "--host", host, "--port", str(port),
                "--webui-port", str(webui_port), "--cores", str(cores), "--memory", f"{memory_mb}m",
                "--work-dir", str(work_dir)]
        rec = st.spawn(Intent(name, port, webui_port, str(state_dir / "logs" / f"{name}.log"), cores, memory_mb),
                       argv, env, owner, scratch_env(state_dir, name))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not rec.alive():
                del records[name]
                raise StartupTimeout(f"{name} exited at start: {_tail(rec.log)} (log {rec.log})")
            rec.port = started_port(rec.log, "sparkWorker") or rec.port  # Spark moves on when the port was taken
            if _registered(master_webui, host, rec.port):
                return {"changed": True, "role": name, "pid": rec.pid, "port": rec.port, "log": rec.log,
                        "runtime": st.runtime, "notes": st.notes}
            time.sleep(0.5)
        raise StartupTimeout(f"{name} did not register with {master} within {timeout:.0f} s: check that this host "
                             f"reaches the master (firewall?); see {rec.log}")


def scratch_env(state_dir: Path, name: str) -> dict[str, str]:
    """Where a worker's executors keep their scratch: ``DIR/scratch/<worker>``, not the host's /tmp, unless the
    host sets its own ``SPARK_LOCAL_DIRS`` (a bigger disk, say), which is kept.

    An executor killed with its worker (a host that crashed, a job stopped) leaves its scratch behind
    (:func:`cluster.processes.executor_scratch_env`); ``stop`` removes it with the last daemon of ``DIR``."""
    return {} if os.environ.get("SPARK_LOCAL_DIRS") else executor_scratch_env(state_dir, name)


def _registered(master_webui: str, host: str, port: int) -> bool:
    try:
        state = fetch_state(master_webui, timeout=2.0)
    except NotRunning:
        return False
    return any(w.host == host and w.port == port for w in state.alive_workers)


def stop(state_dir: Path, roles: list[str]) -> dict:
    stopped = []
    if not state_dir.exists():
        return {"stopped": stopped}
    with _host_state(state_dir) as st:
        records = st.records
        stopped += [f"stray {p.role or 'spark-process'}" for p in st.strays]
        # Workers before the master, so the master sees them leave.
        for role in sorted(records, key=lambda r: r == "master"):
            if roles and role not in roles:
                continue
            records[role].terminate()
            del records[role]
            stopped.append(role)
        if not records:  # executors orphaned on the way, anything else of this folder
            left = reconcile(state_dir, (), (), progress=st.notes.append)
            stopped += [f"stray {p.role or 'spark-process'}" for p in left.stopped]
            shutil.rmtree(state_dir / EXECUTOR_SCRATCH, ignore_errors=True)  # no worker or executor left
    return {"stopped": stopped, "notes": st.notes}


def status(state_dir: Path) -> dict:
    if not state_dir.exists():
        return {"running": {}}
    with _host_state(state_dir) as st:
        return {"running": {k: asdict(r) for k, r in st.records.items()}, "runtime": st.runtime, "owner": st.owner,
                "notes": st.notes}


def free_mb(paths: Sequence[Path]) -> dict:
    """Free disk space in MB (for an unprivileged user) of each path, measured at its nearest existing folder."""
    out = {}
    for path in paths:
        probe = path.absolute()
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        st = os.statvfs(probe)
        out[str(path)] = st.f_bavail * st.f_frsize // (1024 * 1024)
    return {"free_mb": out}


def _path(p: Path | None) -> str | None:
    return None if p is None else str(p)


def env_fields(env: SparkEnv) -> dict:
    """A runtime's Spark environment on this host as JSON (``cluster.remote.env_from_json`` reads it back)."""
    return {"runtime": env.runtime, "python": str(env.python), "java_home": str(env.java_home),
            "spark_home": str(env.spark_home), "class_path": [str(p) for p in env.class_path],
            "local_ip": env.local_ip, "site_dir": _path(env.site_dir), "log_config": _path(env.log_config),
            "python_path": [str(p) for p in env.python_path], "java_options": list(env.java_options),
            "class_data_list": _path(env.class_data_list), "natives_jar": _path(env.natives_jar)}


def spark_env(local_ip: str, runtime: str | None = None, root: Path | None = None) -> dict:
    """The host's facts and its copy of jobs/train.py, and with ``runtime`` that runtime's Spark environment."""
    import jobs

    out = {"local_ip": local_ip, "job_script": str(Path(jobs.__file__).with_name("train.py")), **facts()}
    if runtime is not None:
        out.update(env_fields(runtime_env(runtime, root, local_ip)))
    return out


def pack_logs(state_dir: Path, out: Path) -> dict:
    """A tar.gz of the daemon logs and the executors' stdout/stderr (never the jars Spark copies)."""
    names = []
    with tarfile.open(out, "w:gz") as tar:
        for sub in ("logs", "work"):
            root = state_dir / sub
            if not root.exists():
                continue
            for path in sorted(root.rglob("*")):
                if path.is_file() and (path.suffix == ".log" or path.name in ("stdout", "stderr")):
                    arc = str(path.relative_to(state_dir))
                    tar.add(path, arcname=arc)
                    names.append(arc)
    return {"archive": str(out), "files": names}


def _sample_files(state_dir: Path, key: str) -> tuple[Path, Path, Path]:
    d = state_dir / "samples"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{key}.csv", d / f"{key}.pid", d / f"{key}.err"


def sample_start(state_dir: Path, key: str, period_s: float) -> dict:
    """Start ``python -m harness.sampler`` in its own session, sampling this host until sample-stop."""
    out, pid_file, err = _sample_files(state_dir, key)
    argv = [sys.executable, "-m", "harness.sampler", "--out", str(out), "--period", f"{period_s:g}"]
    with open(err, "wb") as ferr:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=ferr,
                                start_new_session=True)
    pid_file.write_text(json.dumps({"pid": proc.pid, "ticks": start_ticks(proc.pid)}))
    return {"pid": proc.pid, "out": str(out)}


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` from /proc (0 when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample_stop(state_dir: Path, key: str, timeout: float = 15.0) -> dict:
    """End the sampler of ``key`` (SIGTERM: it writes its last sample) and return its table as text."""
    out, pid_file, err = _sample_files(state_dir, key)
    cpu_s = 0.0
    if pid_file.exists():
        rec = json.loads(pid_file.read_text())
        pid = int(rec["pid"])
        if start_ticks(pid) == rec.get("ticks") and start_ticks(pid) is not None:
            cpu_s = _cpu_s(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while start_ticks(pid) == rec.get("ticks") and time.monotonic() < deadline:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
                state = Path(f"/proc/{pid}/stat").read_text() if Path(f"/proc/{pid}/stat").exists() else ""
                if state and state[state.rindex(")") + 2] == "Z":
                    break
                time.sleep(0.1)
        pid_file.unlink()
    text = out.read_text() if out.exists() else ""
    problem = err.read_text()[-500:] if err.exists() and not text else ""
    for p in (out, err):
        p.unlink(missing_ok=True)
    return {"csv": text, "sampler_cpu_s": cpu_s, "problem": problem}


def run_foreground(argv: list[str], local_ip: str, runtime: str = runtimes.DEFAULT, root: Path | None = None) -> int:
    """Run ``argv`` (spark-submit) with the Spark environment; its output is ours (the SSH channel).

    The child runs in its own session. When our stdin reaches EOF (the controller closed the
    channel: a timeout, Ctrl-C, a lost connection) or we get SIGTERM/SIGHUP, the child's
    whole group is ended, so no driver outlives the harness that started it.
    """
    env = runtime_env(runtime, root, local_ip).environ()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env, start_new_session=True)

    def end(*_: object) -> None:
        end_process_group(proc)

    def watch_stdin() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.buffer.read(4096):
                pass
        if proc.poll() is None:
            end()

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: (end(), os._exit(143)))
    threading.Thread(target=watch_stdin, daemon=True).start()
    return proc.wait()


# ---------------------------------------------------------------- CLI


def _runtime_args(p: argparse.ArgumentParser, default: str | None = runtimes.DEFAULT) -> None:
    p.add_argument("--runtime", default=default, help="a built-in runtime's name or a runtime TOML on this host")
    p.add_argument("--runtimes", type=Path, help="where this host's runtimes live (default: the user's cache)")


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="python -m cluster.daemon", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("prepare-runtime")
    _runtime_args(pr)
    pr.add_argument("--wheelhouse", type=Path, help="install from these wheels only (no package index)")
    m = sub.add_parser("start-master")
    m.add_argument("--state", type=Path, required=True)
    m.add_argument("--host", required=True)
    m.add_argument("--port", type=int, required=True)
    m.add_argument("--webui-port", type=int, required=True)
    m.add_argument("--timeout", type=float, default=120.0)
    m.add_argument("--owner", help="the campaign that starts it (recorded in state.json)")
    _runtime_args(m)
    w = sub.add_parser("start-worker")
    w.add_argument("--state", type=Path, required=True)
    w.add_argument("--name", required=True)
    w.add_argument("--host", required=True)
    w.add_argument("--master", required=True)
    w.add_argument("--master-webui", required=True)
    w.add_argument("--cores", type=int, required=True)
    w.add_argument("--memory-mb", type=int, required=True)
    w.add_argument("--webui-port", type=int, required=True)
    w.add_argument("--oversubscribe", action="store_true")
    w.add_argument("--timeout", type=float, default=120.0)
    w.add_argument("--owner", help="the campaign that starts it (recorded in state.json)")
    _runtime_args(w)
    s = sub.add_parser("stop")
    s.add_argument("--state", type=Path, required=True)
    s.add_argument("--role", action="append", default=[])
    st = sub.add_parser("status")
    st.add_argument("--state", type=Path, required=True)
    ms = sub.add_parser("master-state")
    ms.add_argument("--webui", required=True)
    e = sub.add_parser("env")
    e.add_argument("--local-ip", required=True)
    _runtime_args(e, default=None)
    pk = sub.add_parser("pack-logs")
    pk.add_argument("--state", type=Path, required=True)
    pk.add_argument("--out", type=Path, required=True)
    sa = sub.add_parser("sample-start")
    sa.add_argument("--state", type=Path, required=True)
    sa.add_argument("--key", required=True)
    sa.add_argument("--period", type=float, default=1.0)
    so = sub.add_parser("sample-stop")
    so.add_argument("--state", type=Path, required=True)
    so.add_argument("--key", required=True)
    fr = sub.add_parser("free")
    fr.add_argument("--path", type=Path, action="append", required=True)
    r = sub.add_parser("run")
    r.add_argument("--local-ip", required=True)
    _runtime_args(r)
    r.add_argument("argv", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Print one JSON object; errors through run_cli: HostTooSmall 2, other ClusterError 4."""
    args = build_parser().parse_args(argv)
    if args.command == "run":
        cmd = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if not cmd:
            raise ClusterError("run needs a command after --")
        code = run_foreground(cmd, args.local_ip, args.runtime, args.runtimes)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # not a normal exit: the stdin watcher thread may still be blocked in read()
    if args.command == "prepare-runtime":
        out = prepare_runtime(args.runtime, args.runtimes, args.wheelhouse)
    elif args.command == "start-master":
        out = start_master(args.state, args.host, args.port, args.webui_port, args.timeout, args.runtime, args.runtimes,
                           args.owner)
    elif args.command == "start-worker":
        out = start_worker(args.state, args.name, args.host, args.master, args.master_webui, args.cores,
                           args.memory_mb, args.webui_port, args.oversubscribe, args.timeout, args.runtime,
                           args.runtimes, args.owner)
    elif args.command == "stop":
        out = stop(args.state, args.role)
    elif args.command == "status":
        out = status(args.state)
    elif args.command == "master-state":
        import urllib.request

        try:
            with urllib.request.urlopen(args.webui.rstrip("/") + "/json/", timeout=5.0) as response:
                out = json.load(response)
        except (OSError, ValueError) as e:
            raise NotRunning(f"no Spark master answers at {args.webui}/json/ ({e}): run `fab start-master`") from e
    elif args.command == "env":
        out = spark_env(args.local_ip, args.runtime, args.runtimes)
    elif args.command == "sample-start":
        out = sample_start(args.state, args.key, args.period)
    elif args.command == "sample-stop":
        out = sample_stop(args.state, args.key)
    elif args.command == "free":
        out = free_mb(args.path)
    else:
        out = pack_logs(args.state, args.out)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
