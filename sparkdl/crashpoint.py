"""A test hook: ``SPARKDL_CRASH_AT=<phase>[:<n>]`` makes the process SIGKILL itself at the n-th
(default first) time it reaches ``crash_point(phase)``.

Crash tests use it to kill a command at an exact instant (e.g. ``worker-spawned``: a worker
JVM started, its pid not yet recorded) instead of racing a timer. Unset, it costs one
environment lookup.
"""

from __future__ import annotations

import os
import signal

ENV = "SPARKDL_CRASH_AT"
_seen: dict[str, int] = {}


def crash_point(phase: str) -> None:
    """SIGKILL this process if ``SPARKDL_CRASH_AT`` names ``phase`` and this is its n-th occurrence."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    name, _, count = spec.partition(":")
    if name != phase:
        return
    _seen[phase] = _seen.get(phase, 0) + 1
    if _seen[phase] == (int(count) if count.isdigit() and int(count) > 0 else 1):
        os.kill(os.getpid(), signal.SIGKILL)
