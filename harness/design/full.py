"""Full factorial designs with any number of levels per factor.

Standard order: the first factor changes fastest, then the second, and so on.

>>> from harness.design.factors import make_factors
>>> d = full_factorial(make_factors({"a": [1, 2, 3], "b": ["x", "y"]}))
>>> d.points
((1, 'x'), (2, 'x'), (3, 'x'), (1, 'y'), (2, 'y'), (3, 'y'))
"""

from __future__ import annotations

import math

import numpy as np

from harness.design._base import Design
from harness.design.factors import FactorSet
from harness.errors import DesignError
from sparkdl.runspec import MAX_DESIGN_ROWS


def full_factorial(factors: FactorSet) -> Design:
    """Every combination of every factor's levels, in standard order."""
    sizes = [len(f.levels) for f in factors.factors]
    n = math.prod(sizes)  # exact: numpy's product would wrap around
    if n > MAX_DESIGN_ROWS:
        raise DesignError(f"a full factorial of {' x '.join(map(str, sizes))} levels has {n} runs, more than the "
                          f"{MAX_DESIGN_ROWS} a campaign takes: use fewer levels or a fractional design")
    index = np.empty((n, len(sizes)), dtype=int)
    stride = 1
    for j, size in enumerate(sizes):
        index[:, j] = (np.arange(n) // stride) % size
        stride *= size
    return Design(kind="full", factors=factors, index=index)
