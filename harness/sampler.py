"""Host utilization while a run is in flight: CPU busy and iowait, memory, disk and network, executor JVMs.

    sampler = HostSampler(roots=cluster.worker_pids, period_s=1.0)
    sampler.start(); ...; table = sampler.stop()
    table.write_csv(run_dir / "host_samples.csv"); table.summary()   # host_* columns

One sample per period (1 s by default) from a background thread with psutil: the machine's
CPU times (busy = everything but idle and iowait, as a share of all cores), iowait, memory in
use, disk and network bytes moved during the interval, and the CPU (% of one core) and RSS of
the executor JVMs: every descendant of the ``roots`` pids (the local cluster's workers). The
sampler's own CPU time is measured too (``host_sampler_cpu_s``) so its cost can be checked.

``python -m harness.sampler --out FILE [--period 1] [--pattern Worker]`` is the same sampler as a
stand-alone process: what a remote host runs over SSH (stopped with SIGTERM, its CSV fetched).
"""

from __future__ import annotations

import csv
import os
import socket
import threading
import time
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Callable, Sequence

import psutil
from sparkdl.options import CommandParser

SAMPLES_TABLE = "host_samples.csv"
RESCAN_S = 5.0  # seconds between walks of the process tree for new executor processes
Roots = Callable[[], Sequence[int]]


@dataclass(frozen=True)
class HostSample:
    """One interval on one host; byte counts are for the interval, CPU shares over it."""

    time: float  # epoch seconds at the end of the interval
    interval_s: float
    host: str
    cpu_busy_pct: float  # of all cores
    iowait_pct: float
    mem_used_mb: float
    disk_read_bytes: int
    disk_write_bytes: int
    net_sent_bytes: int
    net_recv_bytes: int
    executor_jvms: int
    jvm_cpu_pct: float  # sum over the JVMs, % of one core
    jvm_rss_mb: float


COLUMNS = tuple(f.name for f in fields(HostSample))


@dataclass(frozen=True)
class SampleTable:
    """The samples of one run plus what sampling cost."""

    samples: tuple[HostSample, ...]
    sampler_cpu_s: float
    elapsed_s: float

    def write_csv(self, path: Path) -> Path:
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for s in self.samples:
                w.writerow([getattr(s, c) for c in COLUMNS])
        return path

    def jvm_cpu_s(self) -> float:
        """CPU seconds the executor JVMs used over the sampled time."""
        return sum(s.jvm_cpu_pct / 100 * s.interval_s for s in self.samples)

    def summary(self) -> dict[str, float | int | None]:
        """The ``host_*`` columns of results.csv (time-weighted means over the samples)."""
        if not self.samples:
            return {"host_samples": 0}
        weights = [s.interval_s for s in self.samples]
        total = sum(weights) or 1.0

        def mean(name: str) -> float:
            return round(sum(getattr(s, name) * w for s, w in zip(self.samples, weights)) / total, 2)

        return {
            "host_samples": len(self.samples),
            "host_cpu_busy_mean": mean("cpu_busy_pct"),
            "host_cpu_busy_max": round(max(s.cpu_busy_pct for s in self.samples), 2),
            "host_iowait_mean": mean("iowait_pct"),
            "host_mem_peak_mb": round(max(s.mem_used_mb for s in self.samples), 1),
            "host_jvm_cpu_mean": mean("jvm_cpu_pct"),
            "host_jvm_rss_peak_mb": round(max(s.jvm_rss_mb for s in self.samples), 1),
            "host_disk_mb": round(sum(s.disk_read_bytes + s.disk_write_bytes for s in self.samples) / 2**20, 3),
            "host_net_mb": round(sum(s.net_sent_bytes + s.net_recv_bytes for s in self.samples) / 2**20, 3),
            "host_sampler_cpu_s": round(self.sampler_cpu_s, 4),
            "host_sampler_share": round(self.sampler_cpu_s / self.elapsed_s, 5) if self.elapsed_s > 0 else None,
        }


def read_samples(path: Path) -> list[HostSample]:
    """A table written by :meth:`SampleTable.write_csv` (or the remote sampler) back as samples."""
    kinds = {f.name: f.type for f in fields(HostSample)}
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out.append(HostSample(**{k: (row[k] if kinds[k] == "str" else
                                         int(float(row[k])) if kinds[k] == "int" else float(row[k]))
                                     for k in COLUMNS}))
    return out


class _Probe:
    """Counters at the previous sample; each call returns the interval since then."""

    def __init__(self, roots: Roots, host: str, rescan_s: float = RESCAN_S) -> None:
        self.roots, self.host, self.rescan_s = roots, host, rescan_s
        self.cpu = psutil.cpu_times()
        self.disk = psutil.disk_io_counters()
        self.net = psutil.net_io_counters()
        self.t = time.time()
        self.procs: dict[int, tuple[psutil.Process, float]] = {}
        self.found: list[psutil.Process] = []
        self.scanned = self.previous_scan = float("-inf")  # when the process tree was last walked (_boot_clock)
        for proc in self._jvms():
            try:
                t = proc.cpu_times()
            except psutil.Error:
                continue
            self.procs[proc.pid] = (proc, t.user + t.system)

    def _jvms(self, force: bool = False) -> list[psutil.Process]:
        """The roots' descendants; the tree is walked every ``rescan_s`` (walking /proc is most of a sample's cost)."""
        now = _boot_clock()
        if not force and now - self.scanned < self.rescan_s:
            return [p for p in self.found if p.is_running()]
        found: dict[int, psutil.Process] = {}
        for pid in self.roots():
            try:
                for child in psutil.Process(pid).children(recursive=True):
                    found[child.pid] = self.procs[child.pid][0] if child.pid in self.procs else child
            except psutil.Error:
                continue
        self.found, self.previous_scan, self.scanned = list(found.values()), self.scanned, now
        return self.found

    def sample(self, final: bool = False) -> HostSample:
        now = time.time()
        cpu, disk, net = psutil.cpu_times(), psutil.disk_io_counters(), psutil.net_io_counters()
        mem = psutil.virtual_memory()
        d = {name: getattr(cpu, name) - getattr(self.cpu, name) for name in cpu._fields}
        total = sum(d.values()) or 1e-9
        idle, iowait = d.get("idle", 0.0), d.get("iowait", 0.0)
        jvm_cpu = rss = 0.0
        seen: dict[int, tuple[psutil.Process, float]] = {}
        for p in self._jvms(force=final):
            try:
                t = p.cpu_times()
                used = t.user + t.system
                rss += p.memory_info().rss
            except psutil.Error:
                continue
            before = self.procs[p.pid][1] if p.pid in self.procs else _since_start(p, used, self.previous_scan)
            jvm_cpu += max(0.0, used - before)
            seen[p.pid] = (p, used)
        interval = max(now - self.t, 1e-9)
        sample = HostSample(
            time=round(now, 3), interval_s=round(interval, 4), host=self.host,
            cpu_busy_pct=round(100 * (total - idle - iowait) / total, 2), iowait_pct=round(100 * iowait / total, 2),
            mem_used_mb=round((mem.total - mem.available) / 2**20, 1),
            disk_read_bytes=(disk.read_bytes - self.disk.read_bytes) if disk and self.disk else 0,
            disk_write_bytes=(disk.write_bytes - self.disk.write_bytes) if disk and self.disk else 0,
            net_sent_bytes=net.bytes_sent - self.net.bytes_sent, net_recv_bytes=net.bytes_recv - self.net.bytes_recv,
            executor_jvms=len(seen), jvm_cpu_pct=round(100 * jvm_cpu / interval, 2), jvm_rss_mb=round(rss / 2**20, 1),
        )
        self.cpu, self.disk, self.net, self.t, self.procs = cpu, disk, net, now, seen
        return sample


def _since_start(p: psutil.Process, used: float, since: float) -> float:
    """CPU to count as already used by a newly found process: none if it started after the previous
    walk of the tree (so all its CPU is counted now), all of it if it was there unseen.

    ``since`` is the walk's time on :func:`_boot_clock`, which the process's start time is compared
    on: psutil's create_time adds the start ticks to a boot time rounded to whole seconds, so a
    process started just after a walk could look older than it (its first second of CPU lost)."""
    started = _started_since_boot(p.pid)
    if started is None:
        try:
            return used if p.create_time() <= since else 0.0
        except psutil.Error:
            return used
    return used if started < since else 0.0


_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 0.01


def _boot_clock() -> float:
    """Seconds since boot (Linux's /proc/uptime, the clock of process start times); wall time elsewhere."""
    try:
        return float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return time.time()


def _started_since_boot(pid: int) -> float | None:
    """When ``pid`` started, in seconds since boot (None off Linux or when it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[19]) * _TICK_S
    except (OSError, ValueError, IndexError):
        return None


class HostSampler:
    """Samples this host every ``period_s`` in a daemon thread between :meth:`start` and :meth:`stop`."""

    def __init__(self, roots: Roots = lambda: (), period_s: float = 1.0, host: str | None = None) -> None:
        if period_s <= 0:
            raise ValueError(f"sampling period must be > 0 s, got {period_s}")
        self.roots, self.period_s = roots, period_s
        self.host = host or socket.gethostname()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._samples: list[HostSample] = []
        self._cpu_s = 0.0
        self._started = 0.0
        self._error: BaseException | None = None

    def _loop(self) -> None:
        cpu0 = time.thread_time()
        try:
            probe = _Probe(self.roots, self.host)
            while not self._stop.wait(self.period_s):
                self._samples.append(probe.sample())
            self._samples.append(probe.sample(final=True))  # the last partial interval
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self._error = e
        finally:
            self._cpu_s = time.thread_time() - cpu0

    def start(self) -> "HostSampler":
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="host-sampler", daemon=True)
        self._thread.start()
        return self

    def snapshot(self) -> SampleTable:
        """The samples so far (the sampler keeps running)."""
        return SampleTable(tuple(self._samples), 0.0, time.monotonic() - self._started)

    def stop(self) -> SampleTable:
        if self._thread is None:
            return SampleTable((), 0.0, 0.0)
        self._stop.set()
        self._thread.join(timeout=10)
        self._thread = None
        if self._error is not None:
            raise RuntimeError(f"host sampler failed: {self._error}") from self._error
        return SampleTable(tuple(self._samples), self._cpu_s, time.monotonic() - self._started)


# ---------------------------------------------------------------- stand-alone (remote hosts)


def _pattern_roots(pattern: str) -> Roots:
    """Processes whose command line contains ``pattern`` (e.g. the Spark Worker class) are the roots."""
    def roots() -> list[int]:
        out = []
        for p in psutil.process_iter(["pid", "cmdline"]):
            if pattern in " ".join(p.info.get("cmdline") or []):
                out.append(p.info["pid"])
        return out

    return roots


def main(argv: Sequence[str] | None = None) -> int:
    p = CommandParser(prog="python -m harness.sampler", description="Sample this host until SIGTERM.")
    p.add_argument("--out", type=Path, required=True, help="CSV to write (rewritten after every sample)")
    p.add_argument("--period", type=float, default=1.0, help="seconds between samples (default 1)")
    p.add_argument("--pattern", default="org.apache.spark.deploy.worker.Worker",
                   help="command-line text of the processes whose descendants are the executor JVMs")
    args = p.parse_args(argv)
    sampler = HostSampler(_pattern_roots(args.pattern), args.period).start()
    written = 0
    with open(args.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)

        def flush(samples: Sequence[HostSample]) -> None:  # append only what is new: O(1) per sample
            nonlocal written
            for s in samples[written:]:
                out.writerow([getattr(s, c) for c in COLUMNS])
            written = len(samples)
            f.flush()

        try:
            while True:
                time.sleep(args.period)
                flush(sampler.snapshot().samples)
        finally:
            flush(sampler.stop().samples)
    return 0  # pragma: no cover - ends by signal


if __name__ == "__main__":
    import sys

    from sparkdl.cli import run_cli

    sys.exit(run_cli(main))
