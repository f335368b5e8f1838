"""The report of a split-plot campaign: the split-plot ANOVA tests the whole-plot factor, the reference runs stay
out of the analysis and measure drift, and the residuals are shown against run order (synthetic campaign folder)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models.anova.splitplot import fit_split_plot
from report.build import build_report


def campaign(tmp_path, drift_per_h: float = 0.0, seed: int = 3):
    rng = np.random.default_rng(seed)
    rows, t = [], datetime(2026, 11, 27, 8, tzinfo=timezone.utc)
    plots = [(1, 2), (2, 1), (1, 1), (2, 2), (1, 3), (2, 3)]  # (nodes, replicate), in run order
    wp_effect = rng.normal(0, 2, len(plots))
    for i, (nodes, rep) in enumerate(plots):
        for lr in rng.permutation([0.01, 0.05, 0.09]):
            hours = (t - datetime(2026, 11, 27, 8, tzinfo=timezone.utc)).total_seconds() / 3600
            wall = 40 + 8 * (nodes == 2) + 30 * lr + wp_effect[i] + drift_per_h * hours + rng.normal(0, 1)
            rows.append(dict(run=1 + (nodes - 1) * 3 + [0.01, 0.05, 0.09].index(lr), replicate=rep, whole_plot=i + 1,
                             nodes=nodes, learning_rate=lr, status="ok", wall_clock_s=wall, accuracy=0.9,
                             start=t.isoformat(timespec="seconds")))
            t += timedelta(minutes=4)
        if i % 2 == 1:  # a reference run between whole plots
            hours = (t - datetime(2026, 11, 27, 8, tzinfo=timezone.utc)).total_seconds() / 3600
            rows.append(dict(run=7, replicate=i // 2 + 1, whole_plot=100 + i, nodes=1, learning_rate=0.05,
                             status="ok", wall_clock_s=41.5 + drift_per_h * hours + rng.normal(0, 0.3),
                             accuracy=0.9, start=t.isoformat(timespec="seconds")))
            t += timedelta(minutes=4)
    folder = tmp_path / "campaign"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
    (folder / "manifest.json").write_text(json.dumps({
        "version": 1, "factors": ["nodes", "learning_rate"], "responses": ["wall_clock_s", "accuracy"],
        "whole_plot_factors": ["nodes"], "whole_plots": 9, "reference_run": 7}))
    return folder, pd.DataFrame(rows)


def test_report_tests_the_whole_plot_factor_in_its_stratum_and_checks_drift(tmp_path):
    folder, rows = campaign(tmp_path)
    report = build_report(folder, response="wall_clock_s", plots=True, generated="2026-11-27T00:00:00+00:00")
    a = report.analysis
    design = rows[rows["run"] != 7]
    assert len(report.campaign.frame) == len(design) == 18  # the 3 reference runs are not design points
    expected = fit_split_plot(design, "wall_clock_s", ["nodes", "learning_rate"], whole_plot_factors=None,
                              whole_plot="whole_plot", terms=a.choice.terms)
    assert a.split_plot is not None
    assert a.split_plot.row("nodes").stratum == "whole plot" and a.split_plot.row("nodes").df_den == 4
    assert a.split_plot.row("nodes").F == pytest.approx(expected.row("nodes").F, rel=1e-9)
    # balanced: the whole-plot test is the one-way ANOVA of the whole plots' means by nodes
    means = design.groupby("whole_plot").agg(nodes=("nodes", "first"), y=("wall_clock_s", "mean"))
    oneway = stats.f_oneway(*[g["y"] for _, g in means.groupby("nodes")])
    assert a.split_plot.row("nodes").F == pytest.approx(oneway.statistic, rel=1e-6)
    assert a.split_plot.row("nodes").p == pytest.approx(oneway.pvalue, rel=1e-6)
    assert a.drift is not None and a.drift.reference_runs == 3
    html = report.html
    assert 'id="split-plot"' in html and "Drift over run order" in html and "residuals vs run order" in html
    assert any("tested against the variation between whole plots" in s for s in report.findings)


def test_a_significant_drift_of_the_reference_runs_is_adjusted_out_and_said(tmp_path):
    folder, _ = campaign(tmp_path, drift_per_h=30.0, seed=5)
    report = build_report(folder, response="wall_clock_s", plots=False, generated="2026-11-27T00:00:00+00:00")
    a = report.analysis
    assert a.drift.reference_runs == 3 and a.drift.significant
    assert any("adjusted for drift" in n for n in a.notes)
    assert any("drifted during the campaign" in s for s in report.findings)
