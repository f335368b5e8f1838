"""Drift over a campaign's run time (models.drift), cross-checked against independent computations."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models.drift import adjust_for_drift, check_drift, run_hours

T0 = datetime(2026, 11, 27, 8, 0, tzinfo=timezone.utc)


def starts(hours) -> list[str]:
    return [(T0 + timedelta(hours=float(h))).isoformat(timespec="seconds") for h in hours]


def table(seed: int, n: int = 32, slope: float = 0.0, wp_sd: float = 0.0, plots: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    hours = np.sort(rng.uniform(0, 4, n))
    a = np.tile([-1, 1], n // 2)
    rng.shuffle(a)
    y = 100 + 5 * a + slope * hours + rng.normal(0, 2, n)
    frame = pd.DataFrame({"a": a, "start": starts(hours), "y": y})
    if plots:
        frame["whole_plot"] = np.arange(n) * plots // n + 1  # contiguous whole plots in time
        y += rng.normal(0, wp_sd, plots)[frame["whole_plot"] - 1]
        frame["y"] = y
    return frame


def test_hours_come_from_the_start_times_to_the_second():
    frame = pd.DataFrame({"start": ["2026-11-27T08:00:00+00:00", "2026-11-27T09:30:00+00:00"]})
    assert run_hours(frame).tolist() == [0.0, 1.5]
    assert run_hours(pd.DataFrame({"start": ["2026-11-27T08:00:00+00:00", "not a time"]})) is None
    assert run_hours(pd.DataFrame({"x": [1]})) is None


def test_trend_alone_equals_scipy_linregress():
    frame = table(1, slope=3.0)
    hours = run_hours(frame)
    ref = stats.linregress(hours, frame["y"])
    got = check_drift(frame, "y")
    assert got.slope_per_h == pytest.approx(ref.slope, rel=1e-10)
    assert got.p == pytest.approx(ref.pvalue, rel=1e-8) and got.df == len(frame) - 2
    assert got.significant and "a trend" in got.to_text()


def test_trend_beside_the_model_terms_equals_least_squares_by_hand():
    frame = table(2, slope=-2.0)
    hours, y = run_hours(frame), frame["y"].to_numpy(float)
    x = np.column_stack([np.ones(len(y)), frame["a"], hours])
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    df = len(y) - 3
    se = np.sqrt(resid @ resid / df * np.linalg.inv(x.T @ x)[2, 2])
    got = check_drift(frame, "y", "a")
    assert got.slope_per_h == pytest.approx(beta[2], rel=1e-9)
    assert got.p == pytest.approx(2 * stats.t.sf(abs(beta[2] / se), df), rel=1e-7)
    assert got.ci_low == pytest.approx(beta[2] - stats.t.ppf(0.975, df) * se, rel=1e-7)
    assert got.pct_per_h == pytest.approx(100 * beta[2] / y.mean())


def test_without_drift_the_test_rejects_at_its_level():
    """200 simulated campaigns with no trend: the rejection rate at 0.05 lies in its binomial 99.9 % interval."""
    rejections = sum(check_drift(table(seed), "y", "a").p < 0.05 for seed in range(200))
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 200, 0.05)
    assert lo <= rejections <= hi


def test_split_plot_drift_uses_the_mixed_model_and_recovers_the_trend():
    frame = table(5, n=64, slope=4.0, wp_sd=3.0, plots=8)
    got = check_drift(frame, "y", "a", whole_plot="whole_plot")
    assert "random intercept per whole plot" in got.method and got.df == 64 - 8 - 2
    assert got.ci_low < 4.0 < got.ci_high and got.significant


def test_too_few_whole_plots_for_the_mixed_model_is_said_not_a_crash():
    """Three runs in two whole plots, one per runtime (a real mllib campaign's shape): no df for a trend."""
    frame = pd.DataFrame({"runtime": ["spark4", "spark4", "bigdl"], "whole_plot": [1, 1, 2],
                          "start": starts([0.0, 0.05, 0.1]), "y": [20.1, 21.7, 9.3]})
    got = check_drift(frame, "y", "runtime", whole_plot="whole_plot")
    assert not got.tested and "no residual df" in got.note and "not checked" in got.to_text()


def test_split_plot_trend_is_the_split_plot_fit_of_hours_and_equals_gls_at_its_variances():
    """Two whole plots of four runs: the slope is the GLS estimate at the REML variances (checked by numpy),
    on the containment df of the subplot residual (8 runs - 2 whole plots - b - hours = 4)."""
    from models.anova.splitplot import group_codes, reml_fit

    hours = np.array([0.0, 0.1, 0.2, 0.3, 1.0, 1.1, 1.2, 1.3])
    y = np.array([10.0, 10.4, 10.9, 11.1, 20.0, 20.6, 20.9, 21.5])
    frame = pd.DataFrame({"whole_plot": [1] * 4 + [2] * 4, "start": starts(hours), "y": y,
                          "b": [-1, 1, 1, -1, 1, -1, -1, 1]})
    got = check_drift(frame, "y", "b", whole_plot="whole_plot")
    x = np.column_stack([np.ones(8), frame["b"], hours])
    fit = reml_fit(x, y, group_codes(frame["whole_plot"]))
    v = fit.sigma2 * np.eye(8) + fit.sigma2_w * (frame["whole_plot"].to_numpy()[:, None] == frame["whole_plot"].to_numpy())
    w = np.linalg.inv(v)
    beta = np.linalg.solve(x.T @ w @ x, x.T @ w @ y)
    assert got.slope_per_h == pytest.approx(beta[2]) and got.df == 4 and "containment" in got.method
    assert got.p == pytest.approx(2 * stats.t.sf(abs(got.statistic), 4))


def test_reference_runs_estimate_the_drift_and_a_significant_one_is_adjusted_out():
    rng = np.random.default_rng(7)
    hours = np.linspace(0, 6, 40)
    reference = np.zeros(40, dtype=bool)
    reference[::5] = True
    y = 50 + 2.5 * hours + rng.normal(0, 0.5, 40)
    frame = pd.DataFrame({"start": starts(hours), "y": y})
    got = check_drift(frame, "y", reference=reference)
    hours = run_hours(frame)  # the start times are kept to the second
    ref = stats.linregress(hours[reference], y[reference])
    assert got.reference_runs == 8 and got.slope_per_h == pytest.approx(ref.slope) and got.significant
    adjusted, note = adjust_for_drift(frame, "y", got)
    assert note and "adjusted for drift" in note and "8 reference runs" in note
    assert abs(stats.linregress(hours, adjusted["y"]).slope) < 0.3
    assert adjusted["y"].mean() == pytest.approx(frame["y"].mean())  # centred: the mean is kept
    flat = frame.assign(y=50 + rng.normal(0, 0.5, 40))
    same, none = adjust_for_drift(flat, "y", check_drift(flat, "y", reference=reference))
    assert none is None and same is flat


def test_no_start_times_is_said_not_guessed():
    got = check_drift(pd.DataFrame({"y": [1.0, 2.0, 3.0]}), "y")
    assert not got.tested and "no start time" in got.to_text() and got.to_dict()["p"] is None
