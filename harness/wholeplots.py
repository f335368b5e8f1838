"""Whole plots of a campaign: which runs share one setting of the cluster, and in what order they run.

A hard-to-change factor (``nodes``: a rescale; ``runtime``, ``jvm``: a restart) is set once per
*whole plot* and its runs (the subplots) run inside it. A design from ``harness.design`` says which
whole plot each row belongs to (its ``whole_plot`` column). A design without that column whose rows
use more than one runtime or JVM gets whole plots from the harness: one per replicate and
(runtime, jvm), in the order the design first uses them, so that each runtime has as many whole
plots as the design has replicates, interleaved, never one block per runtime.

The campaign runs whole plots one after another and resets the cluster between two of them
(:func:`needs_reset`): a new whole plot starts a newly set cluster even when its levels equal the
previous plot's, so that whole plots are independent settings, as the split-plot analysis assumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from sparkdl.runspec import RunSpec

RuntimeOf = Callable[[RunSpec], tuple[str, str]]


@dataclass(frozen=True)
class Planned:
    """A run and the whole plot it belongs to (None: the campaign has no whole plots)."""

    spec: RunSpec
    whole_plot: int | None


def plan_whole_plots(specs: Sequence[RunSpec], runtime_of: RuntimeOf) -> list[Planned]:
    """Every spec in the order it runs, with its whole plot (see the module docstring).

    Computed on the whole design (not only the runs left), so a resumed campaign keeps its whole plots.
    """
    if any(s.get("whole_plot") is not None for s in specs):
        return _grouped([(s, _design_plot(s)) for s in specs])
    settings = {runtime_of(s) for s in specs}
    if len(settings) < 2:
        return [Planned(s, None) for s in specs]
    numbers: dict[tuple[int, str, str], int] = {}
    keyed = []
    for s in specs:
        key = (s.replicate, *runtime_of(s))
        numbers.setdefault(key, len(numbers) + 1)
        keyed.append((s, numbers[key]))
    return _grouped(keyed)


def _design_plot(spec: RunSpec) -> int:
    value = spec.get("whole_plot")
    return int(value) if isinstance(value, int) else 0  # a row without one (0) is a whole plot of its own kind


def _grouped(keyed: Sequence[tuple[RunSpec, int]]) -> list[Planned]:
    """The runs grouped by whole plot, the plots in order of first appearance, the design's order inside."""
    first: dict[int, int] = {}
    for spec, plot in keyed:
        first.setdefault(plot, len(first))
    ordered = sorted(range(len(keyed)), key=lambda i: (first[keyed[i][1]], i))
    return [Planned(keyed[i][0], keyed[i][1]) for i in ordered]


def needs_reset(previous: Planned | None, current: Planned) -> bool:
    """True when ``current`` starts a new whole plot after another one ran in this process."""
    return previous is not None and current.whole_plot is not None and previous.whole_plot != current.whole_plot
