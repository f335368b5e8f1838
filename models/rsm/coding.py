"""Coded units, the second-order model's columns, and the region a design covers.

Coding: ``x = (X - centre) / half`` per factor. For a factor with five distinct levels (a
central composite design) the centre and half-range come from the second and fourth levels,
so the cube is +-1 and the axial points +-alpha; otherwise from the smallest and largest level
(Box-Behnken and face-centred designs: -1, 0, +1).

The region is where the fitted surface may be read: inside each factor's tested range and no
farther from the centre than the farthest design point (a Box-Behnken design never runs the
cube's corners, a rotatable CCD is a sphere). Searches and plots stay inside it.

Term names follow the formula language statsmodels reads: ``A``, ``A:B``, ``I(A**2)``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

INTERCEPT = "Intercept"
TOL = 1e-9


def linear_name(a: str) -> str:
    return a


def interaction_name(a: str, b: str) -> str:
    return f"{a}:{b}"


def square_name(a: str) -> str:
    return f"I({a}**2)"


def term_names(factors: tuple[str, ...]) -> tuple[str, ...]:
    """Intercept, linear terms, two-factor interactions (in pair order), pure quadratics."""
    pairs = [interaction_name(a, b) for a, b in itertools.combinations(factors, 2)]
    return (INTERCEPT, *map(linear_name, factors), *pairs, *map(square_name, factors))


def model_matrix(x: np.ndarray) -> np.ndarray:
    """The second-order columns of ``x`` (n x k), in :func:`term_names` order."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    k = x.shape[1]
    cols = [np.ones(len(x)), *(x[:, i] for i in range(k))]
    cols += [x[:, i] * x[:, j] for i, j in itertools.combinations(range(k), 2)]
    cols += [x[:, i] ** 2 for i in range(k)]
    return np.column_stack(cols)


def n_terms(k: int) -> int:
    return (k + 1) * (k + 2) // 2


@dataclass(frozen=True)
class Coding:
    """Per-factor centre and half-range: ``coded = (natural - centre) / half``."""

    factors: tuple[str, ...]
    centre: tuple[float, ...]
    half: tuple[float, ...]

    @classmethod
    def from_levels(cls, factors: tuple[str, ...], levels: list[np.ndarray]) -> "Coding":
        centre, half = [], []
        for values in levels:
            v = np.unique(values)
            lo, hi = (v[1], v[3]) if len(v) == 5 else (v[0], v[-1])
            centre.append(float((lo + hi) / 2))
            half.append(float((hi - lo) / 2))
        return cls(factors, tuple(centre), tuple(half))

    def to_coded(self, natural: np.ndarray) -> np.ndarray:
        return (np.asarray(natural, dtype=float) - np.array(self.centre)) / np.array(self.half)

    def to_natural(self, coded: np.ndarray) -> np.ndarray:
        return np.asarray(coded, dtype=float) * np.array(self.half) + np.array(self.centre)

    def describe(self) -> list[str]:
        return [f"{f}: coded = ({f} - {c:.6g}) / {h:.6g}" for f, c, h in zip(self.factors, self.centre, self.half)]


@dataclass(frozen=True)
class Region:
    """Coded box (each factor's tested range) intersected with the ball of the farthest design point."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    radius: float

    @classmethod
    def of_points(cls, coded: np.ndarray) -> "Region":
        coded = np.asarray(coded, dtype=float)
        return cls(tuple(coded.min(axis=0).tolist()), tuple(coded.max(axis=0).tolist()),
                   float(np.linalg.norm(coded, axis=1).max()))

    @property
    def box_only(self) -> bool:
        """True when the ball does not cut the box (e.g. a face-centred design: its corners were run)."""
        corner = np.maximum(np.abs(self.lower), np.abs(self.upper))
        return bool(np.linalg.norm(corner) <= self.radius + TOL)

    def contains(self, x: np.ndarray, tol: float = 1e-6) -> np.ndarray:
        x = np.atleast_2d(np.asarray(x, dtype=float))
        inside_box = np.all((x >= np.array(self.lower) - tol) & (x <= np.array(self.upper) + tol), axis=1)
        return inside_box & (np.linalg.norm(x, axis=1) <= self.radius + tol)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """About ``n`` points spread uniformly over the region (rejection from the box)."""
        lo, hi = np.array(self.lower), np.array(self.upper)
        out = np.empty((0, len(lo)))
        while len(out) < n:
            x = rng.uniform(lo, hi, size=(2 * n, len(lo)))
            out = np.vstack([out, x[self.contains(x)]])
        return out[:n]

    def describe(self) -> str:
        box = ", ".join(f"[{a:.4g}, {b:.4g}]" for a, b in zip(self.lower, self.upper))
        if self.box_only:
            return f"coded box {box} (every corner was run)"
        return f"coded box {box} within radius {self.radius:.4g} of the centre (the farthest design point)"
