"""Text and CSV renderings of a power plan (JSON is ``PowerPlan.to_dict``)."""

from __future__ import annotations

import io
import math

import pandas as pd

from models.power.result import FactorPower, PowerPlan


def _num(v: float | None, fmt: str = "{:.3g}") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return fmt.format(v)


def duration(seconds: float | None) -> str:
    """``5400`` -> ``"1.5 h"``; ``-`` when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _detectable(f: FactorPower) -> str:
    if f.detectable_pct is not None:
        return f"{f.detectable_pct:.3g} %"
    return _num(f.detectable_units, "{:.4g}")


def format_table(plan: PowerPlan) -> str:
    """One line per factor: power now, detectable effect now, replicates needed, their power and time."""
    head = ["factor", "test", "df", "power now", "detectable now", "replicates", "power then", "cluster time"]
    body = [[f.factor, f.stratum, f"{f.df_num:g}/{f.df_den:g}", _num(f.power, "{:.3f}"), _detectable(f),
             str(f.replicates) if f.replicates is not None else f">{plan.max_replicates}",
             _num(f.replicate_power, "{:.3f}"), duration(f.cluster_s)] for f in plan.factors]
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     for r in [head] + body)


def format_text(plan: PowerPlan) -> str:
    """The plan: what was assumed, the table, and the recommendation."""
    d, n = plan.design, plan.noise
    scale = (f"log scale: the effect is a ratio, delta = log(1 + {plan.effect.text}) = {plan.delta:.4g}"
             if plan.scale == "log" else f"linear scale: delta = {plan.delta:.4g}"
             + ("" if n.in_units else " (a fraction of the mean)"))
    noise = f"noise: {n.source}: SD {n.sigma:.4g}" + (f" on {n.df:g} df" if n.df is not None else "")
    noise += f" (CV {100 * n.cv:.3g} %)" if math.isfinite(n.cv) else ""
    lines = [
        f"design: {d.source}: {d.runs} runs at {d.points} design points "
        f"({d.replicates_min}" + (f"-{d.replicates_max}" if d.replicates_max != d.replicates_min else "")
        + " per point)",
        f"model: {plan.response} ~ {d.terms} ({d.parameters} parameters)",
        noise,
    ]
    if n.whole_plot_sigma is not None:
        lines.append(f"whole plots: {', '.join(d.whole_plot_factors)} set once per whole plot; whole-plot SD "
                     f"{n.whole_plot_sigma:.4g}; {d.whole_plots} whole plots now, {d.whole_plots_per_replicate} per "
                     "replicate of the design")
    lines += [
        f"effect: {plan.effect.text} between each factor's extreme levels ({scale})",
        f"test: Type II F test of each main effect at alpha = {plan.alpha:g}; target power {plan.target_power:g}",
        "",
        format_table(plan),
        "",
        "power now / detectable now: the design as it is; replicates: copies of every design point needed to "
        f"reach power {plan.target_power:g}; "
        + (f"cluster time: those replicates times the pilot's mean {plan.time_column} per design point"
           if plan.time_column else "cluster time: needs a pilot with run times (wall_clock_s or elapsed_s)"),
    ]
    if plan.recommended_replicates is not None:
        time = (f", about {duration(plan.recommended_cluster_s)} of cluster time "
                f"({plan.recommended_replicates * d.points} runs)" if plan.recommended_cluster_s is not None
                else f" ({plan.recommended_replicates * d.points} runs; no pilot run times, so the cluster time is "
                "not known)")
        lines.append(f"recommended: {plan.recommended_replicates} replicate(s) of each of the {d.points} design "
                     f"points detects {plan.effect.text} for every factor{time}")
    lines += [f"note: {x}" for x in plan.notes]
    return "\n".join(lines)


def format_csv(plan: PowerPlan) -> str:
    """The per-factor rows as CSV."""
    rows = pd.DataFrame([plan.to_dict()["factors"][i] for i in range(len(plan.factors))])
    buf = io.StringIO()
    rows.to_csv(buf, index=False)
    return buf.getvalue()
