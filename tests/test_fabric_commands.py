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

from cluster.daemon import HostTooSmall, check_size
from cluster.bootstrap import facts
from cluster.bundle import digest, source_files
from cluster.group import GroupFailure, HostResult, on_hosts
from cluster.inventory import parse_inventory
from cluster.remote import Layout, RemoteCluster, driver_argv, master_argv, worker_argv
from cluster.ssh import CommandResult, RemoteCommandFailed, Unreachable, command_line
from harness.command import JOB_SCRIPT
from harness.remote_backend import RemoteRunner, inventory_problems
from harness.runspec import RunSpec

HOSTILE = "/srv/x y/$(touch /tmp/pwned)`id`;rm -rf ~ 'q' \"d\" \\ |&>"


def inventory(tmp_path: Path, base_dir: str = "/opt/sparkdl", python: str = "python3", workers: int = 2):
    key = tmp_path / "key"
    key.write_text("k")
    data = {
        "ssh": {"user": "debian", "key_file": str(key)},
        "remote": {"base_dir": base_dir, "python": python},
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
    for argv in (master_argv(inv, layout, 60), worker_argv(inv, layout, inv.workers[0], 60),
                 driver_argv(inv, layout, ["spark-submit", "--name", "x; reboot"]), layout.list_dir(layout.wheelhouse),
                 layout.mkdir(layout.host_dir("10.0.0.10"))):
        parsed = shlex.split(command_line(argv))
        assert parsed == argv
    assert shlex.split(command_line(layout.list_dir("/x")))[0] == "python3; touch /tmp/pwned"
    assert worker_argv(inv, layout, inv.workers[0], 60)[0] == f"{HOSTILE}/venv/bin/python"


def test_the_remote_shell_does_not_interpret_a_hostile_path(tmp_path):
    target = tmp_path / "pwned"
    hostile = f"{tmp_path}/a b/$(touch {target})`touch {target}`;touch {target}"
    subprocess.run(["sh", "-c", command_line(["mkdir", "-p", "--", hostile])], check=True)
    assert Path(hostile).is_dir() and not target.exists()


def test_worker_and_master_argv(tmp_path):
    inv = inventory(tmp_path)
    layout = Layout(inv.remote.base_dir)
    assert master_argv(inv, layout, 90) == [
        "/opt/sparkdl/venv/bin/python", "-m", "cluster.daemon", "start-master", "--state",
        "/opt/sparkdl/hosts/10.0.0.10", "--host", "10.0.0.10", "--port", "7077", "--webui-port", "8080",
        "--timeout", "90"]
    argv = worker_argv(inv, layout, inv.workers[1], 90)
    assert argv[3:] == ["start-worker", "--state", "/opt/sparkdl/hosts/10.0.0.12", "--name", "worker-2",
                        "--host", "10.0.0.12", "--master", "spark://10.0.0.10:7077",
                        "--master-webui", "http://10.0.0.10:8080", "--cores", "2", "--memory-mb", "2048",
                        "--webui-port", "8081", "--timeout", "90"]


# ---------------------------------------------------------------- a fake transport


@dataclass
class FakeTransport:
    """Answers like cluster.daemon; hosts in ``down`` are unreachable."""

    down: set[str] = field(default_factory=set)
    calls: list[tuple[str, list[str]]] = field(default_factory=list)
    running: dict[str, int] = field(default_factory=dict)  # worker name -> port

    def run(self, host, argv, timeout=None, out=None, err=None):
        if host in self.down:
            raise Unreachable(host, "unreachable: cannot connect (Connection refused)")
        self.calls.append((host, argv))
        cmd = argv[3] if argv[1:3] == ["-m", "cluster.daemon"] else argv[0]
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
        pass

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
    result = RemoteCluster(inventory(tmp_path), transport=FakeTransport()).start_master()
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
