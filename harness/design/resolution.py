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

from dataclasses import dataclass

from harness.design._base import Design, Generator
from harness.design.factors import FactorSet
from harness.design.fractional import fractional
from harness.design.full import full_factorial
from harness.errors import DesignError

MAX_WORK = 5_000_000  # word products computed before the search stops (a few seconds)


@dataclass(frozen=True)
class Search:
    """Outcome of a generator search: the generators (none for the full factorial).

    ``minimum_aberration`` is False when the search budget ran out after finding a design
    of the required resolution and run count but before checking every alternative.
    """

    generators: tuple[Generator, ...]
    minimum_aberration: bool


def by_resolution(factors: FactorSet, resolution: int) -> Design:
    """The fewest-run 2^(k-p) design of ``factors`` whose resolution is at least ``resolution``."""
    found = search_generators(factors, resolution)
    return fractional(factors, found.generators) if found.generators else full_factorial(factors)


def search_generators(factors: FactorSet, resolution: int, whole_plot: tuple[str, ...] = ()) -> Search:
    """Generators of the fewest-run design of at least ``resolution``, of minimum aberration.

    With ``whole_plot`` factors (hard-to-change: a split-plot design) only generator sets that suit a
    split plot are tried, as in FrF2: a generated whole-plot factor's word holds whole-plot letters only,
    and no word of the defining relation has exactly one subplot letter (which would alias a subplot
    main effect with a whole-plot effect)."""
    k = len(factors.factors)
    if resolution < 3:
        raise DesignError(f"--resolution must be >= 3 (resolution {resolution} aliases main effects), got {resolution}")
    for f in factors.factors:
        if len(f.levels) != 2:
            raise DesignError(f"factor {f.name} has {len(f.levels)} levels; a fractional factorial needs exactly 2")
    # whole-plot factors take the first positions (base letters where possible), as FrF2 orders them
    order = sorted(range(k), key=lambda j: factors.factors[j].name not in whole_plot)
    letters = "".join(factors.letters[j] for j in order)
    whole = sum(1 << i for i, j in enumerate(order) if factors.factors[j].name in whole_plot)
    for n in range(1, k):
        if 2**n < k + 1:
            continue  # too few runs to estimate k main effects
        masks, complete = search_words(n, k - n, resolution, whole)
        if masks is not None:
            gens = tuple(
                Generator(letters[n + i], "".join(letters[j] for j in range(n) if m >> j & 1))
                for i, m in enumerate(masks)
            )
            return Search(gens, complete)
    return Search((), True)


def search_words(n: int, p: int, resolution: int, whole: int = 0) -> tuple[tuple[int, ...] | None, bool]:
    """Base-letter masks for p generators over n base factors (or None), and whether the search finished.

    Generated letter i is bit n + i; a candidate word has at least resolution - 1 base letters.
    Sets are grown in candidate order (by size, then letters) and pruned as soon as the
    partial defining relation has a word shorter than ``resolution`` or a word-length
    pattern no better than the best complete set's (adding generators only adds words).
    Relabelling base letters maps any set onto one whose first word is AB, ABC, ... of its
    size, so only those first words are tried. Past ``MAX_WORK`` word products the best
    set so far is returned, unfinished; with none found yet that is a :class:`DesignError`.
    """
    size = lambda m: bin(m).count("1")  # noqa: E731
    k = n + p
    sub = (2**k - 1) & ~whole  # the subplot factors' bits (all of them when there are no whole plots)
    cands = sorted(
        (m for m in range(1, 2**n) if size(m) >= max(2, resolution - 1)),
        key=lambda m: (size(m), [j for j in range(n) if m >> j & 1]),
    )
    firsts = [c for c in range(len(cands)) if cands[c] == (1 << size(cands[c])) - 1]
    if whole:  # letters are no longer interchangeable: try every first word
        firsts = list(range(len(cands)))

    def split_plot_ok(i: int, mask: int, new: list[int]) -> bool:
        if not whole:
            return True
        if whole >> (n + i) & 1 and mask & sub:
            return False  # a whole-plot factor generated from subplot letters
        return all(size(w & sub) != 1 for w in new)

    best: tuple[list[int], tuple[int, ...]] | None = None
    work = 0

    def grow(chosen: list[int], relation: list[int], counts: list[int], start: int) -> None:
        nonlocal best, work
        if best is not None and counts >= best[0]:
            return
        if len(chosen) == p:
            best = (counts, tuple(chosen))
            return
        options = firsts if not chosen else range(start, len(cands) - (p - len(chosen)) + 1)
        for c in options:
            work += len(relation) + 1
            if work > MAX_WORK:
                raise _OutOfBudget
            word = cands[c] | 1 << (n + len(chosen))
            new = [word] + [word ^ w for w in relation]
            if min(map(size, new)) >= resolution and split_plot_ok(len(chosen), cands[c], new):
                grown = counts.copy()
                for w in new:
                    grown[size(w)] += 1
                grow(chosen + [cands[c]], relation + new, grown, c + 1)

    try:
        grow([], [], [0] * (k + 1), 0)
    except _OutOfBudget:
        if best is None:
            raise DesignError(
                f"the search for a resolution {resolution} design of {k} factors in {2**n} runs "
                "is too large; give --generators instead"
            ) from None
        return best[1], False
    return (None if best is None else best[1]), True


class _OutOfBudget(Exception):
    pass

