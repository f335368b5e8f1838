"""Byte regexes for BigDL DistriOptimizer lines and for the markers of a failed job.

Every pattern works on raw bytes (no decoding, so any byte sequence is safe) and
requires the punctuation that follows each number (``s]``, ``.``, `` ms``, ``)``), so a
line cut in the middle of a number never yields a wrong figure: it does not match.
"""

from __future__ import annotations

import re

# Patterns most logs never need are compiled on first use (module __getattr__ below): compiling
# costs start-up time, which is measured against grep. Read them as P.NAME like the others.
_LAZY: dict[str, tuple[bytes, int]] = {}

# Java's Double/Float.toString: 0.1, 1.7976931348623157E308, 9.9E-4, NaN, Infinity, -Infinity.
NUM = rb"[-+]?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|NaN|Infinity)"

HEADER = rb"\[Epoch (\d{1,18}) (\d{1,18})/(\d{1,18})\]\[Iteration (\d{1,18})\]\[Wall Clock (" + NUM + rb")s\] "

# Integers are capped at 18 digits (int() refuses > 4300 digits).
# One pattern for the four kinds of training event, so a single pass finds them in order.
# Groups: 1-5 header; 6-10 DistriOptimizer iteration; 11 epoch end; 12-14 validation;
# 15-17 LocalOptimizer iteration (loss, iteration time, throughput; it prints no record count).
EVENT = re.compile(
    HEADER
    + rb"(?:Trained (" + NUM + rb") records in (" + NUM + rb") seconds\. Throughput is (" + NUM
    + rb") records/second\. Loss is (" + NUM + rb")\.(?:[^\n]*?Current learning rate is (" + NUM + rb")\.)?"
    + rb"|Epoch finished\. Wall clock time is (" + NUM + rb") ?ms"
    + rb"|(\w+) is (\w*)\(([^\n]*)\)"
    + rb"|loss is (" + NUM + rb"), iteration time is (" + NUM + rb")s [^\n]*?Throughput is (" + NUM
    + rb") record / second\.(?:[^\n]*?Current learning rate is (" + NUM + rb")\.)?)"
)
ITERATION_GROUP, EPOCH_GROUP, VALIDATION_GROUP, LOCAL_GROUP = 6, 11, 12, 15

# Python's EvaluatedResult after a model.evaluate(): "Evaluated result: 0.7451, total_num: 10000, method: Top1Accuracy"
_LAZY["EVALUATED"] = (rb"Evaluated result: (" + NUM + rb"), total_num: (\d{1,18}), method: ([A-Za-z][\w()., ]{0,80}?)\r?$", re.M)

# Evidence that optimize() returned: Spark stopping the context, the Python side printing again
# (BigDL's "creating: ..." for new JVM objects, an evaluation), this project's job summary line.
# Most likely first in a finished log's tail first: any() stops at the first found.
END_NEEDLES = (b"\njobs.train: ", b"\ncreating: ", b"\nTrain finished", b"Evaluated result: ",
               b"Stopped Spark web UI", b"Successfully stopped SparkContext", b"Shutdown hook called")

METRIC_FIELD = re.compile(rb"([A-Za-z][A-Za-z0-9 _]*?): (" + NUM + rb")(?=[,)]|$)")

APP_NAME = re.compile(rb"Submitted application: ([^\r\n]*)")
_LAZY["PLANNED_EPOCHS"] = (rb"(?:^|\s)epochs=(\d{1,9})\b", 0)
# The application's own arguments, as `spark-submit --verbose` echoes them ("  childArgs   [--epochs 3 ...]").
_LAZY["CHILD_ARGS"] = (rb"^ *childArgs +\[([^\]\r\n]*)\]", re.M)
_LAZY["ARG_EPOCHS"] = (rb"(?:^|\s)--?(?:epochs|nEpochs|n-epochs|num-epochs|max-epoch|maxEpoch|e)[ =](\d{1,9})(?!\S)", 0)
_LAZY["APP_ID"] = (rb"(?<![\w-])(app-\d{14}-\d{4,}|local-\d{10,}|application_\d+_\d+)(?![\w-])", 0)
# The Python side creating a validation method before training (BigDL's "creating: createX" echo).
VALIDATION_CREATED = tuple(b"creating: create" + m + end for m in (
    b"Top1Accuracy", b"Top5Accuracy", b"Loss", b"MAE", b"TreeNNAccuracy", b"HitRatio", b"NDCG") for end in (b"\n", b"\r"))
VALIDATING = b"Validate model..."
# The start of a validation line ("...s] Top1Accuracy is Accuracy(", "...s] Loss is ("), whole or cut.
_LAZY["VALIDATION_START"] = (rb"s\] \w+ is \w*\(", 0)
SHUTDOWN = b"Shutdown hook called"
#: The line a runner appends to the .out after it stopped a job on an optimizer's request
#: (harness.runner.ProcessRunner's ``watch``); the rest of the line is the optimizer's reason.
PRUNED = b"sparkdl: pruned: "

# log4j prefixes: "2026-11-23 15:01:01 " (BigDL's layout for Spark), "26-11-23 15:01:01 [thread] " (DLlib's own),
# "25/11/23 15:01:01 " (Spark's log4j-defaults, 2.x and 3.x).
DATE = rb"\d\d(?:\d\d)?[-/]\d\d[-/]\d\d"
_LAZY["LOG_PREFIX"] = (rb"^" + DATE + rb" \d\d:\d\d:\d\d(?:[.,]\d+)? (?:\[[^\]\r\n]*\] )?", 0)

# Lines of the driver's stdout that are not its program's own output (``status.program_output``),
# matched at a line's start. A logger's line: a log4j layout with a date (bracketed or ISO too), or a level
# first (Python logging's "WARNING:root:...", the JVM's "WARNING: ..."). Part of an error: a traceback and its
# chaining lines, "Caused by:", "Exception in thread", an exception's own line ("java.io.IOException: ...",
# "KeyError: 'x'", "MemoryError"), BigDL's "****Usage Error****" banners, py4j's ": java..." line, a JVM crash
# report's "#" lines, "OpenJDK ... VM warning: ...". A Python warning ("x.py:12: UserWarning: ..."). BigDL's
# println of cached block ids during training ("[rdd_22_0, test_0weights0, test_0gradients0]").
_BLOCK_ID = rb"(?:rdd_\d+_\d+|\w*(?:weights|gradients|weightBytes)\d+)"
# Spark 4's structured (JSON) lines are rewritten into the layout (logparse.structured); one that does not
# parse (cut, damaged) is still a logger's line, never the program's own output.
LOG_LINE_START = rb"\[?" + DATE + rb"[ T]\d\d:\d\d:\d\d|(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|SEVERE|FATAL|CRITICAL)\b" + rb'|\{"ts":'
_LAZY["LOG_LINE"] = (rb"(?:" + LOG_LINE_START + rb")", 0)
_LAZY["NOT_PROGRAM"] = (
    rb"(?:" + LOG_LINE_START
    + rb"|Traceback \(most recent call last\)|During handling of the above exception|The above exception was"
    + rb"|Caused by: |Suppressed: |Exception in thread |\*{4,}|#|: "
    + rb"|(?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:Exception|Error|Throwable|Interrupt|Exit)(?::|\s*$)"
    + rb"|(?:OpenJDK|Java HotSpot)[^\n]{0,60}VM warning"
    + rb"|[^\s:]+\.py:\d+: \w*Warning: "
    + rb"|\[" + _BLOCK_ID + rb"(?:, " + _BLOCK_ID + rb")*\]\s*$)", 0)


class Marker:
    """One kind of error evidence: literal needles to find it fast, a regex to confirm it on its line.

    The regex matches only the marker itself (so two markers on one line are both found);
    the reason is the rest of the line from the marker on. ``hard`` markers end a job (an
    uncaught exception, a signal); ``soft`` ones (an ERROR line, a lost executor) only
    explain a job that did not reach its end. ``specific`` markers name a root cause;
    generic ones (a traceback, an ERROR line) give the reason only when no specific
    marker is present.
    """

    __slots__ = ("name", "needles", "source", "hard", "kind", "specific", "_regex")

    def __init__(self, name: str, needles: tuple[bytes, ...], regex: bytes, *, hard: bool, kind: str,
                 specific: bool = True) -> None:
        self.name, self.needles, self.hard, self.kind, self.specific = name, needles, hard, kind, specific
        self.source, self._regex = regex, None

    @property
    def regex(self) -> re.Pattern[bytes]:
        """Compiled on first use: most logs never need it, and start-up time matters to the CLI."""
        if self._regex is None:
            self._regex = re.compile(self.source, re.M)
        return self._regex


MARKERS = (
    Marker("usage_error", (b"Usage Error*",), rb"\*{4,}Usage Error\*{4,}", hard=True, kind="job"),
    Marker("oom", (b"OutOfMemoryError",), rb"java\.lang\.OutOfMemoryError", hard=True, kind="job"),
    Marker("cli_error", (b"error: ",), rb"^(?:[\w.\-/]+: )?error: (?!Spark lost )", hard=True, kind="job"),
    # a job's own one line when Spark lost an executor, a worker, the master or its driver's JVM
    # (jobs.errors.SparkLost): the run failed on the cluster, not in the job
    Marker("spark_lost", (b"error: Spark lost ",), rb"^(?:[\w.\-/]+: )?error: Spark lost ", hard=True,
           kind="infrastructure"),
    # a full disk on a worker (or the driver's host): the root cause whatever Spark then lost
    Marker("disk_full", (b"No space left on device",), rb"No space left on device", hard=False,
           kind="infrastructure"),
    Marker("signal", (b"RECEIVED SIGNAL ",), rb"RECEIVED SIGNAL [A-Z]+", hard=True, kind="infrastructure"),
    Marker("killed", (b"Killed",), rb"^Killed\b", hard=True, kind="infrastructure"),
    Marker("master_removed", (b"Master removed our application",), rb"Master removed our application",
           hard=True, kind="infrastructure"),
    Marker("masters_unresponsive", (b"All masters are unresponsive",), rb"All masters are unresponsive",
           hard=True, kind="infrastructure"),
    Marker("app_killed", (b"Application has been killed",), rb"Application has been killed",
           hard=True, kind="infrastructure"),
    Marker("lost_executor", (b"Lost executor ", b"ExecutorLostFailure"), rb"Lost executor |ExecutorLostFailure",
           hard=False, kind="infrastructure"),
    Marker("worker_lost", (b"orker lost", b"Lost worker"), rb"[Ww]orker lost|Lost worker", hard=False,
           kind="infrastructure"),
    Marker("rpc_disassociated", (b"Remote RPC client disassociated",), rb"Remote RPC client disassociated",
           hard=False, kind="infrastructure"),
    Marker("connection_refused", (b"Connection refused",), rb"Connection refused", hard=False, kind="infrastructure"),
    # TorchDistributor and XGBoost train in a barrier stage: it needs a task slot for every process at once,
    # and fails when the application has fewer (an executor or worker lost, or more processes than cores)
    Marker("barrier_slots", (b"BarrierJobSlotsNumberCheckFailed",), rb"BarrierJobSlotsNumberCheckFailed",
           hard=True, kind="infrastructure"),
    # PyTorch's gloo: a peer process that stopped answering (stalled, killed, or cut off by the network)
    Marker("gloo_timeout", (b"Timed out waiting", b"RendezvousTimeoutError", b"DistNetworkError"),
           rb"Timed out waiting \d+ms for \w+ operation|RendezvousTimeoutError|DistNetworkError",
           hard=True, kind="infrastructure"),
    Marker("traceback", (b"Traceback (most recent call last):",), rb"^Traceback \(most recent call last\):",
           hard=True, kind="job", specific=False),
    Marker("py4j", (b"Py4JJavaError",), rb"(?:py4j\.protocol\.)?Py4JJavaError", hard=True, kind="job",
           specific=False),
    Marker("java_main", (b'Exception in thread "main"',), rb'Exception in thread "main"', hard=True, kind="job",
           specific=False),
    Marker("error_line", (b" ERROR ",), rb"^" + DATE + rb" [\d:.,]+ (?:\[[^\]\r\n]*\] )?ERROR ",
           hard=False, kind="job", specific=False),
)

# Lowercase keys: every needle of every marker, lowercased, contains one (tests/test_logparse_badinput.py checks).
MARKER_KEYS = (b"error", b"lost", b"signal", b"killed", b"master", b"disassociated", b"refused", b"traceback",
               b"exception in thread", b"barrier", b"timed out", b"no space left")
MARKERS_BY_KEY = {k: tuple(mk for mk in MARKERS if any(k in n.lower() for n in mk.needles)) for k in MARKER_KEYS}
HARD_MARKER_KEYS = tuple(k for k in MARKER_KEYS if any(mk.hard for mk in MARKERS_BY_KEY[k]))


def __getattr__(name: str) -> re.Pattern[bytes]:
    """A lazy pattern, compiled on first use and then kept as a module attribute."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    pattern = re.compile(*_LAZY[name])
    globals()[name] = pattern
    return pattern
