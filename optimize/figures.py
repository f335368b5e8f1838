"""Figures of the optimizers as matplotlib Figures (Agg canvas, no pyplot state)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


class CostPoint(Protocol):
    """One learning rate of a search as the figure reads it (optimize.lr.LRPoint is one)."""

    lr: float
    costs: tuple[float, ...]

    @property
    def mean(self) -> float: ...


class CostTrace(Protocol):
    """A finished learning-rate search as the figure reads it (optimize.lr.LRSearchResult is one).

    Declared here, not imported, so that optimize.lr (which draws this figure) and this module
    do not import each other."""

    method: str
    points: Sequence[CostPoint]
    best: CostPoint
    jobs: int
    replications: int


def lr_cost_figure(result: CostTrace, cost_label: str) -> Figure:
    """Marinos 2021 Fig. 5: cost against learning rate, both axes logarithmic.

    Each replication is a dot, the mean of each point a marker joined in learning-rate order,
    the best point circled; point numbers give the evaluation order."""
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ordered = sorted(result.points, key=lambda p: p.lr)
    for p in result.points:
        ax.scatter([p.lr] * len(p.costs), p.costs, s=10, color="tab:gray", alpha=0.6, zorder=2)
    upto = "up to " if result.method == "adaptive" else ""
    ax.plot([p.lr for p in ordered], [p.mean for p in ordered], marker="o", color="tab:blue",
            label=f"mean of {upto}{result.replications} replication(s)", zorder=3)
    for i, p in enumerate(result.points, start=1):
        ax.annotate(str(i), (p.lr, p.mean), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.scatter([result.best.lr], [result.best.mean], s=160, facecolors="none", edgecolors="tab:red", zorder=4,
               label=f"best: lr = {result.best.lr:.4g}, cost = {result.best.mean:.4g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel(f"cost = {cost_label}")
    ax.set_title(f"learning-rate search ({result.method}): {len(result.points)} points, {result.jobs} jobs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def save(fig: Figure, path: Path, dpi: int = 120) -> Path:
    fig.savefig(path, dpi=dpi)
    return path


def pareto_figure(points: np.ndarray, on_front: np.ndarray, labels: Sequence[str], maximise: Sequence[bool],
                  title: str = "", intervals: tuple[np.ndarray, np.ndarray] | None = None) -> Figure:
    """The runs on the first two objectives (own units): front runs solid and joined, dominated runs faded.

    With a third objective, it colours the points (a colour bar names it); a run can then be on the
    front while looking dominated in the plane shown. ``intervals`` (low, high arrays shaped like
    ``points``, NaN where unknown) draws each point's interval on both axes (design points' means)."""
    pts = np.asarray(points, dtype=float)
    front = np.asarray(on_front, dtype=bool)
    fig = Figure(figsize=(6.4, 4.6), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    if intervals is not None:
        low, high = (np.nan_to_num(np.asarray(a, dtype=float), nan=0.0) for a in
                     (pts - np.asarray(intervals[0], dtype=float), np.asarray(intervals[1], dtype=float) - pts))
        ax.errorbar(pts[:, 0], pts[:, 1], xerr=np.vstack([low[:, 0], high[:, 0]]),
                    yerr=np.vstack([low[:, 1], high[:, 1]]), fmt="none", ecolor="grey", alpha=0.5, zorder=1)
    colour = pts[:, 2] if pts.shape[1] > 2 else None
    kw = dict(c=colour, cmap="viridis") if colour is not None else dict(color="tab:blue")
    ax.scatter(pts[~front, 0], pts[~front, 1], s=22, alpha=0.2, label=f"dominated ({int((~front).sum())})", **kw)
    shown = ax.scatter(pts[front, 0], pts[front, 1], s=46, edgecolors="black", linewidths=0.8,
                       label=f"on the front ({int(front.sum())})", zorder=3, **kw)
    if pts.shape[1] == 2 and front.any():
        order = np.argsort(pts[front, 0])
        ax.step(pts[front, 0][order], pts[front, 1][order], where="post", color="tab:red", alpha=0.7, zorder=2)
    if colour is not None:
        fig.colorbar(shown, ax=ax, label=_axis_label(labels[2], maximise[2]))
    ax.set_xlabel(_axis_label(labels[0], maximise[0]))
    ax.set_ylabel(_axis_label(labels[1], maximise[1]))
    ax.set_title(title or "Pareto front of the ok runs")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _axis_label(label: str, maximise: bool) -> str:
    return f"{label} ({'higher' if maximise else 'lower'} is better)"


def budget_bands_figure(budgets: Sequence[float], bands: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                        title: str = "", goal: float | None = None, reference: str | None = None) -> Figure:
    """Hypervolume fraction against budget, one panel per arm: its median line and its 10-90 % band (``bands``:
    arm -> (p10, median, p90), one value per budget); ``reference``: an arm whose median is drawn in every panel."""
    names = list(bands)
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    fig = Figure(figsize=(3.2 * cols, 2.5 * rows + 0.4))
    FigureCanvasAgg(fig)
    x = np.asarray(budgets, dtype=float)
    for i, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, i + 1)
        low, mid, high = bands[name]
        ax.fill_between(x, low, high, color="tab:blue", alpha=0.25, linewidth=0, label="10-90 %")
        ax.plot(x, mid, color="tab:blue", linewidth=1.6, label="median")
        if reference is not None and reference != name and reference in bands:
            ax.plot(x, bands[reference][1], color="grey", linewidth=1, linestyle="--", label=f"{reference}'s median")
        if goal is not None:
            ax.axhline(goal, color="tab:red", linestyle=":", linewidth=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_xlim(float(x.min()), float(x.max()))
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
        if i % cols == 0:
            ax.set_ylabel("hypervolume share", fontsize=8)
        if i >= len(names) - cols:
            ax.set_xlabel("cluster time, share of the grid's", fontsize=8)
        if i == 0:
            ax.legend(fontsize=6, loc="lower right")
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig
