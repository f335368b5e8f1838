"""Plots: the data drawn are the quantities they claim to show."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from scipy import stats

from models import plots
from models.anova import fit_anova

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(11)
    rows = []
    for a, b, c in itertools.product([1, 4], [64, 256], [0.001, 0.01]):
        for _ in range(3):
            y = 5 + (a == 4) * 2 + (b == 256) * 1 + (a == 4) * (b == 256) * 1.5 + rng.normal(0, 0.3)
            rows.append({"nodes": a, "batch_size": b, "learning_rate": c, "cost": y})
    return fit_anova(pd.DataFrame(rows), "cost", "nodes*batch_size + learning_rate")


def test_pareto_bars_are_abs_t_values_with_t_critical_line(result):
    fig = plots.pareto_effects(result)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    widths = sorted(p.get_width() for p in ax.patches)
    assert np.allclose(widths, sorted(abs(e.t) for e in result.effects))
    crit = stats.t.ppf(0.975, result.summary.df_resid)
    vline = [ln for ln in ax.lines if ln.get_linestyle() == "--"][0]
    assert np.allclose(vline.get_xdata(), crit)


def test_half_normal_points(result):
    fig = plots.half_normal(result)
    offsets = fig.axes[0].collections[0].get_offsets()
    m = len(result.effects)
    q = stats.norm.ppf(0.5 + 0.5 * (np.arange(1, m + 1) - 0.5) / m)
    assert np.allclose(offsets[:, 0], q)
    assert np.allclose(offsets[:, 1], np.sort(np.abs([e.effect for e in result.effects])))


def test_main_effects_are_level_means(result):
    fig = plots.main_effects(result)
    data = result.data
    for ax, f in zip(fig.axes, result.factors):
        expected = data.groupby(f)["cost"].mean().to_numpy()
        assert np.allclose(ax.lines[0].get_ydata(), expected)


def test_interaction_plot_lines_are_cell_means(result):
    fig = plots.interaction_plots(result)
    ax = fig.axes[0]  # nodes x batch_size, the model's interaction
    assert ax.get_xlabel() == "nodes"
    cells = result.data.groupby(["nodes", "batch_size"])["cost"].mean().unstack()
    assert np.allclose(ax.lines[0].get_ydata(), cells[64].to_numpy())
    assert np.allclose(ax.lines[1].get_ydata(), cells[256].to_numpy())


def test_qq_and_residuals_vs_fitted(result):
    qq = plots.qq_residuals(result).axes[0].collections[0].get_offsets()
    assert np.allclose(qq[:, 1], np.sort(result.residuals))
    n = len(result.residuals)
    # Filliben's medians, as scipy.stats.probplot uses them
    m = np.empty(n)
    m[-1] = 0.5 ** (1 / n)
    m[0] = 1 - m[-1]
    m[1:-1] = (np.arange(2, n) - 0.3175) / (n + 0.365)
    assert np.allclose(qq[:, 0], stats.norm.ppf(m))
    rf = plots.residuals_vs_fitted(result).axes[0].collections[0].get_offsets()
    assert np.allclose(rf[:, 0], result.fitted) and np.allclose(rf[:, 1], result.residuals)


def test_save_all_writes_pngs(result, tmp_path: Path):
    paths = plots.save_all(result, tmp_path)
    assert {p.stem for p in paths} == {
        "pareto", "half_normal", "main_effects", "interactions", "qq_residuals", "residuals_vs_fitted"
    }
    for p in paths:
        assert p.read_bytes()[:8] == PNG


def _line_slope(fig: Figure) -> float:
    """Slope of the dashed reference line, read back from its data; it must pass through the origin."""
    (line,) = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "--"]
    xy = line.get_xydata()
    assert np.allclose(xy[0], 0.0)
    return float(xy[-1, 1] / xy[-1, 0])


def _coded_effect_se(frame: pd.DataFrame, factors: list[str], pairs: list[tuple[str, str]]) -> np.ndarray:
    """SE of each coded effect, 2 sqrt(MSE [(X'X)^-1]_jj), by numpy least squares on the -1/+1 design."""
    cols = {f: np.where(frame[f] == frame[f].max(), 1.0, -1.0) for f in factors}
    x = np.column_stack([np.ones(len(frame))] + [cols[f] for f in factors] + [cols[a] * cols[b] for a, b in pairs])
    y = frame["cost"].to_numpy(dtype=float)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    mse = np.sum((y - x @ coef) ** 2) / (len(y) - x.shape[1])
    return 2 * np.sqrt(mse * np.diag(np.linalg.inv(x.T @ x)))[1:]


@pytest.mark.parametrize("robust", [None, "hc3"])
def test_half_normal_line_slope_is_residual_se_of_an_effect_when_replicated(result, robust):
    frame = result.data.drop(columns="__y__")
    fit = result if robust is None else fit_anova(frame, "cost", "nodes*batch_size + learning_rate", robust="hc3")
    assert fit.summary.replicated and fit.lenth is None
    fig = plots.half_normal(fit)
    se = _coded_effect_se(frame, ["nodes", "batch_size", "learning_rate"], [("nodes", "batch_size")])
    n = len(frame)
    # balanced 2^3 x 3: every effect has SE 2 sqrt(MSE / N); HC3 must not change the reference line
    assert np.allclose(se, se[0])
    assert np.isclose(se[0], 2 * np.sqrt(fit.summary.root_mse**2 / n))
    assert np.isclose(_line_slope(fig), se[0], rtol=1e-9)
    assert "residual MS" in fig.axes[0].get_legend().get_texts()[0].get_text()


def test_half_normal_line_slope_unbalanced_is_median_se(result):
    frame = result.data.drop(columns="__y__").drop(index=[0, 1, 4, 9]).reset_index(drop=True)
    fit = fit_anova(frame, "cost", "nodes*batch_size + learning_rate")
    se = _coded_effect_se(frame, ["nodes", "batch_size", "learning_rate"], [("nodes", "batch_size")])
    assert not np.allclose(se, se[0])  # the dropped runs really unbalance it
    assert np.isclose(_line_slope(plots.half_normal(fit)), np.median(se), rtol=1e-9)


def test_half_normal_line_slope_is_lenth_pse_when_unreplicated():
    rng = np.random.default_rng(5)
    rows = []
    for a, b, c, d in itertools.product([-1, 1], repeat=4):
        rows.append({"a": a, "b": b, "c": c, "d": d, "cost": 10 + 3 * a - 2 * b * c + rng.normal(0, 0.5)})
    frame = pd.DataFrame(rows)
    fit = fit_anova(frame, "cost", factors=["a", "b", "c", "d"])
    assert not fit.summary.replicated and fit.lenth is not None
    # Lenth (1989) from the coded effects, computed here by least squares: s0 = 1.5 median |c|,
    # PSE = 1.5 median of the |c| below 2.5 s0
    f = ["a", "b", "c", "d"]
    x = np.column_stack([np.ones(16)] + [frame[v] for v in f]
                        + [frame[u] * frame[v] for u, v in itertools.combinations(f, 2)]).astype(float)
    coef, *_ = np.linalg.lstsq(x, frame["cost"].to_numpy(), rcond=None)
    c = np.abs(2 * coef[1:])
    s0 = 1.5 * np.median(c)
    pse = 1.5 * np.median(c[c < 2.5 * s0])
    fig = plots.half_normal(fit)
    assert np.isclose(_line_slope(fig), pse, rtol=1e-9)
    assert "Lenth PSE" in fig.axes[0].get_legend().get_texts()[0].get_text()
