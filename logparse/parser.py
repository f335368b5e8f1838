"""parse(): one job log (.out, .gz too, with the .err beside it) into a JobLog."""

from __future__ import annotations

import math
import os
from collections import namedtuple
from collections.abc import Sequence

from logparse import patterns as P
from logparse.errors import LogNotFoundError, OptionError
from logparse.records import JobLog, Status
from logparse.scan import APP_ID_WITHIN, Evidence, Head, scan_final, scan_full
from logparse.source import Source, err_path_for
from logparse.status import Verdict, decide

LOG_SUFFIXES = (".out", ".out.gz")


def parse(path: str | os.PathLike[str], *, full: bool = False, expected_epochs: int | None = None) -> JobLog:
    """Read one job's log: final figures and status; with ``full=True`` every record too.

    ``path`` is the job's .out (plain or .gz); the .err beside it, if any, is read only when
    the .out alone does not make the log ok (log4j on stderr, a traceback there, the arguments
    ``spark-submit --verbose`` echoes). ``expected_epochs`` is the number of epochs the job was
    asked for: with it, a log that did fewer is ``incomplete`` (BigDL does not print the plan).
    The final figures are the same with and without ``full``.
    """
    if expected_epochs is not None and (not isinstance(expected_epochs, int) or expected_epochs < 1):
        raise OptionError(f"expected_epochs must be a positive int, got {expected_epochs!r}")
    p = os.fspath(path)
    scan = scan_full if full else scan_final
    with Source(p) as src:
        out = scan(src)
    planned = expected_epochs if expected_epochs is not None else _planned(out.head)
    if out.has_events:
        evaluated = evaluated_results(out.region)
        verdict = decide(out, b"", planned, evaluated)
        if verdict.status == Status.OK:  # the .err could add notes only: not even looked for
            return _joblog(p, out, verdict, planned, None, evaluated)
    err_p = err_path_for(p)
    if err_p is None and out.has_events:  # nothing else to read: the verdict above stands
        return _joblog(p, out, verdict, planned, None, evaluated)
    err: Evidence | None = None
    if err_p is not None:
        try:
            with Source(err_p) as src:
                # its head matters as the main log (no events in the .out), or for the arguments
                # `spark-submit --verbose` echoes at its start
                if not out.has_events:
                    err = scan_final(src)
                else:
                    err = scan_final(src, head=planned is None, head_limit=APP_ID_WITHIN)
        except LogNotFoundError:  # removed between the check and the read
            err_p = None
    if expected_epochs is None and planned is None and err is not None:
        planned = _planned(err.head)
    main, other = out, err
    if err is not None and not out.has_events and err.has_events:  # log4j wrote to stderr
        main, other = err, out
        if full:
            with Source(err_p) as src:  # type: ignore[arg-type]
                main = scan_full(src)
        if expected_epochs is None:
            planned = _planned(main.head)
    other_region = other.region if other is not None else b""
    evaluated = evaluated_results(main.region) + (evaluated_results(other_region) if other is not None else ())
    verdict = decide(main, other_region, planned, evaluated, program=main is out)
    return _joblog(p, main, verdict, planned, err_p, evaluated)


def evaluated_results(region: bytes) -> tuple[tuple[str, float, int], ...]:
    """Every ``Evaluated result: V, total_num: N, method: M`` line in ``region``, as (M, V, N)."""
    if b"Evaluated result: " not in region:
        return ()
    return tuple((m.decode("ascii", "replace").strip(), float(v), int(n)) for v, n, m in P.EVALUATED.findall(region))


def _planned(head: Head) -> int | None:
    """The epochs the job was asked for, from the log alone: ``epochs=N`` in the application name
    (jobs/train.py names apps that way), else ``--epochs N`` (or ``--nEpochs``, ``-e``...) among the
    application's arguments that ``spark-submit --verbose`` echoes; None when neither says."""
    for text, pattern in ((head.app_name, P.PLANNED_EPOCHS), (head.child_args, P.ARG_EPOCHS)):
        if text:
            m = pattern.search(text.encode("utf-8", "replace"))
            if m and int(m.group(1)) > 0:
                return int(m.group(1))
    return None


def _joblog(path: str, ev: Evidence, verdict: Verdict, planned: int | None, err_path: str | None,
            evaluated: tuple[tuple[str, float, int], ...]) -> JobLog:
    v, f, first, last = ev.last_validation, ev.last_epoch, ev.head.first_iteration, ev.last_iteration
    return JobLog(
        path=path,
        status=verdict.status,
        reason=verdict.reason,
        failure_kind=verdict.failure_kind,
        wall_clock_s=None if v is None else v.wall_clock_s,
        accuracy=None if v is None else v.accuracy,
        epochs_completed=0 if ev.last_complete is None else ev.last_complete[0],
        learning_rate=None if first is None else first.learning_rate,
        batch_size=None if first is None or not math.isfinite(first.records) else int(first.records),
        evaluated=evaluated,
        app_id=ev.head.app_id,
        epoch_wall_clock_ms=None if f is None else f.epoch_wall_clock_ms,
        epochs_validated=None if v is None else v.epoch,
        planned_epochs=planned,
        iterations_completed=None if last is None else last.iteration,
        final_loss=None if last is None else last.loss,
        final_metrics=() if v is None else v.metrics,
        app_name=ev.head.app_name,
        err_path=err_path,
        notes=verdict.notes,
        iterations=tuple(ev.iterations),
        epochs=tuple(ev.epochs),
        validations=tuple(ev.validations),
    )


class LogList(namedtuple("LogList", (
        "paths",     # tuple[str, ...]
        "problems",  # tuple[str, ...]
))):
    """The logs found under the paths given, and one message per path that could not be searched."""

    __slots__ = ()


def collect_logs(paths: Sequence[str | os.PathLike[str]]) -> LogList:
    """Files as given; directories searched recursively for ``*.out`` and ``*.out.gz`` (sorted, links to
    directories not followed). A missing path or an unreadable directory is a problem, not an exception."""
    found: list[str] = []
    problems: list[str] = []
    for raw in paths:
        p = os.fspath(raw)
        if os.path.isdir(p):
            hits: list[str] = []

            def onerror(e: OSError) -> None:
                problems.append(f"{e.filename}: cannot list ({e.strerror or e}); check its permissions")

            for root, _dirs, files in os.walk(p, onerror=onerror):
                hits.extend(os.path.join(root, f) for f in files if f.endswith(LOG_SUFFIXES))
            found.extend(sorted(hits))
        elif os.path.lexists(p):
            found.append(os.fspath(raw))  # a regular file, or something parse() will name (a FIFO, a broken link)
        else:
            problems.append(f"{p}: no such file or directory")
    return LogList(tuple(found), tuple(problems))


def find_logs(paths: Sequence[str | os.PathLike[str]]) -> list[os.PathLike[str]]:
    """Like :func:`collect_logs` (as ``pathlib.Path`` objects), raising LogNotFoundError on the first problem."""
    from pathlib import Path  # not at import: pathlib is 3 ms of every `sparkdl logparse`

    found = collect_logs(paths)
    if found.problems:
        raise LogNotFoundError(found.problems[0])
    return [Path(p) for p in found.paths]
