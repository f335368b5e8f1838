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
