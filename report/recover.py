"""The design behind a results table, recovered from its factor columns.

Only the rows are known, not the factors file, so the design is read off the distinct factor
combinations (the design points):

* which columns vary (the factors, lettered A, B, C, ... without I in column order) and which
  are fixed;
* the levels of each factor, the number of points and of jobs per point;
* for two-level factors, the defining relation: every product of coded (-1/+1) columns that is
  constant over the points. When those words form a group of 2^p words and there are
  2^(k-p) points, the points are a regular 2^(k-p) fraction; its generators come from the
  relation by Gaussian elimination over GF(2) and the alias structure from
  :mod:`harness.design` (the same text ``sparkdl design`` prints). Any other set of
  points is described by its counts only: aliasing is not defined for it.

Text levels are coded in sorted order (the sign of a word depends on that choice; which
effects are aliased does not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.design import AliasChain, Generator, Word, describe, fractional, full_factorial, make_factors
from harness.design._base import ROMAN
from harness.design.factors import LETTERS
from harness.design.fractional import alias_chains, word_of
from harness.errors import DesignError

MAX_WORD_FACTORS = 12  # 2^12 column products over at most 2^12 points stay small


@dataclass(frozen=True)
class RecoveredFactor:
    """One factor as seen in the data: its column, letter and sorted levels."""

    name: str
    letter: str
    levels: tuple[int | float | str, ...]

    @property
    def numeric(self) -> bool:
        return all(not isinstance(v, str) for v in self.levels)


@dataclass(frozen=True)
class RecoveredDesign:
    """What the rows say about the design: factors, points, replication and aliasing."""

    factors: tuple[RecoveredFactor, ...]
    constants: tuple[tuple[str, object], ...]
    n_jobs: int
    n_points: int
    jobs_per_point: tuple[int, int]
    kind: str
    title: str
    generators: tuple[Generator, ...] = ()
    defining_relation: tuple[Word, ...] = ()
    resolution: int | None = None
    aliases: tuple[AliasChain, ...] = ()
    lines: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.factors)

    @property
    def replicated(self) -> bool:
        return self.jobs_per_point[1] > 1

    def replication_text(self) -> str:
        lo, hi = self.jobs_per_point
        each = f"{lo} job(s) each" if lo == hi else f"{lo} to {hi} jobs each"
        return f"{self.n_points} design point(s), {each}, {self.n_jobs} job(s) in all"


def _python(value: object) -> int | float | str:
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return int(f) if f.is_integer() and abs(f) < 2**53 else f
    return str(value)


def _levels(series: pd.Series) -> tuple[int | float | str, ...]:
    values = [_python(v) for v in series.dropna().unique()]
    if all(not isinstance(v, str) for v in values):
        return tuple(sorted(values, key=float))
    return tuple(sorted(str(v) for v in values))


def coded_points(points: pd.DataFrame, factors: tuple[RecoveredFactor, ...]) -> np.ndarray:
    """The points of two-level factors as a -1/+1 int8 matrix (low level = first sorted level)."""
    cols = []
    for f in factors:
        values = points[f.name].map(_python)
        cols.append(np.where(values == f.levels[1], 1, -1).astype(np.int8))
    return np.column_stack(cols) if cols else np.empty((len(points), 0), dtype=np.int8)


def constant_words(x: np.ndarray) -> dict[int, int]:
    """Every non-empty column product (bit mask) that is constant over the rows: mask -> sign."""
    n, k = x.shape
    products = np.empty((2**k, n), dtype=np.int8)
    products[0] = 1
    found: dict[int, int] = {}
    for mask in range(1, 2**k):
        low = mask & -mask
        products[mask] = products[mask ^ low] * x[:, low.bit_length() - 1]
        first = int(products[mask, 0])
        if np.all(products[mask] == first):
            found[mask] = first
    return found


def generators_from_relation(relation: dict[int, int], letters: str) -> tuple[Generator, ...]:
    """Independent generators of a defining relation: each generated letter = a word of base letters.

    Gaussian elimination over GF(2) with each basis word's highest letter as its pivot, reduced
    so that a pivot occurs in no other basis word; the non-pivot letters are the base factors.
    """
    basis: dict[int, int] = {}  # pivot bit -> mask
    for mask in sorted(relation):
        m = mask
        while m:
            top = m.bit_length() - 1
            if top not in basis:
                basis[top] = m
                break
            m ^= basis[top]
    for top in sorted(basis):
        for other in basis:
            if other != top and basis[other] >> top & 1:
                basis[other] ^= basis[top]
    gens = []
    for top in sorted(basis):
        mask = basis[top]
        word = "".join(letters[j] for j in range(len(letters)) if j != top and mask >> j & 1)
        gens.append(Generator(letters[top], word, relation[mask]))
    return tuple(gens)


def recover_design(rows: pd.DataFrame, candidates: tuple[str, ...]) -> RecoveredDesign:
    """The design of ``rows`` over the ``candidates`` columns (those that vary are the factors)."""
    varying = [c for c in candidates if rows[c].nunique(dropna=True) > 1]
    constants = tuple(
        (c, _python(rows[c].dropna().iloc[0])) for c in candidates if c not in varying and rows[c].notna().any()
    )
    if len(varying) > len(LETTERS):
        varying = varying[: len(LETTERS)]
    factors = tuple(RecoveredFactor(c, LETTERS[i], _levels(rows[c])) for i, c in enumerate(varying))
    n_jobs = len(rows)
    if not factors:
        return RecoveredDesign((), constants, n_jobs, 1 if n_jobs else 0, (n_jobs, n_jobs), "single point",
                               "one design point: no factor varies",
                               lines=("every job ran the same configuration, so no effect can be estimated",))
    counts = rows.groupby(list(varying), dropna=False).size()
    points = counts.index.to_frame(index=False)
    common = dict(factors=factors, constants=constants, n_jobs=n_jobs, n_points=len(points),
                  jobs_per_point=(int(counts.min()), int(counts.max())))
    sizes = [len(f.levels) for f in factors]
    grid = math.prod(sizes)
    if all(s == 2 for s in sizes):
        return _two_level(points, common)
    shape = "x".join(map(str, sizes))
    if len(factors) == 1:
        return RecoveredDesign(**common, kind="one factor", title=f"one factor, {factors[0].name}, at {grid} levels",
                               lines=("a one-factor design: no interactions, no aliasing",))
    if len(points) == grid:
        design = full_factorial(make_factors({f.name: list(f.levels) for f in factors}))
        return RecoveredDesign(**common, kind="full factorial", title=f"{shape} full factorial, {grid} points",
                               lines=tuple(describe(design)))
    return RecoveredDesign(**common, kind="partial grid", title=f"{len(points)} of the {grid} points of a {shape} grid",
                           lines=("not every factor has two levels and not every combination was run: the points are "
                                  "not a regular fraction, so no defining relation or alias table applies; the ANOVA "
                                  "finds which terms are estimable from the points themselves",))


def _two_level(points: pd.DataFrame, common: dict) -> RecoveredDesign:
    factors: tuple[RecoveredFactor, ...] = common["factors"]
    k, n = len(factors), common["n_points"]
    letters = "".join(f.letter for f in factors)
    if n == 2**k:
        design = full_factorial(make_factors({f.name: list(f.levels) for f in factors}))
        return RecoveredDesign(**common, kind="full factorial", title=f"2^{k} full factorial, {n} points",
                               lines=tuple(describe(design)))
    if k > MAX_WORD_FACTORS:
        return RecoveredDesign(**common, kind="two-level", title=f"{n} points of a 2^{k} factorial",
                               lines=(f"{k} factors: the defining relation is not searched beyond {MAX_WORD_FACTORS} factors",))
    relation = constant_words(coded_points(points, factors))
    p = int(round(math.log2(len(relation) + 1))) if relation else 0
    if not relation or len(relation) + 1 != 2**p or n * 2**p != 2**k:
        return RecoveredDesign(**common, kind="irregular two-level",
                               title=f"{n} of the {2**k} points of a 2^{k} factorial (not a regular fraction)",
                               lines=(f"the {n} points are not a regular 2^({k}-p) fraction (they are not defined by "
                                      "a set of generators), so effects are partially aliased; the ANOVA finds "
                                      "which terms are estimable from the points themselves",))
    gens = generators_from_relation(relation, letters)
    signed = sorted(relation.items())
    words = tuple(sorted((word_of(w, letters) for w in signed), key=lambda w: (len(w.letters), w.letters)))
    resolution = min(len(w.letters) for w in words)
    chains = alias_chains(k, signed, letters)
    title = f"2^({k}-{p}) fractional factorial, {n} points"
    legend = "factors: " + ", ".join(f"{f.letter}={f.name} {list(f.levels)}" for f in factors)
    try:
        design = fractional(make_factors({f.name: list(f.levels) for f in factors}), gens)
    except DesignError:
        design = None  # resolution <= II: harness.design refuses to build it, so describe it here
    if design is not None and {tuple(r) for r in design.points} == {
        tuple(_python(v) for v in r) for r in points[[f.name for f in factors]].itertuples(index=False)
    }:
        lines = tuple(describe(design))
    else:
        clash = [str(w) for w in words if len(w.letters) <= 2]
        lines = (title, legend, "generators: " + ", ".join(map(str, gens)),
                 "defining relation: I = " + " = ".join(map(str, words)),
                 f"resolution: {ROMAN.get(resolution, resolution)}" + (f" - main effects are aliased with each other ({', '.join(clash)}): "
                                                "their separate effects cannot be estimated" if resolution <= 2 else ""),
                 "alias structure (main effects and two-factor interactions):",
                 *(f"  {c}" for c in chains if all(w.letters for w in c.aliases)))
    return RecoveredDesign(**common, kind="fractional factorial", title=title, generators=gens,
                           defining_relation=words, resolution=resolution, aliases=chains, lines=lines)
