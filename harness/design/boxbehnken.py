"""Box-Behnken designs for three or more numeric factors.

Each pair of factors runs a 2^2 factorial at their low and high levels with every other
factor at its middle level; center points follow. For 3 to 5 factors this is Box and
Behnken's (1960) design; for 6 or more their tables use 3-factor blocks with fewer runs,
so this all-pairs version (as in pyDOE) is larger than theirs. Middle levels: the middle
listed level when three are given, else the midpoint of the two.

>>> from harness.design.factors import make_factors
>>> d = box_behnken(make_factors({"g": [8, 64], "b": [32, 256], "c": [0, 90]}), center_points=3)
>>> d.n_runs, d.factors.factors[0].levels
(15, (8, 36, 64))
"""

from __future__ import annotations

import itertools

import numpy as np

from harness.design._base import Design
from harness.design.factors import Factor, FactorSet, Level
from harness.errors import DesignError


def box_behnken(factors: FactorSet, center_points: int = 3) -> Design:
    """The Box-Behnken design of ``factors`` (levels low, middle, high) with ``center_points``."""
    k = len(factors.factors)
    if k < 3:
        raise DesignError(f"Box-Behnken needs at least 3 factors, the factors file has {k}; use --kind full")
    if center_points < 0:
        raise DesignError(f"center points must be >= 0, got {center_points}")
    three = FactorSet(tuple(_three_levels(f) for f in factors.factors), factors.constants)
    rows = []
    for i, j in itertools.combinations(range(k), 2):
        for b in (0, 1):
            for a in (0, 1):
                row = [1] * k
                row[i], row[j] = 2 * a, 2 * b
                rows.append(row)
    rows += [[1] * k] * center_points
    return Design(kind="box-behnken", factors=three, index=np.array(rows, dtype=int), center_points=center_points)


def _three_levels(f: Factor) -> Factor:
    if not f.numeric:
        raise DesignError(f"factor {f.name} has non-numeric levels; Box-Behnken needs numeric factors")
    if len(f.levels) == 3:
        low, mid, high = sorted(f.levels)
        return Factor(f.name, f.letter, (low, mid, high))
    if len(f.levels) != 2:
        raise DesignError(f"factor {f.name} has {len(f.levels)} levels; Box-Behnken takes 2 (low, high) or 3")
    low, high = sorted(f.levels)
    return Factor(f.name, f.letter, (low, _midpoint(f.name, low, high), high))


def _midpoint(name: str, low: Level, high: Level) -> Level:
    assert isinstance(low, (int, float)) and isinstance(high, (int, float))
    if isinstance(low, int) and isinstance(high, int):
        if (low + high) % 2:
            raise DesignError(
                f"factor {name}: the midpoint of integer levels {low} and {high} is not an integer; "
                f"list three levels, e.g. levels = [{low}, {(low + high) // 2}, {high}]"
            )
        return (low + high) // 2
    return float(f"{(low + high) / 2:.12g}")
