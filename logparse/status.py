"""The status rules: ok, failed or incomplete, with a reason and whose fault it was.

BigDL never prints how many epochs were planned, so completeness is judged from what
the log shows (``planned`` comes from ``parse(expected_epochs=N)`` or, for this
project's jobs, ``epochs=N`` in the Spark application name). Terms:

* the *last event* is the last iteration, "Epoch finished" or validation line;
  the *region* is everything after it (the whole log when there is none), in the .out
  and in the .err beside it;
* training is *validated* when the last event is a validation of the epoch of the
  last "Epoch finished" line (no iteration or epoch end after it);
* the log *ended* when the region holds Spark's "Shutdown hook called" (a JVM killed
  with SIGKILL never prints it), or, for a log without Spark's INFO lines, when its
  last line is whole.

Rules, in order:

0. ``pruned`` if the region holds the runner's prune line (``sparkdl: pruned: <reason>``, written
   after an optimizer stopped the job on purpose): the signals of that stop are not a failure.
1. ``failed`` if the region holds a *hard* marker (BigDL Usage Error, Python traceback,
   Py4JJavaError, OutOfMemoryError, a CLI ``error:`` line, ``Exception in thread "main"``,
   a signal, the master removing or killing the application). An exception after a
   validated training still fails the job; the reason then starts with "after training:".
2. ``ok`` if training is validated, the log ended, and no fewer epochs were validated
   than planned. When ``planned`` is known and reached, a log that did not end (killed
   during shutdown) is still ``ok``, with a note: its figures are complete.
3. ``failed`` if the region holds a *soft* marker (an ERROR line, a lost executor or
   worker, a refused connection): they explain why the job stopped.
4. ``incomplete`` otherwise, saying what is missing: an empty log, no training line, an
   epoch without validation, fewer epochs than planned, or no end (killed or truncated).

The reason is the first *specific* marker (one that names a cause, e.g. the Usage Error
message or a lost executor) and only if there is none the first generic one (a traceback's
exception line, an ERROR line). failure_kind is that marker's: ``job`` or ``infrastructure``;
an incomplete log is ``infrastructure`` when it did not end (killed, truncated, damaged)
and ``job`` otherwise. Errors before the last event did not stop the job (Spark retried)
and do not change the status.
"""

from __future__ import annotations

from dataclasses import dataclass

from logparse import patterns as P
from logparse.scan import Evidence

MAX_REASON = 300


@dataclass(frozen=True)
class Found:
    """One error marker found in a region."""

    at: int
    marker: P.Marker
    reason: str


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str
    failure_kind: str | None
    notes: tuple[str, ...] = ()


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
    return _text(line)


def markers(region: bytes) -> list[Found]:
    """Every error marker in ``region``, in order: needles found by bytes.find, confirmed by regex on their line."""
    hits: dict[tuple[int, str], Found] = {}
    for mk in P.MARKERS:
        for needle in mk.needles:
            pos = region.find(needle)
            while pos >= 0:
                start = region.rfind(b"\n", 0, pos) + 1
                eol = region.find(b"\n", pos)
                eol = len(region) if eol < 0 else eol
                for m in mk.regex.finditer(region, start, eol):
                    if (m.start(), mk.name) not in hits:
                        hits[m.start(), mk.name] = Found(m.start(), mk, _reason(region, mk.name, m.start(), m.end()))
                pos = region.find(needle, eol)
    return [hits[k] for k in sorted(hits)]


def _pick(found: list[Found]) -> Found:
    """The first specific marker, else the first hard one, else the first."""
    for f in found:
        if f.marker.specific:
            return f
    for f in found:
        if f.marker.hard:
            return f
    return found[0]


def decide(out: Evidence, err_found: list[Found], err_ended: bool, planned: int | None) -> Verdict:
    """Apply the rules above to the .out's evidence and the .err's markers."""
    found = markers(out.region) + err_found
    v, f_ = out.last_validation, out.last_epoch
    validated = (v is not None and f_ is not None and v.epoch == f_.epoch
                 and out.last_validation_at > out.last_epoch_at
                 and out.last_validation_at > out.last_iteration_at)
    ended = (P.SHUTDOWN in out.region or err_ended
             or (not out.head.spark_info and not out.cut and not out.damage and out.size > 0))
    reached = planned is None or (v is not None and v.epoch >= planned)

    pruned_at = out.region.rfind(P.PRUNED)
    if pruned_at >= 0:
        return Verdict("pruned", "pruned: " + _reason(out.region, "pruned", pruned_at + len(P.PRUNED), 0), None)
    hard = [f for f in found if f.marker.hard]
    if hard:
        pick = _pick(found)
        prefix = "after training: " if validated and reached else ""
        return Verdict("failed", prefix + pick.reason, pick.marker.kind)
    notes = tuple(f"after training: {f.reason}" for f in found[:3]) + ((out.damage,) if out.damage else ())
    if validated and reached and ended:
        return Verdict("ok", "", None, notes)
    if validated and reached and planned is not None:
        why = "last line cut" if out.cut else "no Spark shutdown line"
        return Verdict("ok", "", None, notes + (f"all {planned} planned epochs validated; log ends early ({why})",))
    if found:
        pick = _pick(found)
        return Verdict("failed", pick.reason, pick.marker.kind)
    return Verdict("incomplete", _missing(out, validated, planned, ended), "job" if ended and not out.damage else "infrastructure")


def _missing(out: Evidence, validated: bool, planned: int | None, ended: bool) -> str:
    """What an incomplete log lacks, most telling first."""
    v, f_, i = out.last_validation, out.last_epoch, out.last_iteration
    parts = []
    if out.size == 0:
        parts.append("empty log")
    elif not out.has_events:
        parts.append("no BigDL training line in the log")
    elif i is not None and out.last_iteration_at > max(out.last_validation_at, out.last_epoch_at):
        parts.append(f"epoch {i.epoch} stopped at iteration {i.iteration} without finishing")
    elif f_ is not None and out.last_epoch_at > out.last_validation_at:
        parts.append(f"epoch {f_.epoch} finished but was not validated")
    elif v is not None and f_ is None:
        parts.append("no \"Epoch finished\" line")
    elif v is not None and not validated:
        parts.append(f"the last validation (epoch {v.epoch}) is not after the last epoch end")
    elif v is not None and planned is not None and v.epoch < planned:
        parts.append(f"{v.epoch} of {planned} planned epochs validated")
    if out.damage:
        parts.append(out.damage)
    if not ended and out.size > 0:
        parts.append("log ends without Spark's shutdown: process killed or log truncated"
                     + (" (last line cut)" if out.cut else ""))
    return "; ".join(parts) or "log incomplete"
