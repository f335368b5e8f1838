"""Ernest's performance model (Venkataraman et al. 2016): its features, the one place they are defined.

    t = theta0 + theta1 * s / m + theta2 * log(m) + theta3 * m,   theta >= 0

m is the parallelism (machines or cores), s the amount of work (Ernest's "scale": the input fraction). The terms
are: fixed cost, perfectly parallel work, tree aggregation, per-machine overhead; non-negativity keeps each term's
physical meaning. Ernest's predictor (amplab/ernest, predictor.py) fits theta by non-negative least squares on the
times, features ``[1, s/m, m, log m]`` (the same four in another order).

The model itself is the ``ernest`` curve of :mod:`models.predict.scaling` (one implementation, used by the model
table and the scale-out section): :class:`ErnestModel` is that curve as a prediction model, its amount of work
named by ``work`` (``--work COLUMN``; without it s = 1 and the other factors multiply the curve).
"""

from __future__ import annotations

import numpy as np

from models.errors import InvalidTableError

FEATURE_NAMES: tuple[str, ...] = ("1", "s/m", "log m", "m")


def ernest_design(m: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Ernest's design matrix, columns 1, s/m, log m, m (s = 1 when ``scale`` is None)."""
    m = np.asarray(m, dtype=float)
    if (m < 1).any():
        raise InvalidTableError("parallelism m must be >= 1 for every row (log m and 1/m need it)")
    s = np.ones_like(m) if scale is None else np.asarray(scale, dtype=float)
    return np.column_stack([np.ones_like(m), s / m, np.log(m), m])
