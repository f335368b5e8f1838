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
