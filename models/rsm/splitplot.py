"""Split-plot tests of a response surface's terms: the same REML fit as ``models.anova``'s split-plot ANOVA.

When the runs were grouped into whole plots (hard-to-change factors held for several runs), the
ordinary least-squares t and F tests of the surface treat them as fully randomized. Here the full
quadratic (plus any blocks, as fixed effects) is refitted by REML with a random intercept per whole
plot (:func:`models.anova.splitplot.reml_fit`), and each coefficient and each group of terms (linear,
two-factor interaction, quadratic) is tested by a Wald test with its containment df: whole-plot
error df for a term constant within every whole plot, residual df for any other. A coefficient
whose stratum has no error df gets no p-value, and a line saying why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from sparkdl.numbers import json_safe
from models.anova.splitplot import reml_fit
from models.anova.splitplot_result import DF_METHOD, DF_METHOD_TEXT, SUBPLOT, WHOLE_PLOT
from models.summary import num, p_text


@dataclass(frozen=True)
class TermTest:
    """One coefficient (``kind="coefficient"``, t test) or group of terms (``kind="group"``, F test)."""

    term: str
    kind: str
    stratum: str
    estimate: float | None
    se: float | None
    df_num: int
    df_den: int | None
    statistic: float | None
    p: float | None
    note: str | None = None


@dataclass(frozen=True)
class SurfaceSplitPlot:
    """The split-plot tests of a surface, the error df of both strata and the variance components."""

    whole_plots: int
    whole_plot_factors: tuple[str, ...]
    block: str | None
    tests: tuple[TermTest, ...]
    df_whole_plot: int
    df_residual: int
    whole_plot_variance: float
    residual_variance: float
    untestable: tuple[str, ...]

    def to_dict(self) -> dict:
        return json_safe({
            "whole_plots": self.whole_plots, "whole_plot_factors": list(self.whole_plot_factors), "block": self.block,
            "df_method": DF_METHOD, "df_method_text": DF_METHOD_TEXT,
            "tests": [asdict(t) for t in self.tests],
            "strata": {"whole_plot_error_df": self.df_whole_plot, "residual_df": self.df_residual},
            "variance_components": {"whole_plot": self.whole_plot_variance, "residual": self.residual_variance},
            "untestable": list(self.untestable),
        })

    def text(self) -> list[str]:
        lines = [f"split-plot tests ({self.whole_plots} whole plots; whole-plot factors: "
                 f"{', '.join(self.whole_plot_factors) or 'none'}"
                 + (f"; blocks {self.block}, fixed" if self.block else "")
                 + "): REML with a random intercept per whole plot, Wald tests",
                 f"denominator df: {DF_METHOD_TEXT}",
                 f"{'term':<34} {'stratum':<10} {'estimate':>11} {'se':>10} {'df':>7} {'t or F':>8} {'p':>9}"]
        for t in self.tests:
            df = f"{t.df_num},{t.df_den}" if t.kind == "group" else f"{t.df_den}"
            lines.append(f"{t.term:<34} {t.stratum:<10} {num(t.estimate):>11} {num(t.se):>10} "
                         f"{df if t.df_den is not None else '-':>7} {num(t.statistic):>8} {p_text(t.p):>9}")
        lines.append(f"error df: whole-plot {self.df_whole_plot}, residual {self.df_residual}; variance components "
                     f"(REML): whole plot {self.whole_plot_variance:.4g}, residual {self.residual_variance:.4g}")
        lines += [f"cannot be tested: {u}" for u in self.untestable]
        return lines


def _block_columns(block_codes: np.ndarray | None) -> np.ndarray:
    """Sum-to-zero columns of the block (levels - 1 of them); none without blocks."""
    if block_codes is None:
        return np.zeros((0, 0))
    levels = int(block_codes.max()) + 1
    cols = np.zeros((len(block_codes), levels - 1))
    for j in range(levels - 1):
        cols[:, j] = (block_codes == j).astype(float) - (block_codes == levels - 1).astype(float)
    return cols


def surface_split_plot(x: np.ndarray, y: np.ndarray, names: Sequence[str], groups: Sequence[tuple[str, int, int]],
                       whole_plots: np.ndarray, whole_plot_factors: Sequence[str], block: str | None = None,
                       block_codes: np.ndarray | None = None) -> SurfaceSplitPlot:
    """Split-plot tests of the model matrix ``x`` (intercept first; ``names`` its columns; ``groups`` as
    (name, first column, stop)) with runs grouped by ``whole_plots`` and optional fixed blocks."""
    blocks = _block_columns(block_codes)
    full = np.hstack([x, blocks]) if blocks.size else x
    fit = reml_fit(full, y, whole_plots)
    tests, untestable = [], []
    se = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
    if blocks.size:
        groups = [*groups, (f"block ({block})", x.shape[1], full.shape[1])]
    for j, name in enumerate(names):
        if j == 0:
            continue
        F, _, den = fit.test([j])
        stratum = WHOLE_PLOT if bool(fit.whole_plot_columns[j]) else SUBPLOT
        if den <= 0:
            line = f"{name}: no whole-plot error df, its effect is confounded with drift between whole plots"
            untestable.append(line)
            tests.append(TermTest(name, "coefficient", stratum, float(fit.beta[j]), None, 1, None, None, None, line))
            continue
        t = math.copysign(math.sqrt(F), float(fit.beta[j]))
        tests.append(TermTest(name, "coefficient", stratum, float(fit.beta[j]), float(se[j]), 1, den, t,
                              float(stats.f.sf(F, 1, den))))
    for name, start, stop in groups:
        if stop <= start:
            continue
        F, q, den = fit.test(range(start, stop))
        stratum = WHOLE_PLOT if bool(np.all(fit.whole_plot_columns[start:stop])) else SUBPLOT
        if den <= 0:
            tests.append(TermTest(name, "group", stratum, None, None, q, None, None, None,
                                  "no whole-plot error df: not testable"))
            continue
        tests.append(TermTest(name, "group", stratum, None, None, q, den, F, float(stats.f.sf(F, q, den))))
    return SurfaceSplitPlot(fit.n_groups, tuple(whole_plot_factors), block, tuple(tests), fit.df_whole_plot,
                            fit.df_residual, fit.sigma2_w, fit.sigma2, tuple(untestable))
