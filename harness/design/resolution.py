"""The smallest two-level design of a required resolution, found by searching generator sets.

For n = ceil(log2(k+1)), ... base factors the search tries every set of p = k - n generator
words over the base letters and keeps, among the sets whose full defining relation has no
word shorter than R, the one of minimum aberration (fewest shortest words). The first n
with such a set gives the fewest runs; when only n = k works the design is the full
factorial. A design is built from the chosen generators and its resolution is recomputed
from its defining relation (the tests recompute it again from the columns).

>>> from harness.design.factors import make_factors
>>> d = by_resolution(make_factors({n: [0, 1] for n in "abcdefg"}), 3)
>>> d.n_runs, [str(g) for g in d.generators]
(8, ['D=AB', 'E=AC', 'F=BC', 'G=ABC'])
"""

from __future__ import annotations

from harness.design._base import Design, Generator
from harness.design.factors import FactorSet
from harness.design.fractional import fractional
from harness.design.full import full_factorial
from harness.errors import DesignError

MAX_NODES = 2_000_000  # search steps before giving up on proving a size infeasible


def by_resolution(factors: FactorSet, resolution: int) -> Design:
    """The fewest-run 2^(k-p) design of ``factors`` whose resolution is at least ``resolution``."""
    k = len(factors.factors)
    if resolution < 3:
        raise DesignError(f"--resolution must be >= 3 (resolution {resolution} aliases main effects), got {resolution}")
    for f in factors.factors:
        if len(f.levels) != 2:
            raise DesignError(f"factor {f.name} has {len(f.levels)} levels; a fractional factorial needs exactly 2")
    letters = factors.letters
    for n in range(1, k):
        if 2**n < k + 1:
            continue  # too few runs to estimate k main effects
        masks = search_words(n, k - n, resolution)
        if masks is not None:
            gens = tuple(
                Generator(letters[n + i], "".join(letters[j] for j in range(n) if m >> j & 1))
                for i, m in enumerate(masks)
            )
            return fractional(factors, gens)
    return full_factorial(factors)


def search_words(n: int, p: int, resolution: int) -> tuple[int, ...] | None:
    """Minimum-aberration base-letter masks for p generators over n base factors, or None.

    Generated letter i is bit n + i; a candidate word must have at least resolution - 1 base
    letters. Sets are grown in candidate order and pruned as soon as a word of the partial
    defining relation is shorter than ``resolution``.
    """
    cands = sorted(
        (m for m in range(1, 2**n) if bin(m).count("1") >= max(2, resolution - 1)),
        key=lambda m: (bin(m).count("1"), [j for j in range(n) if m >> j & 1]),
    )
    best: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    steps = 0

    def grow(chosen: list[int], relation: list[int], start: int) -> None:
        nonlocal best, steps
        if len(chosen) == p:
            pattern = _wordlength_pattern(relation, n + p)
            if best is None or pattern < best[0]:
                best = (pattern, tuple(chosen))
            return
        for c in range(start, len(cands) - (p - len(chosen)) + 1):
            steps += 1
            if steps > MAX_NODES:
                raise DesignError(
                    f"search for a resolution {resolution} design of {n + p} factors is too large; "
                    "give --generators instead"
                )
            word = cands[c] | 1 << (n + len(chosen))
            new = [word] + [word ^ w for w in relation]
            if min(bin(w).count("1") for w in new) >= resolution:
                grow(chosen + [cands[c]], relation + new, c + 1)

    grow([], [], 0)
    return None if best is None else best[1]


def _wordlength_pattern(relation: list[int], k: int) -> tuple[int, ...]:
    counts = [0] * (k + 1)
    for w in relation:
        counts[bin(w).count("1")] += 1
    return tuple(counts[3:])

