"""The host sampler against independent figures: a child's own CPU clock, /proc/stat, a written file."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.sampler import HostSampler, read_samples

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
