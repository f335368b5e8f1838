"""Two-level fractional factorial designs from generators, with defining relation and aliases.

Words are bit masks over the factors (bit j is the j-th factor's letter) with a sign. A
generator ``F=ABCDE`` makes F's column the product of A..E's columns, i.e. adds the word
I = ABCDEF to the defining relation; the full relation is every product of the generator
words. An effect's aliases are its products with every word of the relation.

>>> from harness.design.factors import make_factors
>>> fs = make_factors({n: [-1, 1] for n in "abcd"})
>>> d = fractional(fs, parse_generators("D=ABC", fs))
>>> d.coded[:, 3].astype(int).tolist()
[-1, 1, 1, -1, 1, -1, -1, 1]
>>> [str(w) for w in d.defining_relation], d.resolution
(['ABCD'], 4)
>>> str(d.aliases[4])
'AB = CD'
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from harness.design._base import AliasChain, Design, Generator, Word
from harness.design.factors import FactorSet
from harness.errors import DesignError

Signed = tuple[int, int]  # (mask, sign)
_GEN = re.compile(r"^([A-Za-z])=([+-]?)([A-Za-z]*)$")


def parse_generators(text: str, factors: FactorSet) -> tuple[Generator, ...]:
    """Generators from ``"F=ABCDE"``, several separated by commas or spaces."""
    tokens = [t for t in re.split(r"[,\s]+", re.sub(r"\s*=\s*", "=", text.strip())) if t]
    if not tokens:
        raise DesignError("no generators given; write e.g. --generators F=ABCDE")
    gens = tuple(_parse_one(t, factors) for t in tokens)
    seen: set[str] = set()
    for g in gens:
        if g.letter in seen:
            raise DesignError(f"factor {g.letter} is generated twice; give one generator per generated factor")
        seen.add(g.letter)
    return gens


def _parse_one(token: str, factors: FactorSet) -> Generator:
    m = _GEN.match(token)
    if not m or not m.group(3):
        raise DesignError(f"generator {token!r} is not of the form X=WORD (e.g. F=ABCDE)")
    letter, sign, word = m.group(1).upper(), m.group(2), m.group(3).upper()
    if letter == "I":
        raise DesignError(f"{token!r} is a defining word, not a generator; write it as e.g. F=ABCDE for I=ABCDEF")
    for ch in letter + word:
        if ch not in factors.letters:
            raise DesignError(f"generator {token!r} names unknown letter {ch}; {factors.legend()}")
    repeated = sorted({ch for ch in word if word.count(ch) > 1})
    if repeated:
        raise DesignError(f"generator {token!r} repeats letter {repeated[0]}; name each letter once")
    if letter in word:
        raise DesignError(f"generator {token!r} uses {letter} on both sides; define it from other factors")
    return Generator(letter, word, -1 if sign == "-" else 1)


def fractional(factors: FactorSet, generators: tuple[Generator, ...]) -> Design:
    """The 2^(k-p) fraction of ``factors`` defined by ``generators``, in standard order."""
    not_two = [f for f in factors.factors if len(f.levels) != 2]
    if not_two:
        f = not_two[0]
        raise DesignError(
            f"factor {f.name} has {len(f.levels)} levels; a fractional factorial needs exactly 2 "
            "(use --kind full for more levels)"
        )
    letters = factors.letters
    k = len(letters)
    columns = _resolve(generators, letters)
    words = [(columns[g.letter][0] | 1 << letters.index(g.letter), columns[g.letter][1]) for g in generators]
    relation = defining_relation(words)
    shortest = min((bin(m).count("1") for m, _ in relation), default=None)
    if shortest == 1:
        word = next(w for w in relation if bin(w[0]).count("1") == 1)
        raise DesignError(
            f"generators {' '.join(map(str, generators))} are not independent: they make "
            f"{word_of(word, letters)} constant; define each generated factor from different base factors"
        )
    if shortest == 2:
        word = word_of(next(w for w in relation if bin(w[0]).count("1") == 2), letters)
        raise DesignError(
            f"generators {' '.join(map(str, generators))} alias main effects {word.letters[0]} and "
            f"{word.letters[1]} (resolution II); use words of at least 2 letters that differ"
        )
    base = [j for j, ch in enumerate(letters) if ch not in columns]
    signs = np.ones((2 ** len(base), k), dtype=int)
    for pos, j in enumerate(base):
        signs[:, j] = np.where((np.arange(2 ** len(base)) >> pos) & 1, 1, -1)
    for ch, (mask, sign) in columns.items():
        cols = [j for j in range(k) if mask >> j & 1]
        signs[:, letters.index(ch)] = sign * np.prod(signs[:, cols], axis=1)
    words_out = tuple(sorted((word_of(w, letters) for w in relation), key=lambda w: (len(w.letters), w.letters)))
    return Design(
        kind="fractional",
        factors=factors,
        index=(signs > 0).astype(int),
        generators=tuple(generators),
        defining_relation=words_out,
        resolution=shortest,
        aliases=alias_chains(k, relation, letters),
    )


def _resolve(generators: tuple[Generator, ...], letters: str) -> dict[str, Signed]:
    """Each generated letter's column as a signed product of base columns only."""
    generated = {g.letter for g in generators}
    pending = list(generators)
    done: dict[str, Signed] = {}
    while pending:
        ready = [g for g in pending if all(ch not in generated or ch in done for ch in g.word)]
        if not ready:
            names = " ".join(map(str, pending))
            raise DesignError(f"generators {names} are not independent (circular); define each from base factors")
        for g in ready:
            mask, sign = 0, g.sign
            for ch in g.word:
                m, s = done.get(ch, (1 << letters.index(ch), 1))
                mask, sign = mask ^ m, sign * s
            done[g.letter] = (mask, sign)
            pending.remove(g)
    return done


def defining_relation(words: list[Signed]) -> list[Signed]:
    """All 2^p - 1 products of the p generator words (the identity excluded)."""
    out = []
    for r in range(1, len(words) + 1):
        for combo in itertools.combinations(words, r):
            mask, sign = 0, 1
            for m, s in combo:
                mask, sign = mask ^ m, sign * s
            out.append((mask, sign))
    return out


def alias_chains(k: int, relation: list[Signed], letters: str) -> tuple[AliasChain, ...]:
    """Alias chains of every main effect and two-factor interaction, each chain listed once."""
    if not relation:
        return ()
    effects = [1 << j for j in range(k)] + [1 << i | 1 << j for i, j in itertools.combinations(range(k), 2)]
    shown: set[int] = set()
    chains = []
    for e in effects:
        if e in shown:
            continue
        aliases = sorted(
            (word_of((e ^ m, s), letters) for m, s in relation),
            key=lambda w: (len(w.letters), w.letters),
        )
        shown.update(e ^ m for m, _ in relation)
        chains.append(AliasChain(word_of((e, 1), letters).letters, tuple(aliases)))
    return tuple(chains)


def word_of(signed: Signed, letters: str) -> Word:
    mask, sign = signed
    return Word("".join(ch for j, ch in enumerate(letters) if mask >> j & 1), sign)
