"""The report's "Time against accuracy" section: the Pareto front of the ok runs, plotted and tabled.

It answers the two questions a user of a time/accuracy trade-off asks of one campaign: what is the
fastest run that reaches a given accuracy (``--target-accuracy``, else the most accurate run's level),
and what one more point of accuracy costs along the front. The front and its hypervolume come from
:mod:`optimize.pareto` (the same code as ``sparkdl pareto``); the extra time per point of
accuracy between neighbours on the front is (T2 - T1) / (100 (A2 - A1)) seconds.

For a campaign folder whose runs validated more than one epoch, one more paragraph counts every
validated epoch of the ok and pruned runs (:mod:`optimize.harvest`: a run of E epochs also measured
epochs 1..E-1 on its way), with its hypervolume against the same reference point.

On replicated data (a design point with two or more ok runs) the section opens with the front of the
design points (:mod:`optimize.fronts`): each configuration's mean time and accuracy with 95 % t
intervals and its probability of being on the front, from a bootstrap over its replicates (2,000
resamples, seed 0); the front of the individual runs follows, since on replicated data it mostly
shows which replicates were lucky.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from report import html as h
from optimize import fronts
from optimize.fronts.format import SHOWN_ABOVE, varying
from optimize.errors import CampaignDataError
from optimize.pareto import (FACTOR_COLUMNS, ObjectiveSpec, ParetoFront, front_figure, ok_runs, pareto_front,
                             per_epoch_front)

OBJECTIVES = (ObjectiveSpec("wall_clock_s", "min"), ObjectiveSpec("accuracy", "max"))


@dataclass(frozen=True)
class FrontStep:
    """One run on the time/accuracy front, in order of accuracy, with what it costs over the one before."""

    key: str
    wall_clock_s: float
    accuracy: float
    seconds_per_point: float | None  # None for the first (least accurate) run of the front


@dataclass(frozen=True)
class TimeAccuracy:
    """The front of a campaign over training time and accuracy, and the fastest run at the target."""

    front: ParetoFront
    steps: tuple[FrontStep, ...]
    target: float
    fastest: FrontStep | None  # the fastest run reaching ``target``; None when no run does


def time_accuracy(raw: pd.DataFrame, target: float | None = None) -> TimeAccuracy:
    """The front of ``raw``'s ok runs; ``target`` defaults to the best accuracy observed."""
    front = pareto_front(raw, OBJECTIVES)
    rows = front.front.sort_values(["accuracy", "wall_clock_s"])
    steps: list[FrontStep] = []
    for _, r in rows.iterrows():
        t, a = float(r["wall_clock_s"]), float(r["accuracy"])
        per_point = None
        if steps and a > steps[-1].accuracy:
            per_point = (t - steps[-1].wall_clock_s) / (100.0 * (a - steps[-1].accuracy))
        steps.append(FrontStep(_key(r), t, a, per_point))
    goal = float(front.runs["accuracy"].max()) if target is None else float(target)
    reaching = [s for s in steps if s.accuracy >= goal]
    fastest = min(reaching, key=lambda s: s.wall_clock_s) if reaching else None
    return TimeAccuracy(front, tuple(steps), goal, fastest)


def _key(row: pd.Series) -> str:
    return f"{h.level(row['run'])}-{h.level(row['replicate'])}" if "run" in row and "replicate" in row else str(row.name)


def per_epoch_paragraph(campaign: Path, front: ParetoFront, target: float) -> str | None:
    """The front of every validated epoch, against ``front``'s reference; None when it has no more points than runs."""
    try:
        harvested, harvest = per_epoch_front(campaign, OBJECTIVES, front.reference)
    except CampaignDataError as exc:
        return h.notice(f"No per-epoch front: {exc}.")
    if len(harvest.points) <= len(front.runs):
        return None
    share = f" ({harvested.hypervolume / front.hypervolume:.3f} of the per-run front's)" if front.hypervolume else ""
    reaching = harvested.runs[harvested.runs["accuracy"] >= target]
    fastest = ""
    if len(reaching):
        best = reaching.loc[reaching["wall_clock_s"].idxmin()]
        fastest = (f" The fastest point reaching {h.num(target)}: {best['point']}, "
                   f"{h.num(float(best['wall_clock_s']))} s at accuracy {h.num(float(best['accuracy']))}.")
    return h.para(f"Counting every validated epoch of the {harvest.runs} ok and pruned runs (a run of E epochs also "
                  f"measured epochs 1..E-1 on its way): {len(harvest.points)} points, "
                  f"{int(harvested.on_front.sum())} on the front, hypervolume {h.num(harvested.hypervolume)} against "
                  f"the same reference{share}.{fastest} 'sparkdl pareto {campaign} --per-epoch' "
                  "lists them.")


def configurations(raw: pd.DataFrame, factors: tuple[str, ...] = (), plots: bool = True) -> list[str]:
    """The front of the design points on replicated data (paragraph, figure, table); [] when no point is replicated."""
    try:
        if not fronts.is_replicated(ok_runs(raw, OBJECTIVES)[0], factors):
            return []
        c = fronts.configuration_front(raw, OBJECTIVES, factors)
    except CampaignDataError as exc:
        return [h.notice(f"No front of design points: {exc}.")]
    lo, hi = c.hypervolume_interval
    parts = [h.para(f"Design points: {len(c.front)} of {len(c.points)} configurations are on the front of mean "
                    f"training time against mean accuracy with a probability above {c.threshold:g} (the share of "
                    f"{c.resamples:,} bootstrap resamples of each point's {c.ok_runs} ok runs, seed {c.seed}, in "
                    f"which no other point's means dominate it). Intervals are {c.level:.0%} t intervals on the "
                    f"replicates. Hypervolume of the means {h.num(c.hypervolume)}, bootstrap interval "
                    f"[{h.num(lo)}, {h.num(hi)}] (reference: wall_clock_s {h.num(c.reference[0])} s, accuracy "
                    f"{h.num(c.reference[1])}).")]
    parts.extend(h.notice(n[0].upper() + n[1:] + ".") for n in c.notes)
    if plots:
        parts.append(h.figure(fronts.front_figure(c), "Pareto front of the design points' mean time and accuracy",
                              "Each design point's means with their t intervals; the points with a probability above "
                              "the threshold solid and joined."))
    cols = varying(c)
    names = [c.setting_columns[i] for i in cols]
    rows = [[*(h.tcell(h.level(p.settings[i][1])) for i in cols), h.ncell(p.n), h.ncell(p.mean[0]),
             h.tcell(_interval(p, 0)), h.ncell(p.mean[1]), h.tcell(_interval(p, 1)), h.ncell(p.probability),
             h.tcell("yes" if p.on_front else "")]
            for p in c.ranked() if p.on_front or p.probability >= SHOWN_ABOVE]
    parts.append(h.table([*names, "n", "mean wall_clock_s", "interval", "mean accuracy", "interval", "P(front)",
                          "front"], rows, table_id="design-point-front",
                         numeric_headers=[False] * len(names) + [True] * 6 + [False],
                         caption="design points on the front first (by time), then the others by probability; "
                                 "points with P(front) under 0.01 are left out"))
    parts.append(h.para("The front of the individual runs below counts each replicate apart: on replicated data it "
                        "mostly shows which replicates were quicker or luckier than their siblings."))
    return parts


def _interval(p: "fronts.DesignPoint", j: int) -> str:
    return "-" if p.n < 2 else f"[{h.num(p.low[j])}, {h.num(p.high[j])}]"


def render(raw: pd.DataFrame, plots: bool = True, target: float | None = None,
           campaign: Path | None = None, factors: tuple[str, ...] = ()) -> str | None:
    """The section's HTML; None when the table has no time and accuracy to trade (e.g. a bare cost table).

    ``campaign``: the folder of ``raw``, whose logs give the per-epoch paragraph (none without it).
    ``factors``: the design's factors, which name its design points (else the ``run`` column)."""
    if not {"wall_clock_s", "accuracy", "status"} <= set(raw.columns):
        return None
    try:
        ta = time_accuracy(raw, target)
    except CampaignDataError as exc:
        return h.notice(f"No front: {exc}.")
    f = ta.front
    parts = configurations(raw, tuple(factors), plots)
    parts += [h.para(f"{int(f.on_front.sum())} of {len(f.runs)} ok runs are on the front of training time (lower is "
                    "better) against accuracy (higher is better): no other run is both faster and at least as "
                    f"accurate. {f.excluded} run(s) not ok are left out. Hypervolume {h.num(f.hypervolume)} "
                    f"(reference: wall_clock_s {h.num(f.reference[0])} s, accuracy {h.num(f.reference[1])}).")]
    what = "the best accuracy observed" if target is None else "the target accuracy"
    if ta.fastest is not None:
        parts.append(h.para(f"Fastest run reaching {what} ({h.num(ta.target)}): run {h.esc(ta.fastest.key)}, "
                            f"{h.num(ta.fastest.wall_clock_s)} s at accuracy {h.num(ta.fastest.accuracy)}."))
    else:
        parts.append(h.notice(f"No ok run reaches accuracy {h.num(ta.target)}; the most accurate reached "
                              f"{h.num(float(f.runs['accuracy'].max()))}."))
    harvested = per_epoch_paragraph(campaign, f, ta.target) if campaign is not None else None
    if harvested is not None:
        parts.append(harvested)
    if plots:
        parts.append(h.figure(front_figure(f), "Pareto front of training time against accuracy",
                              "Every ok run: the front's runs solid and joined by the step line, the dominated runs "
                              "faded."))
    factors = [c for c in FACTOR_COLUMNS if c in f.runs.columns and f.runs[c].nunique() > 1]
    by_key = {_key(r): r for _, r in f.runs[f.on_front].iterrows()}
    rows = []
    for s in ta.steps:
        r = by_key[s.key]
        rows.append([h.tcell(s.key), h.ncell(s.wall_clock_s), h.ncell(s.accuracy),
                     h.ncell(s.seconds_per_point) if s.seconds_per_point is not None else h.tcell("-"),
                     *(h.tcell(h.level(r[c])) for c in factors)])
    parts.append(h.table(["run", "wall_clock_s", "accuracy", "extra s per accuracy point", *factors], rows,
                         table_id="time-accuracy-front", numeric_headers=[False, True, True, True] + [False] * len(factors),
                         caption="the front in order of accuracy; the extra time per point of accuracy (0.01) is "
                                 "against the run above"))
    return "\n".join(parts)

