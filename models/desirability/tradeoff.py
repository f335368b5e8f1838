"""What one more point of a response costs in another, read off the fitted surfaces.

For a response to keep above a floor (e.g. accuracy) and one to minimize (e.g. time), and a
series of floors, the best fitted value of the second among the settings of the region whose
fitted first response reaches the floor (an epsilon-constraint front of the surfaces, not of
the observed runs). Successive rows give the marginal cost: how much more time each step of
accuracy needs. Seeded sample of the region, then SLSQP with the floor as a constraint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from models.desirability.optimum import Compromise
from models.errors import DesirabilityError
from models.rsm.fit import SurfaceFit
from models.rsm.search import maximize_in_region

SAMPLES = 4000
STARTS = 6


@dataclass(frozen=True)
class TradeoffPoint:
    floor: float
    best: float  # the fitted optimum of the other response under the floor; nan if the floor is out of reach
    natural: tuple[float, ...]

    @property
    def reachable(self) -> bool:
        return bool(np.isfinite(self.best))


def _best_under_floor(keep: SurfaceFit, other: SurfaceFit, sign: float, floor: float, cand: np.ndarray,
                      ) -> tuple[float, np.ndarray | None]:
    region = keep.region
    tol = 1e-7 * max(1.0, abs(floor))
    ok = keep.predict_coded(cand) >= floor - tol
    if not ok.any():
        return float("nan"), None
    values = sign * other.predict_coded(cand[ok])
    order = np.argsort(values)[:STARTS]
    best_v, best_x = float(values[order[0]]), cand[ok][order[0]]
    cons = [{"type": "ineq", "fun": lambda x: region.radius**2 - float(x @ x)},
            {"type": "ineq", "fun": lambda x: float(keep.predict_coded(x)[0]) - floor}]
    for i in order:
        res = optimize.minimize(lambda x: sign * float(other.predict_coded(x)[0]), cand[ok][i], method="SLSQP",
                                bounds=list(zip(region.lower, region.upper)), constraints=cons,
                                options={"ftol": 1e-12, "maxiter": 200})
        x = np.clip(res.x, region.lower, region.upper)
        if region.contains(x)[0] and keep.predict_coded(x)[0] >= floor - tol:
            v = sign * float(other.predict_coded(x)[0])
            if v < best_v:
                best_v, best_x = v, x
    return sign * best_v, best_x


def tradeoff(keep: SurfaceFit, other: SurfaceFit, other_goal: str, floors: np.ndarray, seed: int = 0
             ) -> tuple[TradeoffPoint, ...]:
    """For each floor of ``keep``'s response, the best ``other`` (``min`` or ``max``) that still reaches it."""
    if keep.factors != other.factors:
        raise DesirabilityError("the two surfaces must share their factors")
    if other_goal not in ("min", "max"):
        raise DesirabilityError(f"goal {other_goal!r}: use min or max")
    sign = 1.0 if other_goal == "min" else -1.0
    top = maximize_in_region(keep.predict_coded, keep.region, seed)  # so the highest floor has a start
    cand = np.vstack([keep.region.sample(SAMPLES, np.random.default_rng(seed)), top.x])
    out = []
    for floor in np.asarray(floors, dtype=float):
        best, x = _best_under_floor(keep, other, sign, float(floor), cand)
        nat = tuple(map(float, keep.coding.to_natural(x))) if x is not None else ()
        out.append(TradeoffPoint(float(floor), best, nat))
    return tuple(out)


def tradeoff_front(result: Compromise, steps: int, seed: int = 0) -> tuple[str, str, tuple[TradeoffPoint, ...]]:
    """With one max and one min goal: ``steps`` floors of the max-response, from its fitted value where the
    min-response is best up to its own best, each with the best fitted min-response (names, then points)."""
    goals = [r.goal for r in result.responses]
    kinds = sorted(g.goal for g in goals)
    if kinds != ["max", "min"]:
        raise DesirabilityError("--tradeoff needs exactly two goals, one max and one min, e.g. "
                                "--response accuracy:max --response wall_clock_s:min")
    if steps < 2:
        raise DesirabilityError(f"--tradeoff {steps}: give at least 2 steps")
    ki = next(i for i, g in enumerate(goals) if g.goal == "max")
    oi = 1 - ki
    keep, other = result.fits[ki], result.fits[oi]
    at_fastest = float(keep.predict(np.array([result.responses[oi].best_alone_at]))[0])
    floors = np.linspace(at_fastest, result.responses[ki].best_alone, steps)
    return keep.response, other.response, tradeoff(keep, other, "min", floors, seed)
