"""Which processes belong to a state directory (pure logic), and the crash-point hook."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time

from cluster.processes import (EPHEMERAL_DEFAULT, EXECUTOR_CLASS, LOWEST_FREE_PORT, MASTER_CLASS, WORKER_CLASS,
                               ProcessRecord, classify, end_groups, ephemeral_range, free_port, group_members,
                               port_free, start_ticks, started_port)

JAVA = "/opt/java/bin/java"


def test_classify_knows_the_daemons_of_a_state_dir_by_cwd_and_work_dir(tmp_path):
    root = tmp_path / "c"
    (root / "work" / "worker-2" / "app-1" / "0").mkdir(parents=True)
    sibling = tmp_path / "c2"  # a name with the same prefix is another cluster
    (sibling / "work" / "worker-1").mkdir(parents=True)
    master = [JAVA, "-cp", "x", MASTER_CLASS, "--host", "127.0.0.1", "--port", "7"]
    worker = [JAVA, "-cp", "x", WORKER_CLASS, "spark://127.0.0.1:7", "--work-dir", str(root / "work" / "worker-2")]
    executor = [JAVA, "-cp", "x", EXECUTOR_CLASS, "--driver-url", "spark://x"]
    assert classify(master, str(root), root) == "master"
    assert classify(worker, str(root), root) == "worker-2"
    assert classify(worker, "/", root) == "worker-2"  # its --work-dir alone says whose it is
    assert classify(executor, str(root / "work" / "worker-2" / "app-1" / "0"), root) == ""
    # spark-class's launcher names the class as an argument before it execs the daemon
    launcher = [JAVA, "-cp", "x", "org.apache.spark.launcher.Main", WORKER_CLASS, "--work-dir",
                str(root / "work" / "worker-2")]
    assert classify(launcher, str(root), root) == "worker-2"
    # not ours: another folder, a prefix sibling, a non-Spark process in our folder, a driver
    assert classify(master, str(tmp_path), root) is None
    assert classify(master, str(sibling), root) is None
    assert classify([*worker[:5], "--work-dir", str(sibling / "work" / "worker-1")], str(sibling), root) is None
    assert classify(["bash"], str(root), root) is None
    assert classify([JAVA, "org.apache.spark.deploy.SparkSubmit", "job.py"], str(root), root) is None
    # a symlinked state dir is the same folder
    link = tmp_path / "link"
    link.symlink_to(root)
    assert classify(master, str(root), link) == "master"


def _crashing(spec: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SPARKDL_CRASH_AT"}
    if spec:
        env["SPARKDL_CRASH_AT"] = spec
    code = ("from sparkdl.crash import crash_point\n"
            "for i in range(1, 4):\n    print(i, flush=True)\n    crash_point('rescale')\n    crash_point('other')\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)


def test_crash_point_kills_at_the_nth_occurrence_of_its_phase_only():
    second = _crashing("rescale:2")
    assert second.returncode == -9 and second.stdout.split() == ["1", "2"]
    first = _crashing("rescale")
    assert first.returncode == -9 and first.stdout.split() == ["1"]
    assert _crashing(None).returncode == 0 and _crashing("parse").stdout.split() == ["1", "2", "3"]


SLOW_TO_DIE = """
import signal, sys, time
def bye(*_):
    time.sleep(1.5)  # a JVM running its shutdown hooks
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
time.sleep(100)
"""


def test_ending_a_group_waits_for_every_member_not_only_its_leader(tmp_path):
    # the leader (like spark-class's bash) dies at once on SIGTERM; its child (like the launcher JVM) takes 1.5 s
    ready = tmp_path / "ready"
    leader = subprocess.Popen(["bash", "-c", f'"{sys.executable}" -c \'{SLOW_TO_DIE}\' > "{ready}" & wait'],
                              start_new_session=True)
    deadline = time.monotonic() + 20
    while not (ready.exists() and ready.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = [p for p in group_members(leader.pid) if p != leader.pid]
    assert len(child) == 1
    started = time.monotonic()
    ProcessRecord("master", leader.pid, start_ticks(leader.pid), 1, 2, "log").terminate(grace=10)
    assert group_members(leader.pid) == []  # the child too, when terminate returns
    assert time.monotonic() - started < 8  # by its SIGTERM (1.5 s), not after the grace period
    leader.wait(5)


LOGS_ITS_END = """
import signal, sys, time
log = open(sys.argv[1], "a", buffering=1)
def bye(*_):
    log.write("term\\n")
    time.sleep(1.5)  # a JVM running its shutdown hooks
    log.write("exit\\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
time.sleep(100)
"""


def test_several_groups_end_side_by_side_not_one_after_another(tmp_path):
    """A cluster's stop signals its master and workers at once: every group gets its SIGTERM before any of them
    has died (one after another, each would die before the next one is signalled)."""
    events = tmp_path / "events"
    (tmp_path / "slow.py").write_text(LOGS_ITS_END)
    leaders = []
    for i in range(3):
        ready = tmp_path / f"ready-{i}"
        leaders.append((subprocess.Popen(["bash", "-c", f'"{sys.executable}" "{tmp_path / "slow.py"}" "{events}" '
                                                        f'> "{ready}" & wait'], start_new_session=True), ready))
    deadline = time.monotonic() + 20
    while not all(r.exists() and r.read_text() for _, r in leaders) and time.monotonic() < deadline:
        time.sleep(0.05)
    end_groups([(p.pid, start_ticks(p.pid), f"daemon {i}") for i, (p, _) in enumerate(leaders)], grace=10)
    assert all(group_members(p.pid) == [] for p, _ in leaders)
    assert events.read_text().split() == ["term"] * 3 + ["exit"] * 3
    for p, _ in leaders:
        p.wait(5)


# ---------------------------------------------------------------- ports a daemon is told to bind


def test_free_port_is_outside_the_kernels_ephemeral_range_and_free():
    """A port the kernel hands out is one every JVM's own ports (drivers, block managers, executors, py4j) and
    every outgoing connection draw from: one of them took a worker's port between its pick and the worker's bind
    and the cluster start waited 120 s for a worker Spark had moved to the next port (a CI run, 2026-12-06)."""
    low, high = ephemeral_range()
    assert (low, high) != (0, 0) and low <= high
    rng = random.Random(7)
    picks = [free_port("127.0.0.1", rng) for _ in range(200)]
    assert all(not (low <= p <= high) and LOWEST_FREE_PORT <= p <= 65535 for p in picks)
    assert len(set(picks)) > 190  # drawn at random over the range, not one port handed out again and again
    with socket.socket() as s:  # free: it binds
        s.bind(("127.0.0.1", picks[0]))


def test_free_port_skips_a_taken_port(monkeypatch):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        if not port_free("127.0.0.1", taken + 1):
            held.close()
            return test_free_port_skips_a_taken_port(monkeypatch)  # another draw; a port pair is free soon
        # outside the kernel's range there are two ports, the taken one and the one after it
        monkeypatch.setattr("cluster.processes.LOWEST_FREE_PORT", taken)
        monkeypatch.setattr("cluster.processes.ephemeral_range", lambda: (taken + 2, 65535))
        assert {free_port("127.0.0.1", random.Random(seed)) for seed in range(30)} == {taken + 1}


def test_ephemeral_range_reads_proc_and_falls_back_to_linuxs_default(tmp_path):
    f = tmp_path / "range"
    f.write_text("20000\t30000\n")
    assert ephemeral_range(f) == (20000, 30000)
    assert ephemeral_range(tmp_path / "missing") == EPHEMERAL_DEFAULT
    f.write_text("garbage\n")
    assert ephemeral_range(f) == EPHEMERAL_DEFAULT


def test_started_port_reads_this_run_of_the_log_only(tmp_path):
    log = tmp_path / "worker-1.log"
    old = ("\n==== 2026-12-06 09:00:00 starting worker-1\n"
           "26/12/06 09:00:01 INFO Utils: Successfully started service 'sparkWorker' on port 41001.\n"
           "26/12/06 09:00:01 INFO Utils: Successfully started service 'WorkerUI' on port 41002.\n")
    log.write_text(old)
    assert started_port(log, "sparkWorker") == 41001 and started_port(log, "WorkerUI") == 41002
    # a new run of the same worker appends to the log: until it says where it started, nothing is known
    log.write_text(old + "\n==== 2026-12-06 10:00:00 starting worker-1\nSpark Command: java ...\n")
    assert started_port(log, "sparkWorker") is None
    with log.open("a") as f:
        f.write("26/12/06 10:00:02 WARN Utils: Service 'sparkWorker' could not bind on port 20011. "
                "Attempting port 20012.\n"
                "26/12/06 10:00:02 INFO Utils: Successfully started service 'sparkWorker' on port 20012.\n")
    assert started_port(log, "sparkWorker") == 20012 and started_port(log, "WorkerUI") is None
    assert started_port(tmp_path / "missing.log", "sparkWorker") is None
    # a log that grew past the tail read since the start says nothing rather than something from before
    log.write_text(old + "x" * 300_000)
    assert started_port(log, "sparkWorker", tail=1 << 18) is None
