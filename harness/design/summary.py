"""Plain-text summaries of a design and of its execution order, for the CLI and reports."""

from __future__ import annotations

from harness.design._base import Design
from harness.design.ccd import CentralComposite
from harness.design.schedule import Schedule


def describe(design: Design) -> list[str]:
    """Title, factors, generators, defining relation, resolution and alias structure."""
    lines = [design.title()]
    lines += ["factors: " + ", ".join(f.label() for f in design.factors.factors)]
    if design.factors.constants:
        lines += ["constants: " + ", ".join(f"{n}={v}" for n, v in design.factors.constants)]
    if isinstance(design, CentralComposite):
        return lines + design.lines()
    if design.kind == "box-behnken":
        lines += ["levels are low, middle, high; a quadratic response surface, not a regular fraction: no alias table"]
        return lines
    if design.generators:
        lines += ["generators: " + ", ".join(map(str, design.generators))]
        lines += ["defining relation: I = " + " = ".join(map(str, design.defining_relation))]
    lines += [f"resolution: {design.resolution_label()}"]
    if not design.aliases:
        lines += ["aliases: none, every effect is estimable on its own"]
        return lines
    lines += ["alias structure (main effects and two-factor interactions):"]
    lines += [f"  {chain}" for chain in design.aliases]
    lines += _confounding(design)
    return lines


def _confounding(design: Design) -> list[str]:
    """Which main effects and two-factor interactions share an estimate with each other."""
    mains, twos = [], []
    for chain in design.aliases:
        members = [chain.effect, *map(str, chain.low_order_aliases)]
        if len(members) < 2:
            continue
        if len(chain.effect) == 1 or any(len(m.lstrip("-")) == 1 for m in members):
            mains.append(" = ".join(members))
        pairs = [m for m in members if len(m.lstrip("-")) == 2]
        if len(pairs) >= 2:
            twos.append(" = ".join(pairs))
    return [
        "main effects aliased with main effects or 2FIs: " + "; ".join(mains)
        if mains
        else "main effects are clear of other main effects and of two-factor interactions",
        "two-factor interactions aliased with each other: " + "; ".join(twos)
        if twos
        else "two-factor interactions are clear of each other",
    ]


def describe_schedule(plan: Schedule) -> list[str]:
    """Job count, how the order was made, and the split-plot structure with the rescales it saves."""
    d = plan.design
    lines = [f"jobs: {len(plan.jobs)} ({d.n_runs} runs x {plan.replications} replicates)"]
    if not plan.randomized:
        lines += ["order: standard order, not randomized"]
    else:
        lines += [f"order: randomized with seed {plan.seed}"]
    if not plan.split_plot:
        return lines
    names = ", ".join(plan.whole_plot_factors)
    combos = len(set(plan.whole_plot_levels()))
    wp, df = plan.n_whole_plots, plan.whole_plot_error_df
    lines += [
        f"split-plot: hard-to-change {names}; {wp} whole plots ({combos} level combination(s) x "
        f"{plan.replications} replicate(s)), subplots in random order inside each",
        f"whole-plot error df: {df} ({wp} whole plots - {combos} level combinations); {names} tested against it",
    ]
    changes = plan.cluster_changes()
    if plan.randomized:
        random = plan.expected_random_changes()
        lines += [f"cluster rescales or restarts: {changes} (one per whole-plot boundary), against about "
                  f"{random:.0f} under complete randomization ({max(random - changes, 0):.0f} saved)"]
    else:
        lines += [f"cluster rescales or restarts: {changes} (one per whole-plot boundary)"]
    if df <= 0:
        lines += [f"warning: whole-plot error df is 0: one whole plot per level of {names}, so its effect is "
                  "confounded with drift and cannot be tested; give --replications 2 or more"]
    return lines
