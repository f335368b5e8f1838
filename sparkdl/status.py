"""A run's status and whose fault a failure was: the values every stage reads and writes.

logparse decides them (``logparse.status``, ``logparse.judgement``); the campaign folder stores them
(:mod:`sparkdl.campaign`); models, optimize and the report read them. Only :mod:`enum` is imported
here, so ``sparkdl logparse`` starts as fast as before.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """A run's status, decided once, by logparse, and taken as is everywhere else.

    A ``StrEnum``: ``Status.OK == "ok"``, and it is written as ``ok`` in CSV, JSON and SQLite.
    ``pruned`` is a run an optimizer stopped on purpose (never a failure).
    """

    OK = "ok"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    PRUNED = "pruned"


class FailureKind(StrEnum):
    """Whose fault a failed or incomplete run was."""

    JOB = "job"                        # deterministic: the job itself (a bad argument, a Usage Error)
    INFRASTRUCTURE = "infrastructure"  # lost executor/worker/master, refused connection, signal, truncated log
    TIMEOUT = "timeout"                # the harness stopped it after --timeout


STATUSES = tuple(s.value for s in Status)
FAILURE_KINDS = ("job", "infrastructure")
