"""Text and CSV renderings of a front of design points (JSON is ``ConfigurationFront.to_dict``)."""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING

import numpy as np

from models.summary import num
from optimize.fronts.result import ConfigurationFront, DesignPoint

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: The text table lists the front and every point at least this likely to be on it; CSV and JSON list all.
SHOWN_ABOVE = 0.01


def _cell(p: DesignPoint, j: int) -> str:
    if p.n < 2:
        return f"{num(p.mean[j])} [-]"
    return f"{num(p.mean[j])} [{num(p.low[j])}, {num(p.high[j])}]"


def varying(front: ConfigurationFront) -> list[int]:
    """Indices of the setting columns whose level differs between points (all of them if none does)."""
    names = front.setting_columns
    idx = [i for i in range(len(names)) if len({str(p.settings[i][1]) for p in front.points}) > 1]
    return idx or list(range(len(front.key_columns)))


def format_table(front: ConfigurationFront) -> str:
    """One row per design point shown: the settings that vary, n, each objective's mean [interval], P(front)."""
    shown = [p for p in front.ranked() if p.on_front or p.probability >= SHOWN_ABOVE]
    cols = varying(front)
    pct = f"{front.level:.0%}"
    head = [*(front.setting_columns[i] for i in cols), "n", *(f"{o} mean [{pct} CI]" for o in front.objectives),
            "P(front)", "front"]
    body = [[*(str(p.settings[i][1]) for i in cols), str(p.n), *(_cell(p, j) for j in range(len(front.objectives))),
             f"{p.probability:.3f}", "yes" if p.on_front else ""] for p in shown]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_summary(front: ConfigurationFront) -> str:
    """What the table counts, how sure it is, and the hypervolume with its interval."""
    pct = f"{front.level:.0%}"
    hidden = sum(not p.on_front and p.probability < SHOWN_ABOVE for p in front.points)
    ref = ", ".join(f"{o.column}={r:.6g}" for o, r in zip(front.objectives, front.reference))
    lo, hi = front.hypervolume_interval
    lines = [
        f"{len(front.front)} of {len(front.points)} design points on the front (probability of being non-dominated "
        f"> {front.threshold:g}); {front.ok_runs} ok runs, {front.replicated} point(s) replicated; "
        f"{front.excluded} run(s) not ok, left out",
        f"P(front): share of {front.resamples:,} bootstrap resamples of each point's replicates (seed {front.seed}) "
        f"in which no other point's means dominate it; intervals: {pct} t intervals on the replicates "
        "([-] with one run)",
        f"hypervolume of the means {front.hypervolume:.6g}, {pct} bootstrap percentile interval "
        f"[{lo:.6g}, {hi:.6g}] (reference {ref})",
    ]
    if hidden:
        lines.append(f"{hidden} point(s) with P(front) < {SHOWN_ABOVE:g} not shown (--format csv or json lists all)")
    lines.extend(f"note: {n}" for n in front.notes)
    return "\n".join(lines)


def format_text(front: ConfigurationFront) -> str:
    return f"{format_table(front)}\n\n{format_summary(front)}"


def format_csv(front: ConfigurationFront) -> str:
    """Every design point, ranked: key columns, n, per objective mean, low and high, probability, on_front."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([*front.setting_columns, "n",
                *(f"{o.column}_{s}" for o in front.objectives for s in ("mean", "low", "high")),
                "probability", "on_front"])
    for p in front.ranked():
        w.writerow([*(v for _, v in p.settings), p.n,
                    *(repr(x) if math.isfinite(x) else "" for j in range(len(front.objectives))
                      for x in (p.mean[j], p.low[j], p.high[j])), repr(p.probability), int(p.on_front)])
    return out.getvalue()


def front_figure(front: ConfigurationFront) -> "Figure":
    """The design points' means on the first two objectives with their intervals; the front's points solid."""
    from optimize.figures import pareto_figure

    means = np.array([p.mean for p in front.points])
    low, high = np.array([p.low for p in front.points]), np.array([p.high for p in front.points])
    lo, hi = front.hypervolume_interval
    title = (f"{len(front.front)} of {len(front.points)} design points with P(front) > {front.threshold:g}; "
             f"hypervolume {front.hypervolume:.4g} [{lo:.4g}, {hi:.4g}]")
    return pareto_figure(means, np.array([p.on_front for p in front.points]), [o.column for o in front.objectives],
                         [o.sense == "max" for o in front.objectives], title, (low, high))
