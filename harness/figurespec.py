"""A ``results = "output"`` job's declared figures: regexes over what the program prints, and derived figures.

Checked when the job file is read (:func:`figure_spec`); read from a run's output by
:mod:`harness.outputfigures`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import HarnessError
from harness.metrics import NAME
from sparkdl.cost import Formula, formula
from sparkdl.errors import CostError

#: At most this many regexes and derived figures per job, each regex at most MAX_REGEX characters.
MAX_PATTERNS = 50
MAX_REGEX = 1_000
#: The harness's measurements a derived figure may use besides the job's own (e.g. ``wall_clock_s =
#: "spark_jobs_span_s"``, so the default cost has its time).
MEASURED = ("spark_jobs_span_s",)


class FigureSpecError(HarnessError):
    """A job's ``figures`` or ``[derived]`` table cannot be used (the message names the fix)."""


def compile_user_regex(text: object, what: str) -> re.Pattern[str]:
    """A user's regex, compiled the way ``harness.ingest --fields`` compiles its regex (:mod:`re`, the text as
    given); :class:`FigureSpecError` when it is not a regex. The one place where a bound on the regex's time
    joins, once the project has one."""
    if not isinstance(text, str) or not text:
        raise FigureSpecError(f"{what} must be a regular expression with named groups, "
                              "e.g. 'Test Error = (?P<test_error>[0-9.eE+-]+)'")
    if len(text) > MAX_REGEX:
        raise FigureSpecError(f"{what} has {len(text)} characters: at most {MAX_REGEX}")
    try:
        return re.compile(text, re.MULTILINE)
    except (re.error, RecursionError, OverflowError) as e:
        raise FigureSpecError(f"{what} {text[:80]!r} is not a regular expression ({e})") from None


@dataclass(frozen=True)
class FigureSpec:
    """A job's declared figures: its regexes (named groups) and the figures derived from them, in order."""

    patterns: tuple[str, ...] = ()
    derived: tuple[tuple[str, str], ...] = ()

    def compiled(self) -> tuple[re.Pattern[str], ...]:
        return tuple(compile_user_regex(p, "figures regex") for p in self.patterns)

    def names(self) -> tuple[str, ...]:
        """Every figure the job declares: each regex's groups, then the derived ones."""
        groups = [n for rx in self.compiled() for n in rx.groupindex]
        return tuple(dict.fromkeys(groups + [n for n, _ in self.derived]))

    def formulas(self) -> tuple[tuple[str, Formula], ...]:
        known = [n for rx in self.compiled() for n in rx.groupindex] + list(MEASURED)
        out = []
        for name, expr in self.derived:
            out.append((name, formula(expr, known, f"[derived] {name}")))
            known.append(name)
        return tuple(out)


def figure_spec(patterns: object, derived: object, where: str) -> FigureSpec:
    """Check a job's ``figures`` list and ``[derived]`` table; :class:`FigureSpecError` names what is wrong."""
    if patterns is None:
        patterns = []
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise FigureSpecError(f"{where}: figures must be a list of regexes, e.g. "
                              "figures = ['Test Error = (?P<test_error>[0-9.eE+-]+)']")
    derived = derived or {}
    if not isinstance(derived, dict) or not all(isinstance(v, str) for v in derived.values()):
        raise FigureSpecError(f"{where}: [derived] must hold name = \"expression\" lines, e.g. accuracy = \"1 - test_error\"")
    if len(patterns) + len(derived) > MAX_PATTERNS:
        raise FigureSpecError(f"{where}: {len(patterns) + len(derived)} figures declared: at most {MAX_PATTERNS}")
    seen: dict[str, str] = {}
    for p in patterns:
        rx = compile_user_regex(p, f"{where}: figures regex")
        if not rx.groupindex:
            raise FigureSpecError(f"{where}: figures regex {p[:80]!r} names no group: name the figure, "
                                  "e.g. (?P<test_error>[0-9.eE+-]+)")
        for name in rx.groupindex:
            if not NAME.fullmatch(name):
                raise FigureSpecError(f"{where}: figure {name!r}: names are letters, digits and '_', at most 64")
            if name in seen and name != "epoch":  # epoch numbers the rows of each regex that has it
                raise FigureSpecError(f"{where}: figure {name} is captured by two regexes ({seen[name][:60]!r} and "
                                      f"{p[:60]!r}): name each figure once")
            seen[name] = p
    for name in derived:
        if not NAME.fullmatch(name):
            raise FigureSpecError(f"{where}: [derived] {name[:40]!r}: names are letters, digits and '_', at most 64")
        if name in seen:
            raise FigureSpecError(f"{where}: [derived] {name} is also a group of a figures regex: name it once")
        seen[name] = name
    spec = FigureSpec(tuple(patterns), tuple(derived.items()))
    try:
        spec.formulas()
    except CostError as e:
        raise FigureSpecError(f"{where}: {e} (a derived figure uses the figures named before it)") from None
    return spec
