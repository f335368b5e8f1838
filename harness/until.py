"""Replicate until sure: add replicates where a design point's confidence interval is still too wide.

    sparkdl submit design.csv --until "ci(wall_clock_s) < 5%" --max-replications 10 --budget 2h

The rule ``ci(RESPONSE) < W%`` asks that the half-width of the t interval of each design point's
mean (at ``confidence``, 95 % by default) be under W % of that mean's absolute value;
``ci(RESPONSE) < W`` (no %) asks it in the response's unit. After a first pass of
``min_replications`` replicates of every point, the next replicate goes to the point whose interval
is widest against the target, until every point meets it (``met``), has ``max_replications``
replicates (``max``), or the cluster-time budget is spent (``budget``). A run that failed, or that
gave no value of the response, is not a replicate of the response; a point with
``max_replications`` such runs is given up (``failing``).

Everything here is pure: the campaign (:meth:`harness.campaign.Campaign.run_until`) feeds it the
stored runs, so a resumed campaign takes up where it stopped from the store alone.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from harness.errors import HarnessError
from sparkdl.runspec import RunSpec
from sparkdl.campaign import RunRecord
from sparkdl.measurements import breaks_the_rule
from sparkdl.numbers import finite
from sparkdl.times import TIME_COLUMNS

#: The reasons a point stopped getting replicates (None while it is still open).
MET, MAX, BUDGET, FAILING = "met", "max", "budget", "failing"
REASONS = {MET: "its interval meets the target", MAX: "it reached --max-replications",
           BUDGET: "the cluster-time budget was spent", FAILING: "as many of its runs failed as --max-replications"}
DEFAULT_MIN, DEFAULT_MAX, DEFAULT_CONFIDENCE = 2, 10, 0.95
MAX_REPLICATIONS = 1_000

_NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
_RULE = re.compile(rf"\s*ci\s*\(\s*([A-Za-z_][A-Za-z0-9_]{{0,99}})\s*\)\s*<\s*({_NUMBER})\s*(%?)\s*", re.ASCII)
_FORM = 'write ci(RESPONSE) < W% (the half-width under W % of the mean) or ci(RESPONSE) < W (in the response\'s unit), e.g. "ci(wall_clock_s) < 5%"'


class UntilError(HarnessError):
    """A stopping rule or its options are invalid, or the runs do not measure its response."""


@dataclass(frozen=True)
class UntilRule:
    """When a design point has replicates enough: its interval's half-width under ``width`` (a % of the
    mean when ``relative``), with at least ``min_replications`` and at most ``max_replications``."""

    response: str
    width: float
    relative: bool
    confidence: float = DEFAULT_CONFIDENCE
    min_replications: int = DEFAULT_MIN
    max_replications: int = DEFAULT_MAX
    budget_s: float | None = None  # cluster time (the sum of the runs' times); None: no limit

    def __post_init__(self) -> None:
        if not 2 <= self.min_replications <= self.max_replications <= MAX_REPLICATIONS:
            raise UntilError(f"--min-replications {self.min_replications} and --max-replications "
                             f"{self.max_replications}: give 2 <= min <= max <= {MAX_REPLICATIONS} (two replicates "
                             "at least, so that a point has an interval)")
        if not 0.5 <= self.confidence < 1:
            raise UntilError(f"--confidence {self.confidence:g}: give a level from 0.5 to below 1, e.g. 0.95")

    @property
    def text(self) -> str:
        return f"ci({self.response}) < {self.width:g}{'%' if self.relative else ''}"

    def width_of(self, interval: "Interval") -> float:
        """The interval's half-width in the rule's terms: a % of the mean, or the response's unit."""
        return interval.relative_half_width * 100 if self.relative else interval.half_width

    def excess(self, interval: "Interval") -> float:
        """The half-width over the target: > 1 is too wide (inf without an interval)."""
        return self.width_of(interval) / self.width

    def to_dict(self) -> dict[str, object]:
        return {"rule": self.text, "response": self.response, "width": self.width, "relative": self.relative,
                "interval": "t interval of the point's mean; width = its half-width", "confidence": self.confidence,
                "min_replications": self.min_replications, "max_replications": self.max_replications,
                "budget_s": self.budget_s}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> "UntilRule":
        budget = data.get("budget_s")
        return cls(str(data["response"]), float(data["width"]), bool(data["relative"]),  # type: ignore[arg-type]
                   float(data["confidence"]), int(data["min_replications"]),  # type: ignore[arg-type]
                   int(data["max_replications"]), None if budget is None else float(budget))  # type: ignore[arg-type]


def parse_until(text: str) -> tuple[str, float, bool]:
    """``"ci(wall_clock_s) < 5%"`` -> ``("wall_clock_s", 5.0, True)``; ``"ci(accuracy) < 0.01"`` -> relative False."""
    m = _RULE.fullmatch(text[:300])
    if m is None or len(text) > 300:
        raise UntilError(f"--until {text[:60]!r} is not a stopping rule: {_FORM}")
    width = float(m.group(2))
    if not (math.isfinite(width) and width > 0):
        raise UntilError(f"--until {text[:60]!r}: the width must be a number above 0, e.g. 5%")
    return m.group(1), width, m.group(3) == "%"


#: What every run of every job records (the harness's own figures, and the time vocabulary of sparkdl.times).
HARNESS_RESPONSES = frozenset({"wall_clock_s", "accuracy", "elapsed_s", "epochs_completed", "learning_rate_used",
                               "batch_size_used", "attempts"}) | frozenset(TIME_COLUMNS)
#: Prefixes of the figures a run's observation measures (Spark's event log, the hosts' sampler, the phases).
OBSERVED_PREFIXES = ("spark_", "host_", "phase_")


def check_reported(response: str, jobs: Iterable[object]) -> None:
    """Refuse (before any run) a rule's response that no run of these jobs would report: the harness's own figures,
    the observation's (``spark_*``, ``host_*``, ``phase_*``) and, for a job whose results are ``output``, the figures
    it declares. A job whose results are ``json`` or ``mlflow`` names its own figures when it runs: any name is
    taken (and :func:`check_response` refuses it after the first pass if no run measured it)."""
    known = set(HARNESS_RESPONSES)
    for job in jobs:
        results = getattr(job, "results", "bigdl")
        if results in ("json", "mlflow"):
            return
        figures = getattr(job, "figures", None)
        if figures is not None:
            known.update(figures.names())
    if response in known or response.startswith(OBSERVED_PREFIXES):
        return
    raise UntilError(f"--until ci({response}): no run of this campaign reports {response}; give a figure its runs "
                     f"report, e.g. ci(wall_clock_s) < 5% ({', '.join(sorted(known))[:300]})")


# ---------------------------------------------------------------- one point's interval


@dataclass(frozen=True)
class Interval:
    """The t interval of a mean: ``mean`` +- ``half_width`` (inf with fewer than two values)."""

    n: int
    mean: float
    half_width: float

    @property
    def lower(self) -> float:
        return self.mean - self.half_width

    @property
    def upper(self) -> float:
        return self.mean + self.half_width

    @property
    def relative_half_width(self) -> float:
        """The half-width over |mean| (0 when there is no spread, inf around a mean of 0)."""
        if self.n < 2:
            return math.inf
        if self.half_width == 0:
            return 0.0
        return self.half_width / abs(self.mean) if self.mean != 0 else math.inf


def t_interval(values: Sequence[float], confidence: float) -> Interval:
    """The two-sided t interval of the mean of ``values`` (n - 1 degrees of freedom)."""
    n = len(values)
    if n == 0:
        return Interval(0, math.nan, math.inf)
    mean = math.fsum(values) / n
    if n < 2:
        return Interval(1, mean, math.inf)
    from scipy import stats  # here: scipy.stats takes 0.65 s to import, and every `sparkdl submit` imports this module

    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return Interval(n, mean, float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n))


@dataclass(frozen=True)
class Observation:
    """One run of a design point: its replicate and its value of the response (None: failed or no value)."""

    replicate: int
    value: float | None


@dataclass(frozen=True)
class PointState:
    """Where a design point stands: its interval, its runs, and why it stopped (None: still open)."""

    run: int
    interval: Interval
    runs: int            # every stored run of the point, failed ones too
    unusable: int        # runs that failed or gave no value of the response: not replicates
    last_replicate: int  # the highest replicate number used (a new replicate takes the next)
    reason: str | None = None
    levels: Mapping[str, object] = field(default_factory=dict)

    def to_dict(self, rule: UntilRule) -> dict[str, object]:
        i = self.interval
        return {"run": self.run, "levels": dict(self.levels), "replicates": i.n, "failed_or_missing": self.unusable,
                "mean": finite(i.mean), "half_width": finite(i.half_width), "lower": finite(i.lower),
                "upper": finite(i.upper), "width": finite(rule.width_of(i)), "met": rule.excess(i) <= 1,
                "reason": self.reason}


def judge(run: int, observations: Sequence[Observation], rule: UntilRule,
          levels: Mapping[str, object] | None = None) -> PointState:
    """A point's state from its runs: met, max, failing, or open (None)."""
    values = [o.value for o in observations if o.value is not None]
    interval = t_interval(values, rule.confidence)
    unusable = len(observations) - len(values)
    reason = None
    if len(values) >= rule.min_replications and rule.excess(interval) <= 1:
        reason = MET
    elif len(values) >= rule.max_replications:
        reason = MAX
    elif unusable >= rule.max_replications:
        reason = FAILING
    last = max((o.replicate for o in observations), default=0)
    return PointState(run, interval, len(observations), unusable, last, reason, dict(levels or {}))


def next_point(states: Iterable[PointState], rule: UntilRule) -> PointState | None:
    """The open point whose interval is widest against the target (no interval first; then fewer runs, lower
    run number); None when every point stopped."""
    open_ = [s for s in states if s.reason is None]
    if not open_:
        return None
    return max(open_, key=lambda s: (rule.excess(s.interval), -s.runs, -s.run))


def budget_allows(spent_s: float, runs: int, budget_s: float | None) -> bool:
    """True while a run of the mean length so far fits in what is left of the budget (the first run always may)."""
    if budget_s is None or runs == 0:
        return True
    return spent_s < budget_s and spent_s + spent_s / runs <= budget_s


def observations(records: Iterable[RunRecord], response: str) -> dict[int, list[Observation]]:
    """Each design point's runs as observations of ``response`` (a non-finite or missing value, or a run the one
    validity rule sets aside, :func:`sparkdl.measurements.breaks_the_rule`: None)."""
    out: dict[int, list[Observation]] = {}
    for r in records:
        row = r.row() if r.ok else None
        value = row.get(response) if row is not None and breaks_the_rule(row, [response]) is None else None
        number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
        out.setdefault(r.run, []).append(Observation(r.replicate, number if math.isfinite(number) else None))
    return out


def check_response(records: Sequence[RunRecord], response: str) -> None:
    """Refuse a response that none of the ok runs measured (a misspelt or absent column), naming the ones they did."""
    ok = [r.row() for r in records if r.ok]
    if not ok or any(isinstance(row.get(response), (int, float)) for row in ok):
        return
    numeric = sorted({k for row in ok for k, v in row.items()
                      if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in ("run", "replicate")})
    raise UntilError(f"--until ci({response}): the {len(ok)} ok run(s) have no value of {response}; pick a response "
                     f"they measure ({', '.join(numeric)[:400]}) and continue with --resume")


# ---------------------------------------------------------------- the campaign's state


@dataclass(frozen=True)
class UntilResult:
    """The stopping rule, each point's final interval and reason, and why the campaign stopped."""

    rule: UntilRule
    points: tuple[PointState, ...]
    cluster_time_s: float
    runs: int

    @property
    def stopped(self) -> str:
        counts = self.counts
        if counts.get(BUDGET):
            return f"the cluster-time budget was spent ({self.cluster_time_s / 60:.1f} min)"
        if None in counts:
            return "still running"
        return "every point stopped"

    @property
    def counts(self) -> dict[str | None, int]:
        out: dict[str | None, int] = {}
        for p in self.points:
            out[p.reason] = out.get(p.reason, 0) + 1
        return out

    def to_dict(self) -> dict[str, object]:
        return {**self.rule.to_dict(), "stopped": self.stopped, "runs": self.runs,
                "cluster_time_s": round(self.cluster_time_s, 3), "points": [p.to_dict(self.rule) for p in self.points]}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> "UntilResult":
        rule = UntilRule.from_dict(data)
        points = []
        for p in data.get("points", []):  # type: ignore[union-attr]
            n, mean, half = int(p["replicates"]), p["mean"], p["half_width"]
            points.append(PointState(int(p["run"]), Interval(n, math.nan if mean is None else float(mean),
                                                             math.inf if half is None else float(half)),
                                     n + int(p["failed_or_missing"]), int(p["failed_or_missing"]), 0, p["reason"],
                                     dict(p.get("levels") or {})))
        return cls(rule, tuple(points), float(data["cluster_time_s"]), int(data["runs"]))  # type: ignore[arg-type]

    def summary_line(self) -> str:
        """The final progress line: the rule, how many points stopped for each reason, runs and cluster time."""
        counts = self.counts
        parts = [f"{counts[r]} {r}" for r in (MET, MAX, BUDGET, FAILING) if counts.get(r)]
        if counts.get(None):
            parts.append(f"{counts[None]} open")
        return (f"until {self.rule.text} ({self.rule.confidence:.0%} t interval, half-width): {len(self.points)} "
                f"point(s): {', '.join(parts)}; {self.runs} run(s), cluster time {self.cluster_time_s / 60:.1f} min")


def final_states(states: Sequence[PointState], budget_spent: bool) -> tuple[PointState, ...]:
    """The states at the end: a point still open when the budget stopped the campaign stopped for the budget."""
    return tuple(replace(s, reason=BUDGET) if s.reason is None and budget_spent else s for s in states)


def point_table(result: UntilResult) -> list[tuple[str, ...]]:
    """One row per point (header first): run, the levels that vary between points, replicates, failed, mean,
    interval, width, reason."""
    unit = "% of mean" if result.rule.relative else result.rule.response
    rows = [("run", "levels", "replicates", "failed", "mean", "interval", f"half-width ({unit})", "stopped")]
    varied = [k for k in dict.fromkeys(k for p in result.points for k in p.levels)
              if len({repr(p.levels.get(k)) for p in result.points}) > 1] or None
    for p in result.points:
        i = p.interval
        levels = " ".join(f"{k}={v}" for k, v in p.levels.items() if varied is None or k in varied)
        interval = f"{i.lower:.4g} .. {i.upper:.4g}" if math.isfinite(i.half_width) else "none (< 2 replicates)"
        width = result.rule.width_of(i)
        rows.append((str(p.run), levels, str(i.n), str(p.unusable), "" if math.isnan(i.mean) else f"{i.mean:.4g}",
                     interval, f"{width:.3g}" if math.isfinite(width) else "inf", p.reason or "open"))
    return rows


def result_text(result: UntilResult) -> str:
    """The table of points as aligned text, with the summary line under it."""
    rows = point_table(result)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, result.summary_line()])


# ---------------------------------------------------------------- the runs to add


def design_levels(spec: RunSpec) -> dict[str, object]:
    """A point's factor levels (its design row without the cell and whole-plot columns)."""
    return {k: v for k, v in spec.as_row().items() if k not in ("run", "replicate", "whole_plot")}


def with_cell(spec: RunSpec, replicate: int, whole_plot: int | None = None) -> RunSpec:
    """The spec as replicate ``replicate`` (and, when the design has them, in whole plot ``whole_plot``)."""
    params = tuple((k, whole_plot if k == "whole_plot" and whole_plot is not None else v) for k, v in spec.params)
    return RunSpec(spec.run, replicate, spec.nodes, spec.executors, spec.executor_cores, params=params)


def design_plot(spec: RunSpec) -> int | None:
    value = spec.get("whole_plot")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def first_pass(specs: Sequence[RunSpec], min_replications: int) -> list[RunSpec]:
    """The design's rows, then the replicates each point lacks to have ``min_replications``.

    A design with a ``whole_plot`` column keeps its structure: added replicate r of the points of one whole
    plot form a new whole plot of their own (numbered after the design's), never joined to an earlier one.
    """
    by_run: dict[int, list[RunSpec]] = {}
    for s in specs:
        by_run.setdefault(s.run, []).append(s)
    top = max((p for p in map(design_plot, specs) if p is not None), default=0)
    plots: dict[tuple[int, int], int] = {}
    added: list[RunSpec] = []
    for run, rows in by_run.items():
        base = min(rows, key=lambda s: s.replicate)
        last = max(s.replicate for s in rows)
        for r in range(last + 1, last + 1 + max(0, min_replications - len(rows))):
            plot = design_plot(base)
            if plot is not None:
                plot = plots.setdefault((r, plot), top + len(plots) + 1)
            added.append(with_cell(base, r, plot))
    return [*specs, *sorted(added, key=lambda s: s.replicate)]
