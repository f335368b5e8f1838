"""Byte regexes for BigDL DistriOptimizer lines and for the markers of a failed job.

Every pattern works on raw bytes (no decoding, so any byte sequence is safe) and
requires the punctuation that follows each number (``s]``, ``.``, `` ms``, ``)``), so a
line cut in the middle of a number never yields a wrong figure: it does not match.
"""

from __future__ import annotations

import re

# Java's Double/Float.toString: 0.1, 1.7976931348623157E308, 9.9E-4, NaN, Infinity, -Infinity.
NUM = rb"[-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|NaN|Infinity)"

HEADER = rb"\[Epoch (\d+) (\d+)/(\d+)\]\[Iteration (\d+)\]\[Wall Clock (" + NUM + rb")s\] "

# One pattern for the three kinds of training event, so a single pass finds them in order.
# Groups: 1-5 header; 6-10 iteration; 11 epoch end; 12-14 validation.
EVENT = re.compile(
    HEADER
    + rb"(?:Trained (" + NUM + rb") records in (" + NUM + rb") seconds\. Throughput is (" + NUM
    + rb") records/second\. Loss is (" + NUM + rb")\.(?:[^\n]*?Current learning rate is (" + NUM + rb")\.)?"
    + rb"|Epoch finished\. Wall clock time is (" + NUM + rb") ms"
    + rb"|(\w+) is (\w*)\(([^\n]*)\))"
)
ITERATION_GROUP, EPOCH_GROUP, VALIDATION_GROUP = 6, 11, 12

METRIC_FIELD = re.compile(rb"([A-Za-z][A-Za-z0-9 _]*?): (" + NUM + rb")(?=[,)]|$)")

APP_NAME = re.compile(rb"Submitted application: ([^\r\n]*)")
PLANNED_EPOCHS = re.compile(rb"(?:^|\s)epochs=(\d+)\b")
APP_ID = re.compile(rb"\b(app-\d{14}-\d{4,}|local-\d{10,}|application_\d+_\d+)\b")
SPARK_INFO = b"Running Spark version"
SHUTDOWN = b"Shutdown hook called"

# log4j prefixes: Spark's "2026-11-23 15:01:01 " and BigDL's "26-11-23 15:01:01 [thread] ".
LOG_PREFIX = re.compile(rb"^\d\d(?:\d\d)?-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? (?:\[[^\]\r\n]*\] )?")


class Marker:
    """One kind of error evidence: a regex, whether it alone fails the job, and whose fault it is.

    Each regex matches only the marker itself (so two on one line are both found); the
    reason is the rest of the line from the marker on. ``hard`` markers end a job (an uncaught exception, a signal); ``soft`` ones (an ERROR
    line, a lost executor) only explain a job that did not reach its end. ``specific``
    markers name a root cause; generic ones (a traceback, an ERROR line) give the reason
    only when no specific marker is present.
    """

    __slots__ = ("name", "regex", "hard", "kind", "specific")

    def __init__(self, name: str, regex: bytes, *, hard: bool, kind: str, specific: bool = True) -> None:
        self.name, self.hard, self.kind, self.specific = name, hard, kind, specific
        self.regex = regex


MARKERS = (
    Marker("usage_error", rb"\*{4,}Usage Error\*{4,}", hard=True, kind="job"),
    Marker("oom", rb"java\.lang\.OutOfMemoryError", hard=True, kind="job"),
    Marker("cli_error", rb"^(?:[\w.\-/]+: )?error: ", hard=True, kind="job"),
    Marker("signal", rb"RECEIVED SIGNAL [A-Z]+", hard=True, kind="infrastructure"),
    Marker("killed", rb"^Killed\b", hard=True, kind="infrastructure"),
    Marker("master_removed", rb"Master removed our application", hard=True, kind="infrastructure"),
    Marker("masters_unresponsive", rb"All masters are unresponsive", hard=True, kind="infrastructure"),
    Marker("app_killed", rb"Application has been killed", hard=True, kind="infrastructure"),
    Marker("lost_executor", rb"Lost executor |ExecutorLostFailure", hard=False, kind="infrastructure"),
    Marker("worker_lost", rb"[Ww]orker lost|Lost worker", hard=False, kind="infrastructure"),
    Marker("rpc_disassociated", rb"Remote RPC client disassociated", hard=False, kind="infrastructure"),
    Marker("connection_refused", rb"Connection refused", hard=False, kind="infrastructure"),
    Marker("traceback", rb"^Traceback \(most recent call last\):", hard=True, kind="job", specific=False),
    Marker("java_main", rb'Exception in thread "main"', hard=True, kind="job", specific=False),
    Marker("error_line", rb"^\d\d(?:\d\d)?-\d\d-\d\d [\d:.,]+ (?:\[[^\]\r\n]*\] )?ERROR ",
           hard=False, kind="job", specific=False),
)
MARKER_REGEX = re.compile(b"|".join(b"(?P<%s>%s)" % (m.name.encode(), m.regex) for m in MARKERS), re.M)
MARKER_BY_NAME = {m.name: m for m in MARKERS}
