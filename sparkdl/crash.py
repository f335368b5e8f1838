"""A test hook: make the process SIGKILL itself at a named point, to prove nothing is lost.

``SPARKDL_CRASH_AT=<point>[:<n>]`` kills the process at the n-th time (default the first) it
passes ``crash_point("<point>")``. Points used: ``cluster-start`` (``LocalCluster.start`` spawned a
daemon, its pid not yet recorded), ``master-spawned`` / ``worker-spawned`` (the same in any
cluster.local or cluster.daemon command: between spawning a daemon and recording its pid),
``yarn-spawned`` (the local YARN: HDFS spawned, the ResourceManager not yet), ``rescale``, ``runtime-switch`` (the cluster of one runtime stopped, the next one's not
started), ``job-start``, ``mid-job``, ``parse``, ``store``. Unset, it costs one
dictionary lookup. The crash tests (tests/test_crash*.py, bench/kill_matrix.py) set it.
"""

from __future__ import annotations

import os
import signal

ENV = "SPARKDL_CRASH_AT"
_passed: dict[str, int] = {}


def crash_point(name: str) -> None:
    """SIGKILL this process if ``SPARKDL_CRASH_AT`` names this point (and this occurrence)."""
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _passed[name] = _passed.get(name, 0) + 1
    if _passed[name] == (int(nth) if nth else 1):
        os.kill(os.getpid(), signal.SIGKILL)


def crash_later(name: str, seconds: float) -> None:
    """Pass ``crash_point(name)`` ``seconds`` from now, in a daemon thread (for ``mid-job``)."""
    point = os.environ.get(ENV, "").partition(":")[0]
    if point != name:
        return
    import threading

    timer = threading.Timer(seconds, crash_point, args=(name,))
    timer.daemon = True
    timer.start()
