"""Effect and residual plots of an ANOVA fit, as matplotlib Figures (Agg canvas, no pyplot state).

Every function takes an :class:`~models.anova.AnovaResult` and returns a new
:class:`matplotlib.figure.Figure`; nothing is shown or saved unless :func:`save_all` is called.
The response plotted is the one analysed (after any transform).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from scipy import stats

from models.anova import RESPONSE_COLUMN, AnovaResult, term_parts


def _figure(width: float = 6.4, height: float = 4.8) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def pareto_effects(result: AnovaResult) -> Figure:
    """Horizontal bars of |standardized effect|, largest on top, with the significance line."""
    se = result.standardized_effects()
    order = np.argsort(np.abs(se.values))
    terms = [se.terms[i] for i in order]
    vals = np.abs(np.asarray(se.values))[order]
    fig = _figure(6.4, max(3.0, 0.3 * len(terms) + 1.2))
    ax = fig.subplots()
    colors = ["tab:red" if v > se.critical else "tab:gray" for v in vals]
    ax.barh(terms, vals, color=colors)
    label = (f"t({1 - se.alpha / 2:g}, {result.summary.df_resid:g}) = {se.critical:.3g}"
             if se.basis == "t" else f"Lenth ME / PSE = {se.critical:.3g}")
    ax.axvline(se.critical, color="tab:red", linestyle="--", label=label)
    ax.set_xlabel("|effect| / standard error" if se.basis == "t" else "|effect| / Lenth PSE")
    ax.set_title(f"Pareto of standardized effects ({result.summary.response})")
    ax.legend(loc="lower right")
    return fig


def half_normal_quantiles(m: int) -> np.ndarray:
    """Half-normal plotting positions Phi^-1(0.5 + 0.5 (i - 0.5) / m), i = 1..m."""
    i = np.arange(1, m + 1)
    return stats.norm.ppf(0.5 + 0.5 * (i - 0.5) / m)


@dataclass(frozen=True)
class ReferenceSlope:
    """Slope of the half-normal reference line: an estimate of an effect's standard error."""

    value: float
    basis: str  # "lenth" or "residual"
    label: str


def residual_effect_se(result: AnovaResult) -> dict[str, float]:
    """SE of each coded effect from the residual mean square: 2 sqrt(MSE [(X'X)^-1]_jj).

    X is the model matrix with numeric factors coded to -1/+1 and MSE is the residual mean
    square of the OLS fit on it (the effects' own fit), so for an orthogonal two-level design
    with N runs every value is 2 sqrt(MSE / N). Ordinary (not HC3) standard errors.
    """
    x, slices = result.coded.x, result.coded.slices
    y = result.y
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    df = len(y) - np.linalg.matrix_rank(x)
    if df <= 0:
        return {}
    resid = y - x @ coef
    mse = float(resid @ resid) / df
    c = np.diag(np.linalg.pinv(x.T @ x))
    return {e.term: 2 * float(np.sqrt(mse * c[slices[e.term].start])) for e in result.effects}


def reference_slope(result: AnovaResult) -> ReferenceSlope | None:
    """Lenth's PSE for an unreplicated design, else the residual-MS SE of an effect (median if unequal)."""
    if result.lenth is not None and result.lenth.pse > 0:
        pse = result.lenth.pse
        return ReferenceSlope(pse, "lenth", f"slope = Lenth PSE = {pse:.3g}")
    se = np.array(list(residual_effect_se(result).values()))
    if se.size == 0 or not np.all(np.isfinite(se)) or not se.max() > 0:
        return None
    value = float(np.median(se))
    what = "SE of an effect" if np.allclose(se, value, rtol=1e-9) else "median SE of the effects"
    df = result.summary.df_resid
    return ReferenceSlope(value, "residual", f"slope = {what} from residual MS ({df:g} df) = {value:.3g}")


def _active(result: AnovaResult) -> set[str]:
    """Effects judged active: Lenth's list when Lenth is used, else the ANOVA p < alpha."""
    if result.lenth is not None:
        return set(result.lenth.active)
    p = {r.term: r.p for r in result.rows}
    return {e.term for e in result.effects if p.get(e.term, math.nan) < result.alpha}


def half_normal(result: AnovaResult, label: int = 5) -> Figure:
    """|coded effects| against half-normal quantiles, through-origin line of slope = SE of an effect.

    Inert effects scatter about the line only if most effects are inert: when many are active,
    the inert ones take the lowest ranks and lie above it. Active effects are drawn in red.
    """
    if not result.effects:
        raise ValueError("half-normal plot needs two-level numeric terms")
    eff = np.abs([e.effect for e in result.effects])
    names = [e.term for e in result.effects]
    order = np.argsort(eff)
    q = half_normal_quantiles(len(eff))
    active = _active(result)
    colors = ["tab:red" if names[k] in active else "tab:blue" for k in order]
    fig = _figure()
    ax = fig.subplots()
    ax.scatter(q, eff[order], c=colors, zorder=3)
    for k in order[::-1][:label]:
        pos = int(np.flatnonzero(order == k)[0])
        ax.annotate(names[k], (q[pos], eff[k]), textcoords="offset points", xytext=(-4, 4),
                    ha="right", fontsize=8)
    handles = []
    ref = reference_slope(result)
    if ref is not None:
        xs = np.array([0.0, q[-1]])
        handles += ax.plot(xs, ref.value * xs, color="tab:gray", linestyle="--", label=ref.label)
    if active:
        rule = "Lenth ME" if result.lenth is not None else f"p < {result.alpha:g}"
        handles.append(Line2D([], [], color="tab:red", marker="o", linestyle="", label=f"active ({rule})"))
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize=8)
    ax.set_xlabel("half-normal quantile")
    ax.set_ylabel("|effect| (coded -1/+1 units)")
    ax.set_title(f"Half-normal plot of effects ({result.summary.response})")
    return fig


def _grid(n: int) -> tuple[int, int]:
    cols = min(n, 3)
    return (n + cols - 1) // cols, cols


def main_effects(result: AnovaResult, factors: Sequence[str] | None = None) -> Figure:
    """Mean response at each level of each factor, with the grand mean as a dashed line."""
    facs = list(factors or result.factors)
    rows, cols = _grid(len(facs))
    fig = _figure(3.0 * cols, 2.6 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, sharey=True, squeeze=False)).ravel()
    y = result.data[RESPONSE_COLUMN]
    for ax, f in zip(axes, facs):
        means = y.groupby(result.data[f], sort=True).mean()
        ax.plot([str(v) for v in means.index], means.to_numpy(), marker="o", color="tab:blue")
        ax.axhline(float(y.mean()), color="tab:gray", linestyle="--", linewidth=0.8)
        ax.set_xlabel(f)
    for ax in axes[len(facs):]:
        ax.set_visible(False)
    axes[0].set_ylabel(f"mean {result.summary.response}")
    fig.suptitle("Main effects")
    return fig


def model_pairs(result: AnovaResult) -> list[tuple[str, str]]:
    """Factor pairs that appear as two-factor interactions in the model (else all pairs)."""
    pairs = []
    for term in result.fit.model.data.model_spec.term_names:
        parts = [p.removeprefix("C(").removesuffix(")") for p in term_parts(term)]
        if len(parts) == 2 and all(p in result.factors for p in parts):
            pairs.append((parts[0], parts[1]))
    return pairs or list(itertools.combinations(result.factors, 2))


def interaction_plots(result: AnovaResult, pairs: Sequence[tuple[str, str]] | None = None) -> Figure:
    """For each pair (a, b): mean response against a's levels, one line per level of b."""
    todo = list(pairs) if pairs is not None else model_pairs(result)
    if not todo:
        raise ValueError("interaction plots need two or more factors")
    rows, cols = _grid(len(todo))
    fig = _figure(3.2 * cols, 2.7 * rows)
    axes = np.atleast_1d(fig.subplots(rows, cols, sharey=True, squeeze=False)).ravel()
    y = result.data[RESPONSE_COLUMN]
    for ax, (a, b) in zip(axes, todo):
        cells = y.groupby([result.data[a], result.data[b]], sort=True).mean().unstack(b)
        x = [str(v) for v in cells.index]
        for level in cells.columns:
            ax.plot(x, cells[level].to_numpy(), marker="o", label=f"{b}={level:g}"
                    if isinstance(level, (int, float, np.number)) else f"{b}={level}")
        ax.set_xlabel(a)
        ax.legend(fontsize=7)
    for ax in axes[len(todo):]:
        ax.set_visible(False)
    axes[0].set_ylabel(f"mean {result.summary.response}")
    fig.suptitle("Interaction plots")
    return fig


def qq_residuals(result: AnovaResult) -> Figure:
    """Normal Q-Q plot of the residuals with the least-squares reference line."""
    (osm, osr), (slope, intercept, _) = stats.probplot(result.residuals, dist="norm")
    fig = _figure()
    ax = fig.subplots()
    ax.scatter(osm, osr, s=12, color="tab:blue", zorder=3)
    ax.plot(osm, slope * osm + intercept, color="tab:red", linestyle="--")
    ax.set_xlabel("theoretical normal quantile")
    ax.set_ylabel("ordered residual")
    ax.set_title(f"Normal Q-Q of residuals ({result.summary.response})")
    return fig


def residuals_vs_fitted(result: AnovaResult) -> Figure:
    """Residuals against fitted values, with the zero line."""
    fig = _figure()
    ax = fig.subplots()
    ax.scatter(result.fitted, result.residuals, s=12, color="tab:blue", zorder=3)
    ax.axhline(0.0, color="tab:gray", linestyle="--")
    ax.set_xlabel("fitted value")
    ax.set_ylabel("residual")
    ax.set_title(f"Residuals vs fitted ({result.summary.response})")
    return fig


def all_figures(result: AnovaResult) -> dict[str, Figure]:
    """Every plot that applies to this fit, by file stem."""
    figs: dict[str, Figure] = {}
    if result.effects and (result.summary.df_resid > 0 or result.lenth is not None):
        figs["pareto"] = pareto_effects(result)
    if len(result.effects) >= 2:
        figs["half_normal"] = half_normal(result)
    if result.factors:
        figs["main_effects"] = main_effects(result)
    if len(result.factors) >= 2:
        figs["interactions"] = interaction_plots(result)
    figs["qq_residuals"] = qq_residuals(result)
    figs["residuals_vs_fitted"] = residuals_vs_fitted(result)
    return figs


def save_all(result: AnovaResult, directory: str | Path, dpi: int = 110) -> list[Path]:
    """Write every applicable plot as ``DIR/<stem>.png``; returns the paths."""
    return save_figures(all_figures(result), directory, dpi)


def save_figures(figures: Mapping[str, Figure], directory: str | Path, dpi: int = 110) -> list[Path]:
    """Write each figure as ``DIR/<stem>.png``; returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, fig in figures.items():
        p = out / f"{stem}.png"
        fig.savefig(p, dpi=dpi)
        paths.append(p)
    return paths
