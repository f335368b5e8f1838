"""LocalBackend on a real loopback cluster: which campaign owns the cluster, and who stops it."""

from __future__ import annotations

import pytest

from cluster.local import ClusterState, LocalCluster, free_port
from cluster.processes import processes_of
from harness.backends import LocalBackend
from sparkdl.runspec import RunSpec

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

SPEC = RunSpec(run=1, replicate=1, nodes=1, executors=1, executor_cores=1, epochs=1, learning_rate=0.1,
               batch_size=32, model="lenet")


def test_a_resumed_campaign_adopts_the_cluster_its_killed_predecessor_started_and_stops_it(tmp_path):
    sd, port, webui = tmp_path / "c", free_port(), free_port()
    cluster = lambda: LocalCluster(sd, port=port, webui_port=webui)  # noqa: E731
    try:
        killed = LocalBackend(cluster(), 512, owner=str(tmp_path / "runs" / "A"))
        killed.open([SPEC])
        assert killed.started_here  # ... and its harness is killed: close() never runs
        state = ClusterState.load(sd / "state.json")
        assert state is not None and state.master is not None and state.owner == str(tmp_path / "runs" / "A")
        master_pid = state.master.pid

        other = LocalBackend(cluster(), 512, owner=str(tmp_path / "runs" / "B"))
        other.open([SPEC])
        assert not other.started_here
        other.close()  # another campaign's cluster: left running
        assert cluster().status().running

        resumed = LocalBackend(cluster(), 512, owner=str(tmp_path / "runs" / "A"))
        resumed.open([SPEC])
        assert resumed.started_here and ClusterState.load(sd / "state.json").master.pid == master_pid
        resumed.close()  # as the original would have
        assert not cluster().status().running
        assert processes_of(sd) == []
    finally:
        cluster().stop()
