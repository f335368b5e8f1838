"""Plain sentences on what the data say, each generated from the numbers shown in the report."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from report import html as h
from report.analysis import Best, Queueing
from report.campaign import CampaignData
from report.recover import RecoveredDesign
from models.anova import RESIDUAL, AnovaResult, AnovaRow, term_parts
from models.anova.analysis import Analysis, ModelChoice
from models.anova.splitplot_result import SplitPlotResult
from models.drift import DriftResult
from models.results import ok_mask


def _name(term: str) -> str:
    parts = [p.removeprefix("C(").removesuffix(")") for p in term_parts(term)]
    return parts[0] if len(parts) == 1 else "the " + " x ".join(parts) + " interaction"


def _list(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def failure_reasons(raw: pd.DataFrame) -> list[tuple[str, str, int]]:
    """(status, reason, count) of the rows whose status is not ok, most frequent first."""
    if "status" not in raw.columns:
        return []
    bad = raw[~ok_mask(raw)]
    if bad.empty:
        return []
    reason = bad["reason"].fillna("(no reason recorded)").astype(str) if "reason" in bad.columns else pd.Series(
        "(no reason recorded)", index=bad.index)
    grouped = pd.DataFrame({"status": bad["status"].astype(str), "reason": reason}).value_counts()
    return [(s, r, int(n)) for (s, r), n in grouped.items()]


def jobs_sentence(campaign: CampaignData) -> str:
    raw, n_read = campaign.raw, len(campaign.raw)
    kept = len(campaign.frame)
    if n_read == 0:
        return "The results table has no rows yet: no job has finished, so there is nothing to analyse."
    reasons = failure_reasons(raw)
    if kept == 0:
        if reasons:
            s, r, n = reasons[0]
            return (f"None of the {n_read} jobs produced a usable result ({sum(n for *_, n in reasons)} not ok; "
                    f"most common: {n} {s}, '{r}'), so there is nothing to analyse yet: the sections below show "
                    "the design and the failures.")
        why = campaign.cost_problem or "no job has a finite cost"
        return f"None of the {n_read} rows can be analysed: {why}."
    text = f"{kept} of {n_read} jobs entered the analysis"
    if campaign.table is not None and campaign.table.dropped:
        why = "; ".join(f"{n} {reason}" for reason, n in campaign.table.dropped.items())
        text += f"; left out: {why}"
    if reasons:
        listed = "; ".join(f"{n} {s}: '{r}'" for s, r, n in reasons[:3])
        more = f"; and {len(reasons) - 3} other reason(s)" if len(reasons) > 3 else ""
        text += f". Failures by reason: {listed}{more}"
    return text + "."


def _lmg_together(result: AnovaResult, terms: list[AnovaRow]) -> str:
    """The terms' LMG shares together, when computed: shares that do add up."""
    sh = result.shares
    if sh is None or not sh.computed:
        return ""
    total = sum(sh.share(r.term) for r in terms)
    return f"; their LMG shares, which do add up, are together {h.pct(total)}% of the variation"


def effect_sentences(result: AnovaResult, choice: ModelChoice | None = None) -> list[str]:
    rows = [r for r in result.rows if r.term != RESIDUAL]
    if not rows:
        return []
    resp = result.summary.response
    tested = result.summary.df_resid > 0
    top = max(rows, key=lambda r: r.pct_variation if math.isfinite(r.pct_variation) else -1)
    out = []
    parts = term_parts(top.term)
    aliased = choice.partners_of(parts[0]) if choice is not None and len(parts) == 1 else ()
    also = (f" (confounded with {_list(list(aliased))}, left out of the model: the effect may belong to "
            f"{'either' if len(aliased) == 1 else 'any of them'})" if aliased else "")
    s = f"The largest effect is {_name(top.term)}{also}: it explains {h.pct(top.pct_variation)}% of the variation in {resp}"
    if tested and math.isfinite(top.p):
        s += f" (F = {h.num(top.F)}, p = {h.pval(top.p)}, " + (
            "significant" if top.p < result.alpha else "not significant") + f" at alpha = {result.alpha:g})"
    if top.effect is not None and len(parts) == 1 and parts[0] in result.data.columns:
        levels = sorted(result.data[parts[0]].unique())
        direction = "raises" if top.effect > 0 else "lowers"
        s += (f"; going from {parts[0]} = {h.level(levels[0])} to {h.level(levels[-1])} {direction} the mean "
              f"{resp} by {h.num(abs(top.effect))}")
    out.append(s + ".")
    if tested:
        sig = [r for r in rows if math.isfinite(r.p) and r.p < result.alpha]
        if sig:
            share = sum(r.pct_variation for r in sig)
            additive = abs(sum(r.pct_variation for r in result.rows) - 100.0) < 0.01
            together = (f" (together {h.pct(share)}% of the variation)" if additive else
                        " (the design is unbalanced here, so the terms' sums of squares overlap and their shares "
                        "do not add up" + _lmg_together(result, sig) + ")")
            out.append(f"Significant at alpha = {result.alpha:g}: {_list([_name(r.term) for r in sig])}{together}.")
        else:
            out.append(f"No term is significant at alpha = {result.alpha:g}.")
        resid = next((r for r in result.rows if r.term == RESIDUAL), None)
        sm = result.summary
        fit = (f"The model explains R^2 = {100 * sm.r_squared:.1f}% of the variation (adjusted "
               f"{h.num(sm.adj_r_squared, 3)}, predicted {h.num(sm.pred_r_squared, 3)})")
        if resid is not None:
            fit += (f"; the residual, {h.pct(resid.pct_variation)}%, is variation the model does not explain "
                    "(replicate-to-replicate noise and any terms left out)")
        out.append(fit + ".")
    else:
        le = result.lenth
        if le is not None and math.isfinite(le.pse):
            active = _list(list(le.active)) if le.active else "none"
            out.append(f"With no residual degrees of freedom there are no p-values; Lenth's method "
                       f"(PSE = {h.num(le.pse)}, margin of error {h.num(le.margin_of_error)}) finds active: {active}.")
        else:
            out.append("With no residual degrees of freedom there are no F tests or p-values; replicate the "
                       "runs or run more design points to test the effects.")
    return out


def assumption_sentences(analysis: Analysis) -> list[str]:
    diag = analysis.diagnostics
    if diag is None or analysis.anova is None or analysis.anova.summary.df_resid <= 0:
        return []
    failed = [c for c in diag.checks if c.holds is False and c.name != "VIF"]
    if not failed:
        return ["No assumption check rejects its assumption (normality, equal variances, constant variance, "
                "collinearity), so the F-test p-values can be read at face value."]
    named = [f"{c.assumption} ({c.name} p = {h.pval(c.p)})" for c in failed]
    out = [f"Violated: {_list(named)}. The F-test p-values above are therefore approximate and can be "
           "too small or too large; effects with very small p and a large share of variation are still "
           "clearly real, borderline ones are not settled."]
    cmp_ = analysis.log_comparison
    if cmp_ is not None:
        changed = []
        for b, a in cmp_.checks:
            if b.holds is False and a.holds is not False and math.isfinite(a.p):
                changed.append(f"{a.assumption} now holds (p = {h.pval(a.p)})")
            elif b.holds is False and a.holds is False:
                changed.append(f"{a.assumption} is still violated (p = {h.pval(a.p)})")
        flips = [t for t in cmp_.terms if (t.p_before < cmp_.alpha) != (t.p_after < cmp_.alpha)]
        s = (f"Analysing {cmp_.after} instead changes R^2 from {h.num(cmp_.r_squared[0], 3)} to "
             f"{h.num(cmp_.r_squared[1], 3)}")
        if changed:
            s += "; " + "; ".join(changed)
        if flips:
            s += "; terms whose significance changes: " + _list([_name(t.term) for t in flips])
        else:
            s += "; no term changes significance"
        out.append(s + ".")
    return out


def best_sentence(best: Best | None) -> str | None:
    if best is None:
        return None
    where = ", ".join(f"{k} = {h.level(v)}" for k, v in best.point.items())
    s = f"Lowest mean {best.measure}: {h.num(best.mean)} over {best.n} job(s) at {where}"
    extra = []
    if "accuracy" in best.others:
        extra.append(f"mean accuracy {h.num(best.others['accuracy'])}")
    if "wall_clock_s" in best.others:
        extra.append(f"mean wall clock {h.num(best.others['wall_clock_s'])} s")
    if extra:
        s += " (" + ", ".join(extra) + ")"
    elif best.measure == "cost":
        s += " (the table has no wall clock or accuracy columns)"
    return s + "."


def queue_sentence(q: Queueing | None) -> str | None:
    if q is None:
        return None
    pick = next(((u, plans) for u, plans in q.plans if abs(u - 0.8) < 1e-9), q.plans[-1])
    u, plans = pick
    one = plans[0]
    unit = "s" if q.sizes.quantity == "time" else "cost units"
    return (f"Treating each job as a service of the measured mean size ({h.num(q.sizes.mean)} {unit}, scv "
            f"{h.num(q.sizes.scv, 3)}), at {100 * u:.0f}% utilization one server's mean response time is "
            f"{h.num(one.markovian.ET)} {unit} if sizes were exponential (M/M/1) and {h.num(one.general.ET)} "
            f"{unit} with the measured variability (M/G/1): {h.num(one.general.ET / q.sizes.mean, 3)} times a job's "
            "own size.")


def design_sentence(design: RecoveredDesign, result: AnovaResult | None) -> str | None:
    if design.resolution is not None and design.resolution <= 2:
        return ("Some main effects are aliased with each other in this design (resolution II), so their effects "
                "cannot be told apart; the model keeps one of each aliased set.")
    if result is not None and result.summary.aliased:
        pairs = [f"{a.term} = {' + '.join(a.aliased_with)}" for a in result.summary.aliased[:4]]
        more = "" if len(result.summary.aliased) <= 4 else f" and {len(result.summary.aliased) - 4} more"
        return (f"Some two-factor interactions are aliased ({'; '.join(pairs)}{more}): the model estimates one of "
                "each aliased set, and its effect may belong to any member.")
    return None


def split_plot_sentences(sp: SplitPlotResult) -> list[str]:
    """What the split-plot ANOVA says: which terms are significant in their stratum, and which cannot be tested."""
    wp = sp.whole_plots
    factors = ", ".join(wp.factors) or "none"
    tested = [r for r in sp.rows if r.role != "block" and r.p is not None]
    sig = [r for r in tested if r.p < sp.alpha]
    out = [f"The runs ran in {wp.count} whole plots, so the hard-to-change factors ({factors}) are tested against "
           "the variation between whole plots (a split-plot ANOVA), not as if every run had been randomized."]
    if sig:
        out.append("Significant at alpha = " + f"{sp.alpha:g}: " + _list(
            [f"{_name(r.term)} ({r.stratum}: F = {h.num(r.F)} on {r.df_num} and {r.df_den} df, p = {h.pval(r.p)})"
             for r in sig]) + ".")
    elif tested:
        out.append(f"No term is significant at alpha = {sp.alpha:g} in the split-plot ANOVA.")
    out += [f"{u[0].upper()}{u[1:]}: it cannot be tested." for u in sp.untestable]
    return out


def drift_sentence(drift: DriftResult | None) -> str | None:
    if drift is None or not drift.tested or not drift.significant:
        return None
    k, per = drift.per
    return (f"The response drifted during the campaign: {h.num(k * drift.slope_per_h)} {per} (p = {h.pval(drift.p)}); "
            "see the drift section before trusting effects that changed with time.")


def findings(campaign: CampaignData, design: RecoveredDesign, analysis: Analysis, best: Best | None,
             queue: Queueing | None) -> list[str]:
    """The sentences of the "What the data say" section, in reading order."""
    out = [jobs_sentence(campaign)]
    if analysis.split_plot is not None:
        out += split_plot_sentences(analysis.split_plot)
        out += assumption_sentences(analysis)
    elif analysis.anova is not None:
        out += effect_sentences(analysis.anova, analysis.choice)
        out += assumption_sentences(analysis)
    elif len(campaign.frame):
        out.append(analysis.unavailable or "No ANOVA was fitted.")
    for s in (design_sentence(design, analysis.anova), drift_sentence(analysis.drift), best_sentence(best),
              queue_sentence(queue)):
        if s:
            out.append(s)
    return out
