"""Shared fixtures: real Spark standalone clusters on loopback, on ports nobody else uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from cluster.local import LocalCluster, free_port
from cluster.runtime import discover


def new_cluster(state_dir: Path, runtime: str = "bigdl") -> LocalCluster:
    """A cluster of ``runtime``'s Spark (the BigDL runtime's by default: most tests run BigDL jobs)."""
    return LocalCluster(state_dir, port=free_port(), webui_port=free_port(), env=discover(runtime=runtime))


# ---------------------------------------------------------------- the suite's JVMs compile with C1 only
# The suite's Spark jobs run for seconds. Stock JVMs (tiered compilation up to C2, which users' runs keep unless a
# job asks for the tuned JVM) spend those seconds compiling on the cores the other test needs: the test of an
# unchanged Spark example took 204 s and 3 min 24 s of CPU alone, 156 s and 2 min 0 s with C1 only. Every JVM the
# suite starts (spark-submit's, drivers, executors, daemons; the namespace hosts' through their sshd's SetEnv,
# tests/fabric_hosts.py) reads it from the launcher's JDK_JAVA_OPTIONS, which Java 9 and later honour; the java
# launcher then prints "NOTE: Picked up JDK_JAVA_OPTIONS: ..." first on stderr, as it would for a user who sets it.
# What the tool passes on a command line comes after it and wins. A JDK_JAVA_OPTIONS of the caller's is kept.
SUITE_JDK_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("JDK_JAVA_OPTIONS", SUITE_JDK_JAVA_OPTIONS)


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
# machine (measured: 1,523 tests in 24 min that way against 44 min one after another; the cores stay 94 %
# busy). The namespace-host tests run one after another on one worker: they share the hosts' cached base
# and build it once. A module whose module-scoped fixture starts something real stays on one worker, so it
# starts once. xdist's own --dist loadgroup cannot do this with pytest 9 (it renames Item._nodeid, which
# pytest 9 no longer reads), so the scheduler below takes the group, named by the test's file, as its scope.
# Without -n, nothing here runs.
HOST_MODULES = ("test_fabric_ssh.py", "test_remote_faults.py")
#: Modules whose module-scoped fixture starts a Spark application or an MLflow server, and test_vocabulary,
#: whose tests share one reading of every command's --help (about 40 processes, cached per worker).
FIXTURE_MODULES = ("test_sparkmetrics.py", "test_mlflow_server.py", "test_vocabulary.py")


def xdist_scope(nodeid: str) -> str:
    """``hosts``, the module's file name, or the test itself (a test that may run beside any other)."""
    name = Path(nodeid.split("::", 1)[0]).name
    if name in HOST_MODULES:
        return "hosts"
    return name if name in FIXTURE_MODULES else nodeid


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tests first (in their files' order), the quick ones after.

    xdist hands out the groups largest first, then the single tests in this order. In file order, tests of
    4 minutes (test_splitplot_campaign, test_search_jobs...) came among the last, and one worker ran them
    alone while the other had nothing left; the quick tests now fill the end of the run instead.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        """xdist's scope scheduling with a test's group as its scope (the largest first: the host tests)."""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return ByGroup(config, log)
