"""Campaigns on the namespace hosts of tests/fabric_hosts.py, with faults at fixed points.

Shared by tests/test_remote_faults.py and bench/remote_faults.py:

    with fault_hosts(tmp) as site:                 # two hosts; the tool and the bigdl runtime on them
        c = site.submit(out, DESIGN, on_line=...)  # python -m harness.submit --cluster, line by line
        site.wait_for_training(out, "1-1")         # a fixed point: the run's first training line
        site.hosts.crash(1)                        # a fault (tests/fabric_hosts.py)
        site.spark_jvms()                          # what still runs on any host afterwards

The hosts' base folder (the tool's venv and the runtimes) is kept between sessions under
``~/.cache/sparkdl-lab`` (keyed by the pinned stack, locked while in use): provisioning a fresh one
takes ~2.5 min here, an up-to-date one seconds. Each session starts with no host state.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from cluster.bundle import project_root
from tests.fabric_hosts import HostSet, lab_cache, start_hosts

#: Short jobs: one epoch of 512 digits is ~16 iterations, long enough to be hit mid-training.
SMALL = ("--driver-memory", "1g", "--executor-memory", "600m", "--train-samples", "512", "--test-samples", "128",
         "--timeout", "600")
HEAD = "run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"


def design(*nodes: int) -> str:
    """A lenet design, one row per entry: its nodes (1 executor of 1 core each), 1 epoch, batch 32."""
    return HEAD + "".join(f"{i},lenet,{n},1,1,1,0.05,32\n" for i, n in enumerate(nodes, start=1))


def cached_base() -> Path:
    from tests.test_fabric_ssh import wheelhouse

    h = hashlib.sha256(wheelhouse().name.encode()).hexdigest()[:12]
    return lab_cache("test-remote-base", h)


@dataclass
class Submitted:
    """One `harness.submit` process: its output lines as they came, its exit code."""

    proc: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    def wait(self, timeout: float = 1500) -> int:
        self.proc.wait(timeout)
        if self.reader is not None:
            self.reader.join(30)
        return self.proc.returncode

    def wait_line(self, predicate: Callable[[str], bool], timeout: float = 600) -> str:
        """Block until an output line matches (the fixed points between runs)."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for line in self.lines[seen:]:
                if predicate(line):
                    return line
            seen = len(self.lines)
            if self.proc.poll() is not None and (self.reader is None or not self.reader.is_alive()):
                break
            time.sleep(0.2)
        raise AssertionError(f"no such line within {timeout:.0f} s; output: {self.lines[-20:]}")

    @property
    def last_line(self) -> str:
        lines = [line for line in self.lines if line.strip()]
        return lines[-1] if lines else ""


@dataclass
class FaultSite:
    hosts: HostSet
    root: Path
    base: Path
    inventory: Path

    def submit(self, out: Path, rows: str, *extra: str, env: dict[str, str] | None = None) -> Submitted:
        d = self.root / f"{out.name}.csv"
        d.write_text(rows)
        argv = [sys.executable, "-m", "harness.submit", str(d), "--cluster", str(self.inventory), "--out", str(out),
                *SMALL, *extra]
        proc = subprocess.Popen(argv, cwd=project_root(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env={**os.environ, **(env or {})})
        sub = Submitted(proc)

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                sub.lines.append(line.rstrip("\n"))

        sub.reader = threading.Thread(target=read, daemon=True)
        sub.reader.start()
        return sub

    def wait_for_training(self, out: Path, key: str, timeout: float = 300) -> None:
        """Block until the run's driver log shows its first training iteration (mid-job)."""
        log = out / "logs" / f"{key}.out"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if log.exists() and "[Epoch 1 " in log.read_text(errors="replace"):
                return
            time.sleep(0.2)
        raise AssertionError(f"run {key} did not start training within {timeout:.0f} s")

    def spark_jvms(self) -> list[str]:
        """Every JVM still running on any host (our namespaces hold nothing else of Java)."""
        found = []
        for i, address in enumerate(self.hosts.addresses):
            for pid in self.hosts.pids(i):
                with contextlib.suppress(OSError):
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    if argv and Path(argv[0].decode(errors="replace")).name == "java":
                        cls = next((a.decode() for a in argv if a.startswith(b"org.apache.spark.")), "java")
                        found.append(f"{address}: pid {pid} {cls}")
        return found


def attempts(out: Path) -> list[tuple[int, int, str, str, str | None]]:
    """(run, attempt, status, reason, failure_kind) of every attempt, in order."""
    db = sqlite3.connect(out / "campaign.sqlite")
    try:
        return list(db.execute("SELECT run, attempt, status, reason, failure_kind FROM attempts ORDER BY run, attempt"))
    finally:
        db.close()


def results(out: Path) -> dict[int, tuple[str, int]]:
    """run -> (status, attempts) from results.csv."""
    import csv

    path = out / "results.csv"
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    found: dict[int, tuple[str, int]] = {}
    for row in rows:
        assert int(row["run"]) not in found, f"run {row['run']} twice in results.csv"
        found[int(row["run"])] = (row["status"], int(row["attempts"]))
    return found


@contextlib.contextmanager
def fault_hosts(root: Path, host_wait: float = 5.0, extra_remote: str = "") -> Iterator[FaultSite]:
    """Two namespace hosts: the master and worker-1 on host A, worker-2 on host B (each 1 core, 1 GB)."""
    from tests.test_fabric_ssh import wheelhouse

    base = cached_base()
    base.mkdir(parents=True, exist_ok=True)
    with open(base.parent / f"{base.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one session at a time on the shared base
        shutil.rmtree(base / "hosts", ignore_errors=True)
        hosts = start_hosts(root / "hosts")
        try:
            if hosts.mode != "netns":
                raise RuntimeError("these faults need network namespaces (root): a crash, a partition")
            a, b = hosts.addresses
            inventory = root / "inventory.toml"
            inventory.write_text(hosts.inventory_text(
                str(base), [(a, 1, "1g"), (b, 1, "1g")],
                extra_remote=f'wheelhouse = "{wheelhouse()}"\nhost_wait = {host_wait:g}\n{extra_remote}'))
            yield FaultSite(hosts, root, base, inventory)
        finally:
            hosts.close()
