"""cluster.daemon (the Fabric hosts' end) killed between spawning a daemon and recording it, on loopback.

The full namespace + sshd Fabric run is tests/test_fabric_ssh.py; this checks the same state
handling directly on one host folder with real Spark daemons.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from cluster.local import free_port
from cluster.master import fetch_state
from tests.test_local_cluster import alive, jvms_of, port_in_use

pytestmark = [pytest.mark.slow, pytest.mark.cluster]


def daemon(*args: object, crash: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SPARKDL_CRASH_AT"}
    if crash:
        env["SPARKDL_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "cluster.daemon", *map(str, args)], capture_output=True, text=True,
                          timeout=180, env=env)


def test_a_daemon_started_but_not_recorded_is_adopted_or_stopped_by_the_next_command(tmp_path):
    sd, port, webui = tmp_path / "hosts" / "127.0.0.1", free_port(), free_port()
    master = ("--state", sd, "--host", "127.0.0.1", "--port", port, "--webui-port", webui)
    worker = ("--state", sd, "--name", "worker-1", "--host", "127.0.0.1", "--master", f"spark://127.0.0.1:{port}",
              "--master-webui", f"http://127.0.0.1:{webui}", "--cores", 1, "--memory-mb", 512,
              "--webui-port", free_port())
    try:
        assert daemon("start-master", *master, crash="master-spawned").returncode == -9
        deadline = time.monotonic() + 90
        while not port_in_use(webui) and time.monotonic() < deadline:
            time.sleep(0.5)
        (master_pid,) = jvms_of(sd)
        assert json.loads((sd / "state.json").read_text())["records"] == {}  # only the intent was written

        st = daemon("status", "--state", sd)
        assert st.returncode == 0, st.stderr
        out = json.loads(st.stdout)
        assert out["running"]["master"]["pid"] == master_pid and "adopted" in out["notes"][0]
        again = json.loads(daemon("start-master", *master).stdout)
        assert again["changed"] is False and again["pid"] == master_pid

        # a worker spawned by a command killed before recording it; its intent is lost too
        # (e.g. a state file written by a version without intents): nothing in state.json names it
        assert daemon("start-worker", *worker, crash="worker-spawned").returncode == -9
        deadline = time.monotonic() + 90
        while len(fetch_state(f"http://127.0.0.1:{webui}").alive_workers) < 1 and time.monotonic() < deadline:
            time.sleep(0.5)
        (worker_pid,) = set(jvms_of(sd)) - {master_pid}
        state = json.loads((sd / "state.json").read_text())
        (sd / "state.json").write_text(json.dumps({"records": state["records"], "pending": {}}))

        started = daemon("start-worker", *worker)  # the stray is stopped, a recorded worker replaces it
        assert started.returncode == 0, started.stderr
        out = json.loads(started.stdout)
        assert out["changed"] is True and out["pid"] != worker_pid and not alive(worker_pid)
        assert any("stray worker-1" in n for n in out["notes"])
        ms = fetch_state(f"http://127.0.0.1:{webui}")
        assert [w.port for w in ms.alive_workers] == [out["port"]]
        assert set(jvms_of(sd)) == {master_pid, out["pid"]}
        # the worker's executors keep their scratch in the state folder (SPARK_LOCAL_DIRS, TMPDIR), not /tmp
        environ = dict(e.split("=", 1) for e in open(f"/proc/{out['pid']}/environ").read().split("\0") if "=" in e)
        assert environ["SPARK_LOCAL_DIRS"] == environ["TMPDIR"] == str(sd / "scratch" / "worker-1")
        assert environ["JAVA_TOOL_OPTIONS"].startswith(f"-Djava.io.tmpdir={sd / 'scratch' / 'worker-1'}")  # Java's too
        assert (sd / "scratch" / "worker-1").is_dir()
    finally:
        stopped = daemon("stop", "--state", sd)
    assert stopped.returncode == 0, stopped.stderr
    assert sorted(json.loads(stopped.stdout)["stopped"]) == ["master", "worker-1"]
    assert jvms_of(sd) == {}
    assert not (sd / "scratch").exists()  # removed with the last daemon


def test_daemon_errors_are_one_line_with_exit_4(tmp_path):
    r = daemon("start-master", "--state", tmp_path, "--host", "127.0.0.1", "--port", free_port(), "--webui-port",
               free_port(), "--timeout", "0.5")
    # the master cannot answer in half a second: a StartupTimeout, and nothing is left running
    assert r.returncode == 4, r.stderr
    assert r.stderr.startswith("error: the Spark master") and len(r.stderr.strip().splitlines()) == 1
    assert jvms_of(tmp_path) == {}
