"""The local YARN + HDFS (cluster/yarn/): a real ResourceManager, NodeManagers, NameNode and DataNode on loopback,
started, read and stopped through `sparkdl cluster` as a user runs it; the REST readers and the conf reader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.yarn import hadoop
from cluster.yarn.config import HadoopConfError, conf_dir_from, read_conf_dir, site_xml
from cluster.yarn.local import LocalYarn, YarnClusterError, check_size, found_processes
from cluster.yarn.rest import Node, ResourceManager, _items

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sparkdl", "cluster", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


def test_the_lock_pins_every_jar_of_the_prepared_hadoop() -> None:
    pins = hadoop.read_lock()
    # the unshaded daemons (their REST API answers as documented), with no shaded client among them
    assert "hadoop-yarn-server-resourcemanager-3.3.6.jar" in pins and "hadoop-hdfs-3.3.6-tests.jar" in pins
    assert not any(name.startswith("hadoop-client-") for name in pins)
    built = hadoop.prepare()  # `make hadoop` prepared it: a no-op here
    assert hadoop.check_jars(built.home / "jars", pins) == []
    assert (built.home / "classes" / "MiniHdfs.class").is_file()


def test_a_jar_that_differs_from_the_lock_is_named(tmp_path: Path) -> None:
    (tmp_path / "a.jar").write_bytes(b"x")
    (tmp_path / "extra.jar").write_bytes(b"y")
    problems = hadoop.check_jars(tmp_path, {"a.jar": "0" * 64, "b.jar": "1" * 64})
    assert any(p.startswith("b.jar: not resolved") for p in problems)
    assert any(p.startswith("extra.jar: resolved by Maven but not in") for p in problems)
    assert any(p.startswith("a.jar: sha256 ") for p in problems)


def test_both_json_shapes_of_the_rest_api_are_read() -> None:
    # documented: the unshaded daemons' answer; "java17" (bean names, unwrapped): a shaded build's Jersey fallback
    documented = {"nodes": {"node": [{"id": "h:1", "state": "RUNNING", "nodeHTTPAddress": "h:2", "usedMemoryMB": 512,
                                      "availMemoryMB": 1536, "usedVirtualCores": 1, "availableVirtualCores": 1}]}}
    java17 = {"nodes": [{"nodeId": "h:1", "state": "RUNNING", "nodeHTTPAddress": "h:2", "usedMemory": 512,
                         "availableMemory": 1536, "usedVirtualCores": 1, "availableVirtualCores": 1}]}
    a, b = (Node.from_json(_items(d, "nodes", "node")[0]) for d in (documented, java17))
    assert a == b and a.memory_mb == 2048 and a.vcores_free == 1
    assert _items({"nodes": None}, "nodes", "node") == []


def test_a_conf_dir_that_is_not_hadoops_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(HadoopConfError, match="HADOOP_CONF_DIR"):
        conf_dir_from({})
    with pytest.raises(HadoopConfError, match="not a folder"):
        read_conf_dir(tmp_path / "nope")
    with pytest.raises(HadoopConfError, match="no yarn-site.xml"):
        read_conf_dir(tmp_path)
    (tmp_path / "yarn-site.xml").write_text("<configuration><property><name>x")
    with pytest.raises(HadoopConfError, match="not valid XML"):
        read_conf_dir(tmp_path)
    (tmp_path / "yarn-site.xml").write_text(site_xml({"yarn.resourcemanager.hostname": "rm.example"}))
    assert read_conf_dir(tmp_path).rm_url == "http://rm.example:8088"


@pytest.mark.parametrize("nodes,cores,memory,available,match", [
    (0, 2, 2048, None, "--nodes 0"), (17, 2, 2048, None, "--nodes 17"), (2, 0, 2048, None, "--cores 0"),
    (2, 2, 1000, None, "holds no Spark executor"), (8, 2, 4096, 16000, "more than the 16000 MB")])
def test_a_size_the_local_yarn_cannot_be_is_refused(nodes: int, cores: int, memory: int, available: int | None,
                                                     match: str) -> None:
    with pytest.raises(YarnClusterError, match=match):
        check_size(nodes, cores, memory, available)


def test_nodes_zero_exits_2_and_starts_nothing(tmp_path: Path) -> None:
    done = cli("start", "--yarn", "--nodes", "0", "--state-dir", str(tmp_path / "c"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["error: --nodes 0: give 1 to 16 NodeManagers"]
    assert not (tmp_path / "c").exists()


@pytest.mark.slow
def test_start_status_stop_a_real_yarn_and_hdfs(tmp_path: Path) -> None:
    state = tmp_path / "c"
    started = cli("start", "--yarn", "--nodes", "2", "--cores", "2", "--memory", "2g", "--state-dir", str(state))
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        conf = state / "yarn" / "conf"
        assert f"export HADOOP_CONF_DIR={conf}" in started.stdout
        rm = ResourceManager(read_conf_dir(conf).rm_url)
        nodes = rm.nodes()  # the ResourceManager itself, not our record of it
        assert len(nodes) == 2 and all(n.vcores == 2 and n.memory_mb == 2048 for n in nodes)
        assert rm.metrics().vcores == 4 and rm.queues() == ["default"]
        assert read_conf_dir(conf).default_fs.startswith("hdfs://127.0.0.1:")
        status = cli("status", "--state-dir", str(state))
        assert status.returncode == 0 and status.stdout.count("NodeManager localhost:") == 2, status.stdout
        again = cli("start", "--yarn", "--nodes", "2", "--cores", "2", "--memory", "2g", "--state-dir", str(state))
        assert again.returncode == 0 and len(rm.nodes()) == 2  # idempotent: the same cluster, not a second one
        other = cli("start", "--yarn", "--nodes", "1", "--state-dir", str(state))
        assert other.returncode == 2 and "stop it first" in other.stderr
        assert len(found_processes(state / "yarn")) == 4
    finally:
        stopped = cli("stop", "--state-dir", str(state))
    assert stopped.returncode == 0 and "stopped rm" in stopped.stdout, stopped.stdout + stopped.stderr
    assert found_processes(state / "yarn") == []  # no JVM left, recorded or not
    assert list((state / "yarn").glob("nm-*/local")) == []  # nor the NodeManagers' localized files (a runtime: 800 MB)
    assert list((state / "yarn").glob("nm-*/logs"))  # their logs are kept
    assert cli("status", "--state-dir", str(state)).returncode == 3


@pytest.mark.slow
def test_a_start_killed_midway_is_cleaned_up_by_the_next_command(tmp_path: Path) -> None:
    state = tmp_path / "c"
    env = {**os.environ, "SPARKDL_CRASH_AT": "yarn-spawned"}
    crashed = subprocess.run([sys.executable, "-m", "sparkdl", "cluster", "start", "--yarn", "--nodes", "1", "--state-dir",
                              str(state)], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert crashed.returncode != 0
    left = found_processes(state / "yarn")
    assert left, "the crash point is after HDFS started: its JVM is a stray now"
    assert LocalYarn(state / "yarn").status().running is False
    stopped = cli("stop", "--state-dir", str(state))
    assert stopped.returncode == 0 and "stopped hdfs" in stopped.stdout, stopped.stdout  # recorded before the kill
    assert found_processes(state / "yarn") == []


def test_stop_where_no_yarn_ever_ran_makes_no_folder(tmp_path: Path) -> None:
    assert LocalYarn(tmp_path / "c" / "yarn").stop() == []
    assert not (tmp_path / "c").exists()
