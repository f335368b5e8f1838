"""cluster.local against real Spark standalone masters and workers on 127.0.0.1."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from cluster.errors import ClusterError, PortInUse
from cluster.local import ClusterState, LocalCluster, free_port, parse_memory_mb
from cluster.master import fetch_state
from tests.conftest import new_cluster

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


def pids(cluster: LocalCluster) -> dict[str, int]:
    state = ClusterState.load(cluster.state_dir / "state.json")
    assert state is not None
    out = {w.role: w.pid for w in state.workers}
    if state.master:
        out["master"] = state.master.pid
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_start_is_real_idempotent_scales_and_stops_exactly_its_processes(local_cluster, tmp_path, monkeypatch):
    status = local_cluster.start(workers=2, cores=2, memory="1g")
    assert status.running and status.workers_started == 2
    ms = fetch_state(local_cluster.webui_url)  # what the master itself says
    assert ms.status == "ALIVE" and len(ms.alive_workers) == 2
    assert {(w.cores, w.memory_mb) for w in ms.alive_workers} == {(2, 1024)}
    first = pids(local_cluster)
    assert set(first) == {"master", "worker-1", "worker-2"} and all(alive(p) for p in first.values())
    assert (local_cluster.state_dir / "logs" / "worker-1.log").stat().st_size > 0
    # the daemons' JVMs run with the control-plane options (C1 only, serial GC), read from /proc
    for pid in first.values():
        argv = open(f"/proc/{pid}/cmdline", "rb").read().decode().split("\0")
        assert {"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"} <= set(argv), argv

    local_cluster.start(workers=2, cores=2, memory="1g")  # idempotent: same processes
    assert pids(local_cluster) == first

    # A second cluster in another state dir must survive the first one's stop.
    other = new_cluster(tmp_path / "other")
    try:
        monkeypatch.setenv("SPARK_DAEMON_JAVA_OPTS", "-XX:TieredStopAtLevel=4 -XX:+UseParallelGC -Dsparkdl.user=1")
        other.start(workers=1, cores=1, memory="512m")
        argv = open(f"/proc/{pids(other)['master']}/cmdline", "rb").read().decode().split("\0")
        # a user's own daemon options come after ours, so theirs win (the JVM takes the last); their collector
        # replaces ours (with two, the JVM would not start)
        assert argv.index("-XX:TieredStopAtLevel=1") < argv.index("-XX:TieredStopAtLevel=4") and "-Dsparkdl.user=1" in argv
        assert "-XX:+UseParallelGC" in argv and "-XX:+UseSerialGC" not in argv
        local_cluster.scale(workers=1)
        after = pids(local_cluster)
        assert after == {"master": first["master"], "worker-1": first["worker-1"]}
        assert not alive(first["worker-2"])
        assert len(fetch_state(local_cluster.webui_url).alive_workers) == 1

        stopped = local_cluster.stop()
        assert sorted(stopped) == ["master", "worker-1"]
        assert not any(alive(p) for p in first.values())
        assert not local_cluster.status().running
        assert all(alive(p) for p in pids(other).values())
    finally:
        other.stop()


def test_taken_port_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cluster = LocalCluster(tmp_path / "c", port=port, webui_port=port + 1 if port < 65000 else port - 1)
        with pytest.raises(PortInUse, match=f"127.0.0.1:{port} is taken"):
            cluster.start(workers=1, cores=1, memory="512m")
        assert not cluster.status().running


def test_a_worker_whose_port_is_taken_before_it_binds_registers_where_spark_moved_it(local_cluster, monkeypatch):
    """Between picking a worker's port and the worker binding it, another process may take it; Spark then starts
    the worker on the next port. The start used to wait for the picked port until it timed out (a CI failure,
    2026-12-06); it now reads where Spark started the worker and records that port."""
    import cluster.local as local

    with socket.socket() as held:  # the port "another process" takes after it was picked
        held.bind(("127.0.0.1", free_port()))  # outside the kernel's range: the ports after it are likely free
        held.listen()
        taken = held.getsockname()[1]
        real = local.free_port
        picks = iter([taken])
        monkeypatch.setattr(local, "free_port", lambda host="127.0.0.1": next(picks, None) or real(host))
        heard: list[str] = []
        local_cluster.progress = heard.append
        status = local_cluster.start(workers=1, cores=1, memory="512m", timeout=60)
        assert status.running and status.workers_started == 1
        state = ClusterState.load(local_cluster.state_dir / "state.json")
        moved = state.workers[0].port
        # Spark's retry: the next free port after it (spark.port.maxRetries, 16); another test's JVM may hold one
        # of those (a run of the suite got taken + 2 with the kernel's pick)
        assert taken < moved <= taken + 16
        assert [w.port for w in fetch_state(local_cluster.webui_url).alive_workers] == [moved]
        assert any(f"port {taken} was taken" in line and str(moved) in line for line in heard), heard
        assert local_cluster.start(workers=1, cores=1, memory="512m").workers_started == 1  # reused, not restarted
        assert ClusterState.load(local_cluster.state_dir / "state.json").workers[0].pid == state.workers[0].pid


def test_a_master_port_taken_after_the_check_is_a_clear_error_not_a_master_elsewhere(tmp_path, monkeypatch):
    """The master's port is checked free before it starts; taken in between, Spark would start the master on the
    next port while every command talks to the one asked for. It is stopped and said so."""
    import cluster.local as local

    with socket.socket() as held:
        held.bind(("127.0.0.1", free_port()))
        held.listen()
        port = held.getsockname()[1]
        monkeypatch.setattr(local, "port_free", lambda host, p: True)  # the check ran before the port was taken
        cluster = LocalCluster(tmp_path / "c", port=port, webui_port=free_port())
        with pytest.raises(PortInUse, match=f"master port 127.0.0.1:{port} was taken .* came up at "
                                            r"spark://127.0.0.1:(\d+) instead") as refused:
            cluster.start(workers=1, cores=1, memory="512m", timeout=60)
        elsewhere = int(re.search(r"came up at spark://127.0.0.1:(\d+)", str(refused.value)).group(1))
        assert port < elsewhere <= port + 16  # where Spark's retry put it
        assert not cluster.status().running
        assert not any(alive(p) for p in pids(cluster).values())


def test_cli_status_and_errors(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "cluster.local", *a, "--state-dir", str(tmp_path)],
                                    capture_output=True, text=True, timeout=60)
    st = run("status")
    assert st.returncode == 3 and "no local cluster running" in st.stdout
    sc = run("scale", "--workers", "1")
    assert sc.returncode == 4 and sc.stderr.startswith("error: no local cluster") and len(sc.stderr.splitlines()) == 1
    assert run("stop").stdout.strip() == "nothing to stop"


def test_memory_sizes():
    assert parse_memory_mb("2g") == 2048 and parse_memory_mb("700m") == 700 and parse_memory_mb("1024") == 1024
    with pytest.raises(ClusterError, match="not a size"):
        parse_memory_mb("lots")
    with pytest.raises(ClusterError, match="below 256 MB"):
        parse_memory_mb("100m")


# ---------------------------------------------------------------- crash safety
# `SPARKDL_CRASH_AT=worker-spawned` makes the command SIGKILL itself right after a worker JVM was
# spawned and before its pid is recorded: the exact instant a worker can be lost, without racing a timer.


def cli(state_dir, *args, crash: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("SPARKDL_CRASH_AT", None)
    if crash:
        env["SPARKDL_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "cluster.local", *args, "--state-dir", str(state_dir)],
                          capture_output=True, text=True, timeout=timeout, env=env)


def jvms_of(state_dir) -> dict[int, str]:
    """Spark processes of ``state_dir`` read straight from /proc (independent of cluster.processes)."""
    root = os.path.realpath(state_dir)
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if not any(a.startswith("org.apache.spark.") for a in argv) or not alive(int(entry)):
            continue
        if cwd == root or cwd.startswith(root + "/") or any(a.startswith(root + "/") for a in argv):
            found[int(entry)] = " ".join(a for a in argv if a.startswith("org.apache.spark.deploy"))
    return found


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def recorded(state_dir) -> ClusterState:
    state = ClusterState.load(state_dir / "state.json")
    assert state is not None
    return state


def test_kill9_while_scale_starts_a_worker_then_stop_leaves_no_jvm_and_the_cluster_works_again(tmp_path):
    """An unrecorded worker must not survive `stop` and block every later start on that port."""
    sd, port, webui = tmp_path / "c", free_port(), free_port()
    ports = ("--port", str(port), "--webui-port", str(webui))
    try:
        assert cli(sd, "start", "--workers", "1", "--cores", "1", "--memory", "512m", *ports).returncode == 0
        crashed = cli(sd, "scale", "--workers", "2", crash="worker-spawned")
        assert crashed.returncode == -9
        state = recorded(sd)
        assert [w.role for w in state.workers] == ["worker-1"] and [i.role for i in state.pending] == ["worker-2"]
        # the unrecorded worker registers with the master: what made `--resume` fail with "still listed as alive"
        webui_url = f"http://127.0.0.1:{webui}"
        deadline = time.monotonic() + 90
        while len(fetch_state(webui_url).alive_workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(fetch_state(webui_url).alive_workers) == 2
        stray = [pid for pid, cls in jvms_of(sd).items() if "Worker" in cls and pid != state.workers[0].pid]
        assert len(stray) == 1  # a worker JVM that state.json does not record

        stop = cli(sd, "stop")
        assert stop.returncode == 0, stop.stderr
        assert "worker-2" in stop.stdout and "master" in stop.stdout
        assert jvms_of(sd) == {} and not alive(stray[0])

        again = cli(sd, "start", "--workers", "1", "--cores", "1", "--memory", "512m", *ports)
        assert again.returncode == 0, again.stderr
        scaled = cli(sd, "scale", "--workers", "2")
        assert scaled.returncode == 0, scaled.stderr
        assert len(fetch_state(webui_url).alive_workers) == 2
        assert set(jvms_of(sd)) == set(pids(LocalCluster(sd)).values())
    finally:
        cli(sd, "stop")
    assert jvms_of(sd) == {}


def test_daemons_a_killed_command_did_not_record_are_adopted(tmp_path):
    """The master and a worker spawned by killed commands are taken over (same pids), not restarted."""
    sd, port, webui = tmp_path / "c", free_port(), free_port()
    ports = ("--port", str(port), "--webui-port", str(webui))
    try:
        assert cli(sd, "start", "--workers", "1", "--cores", "1", "--memory", "512m", *ports,
                   crash="master-spawned").returncode == -9
        state = recorded(sd)
        assert state.master is None and [i.role for i in state.pending] == ["master"]
        deadline = time.monotonic() + 90
        while not port_in_use(webui) and time.monotonic() < deadline:
            time.sleep(0.5)
        (master_pid,) = jvms_of(sd)  # the master JVM, listening: spark-class's launcher is gone
        started = cli(sd, "start", "--workers", "1", "--cores", "1", "--memory", "512m", *ports)
        assert started.returncode == 0, started.stderr
        assert "master (pid %d): adopted" % master_pid in started.stdout
        assert pids(LocalCluster(sd))["master"] == master_pid

        assert cli(sd, "scale", "--workers", "2", crash="worker-spawned").returncode == -9
        known = {recorded(sd).workers[0].pid, master_pid}
        deadline = time.monotonic() + 90
        while len(fetch_state(f"http://127.0.0.1:{webui}").alive_workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        (worker_pid,) = set(jvms_of(sd)) - known
        cluster = LocalCluster(sd)
        status = cluster.scale(workers=2)
        assert status.running and status.workers_started == 2
        assert pids(cluster) == {"master": master_pid, "worker-1": pids(cluster)["worker-1"], "worker-2": worker_pid}
        assert len(fetch_state(cluster.webui_url).alive_workers) == 2
        assert recorded(sd).pending == []
    finally:
        cli(sd, "stop")
    assert jvms_of(sd) == {}


def test_daemons_missing_from_the_state_file_are_stopped_by_the_next_command(local_cluster):
    local_cluster.start(workers=1, cores=1, memory="512m")
    before = jvms_of(local_cluster.state_dir)
    assert len(before) == 2
    (local_cluster.state_dir / "state.json").unlink()  # as if a crash lost it
    st = cli(local_cluster.state_dir, "status")
    assert st.returncode == 3, st.stdout + st.stderr
    assert "stray worker-1" in st.stdout and "stray master" in st.stdout
    assert jvms_of(local_cluster.state_dir) == {} and not any(alive(p) for p in before)
    # the ports are free again: the same cluster starts on them
    assert local_cluster.start(workers=1, cores=1, memory="512m").running


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_during_start_stops_what_it_started(tmp_path, sig, code):
    sd = tmp_path / "c"
    env = {k: v for k, v in os.environ.items() if k != "SPARKDL_CRASH_AT"}
    proc = subprocess.Popen([sys.executable, "-m", "cluster.local", "start", "--workers", "2", "--cores", "1",
                             "--memory", "512m", "--port", str(free_port()), "--webui-port", str(free_port()),
                             "--state-dir", str(sd)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while sum("Worker" in c for c in jvms_of(sd).values()) < 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert jvms_of(sd), "the start never spawned a worker"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == code, out + err
        assert err.strip().splitlines() == [f"interrupted by {signal.Signals(sig).name}"]
        assert jvms_of(sd) == {}
        state = recorded(sd)
        assert state.master is None and state.workers == [] and state.pending == []
    finally:
        if proc.poll() is None:
            proc.kill()
        cli(sd, "stop")
