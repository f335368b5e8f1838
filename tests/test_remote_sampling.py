"""Host sampling of inventory hosts: the daemon's sample-start/sample-stop as real processes.

The SSH hop is replaced by a transport that runs each remote argv on this machine (the
daemon, the sampler and their signals are real); the SSH path itself is test_fabric_ssh.py's.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cluster.local import start_ticks
from cluster.remote import RemoteCluster
from cluster.ssh import CommandResult
from harness.observer import RemoteRunObserver
from tests.test_fabric_commands import inventory

ROOT = Path(__file__).resolve().parent.parent


class HereTransport:
    """Runs the remote argv here, with this interpreter in place of the hosts' venv python."""

    def __init__(self, python: str) -> None:
        self.python = python

    def run(self, host, argv, timeout=None, out=None, err=None) -> CommandResult:
        argv = [sys.executable if a == self.python else a for a in argv]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return CommandResult(host, shlex.join(argv), p.returncode, p.stdout, p.stderr)

    def close(self) -> None:
        pass


@pytest.mark.slow
def test_samplers_on_every_worker_host_end_and_return_their_tables(tmp_path):
    inv = inventory(tmp_path, base_dir=str(tmp_path / "base"), workers=2)
    cluster = RemoteCluster(inv, transport=HereTransport(str(Path(inv.remote.base_dir) / "venv" / "bin" / "python")))
    run_dir = tmp_path / "campaign" / "runs" / "1-1"
    watch = RemoteRunObserver(cluster, lambda: 2, period_s=0.3).start(run_dir)
    assert watch.problems == ()
    pids = [int(p.read_text().split('"pid": ')[1].split(",")[0])
            for p in sorted((tmp_path / "base" / "hosts").glob("*/samples/1-1.pid"))]
    assert len(pids) == 2 and all(start_ticks(pid) is not None for pid in pids)
    time.sleep(2.5)
    metrics = watch.stop(None)
    for host in ("10.0.0.11", "10.0.0.12"):
        rows = (run_dir / f"host_samples-{host}.csv").read_text().splitlines()
        assert rows[0].startswith("time,interval_s,host") and len(rows) >= 4
    assert metrics["host_samples"] >= 6 and 0 <= metrics["host_cpu_busy_mean"] <= 100
    assert 0 < metrics["host_sampler_cpu_s"] < 5 and not (run_dir / "observer-notes.txt").exists()
    time.sleep(0.5)
    assert all(start_ticks(pid) is None or open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"
               for pid in pids)  # the samplers ended on SIGTERM
    assert not list((tmp_path / "base" / "hosts").glob("*/samples/1-1.*"))  # nothing left on the hosts


def test_stop_without_a_sampler_is_an_empty_table(tmp_path):
    from cluster.daemon import sample_stop

    assert sample_stop(tmp_path, "9-9") == {"csv": "", "sampler_cpu_s": 0.0, "problem": ""}
