"""Errors raised by jobs/: bad arguments, unreadable data, and a cluster that failed under the job.

A job that loses an executor, a worker, the master or the connection to its own JVM while it
runs has not failed on its own account: :func:`spark_loss` tells those py4j errors apart, and
:func:`run_job` turns them into one line (``error: Spark lost ...``, exit 4) instead of a
traceback or an "internal error". logparse reads that line as an infrastructure failure.
"""

from __future__ import annotations

import sys
from typing import Callable, Sequence

from sparkdl.errors import EXIT_CLUSTER, ToolError


class JobError(ToolError):
    """Base class for every error a job raises on its own account."""


class DataError(JobError):
    """The MNIST data cannot be found or read."""


class SparkLost(JobError):
    """Spark lost part of the cluster (or the job its JVM) during the job: an infrastructure failure."""

    exit_code = EXIT_CLUSTER


#: Text in a py4j error that says what Spark lost, most specific first.
LOSS_SIGNS: tuple[tuple[str, str], ...] = (
    ("No space left on device", "disk space (No space left on device)"),
    ("Master removed our application", "the master"),
    ("All masters are unresponsive", "the master"),
    ("ExecutorLostFailure", "an executor"),
    ("Lost executor", "an executor"),
    ("orker lost", "a worker"),
    ("executor crashed", "an executor"),
    ("Remote RPC client disassociated", "an executor"),
    ("BarrierJobSlotsNumberCheckFailed", "a barrier task slot (an executor or worker)"),
    ("SparkContext was shut down", "its SparkContext"),
    ("Connection refused", "a connection"),
)
#: BigDL's all-reduce keeps each executor's gradient partition in that executor's block manager; with the executor
#: lost, the retried task finds the partition gone and dies of a NullPointerException in this frame (a worker host
#: crashed mid-job, 2026-12-06: tests/fixtures/logs/lenet-host-crashed-allreduce.out.gz). Both must be in the text.
ALLREDUCE_LOST = ("java.lang.NullPointerException", "AllReduceParameter.aggregateGradientPartition")
#: py4j's own errors when the JVM behind the driver is gone (not a Java exception).
JVM_GONE = ("Py4JNetworkError", "Answer from Java side is empty", "Error while receiving",
            "An error occurred while trying to connect to the Java server")


def spark_loss(error: BaseException) -> SparkLost | None:
    """The one-line :class:`SparkLost` for a py4j error that says Spark lost part of the cluster, else None."""
    kind = type(error).__name__
    if not (type(error).__module__.startswith("py4j") or kind.startswith("Py4J")):
        return None
    text = str(error)
    if kind == "Py4JNetworkError" or any(sign in text for sign in JVM_GONE[1:]):
        return SparkLost(f"Spark lost the connection to the driver's JVM ({_line(text, '') or kind}); the cluster or "
                         "the host failed, not the job")
    for sign, what in LOSS_SIGNS:
        if sign in text:
            return SparkLost(f"Spark lost {what} during the job ({_line(text, sign)}); the cluster failed, not the "
                             "job: the driver's log names the host")
    if all(sign in text for sign in ALLREDUCE_LOST):
        return SparkLost(f"Spark lost an executor during the job: BigDL's all-reduce found the gradient partition it "
                         f"held gone ({_line(text, ALLREDUCE_LOST[0])}); the cluster failed, not the job: the "
                         "driver's log names the host")
    return None


def _line(text: str, sign: str, limit: int = 240) -> str:
    """The first line of ``text`` holding ``sign``; a long one cut to ``limit`` characters around ``sign``."""
    for line in text.splitlines():
        line = line.strip().removeprefix(": ")
        if sign in line:
            if len(line) <= limit:
                return line
            start = max(0, min(line.index(sign) - limit // 2, len(line) - limit))
            return ("..." if start else "") + line[start:start + limit] + ("..." if start + limit < len(line) else "")
    return ""


def guarded(main: Callable[[Sequence[str] | None], int]) -> Callable[[Sequence[str] | None], int]:
    """``main`` with Spark's losses raised as :class:`SparkLost` (any other error unchanged)."""
    def run(argv: Sequence[str] | None) -> int:
        try:
            return main(argv)
        except Exception as e:  # noqa: BLE001 - re-raised unless it is a loss
            lost = spark_loss(e)
            if lost is None:
                raise
            raise lost from None

    return run


def run_job(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """For jobs without :func:`sparkdl.cli.run_cli`: a loss is one ``error: Spark lost ...`` line and exit 4."""
    try:
        return guarded(main)(argv)
    except SparkLost as e:
        print(f"error: {e}", file=sys.stderr, flush=True)
        return e.exit_code
