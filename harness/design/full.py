"""Full factorial designs with any number of levels per factor.

Standard order: the first factor changes fastest, then the second, and so on.

>>> from harness.design.factors import make_factors
>>> d = full_factorial(make_factors({"a": [1, 2, 3], "b": ["x", "y"]}))
>>> d.points
((1, 'x'), (2, 'x'), (3, 'x'), (1, 'y'), (2, 'y'), (3, 'y'))
"""

from __future__ import annotations

import numpy as np

from harness.design._base import Design
from harness.design.factors import FactorSet


def full_factorial(factors: FactorSet) -> Design:
    """Every combination of every factor's levels, in standard order."""
    sizes = [len(f.levels) for f in factors.factors]
    n = int(np.prod(sizes))
    index = np.empty((n, len(sizes)), dtype=int)
    stride = 1
    for j, size in enumerate(sizes):
        index[:, j] = (np.arange(n) // stride) % size
        stride *= size
    return Design(kind="full", factors=factors, index=index)
