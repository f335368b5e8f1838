"""Executors or workers lost during a job, anywhere in its log.

BigDL retries a failed iteration and Spark reschedules lost tasks, so a job can finish
"ok" after a worker died; it then trained part of the time on fewer cores than its design
row asked for, and its wall clock measures another configuration. The status rules look
only after the last training line; this full scan finds the losses that Spark survived.
"""

from __future__ import annotations

import os

from logparse import patterns as P
from logparse import structured
from logparse.source import Source, err_path_for

LOSS_MARKERS = tuple(m for m in P.MARKERS if m.name in ("lost_executor", "worker_lost"))


def _line_at(data: bytes, pos: int) -> str:
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    raw = data[start:end if end >= 0 else len(data)]
    if raw.startswith(structured.OPEN):  # Spark 4's JSON line: its message, as the log4j layout reads
        raw = structured.as_layout(raw).split(b"\n", 1)[0]
    return P.LOG_PREFIX.sub(b"", raw.strip()).decode("utf-8", "replace")


def resource_losses(path: str | os.PathLike[str], limit: int = 3) -> tuple[str, ...]:
    """The first ``limit`` distinct lines that report a lost executor or worker (empty when none).

    Reads the .out and the .err in overlapping 8 MiB blocks (bounded memory, any size)."""
    out = os.fspath(path)
    found: list[str] = []
    for p in (out, err_path_for(out)):
        if p is None or not os.path.isfile(p):
            continue
        with Source(p) as src:
            for _base, data in src.blocks():
                for marker in LOSS_MARKERS:
                    if not any(n in data for n in marker.needles):
                        continue
                    for match in marker.regex.finditer(data):
                        line = _line_at(data, match.start())
                        if line not in found:
                            found.append(line)
                        if len(found) >= limit:
                            return tuple(found)
    return tuple(found)
