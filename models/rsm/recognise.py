"""Which response-surface design a set of coded settings is: Box-Behnken, central composite
(with its alpha), face-centred, a 3^k grid, or none of these (the fit still works if estimable).

Works on the coded settings of :class:`~models.rsm.coding.Coding` (cube at +-1), from the
distinct settings only; centre replicates are counted.
"""

from __future__ import annotations

import itertools

import numpy as np

TOL = 1e-6


def _rows(x: np.ndarray) -> set[tuple[float, ...]]:
    return {tuple(np.round(r, 6) + 0.0) for r in x}


def recognise(coded: np.ndarray) -> str:
    """A short description, e.g. ``Box-Behnken (3 factors, 12 edge points + centre x3)``."""
    x = np.asarray(coded, dtype=float)
    k = x.shape[1]
    centre = int(np.all(np.abs(x) < TOL, axis=1).sum())
    pts = _rows(x) - {tuple([0.0] * k)}
    cube = set(itertools.product([-1.0, 1.0], repeat=k))
    where = f" + centre x{centre}" if centre else ", no centre point"
    if k >= 3:
        bbd = set()
        for i, j in itertools.combinations(range(k), 2):
            for a, b in itertools.product([-1.0, 1.0], repeat=2):
                r = [0.0] * k
                r[i], r[j] = a, b
                bbd.add(tuple(r))
        if pts == bbd:
            return f"Box-Behnken ({k} factors, {len(bbd)} edge points{where})"
    axial = pts - cube
    if cube <= pts and len(axial) == 2 * k:
        alphas = {round(max(abs(v) for v in r), 4) for r in axial}
        one_axis = all(sum(abs(v) > TOL for v in r) == 1 for r in axial)
        if one_axis and len(alphas) == 1:
            a = alphas.pop()
            if abs(a - 1) < 1e-3:
                return f"face-centred central composite ({k} factors{where})"
            kind = " rotatable" if abs(a - 2 ** (k / 4)) < 2e-3 else ""
            return f"central composite,{kind} alpha = {a:g} ({k} factors{where})"
    grid = set(itertools.product([-1.0, 0.0, 1.0], repeat=k)) - {tuple([0.0] * k)}
    if pts == grid:
        return f"3^{k} full factorial{where}"
    return f"{len(pts) + (1 if centre else 0)} distinct settings, not a standard response-surface design"
