"""Where the fitted surface is flat, what shape it has there, and where to go when that is outside.

Stationary point (coded): x_s = -B^-1 b / 2, with y = b0 + b'x + x'Bx. Canonical analysis: the
eigenvalues of B say the shape: all negative, a maximum; all positive, a minimum; mixed signs, a
saddle. An eigenvalue near zero (|lambda| < 1e-3 max |lambda|) is a ridge: the response barely
changes along its eigenvector.

Ridge analysis (Hoerl; Myers, Montgomery and Anderson-Cook, Sec. 6.4): when the stationary
point is outside the region or is not of the wanted kind, the best response on each sphere of
radius R about the centre is at x(mu) = -(B - mu I)^-1 b / 2 with mu > lambda_max (maximum)
or mu < lambda_min (minimum); R(mu) is monotone on that branch, so each R is solved for mu.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from models.rsm.fit import SurfaceFit
from models.rsm.search import maximize_in_region

FLAT = 1e-3
GOALS = ("max", "min")


@dataclass(frozen=True)
class StationaryPoint:
    """The stationary point, its kind, and the canonical form's eigenvalues and eigenvectors (columns)."""

    kind: str  # maximum, minimum, saddle, or none (B singular)
    coded: tuple[float, ...] | None
    natural: tuple[float, ...] | None
    predicted: float | None
    inside: bool
    eigenvalues: tuple[float, ...]
    eigenvectors: tuple[tuple[float, ...], ...]
    flat_directions: int

    def describe(self, factors: tuple[str, ...]) -> str:
        lam = ", ".join(f"{v:.4g}" for v in self.eigenvalues)
        if self.coded is None:
            return f"no unique stationary point (B is singular); eigenvalues {lam}"
        where = ", ".join(f"{f} = {v:.4g}" for f, v in zip(factors, self.natural or ()))
        loc = "inside" if self.inside else "outside"
        ridge = f"; {self.flat_directions} near-flat direction(s)" if self.flat_directions else ""
        return (f"{self.kind} at {where} ({loc} the region), predicted {self.predicted:.4g}; "
                f"eigenvalues {lam}{ridge}")


@dataclass(frozen=True)
class RidgePoint:
    radius: float
    coded: tuple[float, ...]
    natural: tuple[float, ...]
    predicted: float
    inside: bool


@dataclass(frozen=True)
class Optimum:
    """The best fitted value in the region for a goal, and where."""

    goal: str
    coded: tuple[float, ...]
    natural: tuple[float, ...]
    predicted: float
    at_stationary_point: bool


def kind_of(eigenvalues: np.ndarray) -> str:
    if np.all(eigenvalues < 0):
        return "maximum"
    if np.all(eigenvalues > 0):
        return "minimum"
    return "saddle"


def stationary_point(fit: SurfaceFit) -> StationaryPoint:
    B, b = fit.B, fit.b
    lam, vec = np.linalg.eigh(B)
    scale = float(np.abs(lam).max()) if len(lam) else 0.0
    flat = int(np.sum(np.abs(lam) <= FLAT * scale)) if scale > 0 else len(lam)
    vectors = tuple(tuple(float(v) for v in col) for col in vec.T)
    if scale == 0 or np.linalg.cond(B) > 1e12:
        return StationaryPoint("none", None, None, None, False, tuple(map(float, lam)), vectors, flat)
    xs = -0.5 * np.linalg.solve(B, b)
    ys = float(fit.back(fit.b0 + 0.5 * b @ xs))
    return StationaryPoint(kind_of(lam), tuple(map(float, xs)), tuple(map(float, fit.coding.to_natural(xs))), ys,
                           bool(fit.region.contains(xs)[0]), tuple(map(float, lam)), vectors, flat)


def _x_of_mu(B: np.ndarray, b: np.ndarray, mu: float) -> np.ndarray:
    return -0.5 * np.linalg.solve(B - mu * np.eye(len(b)), b)


def ridge_point(fit: SurfaceFit, radius: float, goal: str = "max") -> np.ndarray:
    """Coded x on the sphere of ``radius`` with the largest (goal max) or smallest fitted response."""
    if radius <= 0:
        return np.zeros(fit.k)
    B, b = fit.B, fit.b
    lam = np.linalg.eigvalsh(B)
    sign = 1.0 if goal == "max" else -1.0
    edge = lam.max() if goal == "max" else lam.min()
    unit = max(1.0, float(np.abs(lam).max()))  # mu's step from the edge, relative: edge + 1e-13 == edge at |edge| ~ 1e300

    def gap(log_d: float) -> float:
        return float(np.linalg.norm(_x_of_mu(B, b, edge + sign * unit * np.exp(log_d)))) - radius

    lo, hi = -30.0, 30.0
    if np.linalg.norm(b) > 0 and gap(lo) > 0 > gap(hi):
        d = unit * np.exp(optimize.brentq(gap, lo, hi, xtol=1e-14))
        return _x_of_mu(B, b, edge + sign * d)
    # b (nearly) orthogonal to the extreme eigenvector: the branch does not reach this radius; search the sphere
    best, best_v = None, -np.inf
    rng = np.random.default_rng(0)
    for start in rng.normal(size=(16, fit.k)):
        start = radius * start / np.linalg.norm(start)
        res = optimize.minimize(lambda x: -sign * float(fit.predict_coded(x)[0]), start, method="SLSQP",
                                constraints=[{"type": "eq", "fun": lambda x: float(x @ x) - radius**2}])
        v = sign * float(fit.predict_coded(res.x)[0])
        if v > best_v:
            best, best_v = res.x, v
    return np.asarray(best)


def ridge_path(fit: SurfaceFit, goal: str = "max", steps: int = 10) -> tuple[RidgePoint, ...]:
    """The ridge from the centre out to the region's radius, ``steps`` equal steps."""
    out = []
    for r in np.linspace(0.0, fit.region.radius, steps + 1):
        x = ridge_point(fit, float(r), goal)
        out.append(RidgePoint(float(r), tuple(map(float, x)), tuple(map(float, fit.coding.to_natural(x))),
                              float(fit.predict_coded(x)[0]), bool(fit.region.contains(x)[0])))
    return tuple(out)


def optimum(fit: SurfaceFit, goal: str = "max", seed: int = 0) -> Optimum:
    """The best fitted response in the region: the stationary point if it is that kind and inside, else searched."""
    sp = stationary_point(fit)
    wanted = "maximum" if goal == "max" else "minimum"
    sign = 1.0 if goal == "max" else -1.0
    if sp.kind == wanted and sp.inside and sp.coded is not None:
        x = np.array(sp.coded)
        return Optimum(goal, sp.coded, tuple(map(float, fit.coding.to_natural(x))), float(sp.predicted), True)
    found = maximize_in_region(lambda x: sign * fit.predict_coded(x), fit.region, seed=seed)
    x = found.x
    return Optimum(goal, tuple(map(float, x)), tuple(map(float, fit.coding.to_natural(x))),
                   float(fit.predict_coded(x)[0]), False)
