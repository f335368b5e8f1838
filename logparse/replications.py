"""The original study's rule: every design point needs at least N good (ok) logs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from logparse.errors import OptionError
from logparse.records import JobLog
from sparkdl import userregex
from sparkdl.userregex import UserRegex


@dataclass(frozen=True)
class PointCount:
    """How many logs of one design point are ok, failed and incomplete."""

    point: str
    ok: int
    failed: int
    incomplete: int


# The harness's layout: logs/<run>-<replicate>.out, earlier attempts <run>-<replicate>.attemptN.out.
HARNESS_LOG = re.compile(r"^(\d+)-\d+(?:\.attempt\d+)?\.out(?:\.gz)?$")


def point_of(path: str, pattern: UserRegex | None) -> str:
    """The design point a log belongs to: ``pattern``'s first group (or whole match); without a
    pattern, the run number of a harness log (``DIR run N``), else the log's directory."""
    if pattern is None:
        p = Path(path)
        m = HARNESS_LOG.match(p.name)
        return f"{p.parent} run {m.group(1)}" if m else str(p.parent)
    m = pattern.search(path)
    if m is None:
        return path
    return m.group(1) if m.groups() else m.group(0)


def compile_point_pattern(text: str | None) -> UserRegex | None:
    """``--point-pattern``, searched with a time bound (:mod:`sparkdl.userregex`)."""
    if text is None:
        return None
    return userregex.compile(text, "--point-pattern", OptionError, "'(point\\d+)'")


def count_points(logs: list[JobLog], pattern: UserRegex | None = None) -> list[PointCount]:
    """Per design point, the number of logs of each status, sorted by point."""
    counts: dict[str, list[int]] = {}
    for log in logs:
        c = counts.setdefault(point_of(log.path, pattern), [0, 0, 0])
        c[("ok", "failed", "incomplete").index(log.status)] += 1
    return [PointCount(p, *c) for p, c in sorted(counts.items())]


def short_points(logs: list[JobLog], minimum: int, pattern: UserRegex | None = None) -> list[PointCount]:
    """Design points with fewer than ``minimum`` ok logs."""
    if minimum < 1:
        raise OptionError(f"--min-replications must be >= 1, got {minimum}")
    return [c for c in count_points(logs, pattern) if c.ok < minimum]
