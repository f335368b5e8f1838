"""The host sampler against independent figures: a child's own CPU clock, /proc/stat, a written file."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from harness.sampler import HostSampler, _boot_clock, _since_start, _started_since_boot, read_samples

BURN = """
import time
end = time.process_time() + 1.0
while time.process_time() < end:
    pass
print(time.process_time(), flush=True)
time.sleep(1.5)
"""


def proc_stat_busy() -> tuple[float, float]:
    """(busy, total) jiffies from /proc/stat, read directly."""
    fields = [float(x) for x in open("/proc/stat").readline().split()[1:]]
    idle, iowait = fields[3], fields[4]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    return total - idle - iowait, total


@pytest.mark.slow
def test_descendant_cpu_equals_the_childs_own_clock(tmp_path):
    busy0, total0 = proc_stat_busy()
    sampler = HostSampler(roots=lambda: [os.getpid()], period_s=0.2).start()
    child = subprocess.Popen([sys.executable, "-c", BURN], stdout=subprocess.PIPE, text=True)
    own_cpu = float(child.stdout.readline())
    time.sleep(0.6)  # at least one sample while the child is alive and idle
    table = sampler.stop()
    busy1, total1 = proc_stat_busy()
    child.wait(10)
    assert table.jvm_cpu_s() == pytest.approx(own_cpu, abs=0.15)
    assert max(s.executor_jvms for s in table.samples) == 1
    # CPU busy over the sampled time equals /proc/stat's over (nearly) the same window
    weights = [s.interval_s for s in table.samples]
    mean_busy = sum(s.cpu_busy_pct * w for s, w in zip(table.samples, weights)) / sum(weights)
    assert mean_busy == pytest.approx(100 * (busy1 - busy0) / (total1 - total0), abs=10)
    # the table round-trips through its CSV
    back = read_samples(table.write_csv(tmp_path / "s.csv"))
    assert back == list(table.samples)
    summary = table.summary()
    assert summary["host_samples"] == len(back) and summary["host_cpu_busy_max"] >= summary["host_cpu_busy_mean"]
    assert summary["host_sampler_cpu_s"] < 0.5


def test_period_must_be_positive():
    with pytest.raises(ValueError, match="period"):
        HostSampler(period_s=0)


def test_a_process_start_is_read_on_the_same_clock_as_the_tree_walks():
    # a child started between two readings of the walk clock is dated between them (to the tick):
    # psutil's create_time is not (its boot time is whole seconds), which lost a fresh child's CPU
    before = _boot_clock()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    after = _boot_clock()
    try:
        started = _started_since_boot(child.pid)
        assert started is not None and before - 0.011 <= started <= after + 0.011
        p = psutil.Process(child.pid)
        assert _since_start(p, 3.0, before - 0.02) == 0.0  # started after that walk: all its CPU counts now
        assert _since_start(p, 3.0, after + 0.02) == 3.0  # there, unseen, at that walk: counted as already used
    finally:
        child.kill()
        child.wait()
