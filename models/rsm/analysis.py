"""One response's surface analysis: the fit, its stationary point, the best setting in the region,
and the ridge when the stationary point does not answer the question; as text or a JSON-ready dict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from models.anova.splitplot import factors_constant_within, group_codes, whole_plot_groups
from models.rsm.canonical import Optimum, RidgePoint, StationaryPoint, optimum, ridge_path, stationary_point
from models.rsm.coding import model_matrix, term_names
from models.rsm.fit import SurfaceFit, fit_surface
from models.rsm.recognise import recognise
from models.rsm.splitplot import SurfaceSplitPlot, surface_split_plot
from models.summary import Summary, num, p_text
from sparkdl.numbers import finite


@dataclass(frozen=True, eq=False)
class SurfaceAnalysis:
    fit: SurfaceFit
    stationary: StationaryPoint
    goal: str
    best: Optimum
    ridge: tuple[RidgePoint, ...]  # empty when the stationary point is the wanted kind and inside
    split_plot: SurfaceSplitPlot | None = None  # the tests of the terms when the runs were in whole plots

    @property
    def ridge_reason(self) -> str:
        sp = self.stationary
        wanted = "maximum" if self.goal == "max" else "minimum"
        if sp.kind == wanted and sp.inside:
            return ""
        if sp.kind == "none":
            return "no unique stationary point"
        if not sp.inside:
            return f"the stationary point ({sp.kind}) is outside the region"
        return f"the stationary point is a {sp.kind}, not a {wanted}"

    def to_dict(self) -> dict:
        f = self.fit
        sp = self.stationary
        lof = f.lack_of_fit
        sp_tests = self.split_plot is not None  # then the least-squares t, F and p are not valid and not given
        return {
            "response": f.response,
            "factors": list(f.factors),
            "model": "full quadratic (second order)" + (" of log(response)" if f.transform == "log" else ""),
            "transform": f.transform,
            "n": f.n,
            "design": recognise(f.coded_x),
            "distinct_settings": f.n_points,
            "coefficients": {c.term: c.natural for c in f.coefficients},
            "coded_coefficients": {c.term: {"estimate": c.coded, "se": None if sp_tests else finite(c.se),
                                            "t": None if sp_tests else finite(c.t), "p": None if sp_tests else finite(c.p)}
                                   for c in f.coefficients},
            "coding": {fa: {"centre": c, "half_range": h} for fa, c, h in zip(f.factors, f.coding.centre,
                                                                              f.coding.half)},
            "region": {"lower_coded": list(f.region.lower), "upper_coded": list(f.region.upper),
                       "radius_coded": f.region.radius},
            "r2": finite(f.r2), "adj_r2": finite(f.adj_r2), "pred_r2": finite(f.pred_r2), "rmse": finite(f.rmse),
            "df_resid": f.df_resid,
            "warning": f.warning(),
            "anova": [{"term": r.term, "df": r.df, "sum_sq": r.sum_sq, "mean_sq": finite(r.mean_sq),
                       "F": None if sp_tests and r.term != "lack of fit" else finite(r.F),
                       "p": None if sp_tests and r.term != "lack of fit" else finite(r.p),
                       "pct_variation": finite(r.pct_variation)} for r in f.anova],
            "split_plot": self.split_plot.to_dict() if self.split_plot is not None else None,
            "lack_of_fit": {"F": finite(lof.F), "p": finite(lof.p), "df_lof": lof.df_lof, "df_pe": lof.df_pe,
                            "ss_lof": lof.ss_lof, "ss_pe": lof.ss_pe, "note": lof.note},
            "lack_of_fit_p": finite(lof.p),
            "stationary_point": {
                "kind": sp.kind,
                "coded": _named(f.factors, sp.coded),
                "natural": _named(f.factors, sp.natural),
                "predicted": finite(sp.predicted),
                "inside_region": sp.inside,
                "eigenvalues": list(sp.eigenvalues),
                "eigenvectors": [list(v) for v in sp.eigenvectors],
                "flat_directions": sp.flat_directions,
            },
            "goal": self.goal,
            "best_in_region": {"natural": _named(f.factors, self.best.natural), "predicted": self.best.predicted,
                               "at_stationary_point": self.best.at_stationary_point},
            "ridge": {"reason": self.ridge_reason,
                      "path": [{"radius_coded": p.radius, "natural": _named(f.factors, p.natural),
                                "predicted": p.predicted, "inside_region": p.inside} for p in self.ridge]},
        }

    #: The CSV's columns: one row per term of the quadratic (se, t and p empty under the split-plot tests).
    COLUMNS = ("term", "natural", "coded", "se", "t", "p")

    def summary(self) -> Summary:
        """The text (:meth:`text`), the coefficients as the CSV, :meth:`to_dict` as the JSON."""
        sp_tests = self.split_plot is not None
        rows = tuple((c.term, c.natural, c.coded, *((None, None, None) if sp_tests else (c.se, c.t, c.p)))
                     for c in self.fit.coefficients)
        return Summary(tuple(self.text()), self.COLUMNS, rows, self.to_dict())

    def text(self) -> list[str]:
        f = self.fit
        of = f"log({f.response})" if f.transform == "log" else f.response
        lines = [f"response surface of {of} on {', '.join(f.factors)}: full quadratic, "
                 f"{f.n} jobs at {f.n_points} distinct settings, residual df {f.df_resid}",
                 f"design: {recognise(f.coded_x)}"]
        lines += ["coding: " + "; ".join(f.coding.describe()), f"region: {f.region.describe()}", ""]
        if self.split_plot is not None:
            lines.append(f"{'term':<34} {'natural':>13} {'coded':>11}   (tests: the split-plot table below)")
            for c in f.coefficients:
                lines.append(f"{c.term:<34} {c.natural:>13.6g} {c.coded:>11.5g}")
            lines += ["", f"{'source':<24} {'df':>4} {'SS':>12} {'MS':>12}"]
            lines += [f"{r.term:<24} {r.df:>4} {r.sum_sq:>12.5g} {r.mean_sq:>12.5g}" for r in f.anova]
            lines += ["", *self.split_plot.text()]
        else:
            lines.append(f"{'term':<34} {'natural':>13} {'coded':>11} {'se':>10} {'t':>8} {'p':>9}")
            for c in f.coefficients:
                lines.append(f"{c.term:<34} {c.natural:>13.6g} {c.coded:>11.5g} {c.se:>10.4g} {c.t:>8.3g} "
                             f"{p_text(c.p):>9}")
            lines += ["", f"{'source':<24} {'df':>4} {'SS':>12} {'MS':>12} {'F':>9} {'p':>9}"]
            for r in f.anova:
                lines.append(f"{r.term:<24} {r.df:>4} {r.sum_sq:>12.5g} {r.mean_sq:>12.5g} {num(r.F):>9} {p_text(r.p):>9}")
        lines += ["", f"R^2 {f.r2:.4f}, adjusted {f.adj_r2:.4f}, predicted {num(f.pred_r2)}, root MSE {f.rmse:.4g}",
                  f"lack of fit: {f.lack_of_fit.note}"
                  + (f" (F = {f.lack_of_fit.F:.3g}, p = {p_text(f.lack_of_fit.p)})" if f.lack_of_fit.testable else ""),
                  f"stationary point: {self.stationary.describe(f.factors)}"]
        if f.warning():
            lines.append(f"caution: {f.warning()}")
        where = ", ".join(f"{fa} = {v:.4g}" for fa, v in zip(f.factors, self.best.natural))
        how = "the stationary point" if self.best.at_stationary_point else "searched over the region"
        lines.append(f"best ({self.goal}) in the region: {where}, predicted {self.best.predicted:.4g} ({how})")
        if self.ridge:
            lines += [f"ridge analysis ({self.goal}), because {self.ridge_reason}:"]
            for p in self.ridge:
                at = ", ".join(f"{fa} = {v:.4g}" for fa, v in zip(f.factors, p.natural))
                lines.append(f"  radius {p.radius:.3f}: {at} -> {p.predicted:.4g}"
                             + ("" if p.inside else " (outside the tested box)"))
        return lines


def analyse(frame: pd.DataFrame, response: str, factors: tuple[str, ...] | list[str], goal: str = "max",
            seed: int = 0, transform: str = "none", *, whole_plot_factors: Sequence[str] | None = None,
            whole_plot: str | None = None, block: str | None = None) -> SurfaceAnalysis:
    """The surface analysis; with ``whole_plot`` (a column) or ``whole_plot_factors`` the terms are tested by
    the split-plot REML fit (:mod:`models.rsm.splitplot`) instead of least squares."""
    fit = fit_surface(frame, response, tuple(factors), transform)
    sp = stationary_point(fit)
    best = optimum(fit, goal, seed)
    wanted = "maximum" if goal == "max" else "minimum"
    ridge = () if (sp.kind == wanted and sp.inside) else ridge_path(fit, goal)
    split = None
    if whole_plot is not None or whole_plot_factors is not None:
        split = _split_plot(frame, fit, whole_plot_factors, whole_plot, block)
    return SurfaceAnalysis(fit, sp, goal, best, ridge, split)


def _split_plot(frame: pd.DataFrame, fit: SurfaceFit, whole_plot_factors: Sequence[str] | None,
                whole_plot: str | None, block: str | None) -> SurfaceSplitPlot:
    groups, _ = whole_plot_groups(frame, whole_plot_factors or (), whole_plot, block)
    wpf = (factors_constant_within(frame, fit.factors, groups) if whole_plot_factors is None
           else tuple(whole_plot_factors))
    k = fit.k
    n_int = k * (k - 1) // 2
    parts = [("linear", 1, 1 + k), ("two-factor interaction", 1 + k, 1 + k + n_int),
             ("quadratic", 1 + k + n_int, 1 + 2 * k + n_int)]
    blocks = group_codes(frame[block]) if block else None
    return surface_split_plot(model_matrix(fit.coded_x), fit.y, term_names(fit.factors), parts, groups, wpf,
                              block, blocks)


def _named(names: tuple[str, ...], values: tuple[float, ...] | None) -> dict[str, float] | None:
    return None if values is None else dict(zip(names, values))


