"""Contour and surface plots of a fitted quadratic, one per pair of factors (matplotlib Figures, Agg).

Each plot varies two factors over their tested range in natural units and holds the others at
``hold`` (default: the centre). Settings outside the region (farther from the centre than any
design point) are left blank: the surface is not read where nothing was run. Design points are
drawn in black (filled where the held factors are at their hold value, hollow elsewhere: those
are projections); a marked point (e.g. the recommendation) in red.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from models.rsm.fit import SurfaceFit

GRID = 60


def _figure(width: float = 6.0, height: float = 4.8) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _grid(fit: SurfaceFit, i: int, j: int, hold_coded: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi = fit.region.lower, fit.region.upper
    u = np.linspace(lo[i], hi[i], GRID)
    v = np.linspace(lo[j], hi[j], GRID)
    U, V = np.meshgrid(u, v)
    x = np.tile(hold_coded, (U.size, 1))
    x[:, i], x[:, j] = U.ravel(), V.ravel()
    z = fit.predict_coded(x)
    z[~fit.region.contains(x)] = np.nan
    nat = fit.coding.to_natural(x)
    return nat[:, i].reshape(U.shape), nat[:, j].reshape(U.shape), z.reshape(U.shape)


def _hold(fit: SurfaceFit, hold: np.ndarray | None) -> np.ndarray:
    return np.zeros(fit.k) if hold is None else fit.coding.to_coded(np.asarray(hold, dtype=float))


def _held_text(fit: SurfaceFit, i: int, j: int, hold_coded: np.ndarray) -> str:
    nat = fit.coding.to_natural(hold_coded)
    others = [f"{f} = {nat[m]:.4g}" for m, f in enumerate(fit.factors) if m not in (i, j)]
    return ("; " + ", ".join(others)) if others else ""


def contour(fit: SurfaceFit, i: int, j: int, hold: np.ndarray | None = None,
            mark: np.ndarray | None = None, mark_label: str = "recommended") -> Figure:
    """Filled contours of the fitted response over factors ``i`` and ``j`` (natural units)."""
    hc = _hold(fit, hold)
    X, Y, Z = _grid(fit, i, j, hc)
    fig = _figure()
    ax = fig.subplots()
    cs = ax.contourf(X, Y, Z, levels=14, cmap="viridis")
    ax.contour(X, Y, Z, levels=cs.levels, colors="white", linewidths=0.5)
    fig.colorbar(cs, ax=ax, label=f"fitted {fit.response}")
    pts = fit.coding.to_natural(fit.coded_x)
    others = [m for m in range(fit.k) if m not in (i, j)]
    at_hold = np.all(np.isclose(fit.coded_x[:, others], hc[others]), axis=1) if others else np.ones(fit.n, bool)
    ax.scatter(pts[at_hold, i], pts[at_hold, j], c="black", s=28, zorder=3, label="design points")
    if (~at_hold).any():
        ax.scatter(pts[~at_hold, i], pts[~at_hold, j], facecolors="none", edgecolors="black", s=28, zorder=3,
                   label="design points (projected)")
    if mark is not None:
        ax.scatter([mark[i]], [mark[j]], c="tab:red", marker="*", s=160, zorder=4, label=mark_label)
    ax.set_xlabel(fit.factors[i])
    ax.set_ylabel(fit.factors[j])
    for lim, setter, span in ((X, ax.set_xlim, X.max() - X.min()), (Y, ax.set_ylim, Y.max() - Y.min())):
        setter(lim.min() - 0.04 * span, lim.max() + 0.04 * span)  # room for the points on the edges
    ax.set_title(f"{fit.response}: {fit.factors[i]} x {fit.factors[j]}{_held_text(fit, i, j, hc)}", fontsize=9)
    ax.legend(loc="best", fontsize=7)
    return fig


def surface(fit: SurfaceFit, i: int, j: int, hold: np.ndarray | None = None) -> Figure:
    """The fitted response as a 3-D surface over factors ``i`` and ``j``, with the observed jobs."""
    hc = _hold(fit, hold)
    X, Y, Z = _grid(fit, i, j, hc)
    fig = _figure()
    ax = fig.add_subplot(projection="3d")
    ax.plot_surface(X, Y, np.ma.masked_invalid(Z), cmap="viridis", alpha=0.85, linewidth=0)
    pts = fit.coding.to_natural(fit.coded_x)
    others = [m for m in range(fit.k) if m not in (i, j)]
    at_hold = np.all(np.isclose(fit.coded_x[:, others], hc[others]), axis=1) if others else np.ones(fit.n, bool)
    ax.scatter(pts[at_hold, i], pts[at_hold, j], fit.back(fit.y[at_hold]), c="tab:red", s=20, depthshade=False,
               label="observed (held factors at hold)")
    ax.set_xlabel(fit.factors[i])
    ax.set_ylabel(fit.factors[j])
    ax.set_zlabel(fit.response)
    ax.set_title(f"{fit.response}{_held_text(fit, i, j, hc)}", fontsize=9)
    return fig


def pairs(k: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(k), 2))


def save_all(fit: SurfaceFit, directory: str | Path, hold: np.ndarray | None = None,
             mark: np.ndarray | None = None) -> list[Path]:
    """Write contour and surface PNGs for every pair of factors; returns the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, j in pairs(fit.k):
        for kind, fig in (("contour", contour(fit, i, j, hold, mark)), ("surface", surface(fit, i, j, hold))):
            p = out / f"{fit.response}_{kind}_{fit.factors[i]}_{fit.factors[j]}.png"
            fig.savefig(p, dpi=100)
            written.append(p)
    return written
