"""Shared fixtures: real Spark standalone clusters on loopback, on ports nobody else uses."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from cluster.local import LocalCluster, free_port
from cluster.runtime import discover


def new_cluster(state_dir: Path, runtime: str = "bigdl") -> LocalCluster:
    """A cluster of ``runtime``'s Spark (the BigDL runtime's by default: most tests run BigDL jobs)."""
    return LocalCluster(state_dir, port=free_port(), webui_port=free_port(), env=discover(runtime=runtime))


@pytest.fixture
def local_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A LocalCluster of the BigDL runtime on fresh ports (not started); whatever it started is stopped afterwards."""
    cluster = new_cluster(tmp_path / "cluster")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def spark4_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A LocalCluster of the spark4 runtime (Spark 4.3, Java 17/21) on fresh ports (not started)."""
    cluster = new_cluster(tmp_path / "cluster4", runtime="spark4")
    try:
        yield cluster
    finally:
        cluster.stop()


# ---------------------------------------------------------------- parallel runs (make test: pytest -n auto)
# With pytest-xdist's --dist loadgroup, the tests that start Spark on this machine run one after another
# on one worker (they compete for the same cores, and their timing assertions assume the machine is theirs),
# the namespace-host tests one after another on another (they share the hosts' cached base), and the rest,
# pure Python, spread over the workers. Without -n, this changes nothing.
HOST_MODULES = ("test_fabric_ssh.py", "test_remote_faults.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in HOST_MODULES:
            item.add_marker(pytest.mark.xdist_group("hosts"))
        elif item.get_closest_marker("slow") or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.xdist_group("spark"))
