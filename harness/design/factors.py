"""Factors and their levels, read from a TOML factors file.

A factors file lists one table per factor, in the order that gives them the letters
A, B, C, ... (the letter I is skipped, as in Montgomery, because I is the identity)::

    [factors.nodes]
    levels = [1, 4]
    [factors.model]
    levels = ["lenet", "birnn"]

    [constants]            # optional: the same value in every run
    epochs = 10
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import DesignError
from sparkdl import config

Level = int | float | str

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # no I: it stands for the identity column
RESERVED = ("run", "replicate")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Factor:
    """One factor: its column name, its letter and its levels in the listed order."""

    name: str
    letter: str
    levels: tuple[Level, ...]

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, (int, float)) for v in self.levels)

    def label(self) -> str:
        return f"{self.letter}={self.name} {list(self.levels)}"


@dataclass(frozen=True)
class FactorSet:
    """The factors of a study, in letter order, and the constants every run shares."""

    factors: tuple[Factor, ...]
    constants: tuple[tuple[str, Level], ...] = ()

    def __post_init__(self) -> None:
        if not self.factors:
            raise DesignError("no factors: add at least one [factors.NAME] table with levels = [...]")
        names = [f.name for f in self.factors] + [n for n, _ in self.constants]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise DesignError(f"name {dup[0]!r} is used twice; factor and constant names must be unique")

    @property
    def letters(self) -> str:
        return "".join(f.letter for f in self.factors)

    def by_name(self, name: str) -> Factor:
        for f in self.factors:
            if f.name == name:
                return f
        known = ", ".join(f.name for f in self.factors)
        raise DesignError(f"unknown factor {name!r}; the factors are {known}")

    def by_letter(self, letter: str) -> Factor:
        for f in self.factors:
            if f.letter == letter:
                return f
        raise DesignError(f"unknown factor letter {letter!r}; {self.legend()}")

    def legend(self) -> str:
        return "the factors are " + ", ".join(f"{f.letter}={f.name}" for f in self.factors)


def make_factors(levels: dict[str, list[Level]], constants: dict[str, Level] | None = None) -> FactorSet:
    """Factors from ``{name: levels}`` in insertion order, checked as a factors file is."""
    if len(levels) > len(LETTERS):
        raise DesignError(f"{len(levels)} factors: at most {len(LETTERS)} are supported (letters A..Z without I)")
    factors = tuple(
        Factor(_check_name(name, "factor"), LETTERS[i], _check_levels(name, values))
        for i, (name, values) in enumerate(levels.items())
    )
    consts = tuple((_check_name(n, "constant"), _check_value(n, v)) for n, v in (constants or {}).items())
    return FactorSet(factors, consts)


def load_factors(path: str | Path) -> FactorSet:
    """Read a factors file; every problem is a one-line :class:`DesignError`."""
    path = Path(path)
    doc = config.read_toml(path, "factors file", error=DesignError)
    try:
        return parse_factors(doc)
    except DesignError as exc:
        raise DesignError(f"{path}: {exc}") from exc


def parse_factors(doc: dict[str, Any]) -> FactorSet:
    """A :class:`FactorSet` from a parsed factors document."""
    unknown = sorted(set(doc) - {"factors", "constants"})
    if unknown:
        raise DesignError(f"unknown table [{unknown[0]}]; a factors file has [factors.NAME] tables and [constants]")
    tables = doc.get("factors")
    if not isinstance(tables, dict) or not tables:
        raise DesignError("no [factors.NAME] tables; add e.g. [factors.nodes] with levels = [1, 4]")
    levels: dict[str, list[Level]] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise DesignError(f"factors.{name} must be a table with levels = [...], e.g. [factors.{name}]")
        extra = sorted(set(table) - {"levels"})
        if extra:
            raise DesignError(f"[factors.{name}] has unknown key {extra[0]!r}; the only key is levels")
        if "levels" not in table:
            raise DesignError(f"[factors.{name}] has no levels; add levels = [low, high]")
        levels[name] = table["levels"]
    constants = doc.get("constants", {})
    if not isinstance(constants, dict):
        raise DesignError("constants must be a table: [constants] with NAME = value lines")
    return make_factors(levels, constants)


def _check_name(name: str, what: str) -> str:
    if not _NAME.match(name):
        raise DesignError(f"{what} name {name!r} is not a valid column name; use letters, digits and _")
    if name in RESERVED:
        raise DesignError(f"{what} name {name!r} is reserved for the design's own column; rename it")
    return name


def _check_value(name: str, value: Any) -> Level:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DesignError(f"{name}: value {value!r} must be a number or a string")
    if isinstance(value, float) and not math.isfinite(value):
        raise DesignError(f"{name}: value {value!r} must be finite")
    if isinstance(value, str) and (not value or value != value.strip() or "," in value):
        raise DesignError(f"{name}: string value {value!r} must be non-empty, without commas or edge spaces")
    return value


def _check_levels(name: str, values: Any) -> tuple[Level, ...]:
    if not isinstance(values, list):
        raise DesignError(f"factors.{name}.levels must be a list, e.g. levels = [1, 4]")
    levels = tuple(_check_value(f"factors.{name}.levels", v) for v in values)
    if len(levels) < 2:
        raise DesignError(
            f"factors.{name} has {len(levels)} level(s); a factor needs >= 2 (fixed values go in [constants])"
        )
    kinds = {isinstance(v, str) for v in levels}
    if len(kinds) > 1:
        raise DesignError(f"factors.{name}.levels mixes numbers and strings; use one kind")
    if len(set(levels)) < len(levels):
        raise DesignError(f"factors.{name}.levels has a repeated level; list each level once")
    return levels
