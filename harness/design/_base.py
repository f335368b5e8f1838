"""The result every design function returns: :class:`Design`, with its aliasing records.

A design is a matrix of level indices in standard order (first factor changing fastest,
as in Yates' order and Marinos 2021's Table I). ``coded`` maps each factor's level rank
linearly onto [-1, +1] (so two-level factors are -1/+1 and Box-Behnken factors -1/0/+1);
``points`` holds the real level values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.design.factors import FactorSet, Level

ROMAN = {2: "II", 3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII", 9: "IX", 10: "X"}


@dataclass(frozen=True, order=True)
class Word:
    """A signed product of factor letters, e.g. ``-ABD``; the empty word is the identity I."""

    letters: str
    sign: int = 1

    def __str__(self) -> str:
        return ("-" if self.sign < 0 else "") + (self.letters or "I")


@dataclass(frozen=True)
class Generator:
    """``letter = sign * word``: the generated factor's column is the product of the word's columns."""

    letter: str
    word: str
    sign: int = 1

    def __str__(self) -> str:
        return f"{self.letter}={'-' if self.sign < 0 else ''}{self.word}"


@dataclass(frozen=True)
class AliasChain:
    """A main effect or two-factor interaction and every effect whose estimate it shares."""

    effect: str
    aliases: tuple[Word, ...]

    @property
    def low_order_aliases(self) -> tuple[Word, ...]:
        """The aliases that are themselves main effects or two-factor interactions."""
        return tuple(w for w in self.aliases if len(w.letters) <= 2)

    def __str__(self) -> str:
        return " = ".join([self.effect, *map(str, self.aliases)])


@dataclass(frozen=True)
class Design:
    """A design in standard order: level indices, coded matrix and, for fractions, its aliasing.

    ``resolution`` is None when no effect is aliased with another (a full factorial) or when
    aliasing does not apply (Box-Behnken). ``defining_relation`` lists every word of the
    defining relation I = ..., not only the generators.
    """

    kind: str
    factors: FactorSet
    index: np.ndarray
    generators: tuple[Generator, ...] = ()
    defining_relation: tuple[Word, ...] = ()
    resolution: int | None = None
    aliases: tuple[AliasChain, ...] = ()
    center_points: int = 0
    coded: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n_levels = np.array([len(f.levels) for f in self.factors.factors])
        object.__setattr__(self, "coded", 2.0 * self.index / (n_levels - 1) - 1.0)

    @property
    def n_runs(self) -> int:
        return int(self.index.shape[0])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.factors.factors)

    @property
    def points(self) -> tuple[tuple[Level, ...], ...]:
        """Real level values, one tuple per run in standard order."""
        levels = [f.levels for f in self.factors.factors]
        return tuple(tuple(levels[j][i] for j, i in enumerate(row)) for row in self.index.tolist())

    def resolution_label(self) -> str:
        if self.resolution is None:
            return "not applicable" if self.kind == "box-behnken" else "full (no effect is aliased)"
        return ROMAN.get(self.resolution, str(self.resolution))

    def title(self) -> str:
        k, n = len(self.factors.factors), self.n_runs
        if self.kind == "fractional" and self.generators:
            return f"2^({k}-{len(self.generators)}) fractional factorial, {n} runs"
        if self.kind == "box-behnken":
            return f"Box-Behnken design, {k} factors, {n} runs ({self.center_points} center points)"
        counts = [len(f.levels) for f in self.factors.factors]
        sizes = f"{counts[0]}^{k}" if len(set(counts)) == 1 else "x".join(map(str, counts))
        return f"{sizes} full factorial, {n} runs"
