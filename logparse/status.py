"""The one rule for a run's status: ok, failed or incomplete, with a reason and whose fault it was.

Terms (all from the log's own text; ``Evidence`` in ``logparse.scan``):

* an epoch is *complete* when BigDL says so: an "Epoch finished" line (DistriOptimizer), or an
  iteration whose record count reaches the epoch size (``[Epoch 2 256/256]``; LocalOptimizer
  prints no "Epoch finished");
* the *last event* is the last iteration, epoch end or validation line; the *region* is
  everything after it (the whole log when there is none), in the .out and in the .err;
* training *stopped at an epoch end* when no iteration follows the last complete epoch, and
  that epoch was validated if validation was configured (a validation line anywhere, the
  Python side creating a validation method before training, or "Validate model..." or the
  start of a cut validation line after the last event);
* *end evidence* is a sign in the region that optimize() returned, found before any hard
  error marker (one that can stop a job, rule 2): Spark stopping the context ("Successfully
  stopped SparkContext", "Shutdown hook called", "Stopped Spark web UI"), the Python side
  writing again ("creating: ..." lines, "Evaluated result: ..."), "Train finished", this
  project's "jobs.train: ..." line; and, in the driver's stdout once training stopped at an epoch
  end, any line of the program's own output (:func:`program_output`: a line that is neither a
  logger's line nor part of an error; a plain ``print`` after optimize() returned);
* *planned* epochs come from the caller (the harness's run spec, ``--expected-epochs``),
  "epochs=N" in the Spark application name, or ``--epochs N`` among the application
  arguments ``spark-submit --verbose`` echoes.

Rules, in order:

0. ``pruned`` if the region holds the runner's prune line (``sparkdl: pruned: <reason>``, written
   after an optimizer stopped the job on purpose): the signals of that stop are not a failure.
1. ``ok`` when training *finished*: it stopped at an epoch end, the planned epochs (if known)
   were reached, and either the plan is known or the region holds end evidence. Hard errors
   in the region after that (a failing evaluate, save or shutdown, a signal) keep ``ok``, with
   a note each (at most 3). Spark's shutdown lines are never required.
2. ``failed`` when the region holds an error marker (BigDL Usage Error, Python traceback,
   Py4JJavaError, OutOfMemoryError, ``error:`` line, a signal, the master removing the
   application, a lost executor or worker, an ERROR line): reason the first *specific*
   marker (one naming a cause), else the first hard one, else the first.
3. ``incomplete`` otherwise, saying what is missing: an empty log, no training line, an epoch
   stopped mid-way, an epoch not validated, fewer epochs than planned, or no sign that
   training ended (a log cut right after a validation, with no plan to compare with).

Then figures BigDL cannot print make an ok or incomplete log ``failed`` (kind ``job``): an accuracy
outside [0, 1], an Accuracy whose correct exceeds its count or whose accuracy is not correct/count,
a wall clock that is negative, not finite or beyond ``MAX_WALL_CLOCK_S`` (the last validation's, the
first and last iteration's, the last epoch end's), a negative or NaN throughput, a learning rate that
is not finite. Only records that both scans read are checked, so the status is the same with and
without ``full``.

failure_kind is the marker's (``job`` or ``infrastructure``); an incomplete log is ``job``
when Spark stopped normally (the program ended early on its own) and ``infrastructure``
otherwise (killed, truncated, damaged). Errors before the last event were survived (Spark
retried) and change nothing.
"""

from __future__ import annotations

import math
import re
from collections import namedtuple

from logparse import patterns as P
from logparse.records import FailureKind, Metric, Status
from logparse.scan import Evidence

MAX_REASON = 300
SPARK_STOPPED = (b"Shutdown hook called", b"Successfully stopped SparkContext")


class Found(namedtuple("Found", (
        "at",       # int: offset in the region
        "marker",   # patterns.Marker
        "reason",   # str
))):
    """One error marker found in a region."""

    __slots__ = ()


class Verdict(namedtuple("Verdict", (
        "status",        # Status
        "reason",        # str
        "failure_kind",  # FailureKind | None
        "notes",         # tuple[str, ...]
), defaults=((),))):
    """A status with its reason ("" when ok), whose fault it was (None when ok) and notes."""

    __slots__ = ()


def _text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON else text[:MAX_REASON - 3] + "..."


def _lines_after(region: bytes, pos: int, limit: int = 200):
    """The lines following the one at ``pos`` (at most ``limit``)."""
    nl = region.find(b"\n", pos)
    while nl >= 0 and limit > 0:
        limit -= 1
        end = region.find(b"\n", nl + 1)
        line = region[nl + 1:] if end < 0 else region[nl + 1:end]
        yield line.rstrip(b"\r")
        nl = end


def _reason(region: bytes, name: str, start: int, end: int) -> str:
    if name == "usage_error":
        for line in _lines_after(region, start, 5):
            if line.strip():
                return "BigDL Usage Error: " + _text(line)
        return "BigDL Usage Error"
    if name == "traceback":
        lines = _lines_after(region, start)
        for line in lines:
            if line and not line[:1].isspace():
                text = _text(line)
                if "Py4JJavaError" in text:
                    nxt = next(lines, b"")
                    if nxt.startswith(b": "):
                        text = _text(line + b" " + nxt[2:])
                return text
        return "Python traceback"
    eol = region.find(b"\n", start)
    line = region[start:] if eol < 0 else region[start:eol]
    if name == "error_line":
        line = P.LOG_PREFIX.sub(b"", line)
    elif name in WHOLE_LINE:  # the marker sits inside Spark's message ("is now LOST (worker lost)"): all of it
        bol = region.rfind(b"\n", 0, start) + 1
        whole = P.LOG_PREFIX.sub(b"", region[bol:start] + line)
        line = LOGGER.sub(b"", whole)[:300]
    elif name == "spark_lost":
        line = line.removeprefix(b"error: ")
    return _text(line)


LOST_ON = re.compile(r"Lost executor \S+ on \S+")
#: Markers whose reason is their whole log message (without the date and the logger), not the rest of the line.
WHOLE_LINE = ("worker_lost", "disk_full")
LOGGER = re.compile(rb"^(?:[A-Z]+ +)?[\w$.]+(?::\d+)? - ")
#: What Spark lost, most telling first: a "Lost executor N on HOST: why" line names the host.
LOSSES = ("lost_executor", "worker_lost", "rpc_disassociated")


def markers(region: bytes, hard_only: bool = False) -> list[Found]:
    """Every error marker in ``region``, in order.

    One pass per key of ``patterns.MARKER_KEYS`` over the lowercased region finds the candidate
    lines (every marker's needle contains a key); on those lines alone, the markers' needles and
    regexes confirm. Most of a region is Spark INFO noise: this reads it ~10 times, not ~20."""
    if not region:
        return []
    low = region.lower()
    spans: dict[tuple[int, int], set[bytes]] = {}
    for key in P.HARD_MARKER_KEYS if hard_only else P.MARKER_KEYS:
        pos = low.find(key)
        while pos >= 0:
            start = low.rfind(b"\n", 0, pos) + 1
            eol = low.find(b"\n", pos)
            eol = len(low) if eol < 0 else eol
            spans.setdefault((start, eol), set()).add(key)
            pos = low.find(key, eol)
    hits: dict[tuple[int, str], Found] = {}
    for (start, eol), keys in spans.items():
        line = region[start:eol]
        for mk in {mk for k in keys for mk in P.MARKERS_BY_KEY[k]}:
            if (mk.hard or not hard_only) and any(n in line for n in mk.needles):
                for m in mk.regex.finditer(region, start, eol):
                    if (m.start(), mk.name) not in hits:
                        hits[m.start(), mk.name] = Found(m.start(), mk, _reason(region, mk.name, m.start(), m.end()))
    return [hits[k] for k in sorted(hits)]


def end_evidence(region: bytes, before: int, program: bool = False) -> bool:
    """A sign that optimize() returned, found in ``region[:before]``; with ``program`` (the region is the
    driver's stdout after its last training line) any line of the program's own output counts too."""
    if region.startswith((b"creating: ", b"jobs.train: ", b"Train finished"), 0, before):
        return True
    if any(region.find(n, 0, before) >= 0 for n in P.END_NEEDLES):
        return True
    return program and program_output(region, before)


_OPEN, _CLOSE = (b"(", b"[", b"{"), (b")", b"]", b"}")


def _balance(line: bytes) -> int:
    """Brackets a line leaves open (negative: it closes more than it opens)."""
    return sum(line.count(c) for c in _OPEN) - sum(line.count(c) for c in _CLOSE)


def program_output(region: bytes, before: int) -> bool:
    """A whole line of the driver program's own output in ``region[:before]`` (``region`` starts inside the
    last training line, whose rest is skipped).

    Every line counts except: blank lines; a logger's line and the lines of its message that continue it
    (indented, or inside a bracket the log line left open: BigDL's optimizer settings ``{ ... }``, Spark's
    ``FetchFailed(...)``); part of an error or a warning (``patterns.NOT_PROGRAM``: a traceback, an exception
    and its ``at ...`` lines, ``Caused by:``...); BigDL's block-id lists; the last line when the log stops
    inside it (no newline: a process killed mid-write). Only the program itself writes anything else to its
    stdout, and it writes only once training returned (it was blocked in optimize() until then)."""
    first = region.find(b"\n")
    last = region.rfind(b"\n", 0, before)
    if first < 0 or last <= first:
        return False
    log_line, not_program = P.LOG_LINE.match, P.NOT_PROGRAM.match
    depth = max(0, _balance(region[:first]))  # the rest of the last training line
    for line in region[first + 1:last].split(b"\n"):
        if not line.strip():
            continue
        if log_line(line):
            depth = max(0, _balance(line))
            continue
        if depth > 0:  # the message of the log line above goes on
            depth = max(0, depth + _balance(line))
            continue
        if line[:1] in b" \t" or not_program(line):
            continue
        return True
    return False


def _pick(found: list[Found]) -> Found:
    """A full disk, else the first specific marker, else the first hard one, else the first.

    When the pick is a loss, the first "Lost executor N on HOST: why" line stands for it (it names the host).
    """
    for f in found:
        if f.marker.name == "disk_full":
            return f
    first = next((f for f in found if f.marker.specific), None)
    if first is not None and first.marker.name in LOSSES:
        return next((f for f in found if f.marker.name == "lost_executor" and LOST_ON.match(f.reason)), first)
    for f in found:
        if f.marker.specific:
            return f
    for f in found:
        if f.marker.hard:
            return f
    return found[0]


#: No training run lasts longer (115 days): a longer wall clock is a damaged or forged figure.
MAX_WALL_CLOCK_S = 1e7


def _bad_clock(seconds: float) -> bool:
    return not (math.isfinite(seconds) and 0 <= seconds <= MAX_WALL_CLOCK_S)


def impossible(metrics: tuple[Metric, ...], wall_clock_s: float | None,
               evaluated: tuple[tuple[str, float, int], ...] = ()) -> str:
    """Why the final figures cannot come from BigDL (its arithmetic forbids them), else ""."""
    if wall_clock_s is not None and _bad_clock(wall_clock_s):
        return (f"impossible wall clock {wall_clock_s!r} s (BigDL's clock is finite, >= 0 and no run lasts "
                f"beyond {MAX_WALL_CLOCK_S:.0e} s)")
    for m in metrics:
        if m.kind != "Accuracy":
            continue
        acc, correct, count = m.get("accuracy"), m.get("correct"), m.get("count")
        if acc is None:
            return f"{m.name} has no readable accuracy (an Accuracy prints 'accuracy: <number>')"
        if not 0.0 <= acc <= 1.0:
            return f"impossible {m.name} accuracy {acc!r} (outside [0, 1])"
        if correct is not None and count is not None:
            if not (math.isfinite(count) and 0 <= correct <= count) or correct % 1 or count % 1:
                return f"impossible {m.name}: correct {correct:g} of count {count:g}"
            if count > 0 and not math.isclose(acc, correct / count, rel_tol=1e-5, abs_tol=1e-6):
                return f"impossible {m.name}: accuracy {acc!r} is not correct/count = {correct:g}/{count:g}"
    for method, value, _total in evaluated:
        if "accuracy" in method.lower() and not 0.0 <= value <= 1.0:  # NaN fails too
            return f"impossible evaluated {method} {value!r} (outside [0, 1])"
    return ""


def impossible_training(out: Evidence) -> str:
    """Why the training lines every mode reads (the first and last iteration, the last epoch end) cannot
    come from BigDL, else "": a negative or NaN throughput, a wall clock beyond any run, a learning rate
    that is not a finite number."""
    for what, it in (("first", out.head.first_iteration), ("last", out.last_iteration)):
        if it is None:
            continue
        if not it.throughput >= 0:  # NaN fails too
            return f"impossible throughput {it.throughput!r} records/second in the {what} iteration (epoch {it.epoch})"
        if _bad_clock(it.wall_clock_s):
            return f"impossible wall clock {it.wall_clock_s!r} s in the {what} iteration (epoch {it.epoch})"
        if it.learning_rate is not None and not (math.isfinite(it.learning_rate) and it.learning_rate >= 0):
            return f"impossible learning rate {it.learning_rate!r} in the {what} iteration (epoch {it.epoch})"
    e = out.last_epoch
    if e is not None and (_bad_clock(e.wall_clock_s) or _bad_clock(e.epoch_wall_clock_ms / 1e3)):
        return (f"impossible epoch {e.epoch} wall clock ({e.wall_clock_s!r} s, epoch time {e.epoch_wall_clock_ms!r} ms)")
    return ""


def stopped_at_epoch_end(out: Evidence) -> bool:
    """No iteration after the last complete epoch, which is validated when the log validates at all."""
    if out.last_complete is None or out.last_iteration_at > out.last_complete_at:
        return False
    v = out.last_validation
    if v is None:  # no validation line: was one configured, or in progress when the log stopped?
        return not (out.head.validation_configured or P.VALIDATING in out.region
                    or P.VALIDATION_START.search(out.region))
    return out.last_validation_at > out.last_complete_at and (v.epoch, v.iteration) == out.last_complete


def decide(out: Evidence, err_region: bytes, planned: int | None,
           evaluated: tuple[tuple[str, float, int], ...] = (), program: bool = True) -> Verdict:
    """Apply the rules above to the .out's evidence and the region of the .err ("" when none).

    ``program``: ``out`` is the driver's stdout, where the program's own output after training is
    evidence (False when log4j wrote the training lines to stderr: the .err is then ``out``).

    A log that stopped at an epoch end needs only the *hard* markers (what could have stopped it,
    and the notes); the soft ones (lost executor, ERROR line...) are searched only to explain a log
    that did not finish."""
    at_end = stopped_at_epoch_end(out)
    epochs = None if out.last_complete is None else out.last_complete[0]
    reached = planned is None or (epochs is not None and epochs >= planned)
    damage = (out.damage,) if out.damage else ()
    pruned_at = out.region.rfind(P.PRUNED)
    if pruned_at >= 0:  # rule 0: an optimizer stopped it on purpose; the signals of that stop are no failure
        return Verdict(Status.PRUNED, "pruned: " + _reason(out.region, "pruned", pruned_at + len(P.PRUNED), 0), None)
    if at_end and reached:
        hard_out = markers(out.region, hard_only=True)
        hard_err = markers(err_region, hard_only=True)
        evidence = _evidence_before(out.region, hard_out, program) or _evidence_before(err_region, hard_err)
        if planned is not None or evidence:
            notes = tuple(f"after training: {f.reason}" for f in (hard_out + hard_err)[:3]) + damage
            if not evidence:
                notes += (f"all {planned} planned epochs done; the log ends without a sign that the program went on"
                          + (" (last line cut)" if out.cut else ""),)
            v = out.last_validation
            bad = (impossible(() if v is None else v.metrics, None if v is None else v.wall_clock_s, evaluated)
                   or impossible_training(out))
            if bad:
                return Verdict(Status.FAILED, bad, FailureKind.JOB, notes)
            return Verdict(Status.OK, "", None, notes)
    out_found, err_found = markers(out.region), markers(err_region)
    found = out_found + err_found
    if found:
        pick = _pick(found)
        return Verdict(Status.FAILED, pick.reason, FailureKind(pick.marker.kind), damage)
    evidence = (end_evidence(out.region, len(out.region), program and at_end)
                or end_evidence(err_region, len(err_region)))
    stopped = any(n in out.region or n in err_region for n in SPARK_STOPPED)
    kind = FailureKind.JOB if stopped and not out.damage and not out.cut else FailureKind.INFRASTRUCTURE
    v = out.last_validation
    bad = (impossible(() if v is None else v.metrics, None if v is None else v.wall_clock_s, evaluated)
           or impossible_training(out)) if out.has_events else ""
    if bad:  # the figures so far are not BigDL's: more than a log that stopped early
        return Verdict(Status.FAILED, bad, FailureKind.JOB, damage)
    return Verdict(Status.INCOMPLETE, _missing(out, at_end, planned, evidence), kind)


def _evidence_before(region: bytes, found: list[Found], program: bool = False) -> bool:
    """End evidence in ``region`` before its first marker."""
    return bool(region) and end_evidence(region, min((f.at for f in found), default=len(region)), program)


def _missing(out: Evidence, at_end: bool, planned: int | None, evidence: bool) -> str:
    """What an incomplete log lacks, most telling first."""
    v, c, i = out.last_validation, out.last_complete, out.last_iteration
    parts = []
    if out.size == 0:
        parts.append("empty log")
    elif not out.has_events:
        parts.append("no BigDL training line in the log")
    elif i is not None and out.last_iteration_at > out.last_complete_at:
        parts.append(f"epoch {i.epoch} stopped at iteration {i.iteration} "
                     f"({i.epoch_records} of {i.epoch_size} records) without finishing")
    elif c is not None and not at_end:
        parts.append(f"epoch {c[0]} finished but was not validated")
    elif c is None:
        parts.append("no epoch finished")
    elif planned is not None and c[0] < planned:
        parts.append(f"{c[0]} of {planned} planned epochs done")
    elif not evidence:
        parts.append(f"the log ends after epoch {c[0]} with no sign that training ended (no program output or "
                     "Spark shutdown after it); pass --expected-epochs N if N epochs were planned")
    if out.damage:
        parts.append(out.damage)
    if out.cut and out.size > 0:
        parts.append("last line cut (process killed or log truncated)")
    elif not evidence and out.size > 0 and out.has_events:
        parts.append("no program output or Spark shutdown after the last training line: process killed or log truncated")
    return "; ".join(parts) or "log incomplete"
