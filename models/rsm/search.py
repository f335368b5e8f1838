"""Maximize a function of coded settings over a :class:`~models.rsm.coding.Region`.

A seeded space-filling sample of the region finds the best starts; each is polished by SLSQP
with the region's box as bounds and its ball as a constraint. Used for the best setting of one
fitted surface and for the overall desirability (which is flat where it is 0, so the sample matters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from models.rsm.coding import Region

DEFAULT_SAMPLES = 4000
DEFAULT_STARTS = 8


@dataclass(frozen=True)
class Found:
    """The best coded setting found and the function's value there."""

    x: np.ndarray
    value: float


def maximize_in_region(fn: Callable[[np.ndarray], np.ndarray], region: Region, seed: int = 0,
                       samples: int = DEFAULT_SAMPLES, starts: int = DEFAULT_STARTS,
                       extra: np.ndarray | None = None) -> Found:
    """The largest ``fn`` over ``region``; ``fn`` maps an (n, k) array to n values. ``extra``: more starts."""
    rng = np.random.default_rng(seed)
    cand = region.sample(samples, rng)
    cand = np.vstack([np.zeros((1, cand.shape[1])), cand] + ([np.atleast_2d(extra)] if extra is not None else []))
    cand = cand[region.contains(cand)]
    values = fn(cand)
    best_i = int(np.argmax(values))
    best = Found(cand[best_i], float(values[best_i]))
    bounds = list(zip(region.lower, region.upper))
    ball = {"type": "ineq", "fun": lambda x: region.radius**2 - float(x @ x)}
    for i in np.argsort(values)[::-1][:starts]:
        res = optimize.minimize(lambda x: -float(fn(np.atleast_2d(x))[0]), cand[i], method="SLSQP",
                                bounds=bounds, constraints=[ball], options={"ftol": 1e-12, "maxiter": 200})
        x = np.clip(res.x, region.lower, region.upper)
        if region.contains(x)[0]:
            v = float(fn(np.atleast_2d(x))[0])
            if v > best.value:
                best = Found(x, v)
    return best
