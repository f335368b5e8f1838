"""SIGTERM and SIGHUP stop a real campaign like Ctrl-C: job ended, cluster stopped, runs kept, resumable."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from cluster.local import free_port

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

DESIGN = "run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n1,lenet,1,1,1,1,0.05,32\n"


def jvms_of(state_dir: Path, port: int) -> list[psutil.Process]:
    """Java processes started for this state dir (workers: --work-dir under it; master: its port)."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if "java" in cmd and (str(state_dir) in cmd or f"--port {port} " in cmd or f":{port}" in cmd):
            found.append(p)
    return found


def wait_for_line(proc: subprocess.Popen, needle: str, timeout: float) -> list[str]:
    seen, end = [], time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"never saw {needle!r}; output: {''.join(seen)}")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_mid_job_stops_everything_and_resume_finishes_the_row_once(tmp_path, sig, code):
    design = tmp_path / "design.csv"
    design.write_text(DESIGN)
    state, out, port = tmp_path / "cluster", tmp_path / "campaign", free_port()
    argv = [sys.executable, "-m", "harness.submit", str(design), "--out", str(out), "--state-dir", str(state),
            "--port", str(port), "--webui-port", str(free_port()), "--train-samples", "256", "--test-samples",
            "128", "--executor-memory", "600m"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_line(proc, "[1/1] run 1-1:", timeout=300)
        # the job is running: BigDL builds its network (not a fixed sleep, which a fast machine outruns)
        log, deadline = out / "logs" / "1-1.out", time.monotonic() + 300
        while not (log.exists() and b"creating: " in log.read_bytes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, "the campaign ended before the job built its network"
        assert jvms_of(state, port), "the command should have started a master and a worker"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    last = err.strip().splitlines()[-1]
    assert last == f"interrupted by {signal.Signals(sig).name}: finished runs are kept in {out}; continue with --resume"
    assert "Traceback" not in err
    deadline = time.monotonic() + 20
    while jvms_of(state, port) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not jvms_of(state, port), "the cluster this command started must be stopped"

    again = subprocess.run([*argv, "--resume"], capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stdout + again.stderr
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert [(r["run"], r["replicate"], r["status"]) for r in rows] == [("1", "1", "ok")]
    assert (out / "logs" / "1-1.attempt1.out").exists()  # the stopped attempt's log is kept
    assert not jvms_of(state, port)
