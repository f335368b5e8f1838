"""Shared fixtures: real Spark standalone clusters on loopback, on ports nobody else uses."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from cluster.local import LocalCluster, free_port


def new_cluster(state_dir: Path) -> LocalCluster:
    return LocalCluster(state_dir, port=free_port(), webui_port=free_port())


@pytest.fixture
def local_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A LocalCluster on fresh ports (not started); whatever it started is stopped afterwards."""
    cluster = new_cluster(tmp_path / "cluster")
    try:
        yield cluster
    finally:
        cluster.stop()
