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


def format_scaling_text(plan: "ScalingPlan") -> str:
    """The scaling design as text: its runs (weight, cost), the total against the budget, and the precision at the
    targets."""
    from models.power.scaling import ScalingPlan  # noqa: F401  (the type)

    parts = f", {plan.partitions} partitions" if plan.partitions else ""
    lines = [f"scaling design (Ernest's model, A-optimal): machines {plan.machines[0]}..{plan.machines[1]} x "
             f"{plan.cores_per_machine} core{'s' if plan.cores_per_machine != 1 else ''}, data fractions {plan.fractions[0]:.5g}..{plan.fractions[1]:.5g}{parts}; "
             f"{len(plan.runs)} of {plan.candidates} candidate runs chosen (weight above 0.3)", ""]
    head = ["run", "machines", "cores", "fraction", *(["partitions"] if plan.partitions else []), "weight", "cost"]
    body = [[str(i), str(r.machines), str(r.cores), f"{r.fraction:.5g}",
             *([str(r.partitions)] if plan.partitions else []), f"{r.weight:.2f}", f"{c:.3g} s"]
            for i, (r, c) in enumerate(zip(plan.runs, plan.costs_s), start=1)]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in [head, *body]]
    over = " (over it: a run of weight below 1 is run whole, as Ernest's rule runs every weight above 0.3)" \
        if plan.cost_s > plan.budget_s * (1 + 1e-6) else ""
    spent = f"{plan.cost_s:.4g} s" + (f" ({duration(plan.cost_s)})" if plan.cost_s >= 120 else "")
    lines += ["", f"cost: {spent} of cluster time, budget {plan.budget_s:.4g} s"
                  f"{over}; a run costs {plan.base_time_s:g} s x (fraction / {plan.fractions[0]:.5g}) / machines"]
    for t in plan.targets:
        where = f"at {t.machines:g} machines ({t.cores:g} cores) on the full data"
        if not math.isfinite(t.se_mean):
            lines.append(f"{where}: not identified (Ernest's four coefficients need four runs at three or more "
                         "machine counts): raise the budget")
            continue
        tail = (f"; {plan.level:.0%} prediction interval +-{t.half_width:.1%} of the predicted time at CV "
                f"{plan.cv:.1%} (t, {plan.df} df)" if t.half_width is not None and math.isfinite(t.half_width)
                else "; give --cv to see the interval" if plan.cv is None else "; no residual df: no interval")
        lines.append(f"{where}: standard error {t.se_mean:.3g} x the runs' CV (a new run: {t.se_run:.3g} x){tail}")
    return "\n".join(lines)


def format_scaling_csv(plan: "ScalingPlan") -> str:
    """One row per chosen run: machines, cores, fraction, partitions, weight, cost_s."""
    frame = pd.DataFrame([{"run": i, "machines": r.machines, "cores": r.cores, "fraction": r.fraction,
                           "partitions": r.partitions or None, "weight": r.weight, "cost_s": c}
                          for i, (r, c) in enumerate(zip(plan.runs, plan.costs_s), start=1)])
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue()
