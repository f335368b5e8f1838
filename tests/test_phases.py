"""Run phases: BigDL's wall-clock origin from one-second log stamps, and phases that add up."""

from __future__ import annotations

import calendar
import gzip
import time

import pytest

from harness.phases import Boundaries, campaign_efficiency, run_phases, split
from logparse.eventlog import AppMetrics, ExecutorAdded
from logparse.timing import read_training_times, zone_offset_s

T0 = calendar.timegm((2026, 11, 25, 2, 0, 0, 0, 0, 0))


ZONE = [0.0]  # the driver's UTC offset used by stamp()


def stamp(t: float) -> str:
    return time.strftime("%y-%m-%d %H:%M:%S", time.gmtime(int(t + ZONE[0])))  # log4j floors to the second


def synthetic_log(origin: float, iterations: int, step: float, validation: tuple[int, float], epochs: int,
                  zone: float = 0.0) -> tuple[str, float, float]:
    """A BigDL-shaped log: the wall clock stops during validation (as BigDL's does)."""
    ZONE[0] = zone
    count, throughput = validation
    lines = [f"{stamp(origin - 30)} INFO  SparkContext:57 - Running Spark version 3.1.3"]
    t, wall = origin, 0.0
    for e in range(1, epochs + 1):
        for i in range(1, iterations + 1):
            t += step
            wall += step
            lines.append(f"{stamp(t)} [Thread-5] INFO  DistriOptimizer$:432 - [Epoch {e} {i * 64}/512][Iteration {i}]"
                         f"[Wall Clock {wall:.9f}s] Trained 64.0 records in {step} seconds. Throughput is 1.0 records/second.")
        t += count / throughput
        head = f"{stamp(t)} [Thread-5] INFO  DistriOptimizer$:18x - [Epoch {e} 512/512][Iteration {i}][Wall Clock {wall}s]"
        lines.append(f"{head} validate model throughput is {throughput} records/second")
        lines.append(f"{head} Top1Accuracy is Accuracy(correct: 10, count: {count}, accuracy: 0.1)")
    return "\n".join(lines) + "\n", t, wall


@pytest.mark.parametrize("origin_frac", [0.05, 0.5, 0.93])
def test_wall_clock_origin_within_the_stamps_resolution(tmp_path, origin_frac):
    origin = T0 + 100 + origin_frac
    text, end, wall = synthetic_log(origin, iterations=12, step=0.37, validation=(256, 128.0), epochs=2)
    path = tmp_path / "job.out.gz"
    with gzip.open(path, "wt") as f:
        f.write(text)
    t = read_training_times(path)
    assert abs(t.origin - origin) <= t.origin_error_s + 1e-6 and t.origin_error_s < 0.4
    assert t.wall_clock_s == pytest.approx(wall) and t.validations == 2
    assert t.validation_s == pytest.approx(2 * 256 / 128.0)
    assert t.training_end == pytest.approx(end, abs=0.5)
    assert t.spark_start == int(origin - 30)


def test_zone_offset_rounds_to_quarter_hours():
    assert zone_offset_s(T0 + 3600 + 0.7, T0) == 3600
    assert zone_offset_s(T0 - 19800 - 0.4, T0) == -19800  # UTC+5:30 the other way round
    assert zone_offset_s(T0 + 0.9, T0) == 0


def test_phases_add_up_to_elapsed_and_missing_boundaries_are_none():
    b = Boundaries(100.0, 103.5, 110.0, 118.0, 140.0, 142.0, 143.0)
    p = split(b, validation_s=4.0)
    assert (p.submit, p.executors, p.prepare, p.training, p.validation, p.finish, p.exit) == (3.5, 6.5, 8.0, 18.0,
                                                                                              4.0, 2.0, 1.0)
    assert sum(v for k, v in p.columns().items() if k != "phase_total_s") == pytest.approx(p.total_s) == 43.0
    assert p.overhead_s == pytest.approx(21.0)
    early = run_phases(100.0, 105.0, None, None)
    assert early.submit is None and early.training is None and early.total_s == 5.0


@pytest.mark.parametrize("zone", [0.0, 3600.0, -16200.0])
def test_run_phases_puts_both_logs_on_one_timeline(tmp_path, zone):
    """The driver's log is in its local time (here UTC, UTC+1, UTC-4:30); the event log (epoch ms) anchors it."""
    origin = T0 + 200.25
    text, end, _ = synthetic_log(origin, iterations=10, step=0.5, validation=(100, 100.0), epochs=1, zone=zone)
    log = tmp_path / "1-1.out"
    log.write_text(text)
    times = read_training_times(log)
    app = AppMetrics(path="x", start_ms=int((origin - 30) * 1000) + 400, end_ms=int((end + 2) * 1000),
                     executors=[ExecutorAdded(int((origin - 20) * 1000), "0", "h", 2)])
    p = run_phases(origin - 40, end + 3, app, times)
    assert p.submit == pytest.approx(10.4, abs=1e-3) and p.executors == pytest.approx(9.6, abs=1e-3)
    assert p.prepare == pytest.approx(20.0, abs=0.5) and p.validation == pytest.approx(1.0)
    assert p.training == pytest.approx(5.0, abs=0.6) and p.exit == pytest.approx(1.0, abs=1e-3)
    assert sum(v for v in (p.submit, p.executors, p.prepare, p.training, p.validation, p.finish, p.exit)) \
        == pytest.approx(p.total_s)


def test_campaign_efficiency():
    rows = [{"phase_training_s": "10", "phase_validation_s": "2"}, {"phase_training_s": 5.0},
            {"phase_training_s": ""}]
    e = campaign_efficiency(rows, campaign_s=60.0)
    assert (e.training_s, e.validation_s, e.runs) == (15.0, 2.0, 2) and e.efficiency == 0.25
