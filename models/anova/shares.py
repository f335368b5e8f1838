"""Shares of the variation that add up: the LMG decomposition of R^2 (Lindeman, Merenda and Gold 1980).

A term's LMG share is the gain in R^2 when the term enters the model, averaged over every order in
which the terms can enter (the Shapley value of R^2). The shares are never negative and sum to the
model's R^2 whatever the correlation between the terms' columns, so with the residual's share they
partition the total variation. On an orthogonal design the gain does not depend on the order, and
each share equals the term's sum of squares over the total (``pct_variation``).

Conventions, those of R's relaimpo (Groemping 2006):

* a term is all its model columns (a categorical factor's contrasts enter together);
* interactions are terms too, and an interaction only enters after every term made of a subset of its
  factors (its main effects): the orders averaged over are those that respect this hierarchy.

The computation is exact: it fits the model of every hierarchy-respecting subset of terms (at most
``2**MAX_TERMS`` least-squares fits) and weighs each gain by the number of orders in which it occurs.
Above :data:`MAX_TERMS` terms it is not computed (``LmgShares.computed`` False, with the reason).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparkdl.numbers import finite

#: Exact enumeration up to this many terms (2**12 = 4,096 subsets); above it LMG is not computed.
MAX_TERMS = 12
#: The design is taken as orthogonal when the SS shares (terms and residual) add up to 100 % and
#: each equals its LMG share, within this many percentage points.
ORTHOGONAL_TOL = 0.01


@dataclass(frozen=True)
class LmgShares:
    """LMG shares of the model's terms, in % of the total variation (they sum to 100 * R^2).

    ``ss_pct`` are the same terms' SS / SST (%); ``ss_total_pct`` is the sum of the SS shares of the
    terms and the residual, 100 when they partition the total. ``orthogonal`` is True when the SS
    shares partition it and equal the LMG shares (within :data:`ORTHOGONAL_TOL` points). ``orders``
    is the number of orders of entry averaged over. When ``computed`` is False the tuples are empty
    and ``reason`` says why.
    """

    terms: tuple[str, ...]
    lmg_pct: tuple[float, ...]
    ss_pct: tuple[float, ...]
    r_squared: float
    residual_pct: float
    ss_total_pct: float
    typ: int
    orthogonal: bool
    orders: int
    computed: bool = True
    reason: str | None = None

    def share(self, term: str) -> float:
        """The term's LMG share in % of the total variation (NaN when it has none)."""
        return dict(zip(self.terms, self.lmg_pct)).get(term, math.nan)

    @property
    def ss_miss_pct(self) -> float:
        """How far the SS shares (terms and residual) are from adding up to 100 %, in points."""
        return self.ss_total_pct - 100.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "LMG (average gain in R^2 over all orders of entry; interactions after their main effects)",
            "computed": self.computed,
            "reason": self.reason,
            "orthogonal": self.orthogonal,
            "r_squared": finite(self.r_squared),
            "residual_pct": finite(self.residual_pct),
            "ss_total_pct": finite(self.ss_total_pct),
            "typ": self.typ,
            "orders": self.orders,
            "terms": [{"term": t, "lmg_pct": finite(v), "ss_pct": finite(s)}
                      for t, v, s in zip(self.terms, self.lmg_pct, self.ss_pct)],
        }


def _parents(factors: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """For each term, the terms that must enter before it (those made of a strict subset of its factors)."""
    return {t: frozenset(u for u, g in factors.items() if u != t and g < f) for t, f in factors.items()}


def _closed(mask: int, need: Sequence[int]) -> bool:
    """True when every term in ``mask`` has all its required terms in ``mask`` too."""
    return all(not (mask >> i) & 1 or (need[i] & mask) == need[i] for i in range(len(need)))


def _order_counts(k: int, need: Sequence[int]) -> tuple[dict[int, int], dict[int, int]]:
    """Orders of entry: ``before[S]`` ways to enter the terms of S first, ``after[S]`` ways to finish from S."""
    full = (1 << k) - 1
    closed = [m for m in range(1 << k) if _closed(m, need)]
    before: dict[int, int] = {0: 1}
    for m in sorted(closed, key=lambda m: bin(m).count("1")):
        if m:
            before[m] = sum(before.get(m & ~(1 << i), 0) for i in range(k) if (m >> i) & 1)
    after: dict[int, int] = {full: 1}
    for m in sorted(closed, key=lambda m: -bin(m).count("1")):
        if m != full:
            after[m] = sum(after.get(m | (1 << i), 0) for i in range(k)
                           if not (m >> i) & 1 and (m | (1 << i)) in after)
    return before, after


def _r_squared(x: np.ndarray, y: np.ndarray, cols: list[int], sst: float) -> float:
    """R^2 of y on an intercept and the given columns of x."""
    yc = y - y.mean()
    if not cols:
        return 0.0
    xc = x[:, cols] - x[:, cols].mean(axis=0)
    beta, *_ = np.linalg.lstsq(xc, yc, rcond=None)
    r = yc - xc @ beta
    return 1.0 - float(r @ r) / sst


def lmg(x: np.ndarray, y: np.ndarray, columns: Mapping[str, Sequence[int]],
        factors: Mapping[str, frozenset[str]]) -> tuple[dict[str, float], int]:
    """LMG shares (fractions of the total variation, summing to R^2) and the number of orders.

    ``columns`` maps each term to its columns of ``x`` (no intercept column among them: the
    intercept is always in); ``factors`` maps each term to the factors it is made of, which
    decides the hierarchy. Raises ValueError above :data:`MAX_TERMS` terms.
    """
    terms = list(columns)
    k = len(terms)
    if k > MAX_TERMS:
        raise ValueError(f"{k} terms: LMG is computed exactly up to {MAX_TERMS} terms")
    y = np.asarray(y, dtype=float)
    sst = float(np.sum((y - y.mean()) ** 2))
    if k == 0 or sst <= 0:
        return {t: 0.0 for t in terms}, 1
    parents = _parents({t: factors[t] for t in terms})
    need = [sum(1 << terms.index(p) for p in parents[t]) for t in terms]
    before, after = _order_counts(k, need)
    r2 = {m: _r_squared(x, y, [c for i in range(k) if (m >> i) & 1 for c in columns[terms[i]]], sst)
          for m in before}
    total = before[(1 << k) - 1]
    shares = dict.fromkeys(terms, 0.0)
    for m in before:
        for i in range(k):
            bigger = m | (1 << i)
            if not (m >> i) & 1 and bigger in after:
                shares[terms[i]] += before[m] * after[bigger] * (r2[bigger] - r2[m]) / total
    return shares, total


def lmg_shares(fit: Any, ss_pct: Mapping[str, float], residual_pct: float, typ: int) -> LmgShares:
    """LMG shares of a statsmodels formula fit's terms beside their SS shares (``pct_variation``).

    ``ss_pct`` maps each term (as the ANOVA table names it) to SS / SST in %; ``residual_pct`` is
    the residual's. The terms' columns and factors are read from the fit's patsy design.
    """
    spec = fit.model.data.model_spec
    slices = spec.term_name_slices
    pairs = [(t, n) for t, n in zip(spec.terms, spec.term_names) if n != "Intercept"]
    names = tuple(n for _, n in pairs)
    ss = tuple(float(ss_pct.get(n, math.nan)) for n in names)
    ss_total = float(np.nansum(ss)) + residual_pct
    r2 = float(fit.rsquared)
    if len(names) > MAX_TERMS:
        return LmgShares(names, (), ss, r2, residual_pct, ss_total, typ, False, 0, False,
                         f"not computed: the model has {len(names)} terms and LMG is exact only up to {MAX_TERMS}")
    columns = {n: list(range(slices[n].start, slices[n].stop)) for n in names}
    factors = {n: frozenset(str(f.name()) for f in t.factors) for t, n in pairs}
    x = np.asarray(fit.model.exog, dtype=float)
    y = np.asarray(fit.model.endog, dtype=float)
    shares, orders = lmg(x, y, columns, factors)
    pct = tuple(100 * shares[n] for n in names)
    orthogonal = abs(ss_total - 100.0) <= ORTHOGONAL_TOL and all(
        abs(a - b) <= ORTHOGONAL_TOL for a, b in zip(pct, ss) if math.isfinite(b))
    return LmgShares(names, pct, ss, r2, residual_pct, ss_total, typ, orthogonal, orders)
