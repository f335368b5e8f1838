"""The front of design points: each point's means with their intervals and its chance of being on the front."""

from __future__ import annotations

from dataclasses import dataclass

from optimize.dominance import ObjectiveSpec
from sparkdl.numbers import finite


@dataclass(frozen=True)
class DesignPoint:
    """One configuration: its settings, its ok replicates and, per objective, the mean with its t interval.

    ``low``/``high`` are NaN with one replicate (no spread to measure). ``probability`` is the share of
    bootstrap resamples in which no other point's resampled means dominate this point's."""

    settings: tuple[tuple[str, object], ...]  # (column, level) in the key columns' order
    runs: tuple[str, ...]  # the ok runs averaged, as <run>-<replicate>
    mean: tuple[float, ...]  # per objective, own units
    low: tuple[float, ...]
    high: tuple[float, ...]
    probability: float
    on_front: bool  # probability above the front's threshold
    dominated_by_means: bool  # dominated on the observed means (no bootstrap)

    @property
    def n(self) -> int:
        return len(self.runs)

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.settings)

    def to_dict(self, objectives: tuple[ObjectiveSpec, ...]) -> dict[str, object]:
        return {"settings": {k: v for k, v in self.settings}, "n": self.n, "runs": list(self.runs),
                "objectives": {o.column: {"mean": m, "low": finite(lo), "high": finite(hi)}
                               for o, m, lo, hi in zip(objectives, self.mean, self.low, self.high)},
                "probability_on_front": self.probability, "on_front": self.on_front,
                "dominated_by_means": self.dominated_by_means}


@dataclass(frozen=True)
class ConfigurationFront:
    """The design points of a campaign's ok runs, the front of those whose probability is above ``threshold``,
    and the hypervolume of the means with its bootstrap percentile interval."""

    objectives: tuple[ObjectiveSpec, ...]
    key_columns: tuple[str, ...]  # the columns that name a design point
    points: tuple[DesignPoint, ...]  # in order of first appearance in results.csv
    threshold: float
    resamples: int
    seed: int
    level: float  # of the t intervals and of the hypervolume's percentile interval
    reference: tuple[float, ...]  # own units
    hypervolume: float  # of the observed means
    hypervolume_interval: tuple[float, float]
    ok_runs: int
    excluded: int  # rows not ok, or with a non-finite objective
    notes: tuple[str, ...] = ()

    @property
    def setting_columns(self) -> tuple[str, ...]:
        """The columns each point's settings list: the key columns, then factors constant within every point."""
        return tuple(k for k, _ in self.points[0].settings) if self.points else self.key_columns

    @property
    def front(self) -> tuple[DesignPoint, ...]:
        """The points above the threshold, best first on the first objective."""
        first = self.objectives[0]
        return tuple(sorted((p for p in self.points if p.on_front), key=lambda p: first.sign * p.mean[0]))

    @property
    def replicated(self) -> int:
        """How many points have two or more ok runs."""
        return sum(p.n > 1 for p in self.points)

    def ranked(self) -> tuple[DesignPoint, ...]:
        """The front (best first on the first objective), then the others by falling probability."""
        rest = sorted((p for p in self.points if not p.on_front), key=lambda p: -p.probability)
        return self.front + tuple(rest)

    def to_dict(self) -> dict[str, object]:
        return {"objectives": [str(o) for o in self.objectives], "per": "design point",
                "key_columns": list(self.key_columns), "design_points": len(self.points),
                "replicated_points": self.replicated, "ok_runs": self.ok_runs, "excluded_not_ok": self.excluded,
                "threshold": self.threshold, "resamples": self.resamples, "seed": self.seed, "level": self.level,
                "interval": "t interval on each point's replicates",
                "reference": {o.column: r for o, r in zip(self.objectives, self.reference)},
                "hypervolume": self.hypervolume,
                "hypervolume_interval": list(self.hypervolume_interval),
                "hypervolume_interval_method": "bootstrap percentile over the same resamples",
                "front_size": len(self.front), "front": [p.to_dict(self.objectives) for p in self.front],
                "points": [p.to_dict(self.objectives) for p in self.ranked()], "notes": list(self.notes)}

