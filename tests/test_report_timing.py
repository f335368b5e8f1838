"""The report's "Where the time goes" section on a campaign folder with phase, spark and host columns."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from harness.phases import PHASES
from report.timing import campaign_wall_s, cpu_queue_rows, phase_frame, time_section
from harness.sampler import HostSample, SampleTable


def campaign(tmp_path, n: int = 8, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    t = pd.Timestamp("2026-11-25T02:00:00Z")
    for i in range(n):
        nodes, cores = 1 + i % 2, 1 + (i // 2) % 2
        phases = dict(zip(PHASES, [2.0, 4.0, 8.0, 10.0 + 5 * cores, 1.0, 0.5, 0.3]))
        total = sum(phases.values())
        rows.append({"run": i + 1, "replicate": 1, "nodes": nodes, "executors": 1, "executor_cores": cores,
                     "status": "ok", "elapsed_s": total, "start": t.isoformat(),
                     "end": (t + pd.Timedelta(seconds=total)).isoformat(),
                     **{f"phase_{k}_s": v for k, v in phases.items()}, "phase_total_s": total,
                     "spark_gc_share": 0.02 + 0.01 * nodes + rng.normal(0, 0.0005),
                     "host_cpu_busy_mean": 40 + 20 * cores + rng.normal(0, 0.5), "host_iowait_mean": 0.1})
        t += pd.Timedelta(seconds=total + 2)
    raw = pd.DataFrame(rows)
    run_dir = tmp_path / "runs" / f"{n}-1"
    run_dir.mkdir(parents=True)
    samples = tuple(HostSample(1e9 + k, 1.0, "h", 50.0 + k, 0.0, 1000.0, 0, 0, 0, 0, 2, 150.0, 800.0)
                    for k in range(20))
    SampleTable(samples, 0.01, 20.0).write_csv(run_dir / "host_samples.csv")
    return raw


def test_section_numbers(tmp_path):
    raw = campaign(tmp_path)
    html = time_section(raw, tmp_path, ["nodes", "executors", "executor_cores"])
    wall = campaign_wall_s(raw)
    assert wall == pytest.approx(raw["elapsed_s"].sum() + 2 * (len(raw) - 1))
    eff = 100 * raw["phase_training_s"].sum() / wall
    assert f"efficiency {eff:.1f} %" in html
    assert html.count("<img") == 2  # the stacked bars and the utilization of the longest run
    assert "utilization of run 8-1" in html or "run 8-1" in html
    # the ANOVA finds what was built in: GC share depends on nodes, CPU on executor_cores
    assert "ANOVA of the GC share" in html and "ANOVA of the CPU utilization" in html
    for key, rho, _, slow in cpu_queue_rows(phase_frame(raw)):
        assert slow == pytest.approx(1 / (1 - rho))  # M/M/1-PS mean response over mean service


def test_anova_rows_point_at_the_built_in_factor(tmp_path):
    raw = campaign(tmp_path, n=16, seed=3)
    html = time_section(raw, tmp_path, ["nodes", "executor_cores"])
    gc, cpu = html.split("ANOVA of the GC share")[1].split("ANOVA of the CPU utilization")
    def pct(block: str, term: str) -> float:
        m = re.search(rf"<td[^>]*>{term}</td>(?:<td[^>]*>[^<]*</td>){{3}}<td[^>]*>([0-9.]+)", block)
        assert m, block[:2000]
        return float(m.group(1))
    assert pct(gc, "nodes") > 90 and pct(cpu, "executor_cores") > 90


def test_no_phase_columns_says_why():
    assert "without event logs" in time_section(pd.DataFrame({"run": [1]}), None, [])


def test_measurement_columns_are_never_factors(tmp_path):
    """models.anova on a campaign's results: spark_/host_/phase_ columns are responses, not factors."""
    from models.results import detect_factors

    raw = campaign(tmp_path)
    raw["wall_clock_s"], raw["accuracy"] = raw["phase_training_s"], 0.5
    assert set(detect_factors(raw)) == {"nodes", "executor_cores"}
    from models.anova.cli import main

    path = tmp_path / "results.csv"
    raw.to_csv(path, index=False)
    assert main([str(path), "--response", "spark_gc_share", "--format", "json"]) == 0
