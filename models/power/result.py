"""The result objects of a power plan: the noise, the design, one row per factor, and the plan.

Plain frozen dataclasses with ``to_dict``; :mod:`models.power.format` renders them and never
recomputes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sparkdl.numbers import json_safe


@dataclass(frozen=True)
class Effect:
    """The effect to detect, as given (``5%`` is relative, ``0.3`` is in response units)."""

    value: float
    relative: bool
    text: str


@dataclass(frozen=True)
class Noise:
    """The replicate noise on the analysis scale (``sigma``: SD of log(y), or of y in units).

    ``df`` are the degrees of freedom it was estimated on (None when given); ``cv`` is the
    matching coefficient of variation; ``whole_plot_sigma`` is the SD of the whole-plot error on the
    same scale (None without whole plots); ``mean`` is the response's mean when known (units);
    ``in_units`` is False when a CV was given without a pilot on the linear scale (``sigma`` is
    then a fraction of the mean).
    """

    sigma: float
    source: str
    cv: float
    df: float | None = None
    mean: float | None = None
    whole_plot_sigma: float | None = None
    in_units: bool = True


@dataclass(frozen=True)
class DesignInfo:
    """The design planned for: distinct points, runs now, replicates now, the model and its whole plots."""

    source: str
    factors: tuple[str, ...]
    terms: str
    points: int
    runs: int
    replicates_min: int
    replicates_max: int
    parameters: int
    whole_plot_factors: tuple[str, ...] = ()
    whole_plots: int | None = None
    whole_plots_per_replicate: int | None = None


@dataclass(frozen=True)
class FactorPower:
    """One factor's main-effect F test: now, and with ``replicates`` copies of the design's points.

    ``power`` and ``detectable`` are those of the current design (NaN when it leaves no error df);
    ``detectable`` is on the analysis scale, ``detectable_pct`` in % of the response (a ratio on
    the log scale) and ``detectable_units`` in response units (None when unknown). ``replicates`` is
    the fewest copies of every design point that reach the target power (None when more than the
    plan's limit), ``replicate_power`` the power they give and ``cluster_s`` the summed run time
    they would take (None without a pilot's times). ``stratum`` is ``"runs"`` or ``"whole plots"``.
    """

    factor: str
    term: str
    stratum: str
    df_num: float
    df_den: float
    noncentrality: float
    power: float
    detectable: float
    detectable_pct: float | None
    detectable_units: float | None
    replicates: int | None
    replicate_power: float
    replicate_df_den: float
    cluster_s: float | None


@dataclass(frozen=True)
class PowerPlan:
    """Power, replicates and detectable effects per factor, and the design that detects them all."""

    response: str
    scale: str
    effect: Effect
    delta: float
    alpha: float
    target_power: float
    noise: Noise
    design: DesignInfo
    factors: tuple[FactorPower, ...]
    recommended_replicates: int | None
    recommended_cluster_s: float | None
    time_column: str | None
    max_replicates: int
    notes: tuple[str, ...] = ()

    def factor(self, name: str) -> FactorPower:
        for f in self.factors:
            if f.factor == name:
                return f
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return json_safe({
            "response": self.response, "scale": self.scale, "effect": asdict(self.effect), "delta": self.delta,
            "alpha": self.alpha, "target_power": self.target_power, "noise": asdict(self.noise),
            "design": asdict(self.design), "factors": [asdict(f) for f in self.factors],
            "recommended_replicates": self.recommended_replicates,
            "recommended_cluster_s": self.recommended_cluster_s, "time_column": self.time_column,
            "max_replicates": self.max_replicates, "notes": list(self.notes),
        })
