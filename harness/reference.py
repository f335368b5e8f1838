"""Reference runs: one configuration repeated through a campaign, so that drift can be measured.

``harness.submit --reference-every N`` runs a reference configuration first, then again after
every N runs of the design, and once more at the end. The reference is a row of the design:
``--reference ROW`` (its 1-based row number), or by default the row nearest the design's centre
(each numeric factor scaled to [-1, 1] by its range; ties go to the earlier row).

Reference runs are cells of their own: run number = the design's largest + 1, replicate 1, 2, ...,
so they never mix with the design's replicates. In a split-plot design they are placed only between
whole plots (never inside one), each in a whole plot of its own. The manifest records the
reference run number (``reference_run``): the analysis leaves those rows out of the ANOVA and uses
them for the drift check (:mod:`models.drift`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from harness.errors import HarnessError
from sparkdl.runspec import RunSpec

#: The most design runs between two reference runs (and the fewest: 1).
MAX_EVERY = 100_000


class ReferenceError(HarnessError):
    """``--reference-every`` or ``--reference`` cannot be applied to this design."""


@dataclass(frozen=True)
class WithReference:
    """The design's runs with the reference runs placed among them, and the reference's run number."""

    specs: tuple[RunSpec, ...]
    reference_run: int
    reference_row: int
    count: int


def centre_row(specs: Sequence[RunSpec]) -> int:
    """The 0-based index of the row nearest the design's centre (numeric factors scaled by their range)."""
    rows = [s.as_row() for s in specs]
    names = [n for n in rows[0] if n not in ("run", "replicate", "whole_plot")
             and all(isinstance(r.get(n), (int, float)) and not isinstance(r.get(n), bool) for r in rows)]

    def distance(row: dict[str, object]) -> float:
        total = 0.0
        for n in names:
            values = [float(r[n]) for r in rows]  # type: ignore[arg-type]
            lo, hi = min(values), max(values)
            if hi > lo:
                total += ((float(row[n]) - (lo + hi) / 2) / ((hi - lo) / 2)) ** 2  # type: ignore[arg-type]
        return total

    return min(range(len(rows)), key=lambda i: (distance(rows[i]), i))


def with_reference(specs: Sequence[RunSpec], every: int, row: int | None = None) -> WithReference:
    """``specs`` with the reference run first, after every ``every`` design runs (at a whole-plot boundary
    when the design has whole plots) and last."""
    if not specs:
        raise ReferenceError("the design has no runs to place reference runs among")
    if not 1 <= every <= MAX_EVERY:
        raise ReferenceError(f"--reference-every {every}: give a number of runs from 1 to {MAX_EVERY}")
    if row is not None and not 1 <= row <= len(specs):
        raise ReferenceError(f"--reference {row}: the design has rows 1 to {len(specs)}; give one of them")
    index = row - 1 if row is not None else centre_row(specs)
    base = specs[index]
    number = max(s.run for s in specs) + 1
    plots = [s.get("whole_plot") for s in specs]
    split = any(p is not None for p in plots)
    next_plot = max((int(p) for p in plots if isinstance(p, int)), default=0) + 1
    out: list[RunSpec] = []
    count = 0

    def reference() -> None:
        nonlocal count, next_plot
        count += 1
        params = tuple((k, next_plot if k == "whole_plot" else v) for k, v in base.params)  # a whole plot of its own
        next_plot += split
        out.append(RunSpec(number, count, base.nodes, base.executors, base.executor_cores, params=params))

    reference()
    since = 0
    for i, spec in enumerate(specs):
        boundary = not split or i == 0 or plots[i] != plots[i - 1]
        if since >= every and boundary:
            reference()
            since = 0
        out.append(spec)
        since += 1
    reference()
    return WithReference(tuple(out), number, index + 1, count)
