"""A run's final status from its log, what it was asked to run, and how its process ended.

The harness calls only :func:`judge_run` (or :func:`judge` on a parsed log); it never decides a
status itself. On top of the log's own status (``logparse.status``), in order:

1. a run the harness stopped (``timed_out``) is ``failed`` (kind ``timeout``), whatever the log says;
2. a log that is not ok keeps its status;
3. a run that trained with another learning rate, batch size or number of epochs than planned
   is ``failed`` (kind ``job``): its time measures another configuration;
4. a run during which Spark lost an executor or worker is ``failed`` (kind ``infrastructure``)
   even though BigDL recovered: it trained part of the time on fewer cores than planned;
5. a non-zero exit code after training finished keeps ``ok``, with a note (an error after
   training, e.g. in a later save or shutdown, does not undo the training it followed).

A job that is not BigDL (its figures come from its own JSON file, from regexes over what it prints, or
it reports none: :func:`judge_program_run`) has no BigDL evidence to read. It is judged by what every
program has: its exit code, Spark's own record of the application (its event log: :class:`SparkRecord`)
and the figures it declares. In order: stopped by an optimizer after an epoch is ``pruned`` (its log ends
with the prune line the runner appends); stopped by the harness is ``failed`` (timeout); a non-zero exit
is ``failed`` (kind ``infrastructure`` when its log shows a lost executor, worker or master, or a signal
ended it, else ``job``), and the reason is the program's own last error line
(:func:`logparse.errorline.last_error_line`) with its exit code; a Spark job that failed is ``failed``
(job), with the failed stage's reason; an application whose event log never ended is ``failed``
(infrastructure); figures missing or malformed (the harness says why) are ``failed`` (job); a lost
executor during an exit-0 run is ``failed`` (infrastructure); else ``ok``. "No BigDL training line" is
never said of such a job.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from logparse.errorline import last_error_line
from logparse.errors import LogParseError
from logparse.losses import resource_losses
from logparse.parser import parse
from logparse.records import FailureKind, JobLog, Status

if TYPE_CHECKING:
    from logparse.eventlog import AppMetrics


@dataclass(frozen=True)
class Planned:
    """What the run spec asked for; None where unknown (then not checked)."""

    epochs: int | None = None
    learning_rate: float | None = None
    batch_size: int | None = None


@dataclass(frozen=True)
class ProcessFacts:
    """How the job's process ended, as the harness saw it."""

    exit_code: int | None = None
    timed_out: bool = False
    elapsed_s: float | None = None


@dataclass(frozen=True)
class Judgement:
    """The run's status with its reason and notes, and the parsed log its figures come from."""

    status: Status
    reason: str
    failure_kind: FailureKind | None
    notes: tuple[str, ...]
    log: JobLog

    @property
    def ok(self) -> bool:
        return self.status == Status.OK


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)


def differences(log: JobLog, planned: Planned) -> list[str]:
    """What the job ran with that differs from the plan (empty when it ran what was asked)."""
    wrong = []
    if planned.learning_rate is not None and (log.learning_rate is None
                                              or not _same(log.learning_rate, planned.learning_rate)):
        wrong.append(f"learning rate {log.learning_rate} (asked {planned.learning_rate})")
    if planned.batch_size is not None and log.batch_size != planned.batch_size:
        wrong.append(f"batch size {log.batch_size} (asked {planned.batch_size})")
    if planned.epochs is not None and log.epochs_completed != planned.epochs:
        wrong.append(f"{log.epochs_completed} epochs (asked {planned.epochs})")
    return wrong


def judge(log: JobLog, planned: Planned = Planned(), process: ProcessFacts = ProcessFacts(),
          losses: tuple[str, ...] = ()) -> Judgement:
    """Apply the rules above to a parsed log (parse it with ``expected_epochs=planned.epochs``)."""
    base = Judgement(log.status, log.reason, log.failure_kind, log.notes, log)
    if process.timed_out:
        took = "" if process.elapsed_s is None else f" within {process.elapsed_s:.0f} s"
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.TIMEOUT,
                       reason=f"no result{took}: the run was stopped (raise --timeout)")
    if log.status != Status.OK:
        return base
    wrong = differences(log, planned)
    if wrong:
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.JOB,
                       reason="the job did not run what the design asked: it ran with " + ", ".join(wrong))
    if losses:
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.INFRASTRUCTURE, reason=loss_reason(losses))
    if process.exit_code not in (None, 0):
        return replace(base, notes=base.notes + (f"spark-submit exited with code {process.exit_code} "
                                                 "after training finished",))
    return base


def loss_reason(losses: tuple[str, ...]) -> str:
    """Why a run that Spark carried through lost executors is not valid; a full disk named first."""
    full = next((line for line in losses if "No space left on device" in line), None)
    if full is not None:
        return f"No space left on device on a worker: {full}"
    return ("Spark recovered from a lost executor, but the run did not keep the resources of its design row, so its "
            f"time is not valid: {losses[0]}")


def unreadable(out: str | os.PathLike[str], why: str) -> JobLog:
    """The JobLog of a log that could not be read (no figures): failed, kind job (a retry would not help)."""
    return JobLog(path=os.fspath(out), status=Status.FAILED, reason=f"cannot read the log: {why}",
                  failure_kind=FailureKind.JOB, wall_clock_s=None, accuracy=None, epochs_completed=0,
                  learning_rate=None, batch_size=None, app_id=None, epoch_wall_clock_ms=None)


def judge_run(out: str | os.PathLike[str], planned: Planned = Planned(),
              process: ProcessFacts = ProcessFacts()) -> Judgement:
    """Parse one run's .out (and .err), scan it for lost executors when it is ok, and judge it.

    Never raises on a log's content or size: a log that cannot be read (too large, an I/O error,
    missing) is a failed run with that reason, so one bad log never stops a campaign."""
    try:
        log = parse(out, expected_epochs=planned.epochs)
        losses = resource_losses(out) if log.status == Status.OK and not process.timed_out else ()
    except LogParseError as e:
        log, losses = unreadable(out, str(e)), ()
    return judge(log, planned, process, losses)


@dataclass(frozen=True)
class SparkRecord:
    """What Spark's event log says of an application, for judging any program."""

    ended: bool                       # the log holds the application's end
    jobs: int = 0
    failed_jobs: int = 0
    failed_stage: str | None = None   # the last failed stage attempt's reason (its first line)

    @classmethod
    def of(cls, app: "AppMetrics") -> "SparkRecord":
        return cls(app.complete, app.jobs, app.jobs_failed, app.failed_stage())


def judge_json_run(out: str | os.PathLike[str], process: ProcessFacts, metrics_problem: str | None,
                   spark: SparkRecord | None = None) -> Judgement:
    """The status of a job that reports its figures as JSON (rules at the end of the module docstring)."""
    return judge_program_run(out, process, metrics_problem, spark)


def judge_program_run(out: str | os.PathLike[str], process: ProcessFacts, figures_problem: str | None = None,
                      spark: SparkRecord | None = None) -> Judgement:
    """The status of a job that is not BigDL (rules at the end of the module docstring); ``spark`` is None when
    the run has no event log to read (then only the exit code and the figures judge it)."""
    try:
        log = parse(out)
    except LogParseError as e:  # never an exception from a log: one bad file must not stop a campaign
        return Judgement(Status.FAILED, f"cannot read the log: {e}", FailureKind.JOB, (), unreadable(out, str(e)))
    base = Judgement(Status.OK, "", None, (), log)
    if log.status == Status.PRUNED:  # an optimizer stopped it after an epoch (its sparkdl-epoch lines)
        return replace(base, status=Status.PRUNED, reason=log.reason)
    if process.timed_out:
        took = "" if process.elapsed_s is None else f" within {process.elapsed_s:.0f} s"
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.TIMEOUT,
                       reason=f"no result{took}: the run was stopped (raise --timeout)")
    if process.exit_code not in (None, 0):
        # the log's reason only when it names an error: an incomplete log's "no BigDL training line" says
        # nothing about a job that is not BigDL
        if log.status == Status.FAILED and log.failure_kind == FailureKind.INFRASTRUCTURE:
            return replace(base, status=Status.FAILED, failure_kind=FailureKind.INFRASTRUCTURE, reason=log.reason)
        if process.exit_code < 0:
            return replace(base, status=Status.FAILED, failure_kind=FailureKind.INFRASTRUCTURE,
                           reason=f"the job was killed by signal {-process.exit_code}")
        own = last_error_line(out) or (log.reason if log.status == Status.FAILED else "")
        if own:  # the program's own words, not a generic "no training line"
            return replace(base, status=Status.FAILED, failure_kind=FailureKind.JOB,
                           reason=f"the job exited with code {process.exit_code}: {own}")
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.JOB,
                       reason=f"the job exited with code {process.exit_code} (see its .err)")
    if spark is not None and spark.failed_jobs:
        why = f": {spark.failed_stage}" if spark.failed_stage else ""
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.JOB,
                       reason=f"{spark.failed_jobs} of the application's {spark.jobs} Spark job(s) failed{why}")
    if spark is not None and not spark.ended:
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.INFRASTRUCTURE,
                       reason="Spark's event log never records the application's end: it did not finish "
                              "(its driver was stopped or lost)")
    if figures_problem:
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.JOB, reason=figures_problem)
    losses = resource_losses(out)
    if losses:
        return replace(base, status=Status.FAILED, failure_kind=FailureKind.INFRASTRUCTURE, reason=loss_reason(losses))
    return base
