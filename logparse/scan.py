"""Scanning one log's bytes into Evidence: the training events and the text after the last one.

Two ways, same Evidence for the same file:

* ``scan_final``: the tail (32 KB, grown x4 while needed) is walked back from its end
  (bytes.rfind) until an iteration, an epoch completion and a whole validation were seen;
  then the last of each kind is among the events walked, which are folded forward, and
  everything after the last event is in the tail. A log without all three kinds is read
  whole. The head is read forward only until the first iteration line.
* ``scan_full``: every event of the file (read whole), kept as records.
"""

from __future__ import annotations

import re
from collections import namedtuple

from logparse import patterns as P
from logparse import structured
from logparse.records import EpochEnd, Iteration, Metric, Validation
from logparse.source import Source

HEAD0 = 64 << 10  # real logs: first iteration line at 44-51 KB
TAIL0 = 32 << 10  # real logs: last iteration line 14-24 KB from the end
GROW = 4
APP_ID_WITHIN = 16 << 10  # Spark announces the application id at start-up (real logs: within 8 KB)


class Head(namedtuple("Head", (
        "first_iteration",  # Iteration | None
        "app_name",         # str | None
        "app_id",           # str | None
        "before",           # bytes: the log before its first iteration line
), defaults=(b"",))):
    """What the log says before training: the application and the first iteration."""

    __slots__ = ()

    @property
    def child_args(self) -> str | None:
        """The application's arguments, when ``spark-submit --verbose`` echoed them (searched only when needed)."""
        part = self.before[:APP_ID_WITHIN]
        if b"childArgs" not in part:
            return None
        m = P.CHILD_ARGS.search(part)
        return None if m is None else m.group(1).decode("utf-8", "replace")

    @property
    def validation_configured(self) -> bool:
        """The Python side created a validation method before training (searched only when needed)."""
        return b"creating: create" in self.before and any(n in self.before for n in P.VALIDATION_CREATED)


class Evidence(namedtuple("Evidence", (
        "size",                 # int
        "cut",                  # bool: the last line has no newline
        "damage",               # str: a damaged .gz, else ""
        "head",                 # Head
        "last_iteration",       # Iteration | None
        "last_iteration_at",    # int: its offset in the file, -1 if none
        "last_epoch",           # EpochEnd | None
        "last_epoch_at",        # int
        "last_validation",      # Validation | None
        "last_validation_at",   # int
        "last_complete",        # tuple[int, int] | None: (epoch, iteration) of the last epoch whose records reached its size
        "last_complete_at",     # int
        "region",               # bytes: everything after the last training event (the whole log if none)
        "iterations",           # list[Iteration]: scan_full only
        "epochs",               # list[EpochEnd]: scan_full only
        "validations",          # list[Validation]: scan_full only
))):
    """The facts the status rules need, gathered the same way by both scans."""

    __slots__ = ()

    @property
    def has_events(self) -> bool:
        return self.last_iteration is not None or self.last_epoch is not None or self.last_validation is not None


def _metric(name: bytes, kind: bytes, body: bytes) -> Metric:
    """An Accuracy's value is its ``accuracy`` field (None when unreadable, never another field);
    a loss's its ``Average ...`` field; anything else its last field."""
    fields = tuple((k.decode("ascii").strip(), float(v)) for k, v in P.METRIC_FIELD.findall(body))
    kind_s = kind.decode("ascii")
    value = None
    if kind_s == "Accuracy":
        value = next((v for k, v in fields if k == "accuracy"), None)
    elif fields:
        value = next((v for k, v in fields if k.startswith("Average")), fields[-1][1])
    return Metric(name.decode("ascii"), kind_s, value, fields)


class _Collector:
    """Folds events (in file order) into the last of each kind and, if ``keep``, every record."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.iterations: list[Iteration] = []
        self.epochs: list[EpochEnd] = []
        self.validations: list[Validation] = []
        self.last_iteration: Iteration | None = None
        self.last_iteration_at = -1
        self.last_epoch: EpochEnd | None = None
        self.last_epoch_at = -1
        self.last_validation: Validation | None = None
        self.last_validation_at = -1
        self.last_complete: tuple[int, int] | None = None
        self.last_complete_at = -1
        self.last_end = -1
        self._open = False  # the last event was a validation line (more metrics may join it)

    def feed(self, data, base: int, start: int = 0) -> None:
        """Fold every event in ``data[start:]``; ``base`` is ``data``'s offset in the file.

        bytes.find jumps to each "[Epoch " (C speed); the regex only runs there.
        """
        find, match, fold, pos = data.find, P.EVENT.match, self._fold, start
        while True:
            pos = find(b"[Epoch ", pos)
            if pos < 0:
                break
            m = match(data, pos)
            if m is None:
                pos += 7
                continue
            pos = m.end()
            fold(m, base)

    def feed_back(self, data, base: int, start: int = 0) -> bool:
        """Fold only the last events of ``data[start:]``: walking back from its end (bytes.rfind) until
        an iteration, an epoch completion and a whole validation were seen, so the last of each kind is
        among them; then fold those forward. False (nothing folded) if ``data`` does not hold them all."""
        rfind, match, pos = data.rfind, P.EVENT.match, len(data)
        found: list[re.Match[bytes]] = []
        it = done = val = closed = False
        while True:
            pos = rfind(b"[Epoch ", start, pos)
            if pos < 0:
                return False
            m = match(data, pos)
            if m is None:
                continue
            found.append(m)
            g10, g11, g14 = m.group(11), m.group(12), m.group(15)
            if g11 is not None:
                val = True
                continue
            closed = closed or val
            if g10 is not None:
                done = True
            else:
                it = True
                if g14 is not None and int(m.group(2)) >= int(m.group(3)) > 0:
                    done = True
            if it and done and closed:
                break
        for m in reversed(found):
            self._fold(m, base)
        return True

    def _fold(self, m: re.Match[bytes], base: int) -> None:
        """One event, in file order."""
        keep = self.keep
        g = m.groups()
        at = base + m.start()
        if g[5] is not None or g[14] is not None:
            if g[5] is not None:
                rec = Iteration(int(g[0]), int(g[3]), float(g[4]), int(g[1]), int(g[2]), float(g[5]),
                                float(g[6]), float(g[7]), float(g[8]), None if g[9] is None else float(g[9]))
            else:  # LocalOptimizer: the batch is throughput x iteration time (BigDL computes one from the other)
                sec, thr = float(g[15]), float(g[16])
                n = thr * sec
                rec = Iteration(int(g[0]), int(g[3]), float(g[4]), int(g[1]), int(g[2]),
                                float(round(n)) if n == n and abs(n) < 1e15 else float("nan"),
                                sec, thr, float(g[14]), None if g[17] is None else float(g[17]))
            self.last_iteration, self.last_iteration_at, self._open = rec, at, False
            if g[14] is not None and rec.epoch_records >= rec.epoch_size > 0:  # Distri prints "Epoch finished"
                self.last_complete, self.last_complete_at = (rec.epoch, rec.iteration), at
            if keep:
                self.iterations.append(rec)
        elif g[10] is not None:
            end = EpochEnd(int(g[0]), int(g[3]), float(g[4]), float(g[10]))
            self.last_epoch, self.last_epoch_at, self._open = end, at, False
            self.last_complete, self.last_complete_at = (end.epoch, end.iteration), at
            if keep:
                self.epochs.append(end)
        else:
            self._validation(int(g[0]), int(g[3]), float(g[4]), _metric(g[11], g[12], g[13]), at)
        self.last_end = base + m.end()

    def _validation(self, epoch: int, iteration: int, wall: float, metric: Metric, at: int) -> None:
        last = self.last_validation
        if self._open and last is not None and (last.epoch, last.iteration, last.wall_clock_s) == (epoch, iteration, wall):
            merged = Validation(epoch, iteration, wall, last.metrics + (metric,))
            self.last_validation = merged
            if self.keep:
                self.validations[-1] = merged
            return
        val = Validation(epoch, iteration, wall, (metric,))
        self.last_validation, self.last_validation_at, self._open = val, at, True
        if self.keep:
            self.validations.append(val)


NO_HEAD = Head(first_iteration=None, app_name=None, app_id=None)


def _first_iteration_at(data: bytes) -> int:
    """Offset of the first iteration line's header in ``data`` (Distri- or LocalOptimizer), or -1.

    One forward pass over "[Epoch " headers; a header cut by the end of ``data`` is not taken."""
    pos = data.find(b"[Epoch ")
    while pos >= 0:
        m = P.EVENT.match(data, pos)
        if m is not None and (m.group(6) is not None or m.group(15) is not None):
            return pos
        pos = data.find(b"[Epoch ", pos + 7)
    return -1


def _app_id(part: bytes) -> str | None:
    """The Spark application id from the line that announces it (standalone: "... with app ID app-...";
    event log: "Logging events to .../local-..."; YARN: "application_..."); local mode prints none."""
    best: tuple[int, bytes] | None = None
    limit = len(part)  # a needle past the line of the best match so far cannot give an earlier one
    for needle in (b"app ID", b"Logging events to ", b"application_"):
        pos = part.find(needle, 0, limit)
        if pos < 0:
            continue
        eol = part.find(b"\n", pos)
        eol = len(part) if eol < 0 else eol
        m = P.APP_ID.search(part, part.rfind(b"\n", 0, pos) + 1, eol)
        if m is not None and (best is None or m.start() < best[0]):
            best, limit = (m.start(), m.group(1)), eol
    return None if best is None else best[1].decode("ascii")


def read_head(src: Source, limit: int | None = None) -> Head:
    """Read forward until the first iteration line (or ``limit`` bytes); the application facts come
    from the part before it."""
    length = HEAD0 if limit is None else limit
    while True:
        data = src.read(0, length)
        at = _first_iteration_at(data)
        whole = length >= src.size or limit is not None
        if whole or (at >= 0 and data.find(b"\n", at) >= 0):  # the first iteration line is all here
            break
        length *= GROW
    part = structured.as_layout(data if at < 0 else data[:at])
    at_name = part.find(b"Submitted application: ")
    name = P.APP_NAME.match(part, at_name) if at_name >= 0 else None
    return Head(
        first_iteration=None if at < 0 else _first_iteration(data, at),
        app_name=name.group(1).decode("utf-8", "replace").strip() if name else None,
        app_id=_app_id(part[:APP_ID_WITHIN]),
        before=part,
    )


def _first_iteration(data: bytes, at: int) -> Iteration | None:
    c = _Collector(keep=True)
    c.feed(data[at:data.find(b"\n", at) if data.find(b"\n", at) >= 0 else len(data)], 0)
    return c.iterations[0] if c.iterations else None


def _evidence(src: Source, head: Head, c: _Collector, region: bytes, last: bytes | None = None) -> Evidence:
    """``last``: the log's last byte when the caller holds it (else read)."""
    if last is None:
        last = src.read(src.size - 1, 1) if src.size else b""
    return Evidence(
        size=src.size, cut=bool(last) and last != b"\n", damage=src.damage, head=head,
        last_iteration=c.last_iteration, last_iteration_at=c.last_iteration_at,
        last_epoch=c.last_epoch, last_epoch_at=c.last_epoch_at,
        last_validation=c.last_validation, last_validation_at=c.last_validation_at,
        last_complete=c.last_complete, last_complete_at=c.last_complete_at,
        region=structured.as_layout(region), iterations=c.iterations, epochs=c.epochs, validations=c.validations,
    )


def scan_final(src: Source, head: bool = True, head_limit: int | None = None) -> Evidence:
    """The final figures from the tail (grown until it holds the answer) and, if ``head``, the head
    (its first ``head_limit`` bytes only, when given)."""
    length = TAIL0
    while True:
        start = max(0, src.size - length)
        data = src.read(start, src.size - start)
        skip = 0 if start == 0 else data.find(b"\n") + 1  # the first line may be cut: skip it
        if start == 0 or skip > 0:
            c = _Collector(keep=False)
            if c.feed_back(data, start, skip):
                break
            if start == 0:  # the whole log, and not every kind of event in it: fold all it has
                c.feed(data, 0)
                break
        length *= GROW
    region = data[c.last_end - start:] if c.last_end >= 0 else data
    return _evidence(src, read_head(src, head_limit) if head else NO_HEAD, c, region, data[-1:])


def scan_full(src: Source) -> Evidence:
    """Every event of the file, as records."""
    c = _Collector(keep=True)
    c.feed(src.view(), 0)
    region = src.read(c.last_end, src.size - c.last_end) if c.last_end >= 0 else src.read(0, src.size)
    return _evidence(src, read_head(src), c, region)
