"""Spark 4's structured (JSON) log lines, read as the log4j layout they stand for.

With ``spark.log.structuredLogging.enabled=true`` Spark 4 writes each log event as one JSON object
(``{"ts": ..., "level": ..., "msg": ..., "context": {...}, "exception": {...}, "logger": ...}``) instead of
log4j's ``26/11/27 21:08:22 ERROR TaskSchedulerImpl: Lost executor 1 ...``. :func:`as_layout` rewrites
every such line into that layout, with the exception's ``class: msg`` line and ``\\tat`` frames below it as
log4j prints a throwable, so every rule of :mod:`logparse.status` reads both forms alike: the same status,
reason and failure kind. The lines of a message or an exception after its first are indented (a
logger's continuation, never the program's own output).

A line that starts like one (``{"ts":``) but does not parse (cut mid-write, damaged) stays as it is;
``patterns.LOG_LINE`` counts it a logger's line all the same.
"""

from __future__ import annotations

OPEN = b'{"ts":'
#: Exceptions nested deeper than this (``cause`` of a ``cause``...) are not rendered.
MAX_CAUSES = 8
#: Frames rendered per exception (log4j prints them all; the rules read none of them).
MAX_FRAMES = 50


def has_structured(data: bytes) -> bool:
    """``data`` holds a line that starts like a structured log line."""
    return data.startswith(OPEN) or b"\n" + OPEN in data


def as_layout(data: bytes) -> bytes:
    """``data`` with each structured log line replaced by its log4j layout (other lines untouched)."""
    if not has_structured(data):
        return data
    out = []
    for line in data.split(b"\n"):
        if line.startswith(OPEN):
            line = _line(line)
        out.append(line)
    return b"\n".join(out)


def _line(raw: bytes) -> bytes:
    import json  # only when a log holds such lines: sparkdl logparse starts without it (tests/test_logparse_cli.py)

    body = raw.rstrip(b"\r")
    try:
        rec = json.loads(body)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(rec, dict) or not isinstance(rec.get("ts"), str) or "msg" not in rec:
        return raw
    level = str(rec.get("level") or "INFO")
    logger = str(rec.get("logger") or "")
    head = f"{_date(rec['ts'])} {level} {logger + ': ' if logger else ''}"
    lines = [head + _continued(str(rec.get("msg", "")))]
    exc = rec.get("exception")
    depth = 0
    while isinstance(exc, dict) and depth < MAX_CAUSES:
        lines.append(("" if depth == 0 else "Caused by: ") + _throwable(exc))
        frames = exc.get("stacktrace")
        for frame in (frames if isinstance(frames, list) else [])[:MAX_FRAMES]:
            lines.append("\tat " + _frame(frame))
        exc, depth = exc.get("cause"), depth + 1
    return "\n".join(lines).encode("utf-8", "replace")


def _date(ts: str) -> str:
    """``2026-11-27T21:08:22.123Z`` as Spark's classic ``26/11/27 21:08:22`` (kept as is when not that form)."""
    text = ts.strip()
    if len(text) >= 19 and text[4] == "-" and text[7] == "-" and text[10] in "T " and text[:4].isdigit():
        return f"{text[2:4]}/{text[5:7]}/{text[8:10]} {text[11:19]}"
    return " ".join(text.split())[:40] or "00/00/00 00:00:00"


def _continued(text: str) -> str:
    """A multi-line text on one line and its indented continuation lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join([lines[0], *("\t" + x for x in lines[1:])])


def _throwable(exc: dict) -> str:
    name = str(exc.get("class") or "java.lang.Throwable")
    msg = exc.get("msg")
    return name if msg in (None, "") else f"{name}: {_continued(str(msg))}"


def _frame(frame: object) -> str:
    if not isinstance(frame, dict):
        return str(frame)
    where = f"{frame.get('file')}:{frame.get('line')}" if frame.get("file") else "Unknown Source"
    return f"{frame.get('class', '')}.{frame.get('method', '')}({where})"
