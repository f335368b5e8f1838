"""The report's "Response surfaces and desirability" section, present when the design allows it.

It appears when every factor is numeric with at least three levels and the full quadratic is
estimable (Box-Behnken, central composite, face-centred designs, or a 3^k grid). For wall clock
time (minimize) and accuracy (maximize), whichever the table has, it shows the fitted full
quadratic, its lack of fit, the stationary point with its kind, contour plots, and the
Derringer-Suich compromise searched over the fitted surfaces with prediction intervals and
per-response sacrifice. It names the mistakes of the DoE-tool report that it avoids.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from report import html as h
from report.recover import RecoveredDesign
from models.desirability import Compromise, Goal, compromise, parse_goal
from models.desirability.confirm import steps_of
from models.desirability.tradeoff import tradeoff_front
from models.errors import ModelError
from models.results import measured_rows
from models.rsm import SurfaceAnalysis, analyse
from models.rsm.coding import n_terms
from models.rsm.plots import contour, pairs, surface
from models.rsm.recognise import recognise

#: response, goal, transform: job times are positive and their noise grows with them (a shared cluster
#: slows every job by a factor), so time is modelled on the log scale and never predicted negative.
RESPONSES = (("wall_clock_s", "min", "log"), ("accuracy", "max", "none"))
TRADEOFF_STEPS = 6
DOE_TOOL_MISTAKES = (
    "A Box-Behnken design is compared with what can fit a quadratic (a 3^k grid); the DoE-tool report compared its 15 runs "
    "with \"the 8 needed for a full factorial at two levels\", which cannot estimate curvature at all.",
    "The model is the full quadratic for every response, always; the DoE-tool report announced quadratic surfaces "
    "and then fitted linear models (R^2 0.05 and 0.02).",
    "Lack of fit is tested against pure error from the replicated centre points; the DoE-tool report had three centre points "
    "and never used them.",
    "The recommendation is searched over the fitted surfaces inside the region the design covers and comes with "
    "prediction intervals; the DoE-tool report recommended an observed run (\"from observed run #12\") without any interval.",
    "Sacrifice is measured against each response's best on its own surface, with the sign saying worse; the DoE-tool report "
    "compared against the best observed value and reported inconsistent figures (three different R^2 for one "
    "response, a \"predicted optimum\" at an observed corner of a linear model).",
)


def applicable(frame: pd.DataFrame, design: RecoveredDesign) -> str | None:
    """None when the section can be made, else why not (the report leaves the section out)."""
    if not design.factors:
        return "no factor varies"
    if not all(f.numeric and len(f.levels) >= 3 for f in design.factors):
        return "a response surface needs every factor numeric with at least three levels"
    if design.n_points < n_terms(len(design.factors)):
        return "fewer design points than quadratic terms"
    if not any(r in frame.columns for r, _, _ in RESPONSES):
        return "no wall_clock_s or accuracy column"
    return None


def render(raw: pd.DataFrame, design: RecoveredDesign, plots: bool = True) -> str | None:
    """The section's body, or None when the design does not allow it."""
    frame = measured_rows(raw)  # the ok rows, one span, plausible times (models.results, rules 1-2)
    if applicable(frame, design) is not None:
        return None
    factors = design.names
    parts = [h.para("Full second-order (quadratic) models fitted by least squares to the ok jobs, in coded units "
                    "and reported in natural units; read only inside the region the design covers (each factor's "
                    "tested range, no farther from the centre than the farthest design point)."),
             "<h3>What this section does that the DoE-tool report did not</h3>", h.bullets(DOE_TOOL_MISTAKES, "small")]
    analyses: list[SurfaceAnalysis] = []
    goals: list[Goal] = []
    for response, goal, transform in RESPONSES:
        if response not in frame.columns:
            continue
        data = frame[frame[response].notna()].reset_index(drop=True)
        if transform == "log" and (pd.to_numeric(data[response], errors="coerce") <= 0).any():
            transform = "none"
        try:
            a = analyse(data, response, factors, goal, transform=transform)
        except ModelError as exc:
            parts.append(h.notice(f"{response}: no surface ({exc})"))
            continue
        analyses.append(a)
        goals.append(parse_goal(f"{response}:{goal}:t={transform}", data[response].to_numpy(dtype=float)))
    best: Compromise | None = None
    if len(goals) >= 1:
        try:
            best = compromise(frame, goals, factors, steps=steps_of(frame))
        except ModelError as exc:
            parts.append(h.notice(f"no desirability optimum ({exc})"))
    for a in analyses:
        parts.append(_response(a, best, plots))
    if best is not None:
        parts.append(_desirability(best))
    return "\n".join(parts)


def _response(a: SurfaceAnalysis, best: Compromise | None, plots: bool) -> str:
    f = a.fit
    lof = f.lack_of_fit
    lof_text = (f"lack of fit F = {h.num(lof.F, 3)} on {lof.df_lof} and {lof.df_pe} df, p = {h.pval(lof.p)}: "
                f"{lof.note}" if lof.testable else f"lack of fit {lof.note}")
    fit_ok = f" Caution: {f.warning()}." if f.warning() else ""
    scale = (" Fitted on the log scale (times are positive and their noise grows with them): coefficients, "
             "ANOVA and R^2 are for log time; predictions and plots are back-transformed." if f.transform == "log"
             else "")
    parts = [f"<h3>{h.esc(f.response)} ({'minimize' if a.goal == 'min' else 'maximize'})</h3>",
             h.para(f"{f.n} jobs at {f.n_points} distinct settings ({recognise(f.coded_x)}); "
                    f"R^2 = {h.num(f.r2)}, adjusted {h.num(f.adj_r2)}, "
                    f"predicted {h.num(f.pred_r2)}; root MSE {h.num(f.rmse)}; {lof_text}.{scale}{fit_ok}"),
             h.para(f"Stationary point: {a.stationary.describe(f.factors)}.")]
    where = ", ".join(f"{fa} = {h.num(v)}" for fa, v in zip(f.factors, a.best.natural))
    how = "the stationary point" if a.best.at_stationary_point else f"searched, because {a.ridge_reason}"
    parts.append(h.para(f"Best {f.response} alone in the region: {h.num(a.best.predicted)} at {where} ({how})."))
    rows = [[h.tcell(c.term), h.ncell(c.natural), h.ncell(c.coded), h.ncell(c.se), h.ncell(c.p, h.pval)]
            for c in f.coefficients]
    parts.append(h.table(["term", "natural units", "coded", "SE (coded)", "p"], rows,
                         table_id=f"rsm-coef-{f.response}", numeric_headers=[False, True, True, True, True],
                         caption="coefficients; coded: each factor scaled to -1..+1 over its design levels"))
    arows = [[h.tcell(r.term), h.ncell(r.df), h.ncell(r.sum_sq), h.ncell(r.mean_sq), h.ncell(r.F), h.ncell(r.p, h.pval)]
             for r in f.anova]
    parts.append(h.table(["source", "df", "SS", "MS", "F", "p"], arows, table_id=f"rsm-anova-{f.response}",
                         numeric_headers=[False] + [True] * 5,
                         caption="sequential sums of squares; residual split into lack of fit and pure error"))
    inside = [p for p in a.ridge if p.inside]
    if inside:
        rrows = [[h.ncell(p.radius)] + [h.ncell(v) for v in p.natural] + [h.ncell(p.predicted)] for p in inside]
        left = len(a.ridge) - len(inside)
        parts.append(h.table(["radius (coded)", *f.factors, f"fitted {f.response}"], rrows,
                             table_id=f"rsm-ridge-{f.response}", numeric_headers=[True] * (len(f.factors) + 2),
                             caption=f"ridge analysis: the {a.goal} of the fitted surface on spheres about the centre"
                                     + (f"; {left} larger sphere(s) leave the tested box and are not shown" if left
                                        else "")))
    if plots:
        mark = np.array(best.natural) if best is not None else None
        held = "at the recommended setting" if mark is not None else "at their centre"
        figs = [h.figure(contour(f, i, j, hold=mark, mark=mark, mark_label="desirability optimum"),
                         f"contour {f.response} {f.factors[i]} {f.factors[j]}",
                         f"Fitted {f.response} over {f.factors[i]} and {f.factors[j]}, the other factors {held} "
                         "(a slice through the recommendation); blank outside the region; black dots design points "
                         "at those values, hollow ones projected; red star the overall recommendation.")
                for i, j in pairs(f.k)]
        i, j = pairs(f.k)[0]
        figs.append(h.figure(surface(f, i, j), f"surface {f.response}",
                             f"The fitted {f.response} surface over {f.factors[i]} and {f.factors[j]} with the jobs "
                             "run at the centre of the other factors (red)."))
        parts.append(h.figure_row(figs))
    return "\n".join(parts)


def _tradeoff(c: Compromise) -> str:
    """What each step of the maximized response costs in the minimized one, on the fitted surfaces."""
    if sorted(r.goal.goal for r in c.responses) != ["max", "min"]:
        return ""
    keep, other, points = tradeoff_front(c, TRADEOFF_STEPS)
    rows, prev = [], None
    for p in points:
        if not p.reachable:
            continue
        rows.append([h.ncell(p.floor), h.ncell(p.best), h.ncell(p.best - prev if prev is not None else None)]
                    + [h.ncell(v) for v in p.natural])
        prev = p.best
    return "<h3>What more accuracy costs</h3>" + h.table(
        [f"{keep} at least", f"lowest fitted {other}", "extra for this step", *c.factors], rows,
        table_id="tradeoff", numeric_headers=[True] * (3 + len(c.factors)),
        caption=f"the fastest setting in the region whose fitted {keep} reaches each floor (from the surfaces, "
                "not the observed runs)")


def _desirability(c: Compromise) -> str:
    at = ", ".join(f"{f} = {h.num(v)}" for f, v in c.setting().items())
    parts = ["<h3>Desirability: the best compromise</h3>",
             h.para("Derringer-Suich desirability: each response scaled to 0..1 over its observed range (time: 1 at "
                    "the fastest job, 0 at the slowest; accuracy: 0 at the worst, 1 at the best), combined by the "
                    "geometric mean, and maximized over the fitted surfaces inside the region."),
             h.para(f"Recommended: {at}; overall desirability D = {h.num(c.D, 3)}"
                    + (f" (rounded to integers: {', '.join(c.rounded)})" if c.rounded else "") + ".")]
    rows = []
    for r in c.responses:
        lo, hi = r.interval.prediction
        rows.append([h.tcell(r.goal.response), h.tcell(r.goal.goal), h.ncell(r.predicted),
                     h.tcell(f"{h.num(lo)} .. {h.num(hi)}"), h.ncell(r.desirability), h.ncell(r.best_alone),
                     h.ncell(r.sacrifice), h.ncell(r.best_observed), h.ncell(r.r2)])
    n = c.responses[0].interval.new_jobs if c.responses else 0
    parts.append(h.table(["response", "goal", "predicted", f"95% PI, mean of {n} jobs", "desirability",
                          "best alone (fitted)", "sacrifice", "best observed", "R^2"], rows, table_id="desirability",
                         numeric_headers=[False, False, True, False, True, True, True, True, True],
                         caption="at the recommended setting; sacrifice = how much worse than the response's own "
                                 "best in the region (0 = none)"))
    parts.append(_tradeoff(c))
    if c.best_observed_runs:
        o = c.best_observed_runs[0]
        parts.append(h.para(f"For comparison, the best observed run has D = {h.num(o.desirability, 3)} from its "
                            "measured values; a single run carries its noise, the fitted surface averages it out.",
                            "small"))
    factors = ",".join(c.factors)
    parts.append(h.para("Confirm before trusting it: sparkdl desirability RESULTS --factors "
                        f"{factors} --response wall_clock_s:min:t=log --response accuracy:max --confirm confirm.csv, "
                        "then sparkdl submit confirm.csv; the confirmation jobs' mean should fall inside "
                        "the prediction interval above.", "small"))
    return "\n".join(parts)
