"""Regexes the user writes (``ingest --fields``, ``logparse --point-pattern``), run under a time bound.

Python's ``re`` backtracks: ``(?P<x>(a+)+)b`` over a path of 40 ``a`` runs for minutes, and nothing
can stop it from inside the process. The ``regex`` module takes the same syntax (named groups
``(?P<name>...)``, backreferences, lookarounds: a pattern that worked with ``re`` means the same) and
gives every call a ``timeout``; a pattern that exceeds it on one subject is refused with that subject
named. RE2 (google-re2) would never need the bound (it runs in linear time) but refuses backreferences
and lookarounds, so some patterns users already pass would stop working.

Nothing else in the tool compiles a regex from input: every such regex goes through :func:`compile`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import regex

#: Seconds one search may take on one subject (a path, a line): real patterns take microseconds.
TIMEOUT_S = 1.0
#: The longest pattern accepted, in characters.
MAX_PATTERN = 4096

ErrorFactory = Callable[[str], Exception]


@dataclass(frozen=True)
class UserRegex:
    """A user's pattern, compiled; :meth:`search` runs it with the time bound."""

    option: str               # the option it came from, e.g. "--fields" (named in every message)
    text: str                 # the pattern as given
    pattern: regex.Pattern    # type: ignore[type-arg]
    error: ErrorFactory       # the exception to raise (the caller's package error)
    timeout_s: float = TIMEOUT_S

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self.pattern.groupindex)

    @property
    def groups(self) -> int:
        return self.pattern.groups

    def search(self, subject: str, what: str = "path") -> regex.Match | None:  # type: ignore[type-arg]
        """``pattern.search(subject)``; a search that exceeds the bound raises the caller's error naming ``subject``."""
        try:
            return self.pattern.search(subject, timeout=self.timeout_s)
        except TimeoutError:
            raise self.error(
                f"{self.option} {_short(self.text)} took over {self.timeout_s:g} s on the {what} {subject!r}: "
                "refused (nested repeats such as (a+)+ backtrack without end); write it without a repeat "
                "inside a repeat, e.g. [^/]+ for one path component") from None


def compile(text: str, option: str, error: ErrorFactory, example: str,
            timeout_s: float = TIMEOUT_S) -> UserRegex:
    """``text`` compiled as a :class:`UserRegex`, or ``error(message)`` naming ``option`` and ``example``."""
    if not isinstance(text, str) or not text:
        raise error(f"{option} is empty; give a regular expression, e.g. {example}")
    if len(text) > MAX_PATTERN:
        raise error(f"{option} is {len(text):,} characters long (at most {MAX_PATTERN:,}); give a shorter "
                    f"regular expression, e.g. {example}")
    try:
        pattern = regex.compile(text)
    except (regex.error, ValueError, OverflowError, RecursionError) as e:
        raise error(f"{option} {_short(text)} is not a regular expression ({e}); e.g. {example}") from None
    return UserRegex(option, text, pattern, error, timeout_s)


def _short(text: str, limit: int = 120) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit - 4] + "...'"
