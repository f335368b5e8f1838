"""Shared fixtures: real Spark standalone clusters on loopback, on ports nobody else uses."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
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


# ---------------------------------------------------------------- parallel runs (make test: pytest -n logical)
# Under pytest-xdist each worker runs one test at a time, so on 2 cores two Spark tests at most share the
# machine (measured: 1,523 tests in 30 min that way against 44 min one after another; the cores stay 94 %
# busy). The namespace-host tests run one after another on one worker: they share the hosts' cached base
# and build it once. xdist's own --dist loadgroup cannot group them with pytest 9 (it renames
# Item._nodeid, which pytest 9 no longer reads), so the workers write each test's group to a folder and
# the controller's scheduler takes it as the test's scope. Without -n, nothing here runs.
HOST_MODULES = ("test_fabric_ssh.py", "test_remote_faults.py")
#: Modules whose module-scoped fixture starts something real (a Spark application, an MLflow server): on one
#: worker, it starts once.
FIXTURE_MODULES = ("test_sparkmetrics.py", "test_mlflow_server.py")
GROUPS_ENV = "SPARKDL_TEST_GROUPS"


def xdist_group_of(item: pytest.Item) -> str | None:
    """``hosts``, the module's name, or None (a test that may run beside any other)."""
    if item.path.name in HOST_MODULES:
        return "hosts"
    return item.path.name if item.path.name in FIXTURE_MODULES else None


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ[GROUPS_ENV] = tempfile.mkdtemp(prefix="sparkdl-test-groups-")  # the workers inherit it


def pytest_unconfigure(config: pytest.Config) -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ and GROUPS_ENV in os.environ:
        shutil.rmtree(os.environ.pop(GROUPS_ENV), ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    folder, worker = os.environ.get(GROUPS_ENV), os.environ.get("PYTEST_XDIST_WORKER")
    if folder and worker:
        groups = {item.nodeid: group for item in items if (group := xdist_group_of(item))}
        tmp = Path(folder) / f"{worker}.tmp"
        tmp.write_text(json.dumps(groups))
        tmp.replace(Path(folder) / f"{worker}.json")


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    folder = Path(os.environ[GROUPS_ENV])

    class ByGroup(LoadScopeScheduling):
        """xdist's scope scheduling with a test's group as its scope (the largest first: the host tests)."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # every worker collected the same tests; read the first one's
                self.groups = json.loads(min(folder.glob("*.json")).read_text())
            return self.groups.get(nodeid, nodeid)

    return ByGroup(config, log)
