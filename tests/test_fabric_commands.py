"""cluster.remote without SSH: argv construction and quoting, per-host aggregation, the harness backend's logic.

A fake transport records every argv and answers like the remote daemon would; the
real thing is tested against real sshd instances in test_fabric_ssh.py.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster import runtime as runtimes
from cluster.daemon import HostTooSmall, check_size
from cluster.bootstrap import facts
from cluster.bundle import digest, source_files
from cluster.errors import ClusterError
from cluster.group import GroupFailure, HostResult, on_hosts
from cluster.inventory import parse_inventory
from cluster.remote import Layout, RemoteCluster, driver_argv, env_from_json, master_argv, worker_argv
from cluster.ssh import CommandResult, RemoteCommandFailed, Unreachable, command_line
from harness.command import JOB_SCRIPT
from harness.errors import CapacityError
from harness.remote_backend import RemoteBackend, RemoteRunner, inventory_problems
from sparkdl.runspec import RunSpec

HOSTILE = "/srv/x y/$(touch /tmp/pwned)`id`;rm -rf ~ 'q' \"d\" \\ |&>"
BIGDL = runtimes.resolve("bigdl")


def inventory(tmp_path: Path, base_dir: str = "/opt/sparkdl", python: str = "python3", workers: int = 2,
              **remote: object):
    key = tmp_path / "key"
    key.write_text("k")
    data = {
        "ssh": {"user": "debian", "key_file": str(key)},
        "remote": {"base_dir": base_dir, "python": python, **remote},
        "master": {"host": "10.0.0.10"},
        "workers": [{"host": f"10.0.0.{11 + i}", "cores": 2, "memory": "2g"} for i in range(workers)],
    }
    return parse_inventory(data, tmp_path / "inventory.toml")


# ---------------------------------------------------------------- quoting


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=0), min_size=1))
def test_command_line_round_trips_through_a_posix_shell_parser(argv):
    assert shlex.split(command_line(argv)) == argv


@settings(max_examples=25, deadline=None)
@given(st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), min_size=1))
def test_a_real_shell_receives_each_value_unchanged(value):
    out = subprocess.run(["sh", "-c", command_line(["printf", "%s", value])], capture_output=True)
    assert out.stdout.decode("utf-8", "surrogateescape") == value


def test_command_line_refuses_non_strings():
    with pytest.raises(TypeError):
        command_line(["echo", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        command_line([])


def test_a_hostile_base_dir_and_python_stay_single_arguments(tmp_path):
    inv = inventory(tmp_path, base_dir=HOSTILE, python="python3; touch /tmp/pwned")
    layout = Layout(inv.remote.base_dir, inv.remote.python)
    for argv in (master_argv(inv, layout, 60, BIGDL), worker_argv(inv, layout, inv.workers[0], 60, BIGDL),
                 driver_argv(inv, layout, ["spark-submit", "--name", "x; reboot"], BIGDL),
                 layout.list_dir(layout.wheelhouse), layout.mkdir(layout.host_dir("10.0.0.10")),
                 layout.prepare_runtime(BIGDL, wheelhouse=True)):
        parsed = shlex.split(command_line(argv))
        assert parsed == argv
    assert shlex.split(command_line(layout.list_dir("/x")))[0] == "python3; touch /tmp/pwned"
    assert worker_argv(inv, layout, inv.workers[0], 60, BIGDL)[0] == f"{HOSTILE}/venv/bin/python"


def test_the_remote_shell_does_not_interpret_a_hostile_path(tmp_path):
    target = tmp_path / "pwned"
    hostile = f"{tmp_path}/a b/$(touch {target})`touch {target}`;touch {target}"
    subprocess.run(["sh", "-c", command_line(["mkdir", "-p", "--", hostile])], check=True)
    assert Path(hostile).is_dir() and not target.exists()


def test_worker_and_master_argv(tmp_path):
    inv = inventory(tmp_path)
    layout = Layout(inv.remote.base_dir)
    assert master_argv(inv, layout, 90, BIGDL) == [
        "/opt/sparkdl/venv/bin/python", "-m", "cluster.daemon", "start-master", "--state",
        "/opt/sparkdl/hosts/10.0.0.10", "--host", "10.0.0.10", "--port", "7077", "--webui-port", "8080",
        "--timeout", "90", "--runtime", "bigdl", "--runtimes", "/opt/sparkdl/runtimes"]
    argv = worker_argv(inv, layout, inv.workers[1], 90, BIGDL)
    assert argv[3:] == ["start-worker", "--state", "/opt/sparkdl/hosts/10.0.0.12", "--name", "worker-2",
                        "--host", "10.0.0.12", "--master", "spark://10.0.0.10:7077",
                        "--master-webui", "http://10.0.0.10:8080", "--cores", "2", "--memory-mb", "2048",
                        "--webui-port", "8081", "--timeout", "90", "--runtime", "bigdl",
                        "--runtimes", "/opt/sparkdl/runtimes"]
    assert driver_argv(inv, layout, ["spark-submit", "x.py"], BIGDL)[3:] == [
        "run", "--local-ip", "10.0.0.10", "--runtime", "bigdl", "--runtimes", "/opt/sparkdl/runtimes", "--",
        "spark-submit", "x.py"]
    assert layout.prepare_runtime(BIGDL, wheelhouse=True)[3:] == [
        "prepare-runtime", "--runtime", "bigdl", "--runtimes", "/opt/sparkdl/runtimes",
        "--wheelhouse", "/opt/sparkdl/wheelhouse"]


# ---------------------------------------------------------------- a fake transport


def answer(host: str, argv: list[str], out: dict) -> CommandResult:
    return CommandResult(host, command_line(argv), 0, json.dumps(out), "")


def arg(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


@dataclass
class FakeTransport:
    """Answers like cluster.daemon; hosts in ``down`` are unreachable.

    ``master``: the runtime the master runs (None: no master; ``master-state`` then fails unless
    ``always_alive``, the default for tests that only scale workers).
    """

    down: set[str] = field(default_factory=set)
    calls: list[tuple[str, list[str]]] = field(default_factory=list)
    running: dict[str, int] = field(default_factory=dict)  # worker name -> port
    master: str | None = None
    always_alive: bool = True
    prepared: set[tuple[str, str]] = field(default_factory=set)  # (host, runtime)
    puts: list[tuple[str, str]] = field(default_factory=list)  # (host, remote path)
    master_fails: bool = False

    def commands(self, name: str) -> list[tuple[str, list[str]]]:
        return [(h, a) for h, a in self.calls if a[1:4] == ["-m", "cluster.daemon", name]]

    def run(self, host, argv, timeout=None, out=None, err=None):
        if host in self.down:
            raise Unreachable(host, "unreachable: cannot connect (Connection refused)")
        self.calls.append((host, argv))
        cmd = argv[3] if argv[1:3] == ["-m", "cluster.daemon"] else argv[0]
        if cmd == "mkdir":
            return CommandResult(host, command_line(argv), 0, "", "")
        if cmd == "prepare-runtime":
            name = Path(arg(argv, "--runtime")).stem
            changed = (host, name) not in self.prepared
            self.prepared.add((host, name))
            return answer(host, argv, {"changed": changed, "runtime": name, "path": f"/r/{name}", "seconds": 3.0})
        if cmd == "start-master" and not self.master_fails:
            changed, self.master = self.master != arg(argv, "--runtime"), arg(argv, "--runtime")
            return answer(host, argv, {"changed": changed, "role": "master", "pid": 1, "log": "l"})
        if cmd == "env":
            rt = arg(argv, "--runtime")
            return answer(host, argv, {"runtime": rt, "python": f"/r/{rt}/bin/python", "java_home": "/j",
                                       "spark_home": f"/r/{rt}/pyspark", "class_path": [], "local_ip": host,
                                       "job_script": "/opt/sparkdl/venv/jobs/train.py"})
        if cmd == "status":
            return answer(host, argv, {"running": {"master": {}} if self.master else {}, "runtime": self.master})
        if cmd == "stop" and "--role" not in argv:
            stopped = sorted(self.running) + (["master"] if self.master and host == "10.0.0.10" else [])
            self.running.clear()
            if host == "10.0.0.10":
                self.master = None
            return answer(host, argv, {"stopped": stopped})
        if cmd == "master-state" and self.master is None and not self.always_alive:
            return CommandResult(host, command_line(argv), 4, "", "error: no Spark master answers")
        if cmd == "start-worker":
            name = argv[argv.index("--name") + 1]
            port = self.running.setdefault(name, 40000 + len(self.running))
            return CommandResult(host, command_line(argv), 0, json.dumps({"changed": True, "role": name, "pid": 1,
                                                                          "port": port, "log": "l"}), "")
        if cmd == "stop":
            roles = [argv[i + 1] for i, a in enumerate(argv) if a == "--role"]
            stopped = [r for r in roles if self.running.pop(r, None) is not None]
            return CommandResult(host, command_line(argv), 0, json.dumps({"stopped": stopped}), "")
        if cmd == "master-state":
            workers = [{"id": n, "host": f"10.0.0.{10 + int(n.split('-')[1])}", "port": p, "state": "ALIVE",
                        "cores": 2, "memory": 2048} for n, p in self.running.items()]
            return CommandResult(host, command_line(argv), 0, json.dumps({"status": "ALIVE", "workers": workers}), "")
        return CommandResult(host, command_line(argv), 1, "", "error: worker-9 exited at start: boom")

    def put(self, host, local, remote):
        self.puts.append((host, remote))

    def get(self, host, remote, local):
        pass

    def close(self):
        pass


def test_scale_stops_the_tail_and_starts_the_head(tmp_path):
    inv = inventory(tmp_path, workers=3)
    t = FakeTransport()
    cluster = RemoteCluster(inv, transport=t)
    cluster.scale(3)
    assert sorted(t.running) == ["worker-1", "worker-2", "worker-3"]
    t.calls.clear()
    result = cluster.scale(1)
    assert sorted(t.running) == ["worker-1"]
    stops = [(h, a) for h, a in t.calls if a[3] == "stop"]
    assert sorted((h, a[a.index("--role") + 1]) for h, a in stops) == [("10.0.0.12", "worker-2"), ("10.0.0.13", "worker-3")]
    assert {r.role for r in result.results} == {"worker-1", "worker-2", "worker-3"} and result.ok


def test_scale_beyond_the_inventory_is_one_line(tmp_path):
    cluster = RemoteCluster(inventory(tmp_path), transport=FakeTransport())
    with pytest.raises(Exception, match=r"--count/--workers = 3 but the inventory lists 2 worker\(s\)"):
        cluster.scale(3)


def test_one_unreachable_host_keeps_the_others_results(tmp_path):
    inv = inventory(tmp_path, workers=3)
    t = FakeTransport(down={"10.0.0.12"})
    result = RemoteCluster(inv, transport=t).start_workers()
    assert [r.role for r in result.results] == ["worker-1", "worker-2", "worker-3"]
    assert [r.ok for r in result.results] == [True, False, True]
    assert result.results[1].detail.startswith("unreachable: cannot connect")
    with pytest.raises(GroupFailure) as e:
        result.raise_on_failure()
    assert str(e.value).splitlines() == ["start-workers failed on 1 of 3 host(s):",
                                         "  10.0.0.12 worker-2: unreachable: cannot connect (Connection refused)"]
    assert e.value.result is result and len(e.value.result.succeeded) == 2


def test_a_failing_command_is_named_with_its_own_error_line(tmp_path):
    result = RemoteCluster(inventory(tmp_path), transport=FakeTransport(master_fails=True)).start_master()
    (r,) = result.failed
    assert r.host == "10.0.0.10" and r.command and "start-master" in r.command
    assert r.detail.endswith("exited 1: worker-9 exited at start: boom")


def test_on_hosts_runs_every_item_and_records_any_exception():
    def step(host, role, item):
        if item == "bad":
            raise ValueError("unexpected")
        if item == "cmd":
            raise RemoteCommandFailed(host, "ls /x", 2, "No such file")
        return HostResult(host, role, True, item == "new", item)

    items = [("h1", "a", "new"), ("h2", "b", "bad"), ("h1", "c", "old"), ("h3", "d", "cmd")]
    result = on_hosts("op", items, step)
    assert [(r.host, r.role, r.ok) for r in result.results] == [("h1", "a", True), ("h2", "b", False),
                                                               ("h1", "c", True), ("h3", "d", False)]
    assert result.changed and not result.ok
    assert result.results[1].detail == "ValueError: unexpected"
    assert result.results[3].command == "ls /x" and result.results[3].detail == "`ls /x` exited 2: No such file"
    assert (result + on_hosts("more", [("h4", "e", "old")], step)).results[-1].host == "h4"


def test_stop_on_a_host_never_provisioned_is_not_a_failure(tmp_path):
    class NoVenv(FakeTransport):
        def run(self, host, argv, timeout=None, out=None, err=None):
            return CommandResult(host, command_line(argv), 127, "", "sh: 1: /opt/sparkdl/venv/bin/python: not found")

    result = RemoteCluster(inventory(tmp_path), transport=NoVenv()).stop()
    assert result.ok and all("not provisioned" in r.detail for r in result.results)
    assert [r.host for r in result.results] == ["10.0.0.11", "10.0.0.12", "10.0.0.10"]  # the master last


# ---------------------------------------------------------------- harness side


def spec(nodes: int, executors: int, cores: int) -> RunSpec:
    return RunSpec(run=1, replicate=1, nodes=nodes, executors=executors, executor_cores=cores, epochs=1,
                   learning_rate=0.1, batch_size=64)


def test_inventory_capacity_problems(tmp_path):
    inv = inventory(tmp_path)  # two workers of 2 cores, 2048 MB
    assert inventory_problems(spec(2, 1, 2), inv, 700) == []
    assert inventory_problems(spec(3, 1, 1), inv, 700) == [
        "nodes=3 but the inventory lists 2 worker(s): add [[workers]] or lower nodes"]
    (p1, p2) = inventory_problems(spec(2, 2, 2), inv, 700)
    assert p1.startswith("executors x executor_cores = 2 x 2 needs 4 cores and 1400 MB on each worker; "
                         "worker-1 (10.0.0.11) offers 2 cores")
    assert inventory_problems(spec(1, 3, 1), inv, 700)[0].endswith(
        "offers 2 cores and 2048 MB: raise its cores/memory in the inventory or lower executors/executor_cores")


def test_the_runner_swaps_only_the_job_script(tmp_path):
    runner = RemoteRunner(RemoteCluster(inventory(tmp_path), transport=FakeTransport()), "/opt/venv/jobs/train.py")
    argv = ["/opt/venv/bin/spark-submit", "--name", str(JOB_SCRIPT), str(JOB_SCRIPT), "--sample"]
    assert runner.remote_argv(argv) == ["/opt/venv/bin/spark-submit", "--name", "/opt/venv/jobs/train.py",
                                        "/opt/venv/jobs/train.py", "--sample"]


def test_a_host_without_enough_cores_is_refused_locally():
    cpus = facts()["cpus"]
    with pytest.raises(HostTooSmall, match=rf"offers cores={cpus + 1} but this host has {cpus} CPU\(s\)"):
        check_size(cpus + 1, 512, oversubscribe=False)
    check_size(cpus + 1, 512, oversubscribe=True)
    check_size(cpus, 512, oversubscribe=False)


def test_the_bundle_digest_follows_the_source(tmp_path):
    root = tmp_path / "proj"
    (root / "cluster").mkdir(parents=True)
    (root / "setup.cfg").write_text("[options.packages.find]\ninclude =\n    cluster*\n")
    (root / "pyproject.toml").write_text("")
    (root / "constraints.txt").write_text("numpy==1.26.4\n")
    (root / "cluster" / "__init__.py").write_text("")
    (root / "cluster" / "__pycache__").mkdir()
    (root / "cluster" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    files = source_files(root)
    assert [f.as_posix() for f in files] == ["cluster/__init__.py", "constraints.txt", "pyproject.toml", "setup.cfg"]
    d1 = digest(root, files)
    assert digest(root, source_files(root)) == d1
    (root / "constraints.txt").write_text("numpy==1.26.3\n")
    assert digest(root, files) != d1


# ---------------------------------------------------------------- runtimes on the hosts


def test_a_host_env_is_read_back_tolerating_old_and_missing_fields():
    new = env_from_json({"runtime": "bigdl", "python": "/b/r/bin/python", "java_home": "/j", "spark_home": "/s",
                         "class_path": ["/b/a.jar", "/b/c.jar"], "local_ip": "10.0.0.10", "site_dir": "/site",
                         "log_config": "/site/log4j2.xml", "python_path": ["/p"], "java_options": ["-Dx=1"],
                         "class_data_list": None, "natives_jar": None})
    assert new.runtime == "bigdl" and new.class_path == (Path("/b/a.jar"), Path("/b/c.jar"))
    assert new.site_dir == Path("/site") and new.log_config == Path("/site/log4j2.xml") and new.class_data_list is None
    assert new.python_path == (Path("/p"),) and new.java_options == ("-Dx=1",) and new.ship_jars
    old = env_from_json({"python": "/v/bin/python", "java_home": "/j", "spark_home": "/s", "dllib_jar": "/d.jar",
                         "core_jar": "/c.jar", "local_ip": "10.0.0.10"})
    assert old.class_path == (Path("/d.jar"), Path("/c.jar")) and old.runtime == "" and old.site_dir is None
    bare = env_from_json({"python": "/v/bin/python", "java_home": "/j", "spark_home": "/s"})
    assert bare.class_path == () and bare.log_config is None and bare.local_ip == "127.0.0.1"


def user_runtime(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "mine.requirements.txt").write_text("pyspark==3.5.3\nnumpy<2\n")
    (folder / "mine.lock").write_text("pyspark==3.5.3\n    # via -r mine.requirements.txt\nnumpy==1.26.4\npy4j==0.10.9.7\n")
    (folder / "unrelated.txt").write_text("not shipped")
    toml = folder / "mine.toml"
    toml.write_text('[runtime]\nname = "mine"\nspark = "3.5.3"\njava = [17]\npython = "3.11"\n'
                    'requirements = "mine.requirements.txt"\nlock = "mine.lock"\n')
    return toml


def test_a_user_runtime_is_copied_to_every_host_and_prepared_from_its_copy(tmp_path):
    toml = user_runtime(tmp_path / "rt")
    t = FakeTransport()
    result = RemoteCluster(inventory(tmp_path), transport=t).prepare_runtimes([str(toml), "bigdl"])
    assert result.ok and result.changed
    rt = runtimes.resolve(str(toml))
    src = f"/opt/sparkdl/runtimes-src/mine-{rt.key()}"
    for host in ("10.0.0.10", "10.0.0.11", "10.0.0.12"):
        assert sorted(r for h, r in t.puts if h == host) == [f"{src}/mine.lock", f"{src}/mine.requirements.txt",
                                                          f"{src}/mine.toml"]
        prepares = [a for h, a in t.commands("prepare-runtime") if h == host]
        assert [arg(a, "--runtime") for a in prepares] == [f"{src}/mine.toml", "bigdl"]  # built-ins: in the wheel
        assert all(arg(a, "--runtimes") == "/opt/sparkdl/runtimes" and "--wheelhouse" not in a for a in prepares)
    assert all(r.detail == "mine prepared in 3 s, bigdl prepared in 3 s" for r in result.results)
    again = RemoteCluster(inventory(tmp_path), transport=t).prepare_runtimes(["bigdl"])
    assert not again.changed and all(r.detail == "bigdl already prepared" for r in again.results)


def test_a_user_runtime_naming_a_file_outside_its_folder_is_refused(tmp_path):
    toml = user_runtime(tmp_path / "rt")
    (tmp_path / "elsewhere.lock").write_text("pyspark==3.5.3\n")
    toml.write_text(toml.read_text().replace('lock = "mine.lock"', 'lock = "../elsewhere.lock"'))
    t = FakeTransport()
    with pytest.raises(ClusterError) as e:
        RemoteCluster(inventory(tmp_path), transport=t).prepare_runtimes([str(toml)])
    assert str(e.value) == (f"runtime mine: {tmp_path / 'elsewhere.lock'} is not in the folder of {toml}, and only that "
                            "folder is copied to the hosts: move it next to the runtime file")
    assert t.calls == []  # refused before any connection


def test_a_wheelhouse_without_a_runtimes_wheels_is_refused_before_any_connection(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "pyspark-3.1.3-py2.py3-none-any.whl").write_bytes(b"")
    (wheels / "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl").write_bytes(b"")
    t = FakeTransport()
    cluster = RemoteCluster(inventory(tmp_path, wheelhouse=str(wheels)), transport=t)
    with pytest.raises(ClusterError) as e:
        cluster.prepare_runtimes(["bigdl"])
    message = str(e.value)
    assert "\n" not in message and t.calls == []
    assert message.startswith(f"remote.wheelhouse {wheels} lacks ") and "wheel(s) of runtime bigdl (e.g. " in message
    assert f"run `fab wheelhouse --dest {wheels} --runtime bigdl`" in message
    with pytest.raises(ClusterError, match="lacks"):
        cluster.provision(runtimes=["bigdl"])
    assert t.calls == []


def test_the_missing_wheels_of_a_runtime_are_named(tmp_path):
    from cluster.bundle import locked_packages, missing_runtime_wheels

    rt = runtimes.resolve(str(user_runtime(tmp_path / "rt")))
    assert locked_packages(rt) == [("pyspark", "3.5.3"), ("numpy", "1.26.4"), ("py4j", "0.10.9.7")]
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "Py4J-0.10.9.7-py2.py3-none-any.whl").write_bytes(b"")
    (tmp_path / "w" / "numpy-1.26.3-cp311-cp311-linux_x86_64.whl").write_bytes(b"")
    assert missing_runtime_wheels(tmp_path / "w", rt) == ["pyspark==3.5.3", "numpy==1.26.4"]


def specs_for(nodes: int) -> list[RunSpec]:
    return [RunSpec(run=1, replicate=1, nodes=nodes, executors=1, executor_cores=1, max_iter=3)]


def test_a_run_of_another_runtime_restarts_the_remote_cluster_on_it(tmp_path):
    t = FakeTransport(always_alive=False)
    said: list[str] = []
    backend = RemoteBackend(RemoteCluster(inventory(tmp_path), transport=t), 700, provision=False,
                            progress=said.append)
    backend.open(specs_for(2), "bigdl")
    assert backend.started_here and t.master == "bigdl" and sorted(t.running) == ["worker-1", "worker-2"]
    assert backend.environment_for("bigdl", "tuned").runtime == "bigdl"
    assert not t.commands("stop")  # same runtime: nothing restarted
    t.calls.clear()

    env = backend.environment_for("spark4", "stock")
    assert env.runtime == "spark4" and str(env.spark_submit) == "/r/spark4/pyspark/bin/spark-submit"
    order = [a[3] for _, a in t.calls if a[1:3] == ["-m", "cluster.daemon"]]
    first = {name: order.index(name) for name in ("prepare-runtime", "stop", "start-master", "start-worker")}
    assert first["prepare-runtime"] < first["stop"] < first["start-master"] < first["start-worker"]
    assert sorted(h for h, _ in t.commands("prepare-runtime")) == ["10.0.0.10", "10.0.0.11", "10.0.0.12"]
    assert t.master == "spark4" and sorted(t.running) == ["worker-1", "worker-2"]  # the workers it had
    assert all(arg(a, "--runtime") == "spark4" for _, a in t.commands("start-worker"))
    assert "restarting the remote cluster on runtime spark4 (it ran bigdl)" in said
    assert "runtime bigdl: jvm = tuned is not applied on remote hosts (their JVMs are stock)" in said
    assert backend.describe()["runtime"] == "spark4"
    assert backend.describe()["jvm_requested"] == {"bigdl": ["tuned"], "spark4": ["stock"]}
    assert backend.environment()[0].runtime == "spark4"

    t.calls.clear()  # back to bigdl: its environment is known; it is prepared on every host (a no-op where it is)
    assert backend.environment_for("bigdl", "stock").runtime == "bigdl"
    assert not t.commands("env") and t.master == "bigdl"
    assert [arg(a, "--runtime") for _, a in t.commands("prepare-runtime")] == ["bigdl"] * 3
    t.calls.clear()
    backend.environment_for("spark4", "stock")  # prepared by this backend before: not asked again
    assert not t.commands("prepare-runtime") and t.master == "spark4"


def test_a_master_someone_else_runs_on_another_runtime_is_not_restarted(tmp_path):
    t = FakeTransport(master="bigdl")
    backend = RemoteBackend(RemoteCluster(inventory(tmp_path), transport=t), 700, provision=False)
    with pytest.raises(CapacityError) as e:
        backend.open(specs_for(1), "spark4")
    assert str(e.value) == ("cannot start the remote cluster: the master spark://10.0.0.10:7077 was already running, "
                            "on runtime bigdl, and the first run needs spark4: stop it (fab stop) or run runtime bigdl")
    assert not t.commands("start-master") and t.master == "bigdl"
    backend.open(specs_for(1), "bigdl")  # the runtime it runs: reused
    assert not backend.started_here
    with pytest.raises(ClusterError, match="runs bigdl for someone else: stop it"):
        backend.environment_for("spark4", "stock")
    assert t.master == "bigdl"


def test_a_json_jobs_figures_are_written_on_the_master_host_and_fetched(tmp_path):
    class Fetching(FakeTransport):
        def get(self, host, remote, local):
            self.puts.append((host, "get " + remote))
            Path(local).write_text("{}")

    t = Fetching()
    cluster = RemoteCluster(inventory(tmp_path), transport=t)
    cluster.use("spark4")
    runner = RemoteRunner(cluster, "/opt/sparkdl/venv/jobs/train.py")
    local = tmp_path / "campaign" / "runs" / "2-1" / "metrics.json"
    local.parent.mkdir(parents=True)
    argv = ["/r/spark-submit", str(JOB_SCRIPT.with_name("mlp.py")), "--max-iter", "3", "--metrics-out", str(local)]
    remote = "/opt/sparkdl/hosts/10.0.0.10/runs/2-1/metrics.json"
    assert runner.remote_argv(argv) == ["/r/spark-submit", "/opt/sparkdl/venv/jobs/mlp.py", "--max-iter", "3",
                                        "--metrics-out", remote]

    def driver(host, argv, timeout=None, out=None, err=None):
        t.calls.append((host, argv))
        code = 0 if argv[0] == "rm" or "--fail" not in argv else 1
        return CommandResult(host, command_line(argv), code, "", "")

    t.run = driver
    done = runner.run(argv, {}, tmp_path / "o", tmp_path / "e", 60)
    assert done.returncode == 0 and local.read_text() == "{}" and t.puts == [("10.0.0.10", "get " + remote)]
    assert [a[:3] for _, a in t.calls] == [["rm", "-f", "--"], ["/opt/sparkdl/venv/bin/python", "-m", "cluster.daemon"]]
    assert t.calls[0][1][3] == remote and arg(t.calls[1][1], "--runtime") == "spark4"
    local.unlink()
    assert runner.run(argv + ["--fail"], {}, tmp_path / "o", tmp_path / "e", 60).returncode == 1
    assert not local.exists()  # a failed job's figures are not fetched


# ---------------------------------------------------------------- the host's end (cluster.daemon), no processes


def test_a_host_state_runs_one_runtime(tmp_path):
    from cluster.daemon import HostState

    st = HostState(tmp_path, {}, {})
    assert st.claim("master", "bigdl") is False  # nothing runs: any runtime
    st = HostState(tmp_path, {"master": object()}, {}, "bigdl")  # type: ignore[dict-item]
    assert st.claim("master", "bigdl") is False  # same runtime: the master may be reused
    assert st.claim("master", "spark4") is True  # another: restart it
    st = HostState(tmp_path, {"master": object(), "worker-1": object()}, {}, "bigdl")  # type: ignore[dict-item]
    with pytest.raises(ClusterError) as e:
        st.claim("worker-1", "spark4")
    assert str(e.value) == ("master of this host run(s) runtime bigdl, and worker-1 was asked to run spark4: stop them "
                            "first (fab stop), a cluster runs one runtime")
    st.records = {}
    st.save()  # nothing recorded: no runtime either
    assert json.loads((tmp_path / "state.json").read_text()) == {"records": {}, "pending": {}, "runtime": None,
                                                                  "owner": None}
    assert HostState.load(tmp_path).runtime is None


def test_a_runtime_not_prepared_on_the_host_names_the_fix(tmp_path):
    from cluster.daemon import runtime_env, spark_env

    with pytest.raises(runtimes.RuntimeProblem) as e:
        runtime_env("bigdl", tmp_path / "runtimes", "10.0.0.10")
    assert str(e.value) == (f"runtime bigdl is not prepared on this host under {tmp_path / 'runtimes'}: run `fab "
                            "provision --runtime bigdl` (a campaign prepares the runtimes its rows need itself)")
    facts_only = spark_env("10.0.0.10")  # provision's call: the host's facts, no runtime needed
    assert {"cpus", "memory_mb", "job_script"} <= set(facts_only) and "spark_home" not in facts_only


def test_a_prepared_runtimes_env_goes_to_the_controller_and_back(tmp_path, monkeypatch):
    from cluster import daemon

    monkeypatch.setattr(daemon, "project_path", lambda: Path("/opt/sparkdl/venv/share/sparkdl/project"))
    site = tmp_path / "bigdl-x" / "lib" / "python3.11" / "site-packages"
    (site / "pyspark").mkdir(parents=True)
    env = runtimes.planned_env(BIGDL, "10.0.0.10")
    monkeypatch.setattr(daemon.runtimes, "is_prepared", lambda rt, root=None: True)
    monkeypatch.setattr(daemon.runtimes, "spark_env", lambda rt, env_dir, local_ip: env)
    out = json.loads(json.dumps(daemon.spark_env("10.0.0.10", "bigdl", tmp_path)))
    assert out["runtime"] == "bigdl" and out["class_path"] == [str(p) for p in env.class_path]
    assert out["python_path"] == ["/opt/sparkdl/venv/share/sparkdl/project"]  # never the tool's site-packages
    back = env_from_json(out)
    assert back.class_path == env.class_path and back.log_config == env.log_config and back.site_dir == env.site_dir
    assert back.python == env.python and back.spark_submit == env.spark_submit and back.runtime == "bigdl"


def test_jobs_on_an_installed_host_import_the_project_and_nothing_else_of_the_tool(tmp_path, monkeypatch):
    from cluster import daemon

    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    for name in ("jobs", "sparkdl", "numpy"):
        (site / name).mkdir(parents=True)

    class Dist:
        def read_text(self, name):
            return "jobs\nsparkdl\n" if name == "top_level.txt" else None

    monkeypatch.setattr(daemon.runtimes, "PROJECT_ROOT", site)
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Dist())
    monkeypatch.setattr(daemon.sys, "prefix", str(tmp_path / "venv"))
    folder = daemon.project_path()
    assert folder == tmp_path / "venv" / "share" / "sparkdl" / "project"
    assert sorted(p.name for p in folder.iterdir()) == ["jobs", "sparkdl"]  # not numpy: the runtime's own wins
    assert (folder / "jobs").resolve() == site / "jobs" and daemon.project_path() == folder  # idempotent
    monkeypatch.setattr(daemon.runtimes, "PROJECT_ROOT", tmp_path / "checkout")
    assert daemon.project_path() == tmp_path / "checkout"  # a checkout is used as it is


def test_preparing_on_a_host_is_idempotent_and_offline_with_a_wheelhouse(tmp_path, monkeypatch):
    from cluster import daemon

    seen: list[dict[str, str | None]] = []
    prepared: set[str] = set()

    def fake_prepare(rt, root=None, progress=lambda _: None):
        keys = ("UV_CACHE_DIR", "UV_OFFLINE", "UV_FIND_LINKS", "PIP_NO_INDEX")
        seen.append({k: daemon.os.environ.get(k) for k in keys})
        was = rt.name in prepared
        prepared.add(rt.name)
        return runtimes.Prepared(rt, runtimes.home(rt, root), 0.0 if was else 12.0, "uv")

    for key in ("UV_CACHE_DIR", "UV_OFFLINE", "UV_FIND_LINKS", "PIP_NO_INDEX", "PIP_FIND_LINKS", "UV_PYTHON_DOWNLOADS"):
        monkeypatch.setenv(key, "")  # so that monkeypatch restores the test process's environment afterwards
        monkeypatch.delenv(key)
    monkeypatch.setattr(daemon.runtimes, "prepare", fake_prepare)
    monkeypatch.setattr(daemon.runtimes, "is_prepared", lambda rt, root=None: rt.name in prepared)
    root = tmp_path / "base" / "runtimes"
    first = daemon.prepare_runtime("bigdl", root, tmp_path / "base" / "wheelhouse")
    assert first == {"changed": True, "runtime": "bigdl", "path": str(runtimes.home(BIGDL, root)), "seconds": 12.0,
                     "installer": "uv"}
    assert seen[0] == {"UV_CACHE_DIR": str(root / ".uv-cache"), "UV_OFFLINE": "1",
                       "UV_FIND_LINKS": str(tmp_path / "base" / "wheelhouse"), "PIP_NO_INDEX": "1"}
    assert daemon.prepare_runtime("bigdl", root, None)["changed"] is False
    assert daemon.installer_settings(root, None) == {"UV_CACHE_DIR": str(root / ".uv-cache"),
                                                     "UV_PYTHON_DOWNLOADS": "never"}


def test_a_hosts_executor_scratch_is_its_state_folder_unless_the_host_sets_its_own(tmp_path, monkeypatch):
    from cluster.daemon import scratch_env

    monkeypatch.delenv("SPARK_LOCAL_DIRS", raising=False)
    monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
    folder = tmp_path / "scratch" / "worker-2"
    assert scratch_env(tmp_path, "worker-2") == {"SPARK_LOCAL_DIRS": str(folder), "TMPDIR": str(folder),
                                                 "JAVA_TOOL_OPTIONS": f"-Djava.io.tmpdir={folder}"}
    assert folder.is_dir()
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-Djava.io.tmpdir=/big -Xss2m")  # the host's own: after ours, so it wins
    assert (scratch_env(tmp_path, "worker-2")["JAVA_TOOL_OPTIONS"]
            == f"-Djava.io.tmpdir={folder} -Djava.io.tmpdir=/big -Xss2m")
    assert "JAVA_TOOL_OPTIONS" not in scratch_env(tmp_path / "a b", "worker-2")  # the JVM would split the path
    monkeypatch.setenv("SPARK_LOCAL_DIRS", "/data/spark")  # the host's bigger disk, say: kept
    assert scratch_env(tmp_path, "worker-3") == {}
    assert not (tmp_path / "scratch" / "worker-3").exists()
