"""cluster.local against real Spark standalone masters and workers on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from cluster.errors import ClusterError, PortInUse
from cluster.local import ClusterState, LocalCluster, parse_memory_mb
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


def test_start_is_real_idempotent_scales_and_stops_exactly_its_processes(local_cluster, tmp_path):
    status = local_cluster.start(workers=2, cores=2, memory="1g")
    assert status.running and status.workers_started == 2
    ms = fetch_state(local_cluster.webui_url)  # what the master itself says
    assert ms.status == "ALIVE" and len(ms.alive_workers) == 2
    assert {(w.cores, w.memory_mb) for w in ms.alive_workers} == {(2, 1024)}
    first = pids(local_cluster)
    assert set(first) == {"master", "worker-1", "worker-2"} and all(alive(p) for p in first.values())
    assert (local_cluster.state_dir / "logs" / "worker-1.log").stat().st_size > 0

    local_cluster.start(workers=2, cores=2, memory="1g")  # idempotent: same processes
    assert pids(local_cluster) == first

    # A second cluster in another state dir must survive the first one's stop.
    other = new_cluster(tmp_path / "other")
    try:
        other.start(workers=1, cores=1, memory="512m")
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
