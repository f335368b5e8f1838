"""Derringer-Suich desirability (Derringer and Suich, 1980): one goal per response, combined.

Each response y becomes d in [0, 1]:

* ``max`` with limits L < U: 0 below L, ((y - L) / (U - L))^s between, 1 above U;
* ``min``: 1 below L, ((U - y) / (U - L))^s between, 0 above U;
* ``target`` T with L < T < U (two-sided): ((y - L) / (T - L))^s below T, ((U - y) / (U - T))^t above,
  0 outside [L, U].

The weight s (and t) shapes the curve (s > 1: d stays low until y is near the best end). The
overall desirability is the geometric mean weighted by importances r_i:
D = (prod d_i^r_i)^(1 / sum r_i); D = 0 as soon as one response is unacceptable.

Goal syntax (``--response``): ``NAME:GOAL[:LIMITS][:w=S][:w2=T][:i=R][:t=log]`` where GOAL is max or min
with LIMITS ``LOW:HIGH``, or target with LIMITS ``LOW:TARGET:HIGH`` (required). Limits left out
default to the smallest and largest observed value; ``t=log`` fits that response's surface on the
log scale (see :mod:`models.rsm.fit`). Examples: ``wall_clock_s:min``,
``accuracy:max:0.9:1``, ``accuracy:max:0.5:0.9:w=2:i=3``, ``batch_time:target:1:2:4:w=1:w2=0.5``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from models.errors import DesirabilityError

GOALS = ("max", "min", "target")


@dataclass(frozen=True)
class Goal:
    """What one response should do, its limits, shape weights and importance."""

    response: str
    goal: str
    low: float
    high: float
    target: float | None = None
    weight: float = 1.0
    weight_high: float = 1.0  # the target's upper side (t)
    importance: float = 1.0
    transform: str = "none"

    def __post_init__(self) -> None:
        if self.transform not in ("none", "log"):
            raise DesirabilityError(f"{self.response}: t={self.transform} is not none or log")
        if self.goal not in GOALS:
            raise DesirabilityError(f"{self.response}: goal {self.goal!r} is not one of {', '.join(GOALS)}")
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise DesirabilityError(f"{self.response}: limits {self.low:g} and {self.high:g} must be finite with "
                                    "low < high (give them explicitly, e.g. accuracy:max:0.9:1)")
        if self.goal == "target" and (self.target is None or not self.low < self.target < self.high):
            raise DesirabilityError(f"{self.response}: a target goal needs LOW < TARGET < HIGH, e.g. NAME:target:1:2:4")
        for name, v in (("w", self.weight), ("w2", self.weight_high), ("i", self.importance)):
            if not (math.isfinite(v) and v > 0):
                raise DesirabilityError(f"{self.response}: {name}={v:g} must be a number > 0")

    @property
    def sense(self) -> int:
        """+1 when larger is better, -1 when smaller is better, 0 for a target."""
        return {"max": 1, "min": -1, "target": 0}[self.goal]

    def describe(self) -> str:
        lim = (f"{self.low:g}..{self.high:g}" if self.goal != "target"
               else f"{self.low:g} / {self.target:g} / {self.high:g}")
        w = f"s={self.weight:g}" + (f", t={self.weight_high:g}" if self.goal == "target" else "")
        w += "; fitted on the log scale" if self.transform == "log" else ""
        return f"{self.response}: {self.goal} ({lim}; {w}; importance {self.importance:g})"

    def __call__(self, y: np.ndarray) -> np.ndarray:
        return desirability(self, y)


def desirability(goal: Goal, y: np.ndarray) -> np.ndarray:
    """d in [0, 1] for each value of ``y`` (NaN gives 0)."""
    y = np.asarray(y, dtype=float)
    lo, hi = goal.low, goal.high
    with np.errstate(invalid="ignore"):
        if goal.goal == "max":
            d = np.clip((y - lo) / (hi - lo), 0.0, 1.0) ** goal.weight
        elif goal.goal == "min":
            d = np.clip((hi - y) / (hi - lo), 0.0, 1.0) ** goal.weight
        else:
            t = float(goal.target)  # type: ignore[arg-type]
            below = np.clip((y - lo) / (t - lo), 0.0, 1.0) ** goal.weight
            above = np.clip((hi - y) / (hi - t), 0.0, 1.0) ** goal.weight_high
            d = np.where(y <= t, below, above)
    return np.where(np.isfinite(y), d, 0.0)


def overall(ds: list[np.ndarray] | np.ndarray, importances: list[float] | tuple[float, ...]) -> np.ndarray:
    """D = (prod d_i^r_i)^(1/sum r_i), computed so that any d_i = 0 gives exactly 0."""
    ds = np.atleast_2d(np.asarray(ds, dtype=float))
    r = np.asarray(importances, dtype=float)[:, None]
    with np.errstate(divide="ignore"):
        logs = np.where(ds > 0, np.log(np.where(ds > 0, ds, 1.0)), -np.inf)
    total = (r * logs).sum(axis=0) / r.sum()
    return np.exp(total)


def parse_goal(spec: str, observed: np.ndarray | None = None) -> Goal:
    """A :class:`Goal` from ``NAME:GOAL[:LIMITS][:w=S][:w2=T][:i=R]`` (see the module docstring)."""
    parts = [p.strip() for p in spec.split(":")]
    if len(parts) < 2 or not parts[0]:
        raise DesirabilityError(f"--response {spec!r}: write NAME:GOAL[:LOW:HIGH][:w=S][:i=R], e.g. accuracy:max:0.9:1")
    name, goal = parts[0], parts[1].lower()
    if goal not in GOALS:
        raise DesirabilityError(f"--response {spec!r}: goal {parts[1]!r} is not one of {', '.join(GOALS)}")
    limits, opts = [], {}
    transform = "none"
    for p in parts[2:]:
        if "=" in p:
            key, _, value = p.partition("=")
            if key not in ("w", "w2", "i", "t"):
                raise DesirabilityError(f"--response {spec!r}: unknown option {key!r}; use w=, w2=, i= or t=")
            if key == "t":
                if value not in ("none", "log"):
                    raise DesirabilityError(f"--response {spec!r}: t={value} is not none or log")
                transform = value
                opts[key] = 0.0
                continue
            opts[key] = _number(spec, value)
        else:
            if opts:
                raise DesirabilityError(f"--response {spec!r}: limits come before the w=/w2=/i= options")
            limits.append(_number(spec, p))
    needed = 3 if goal == "target" else 2
    if goal == "target" and len(limits) != 3:
        raise DesirabilityError(f"--response {spec!r}: a target goal needs LOW:TARGET:HIGH, e.g. {name}:target:1:2:4")
    if limits and len(limits) != needed:
        raise DesirabilityError(f"--response {spec!r}: {goal} takes {needed} limits (LOW:HIGH) or none, "
                                f"got {len(limits)}")
    if not limits:
        if observed is None or not np.isfinite(observed).any():
            raise DesirabilityError(f"--response {spec!r}: no observed values to default the limits from; give LOW:HIGH")
        limits = [float(np.nanmin(observed)), float(np.nanmax(observed))]
    target = limits[1] if goal == "target" else None
    low, high = limits[0], limits[-1]
    return Goal(name, goal, low, high, target, opts.get("w", 1.0), opts.get("w2", 1.0), opts.get("i", 1.0), transform)


def _number(spec: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise DesirabilityError(f"--response {spec!r}: {text!r} is not a number") from None
