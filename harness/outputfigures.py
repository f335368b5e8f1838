"""What a ``results = "output"`` job reports: figures read from what the program prints, unchanged.

A job description declares regexes over the driver's output, and figures derived from them::

    [job]
    results = "output"
    figures = ['Test Error = (?P<test_error>[0-9.eE+-]+)']

    [derived]
    accuracy = "1 - test_error"    # the arithmetic --cost uses: numbers, + - * / **, log, exp, sqrt, min, max...
    wall_clock_s = "spark_jobs_span_s"   # the harness's measurement of the run may be used too

Each named group of a regex is a column. The driver's stdout is searched first, then its stderr
(Python's logging and log4j write there); in each, the *last* match wins (a script that prints its
figure every epoch reports the final one). A regex that matches nowhere fails the run, and the reason
names it. A group's values are typed as ``harness.ingest --fields`` types its fields (all integers: int;
all numbers: float; else text), and its regexes are compiled and limited as ``--fields`` is
(:func:`harness.figurespec.compile_user_regex`). A figure named as the harness's own columns is kept as ``job_<name>``
(:func:`harness.metrics.kept_name`); one named as a design column must echo the design's value.

``accuracy`` and ``wall_clock_s``, printed or derived, fill the columns the default cost reads, and
must be a fraction in [0, 1] and seconds >= 0, as for a ``json`` job (:mod:`harness.metrics`);
``epochs_completed``, printed or derived, a whole number >= 0.

**Per-epoch rows.** A regex with a group named ``epoch`` makes every match an epoch's row (its epoch and
its other groups; ``Metrics.epochs``), e.g. ``'epoch (?P<epoch>\\d+) .*accuracy (?P<accuracy>[0-9.]+)'``:

* each group is typed over all its matches as the columns are; the epoch must be a whole number >= 0,
  and the epochs may not go back (a repeated epoch keeps its last row); several such regexes fill one row
  per epoch between them;
* epochs counted from 0 (a loop's ``for i in range(n)``) are counted from 1, as MLflow histories are:
  epoch = printed + 1, so that epoch ``n`` is the n-th;
* a ``[derived]`` figure is computed on each row that has every figure it uses (``accuracy = "1 -
  test_error"`` gives each epoch its accuracy); ``accuracy`` and ``wall_clock_s`` (the time so far) must
  be a fraction and seconds there too;
* the run's columns stay the last match's values (the printed counter itself is not one: a loop's
  ``range(n)`` ends at n - 1), and ``epochs_completed`` is the number of epochs
  when the job does not print its own.

The harness writes the rows to ``runs/<key>/epochs.csv`` and the campaign's epochs.csv
(:mod:`harness.runepochs`); an optimizer prunes the running job on them (:class:`EpochTail`,
:mod:`optimize.search.pruning`). A problem with them fails the run, with its reason.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Mapping, Sequence

from harness.figurespec import FigureSpec
from harness.metrics import FILLED, Figure, Metrics, _same, harness_name, kept_name
from logparse.errors import LogParseError
from logparse.source import Source, err_path_for
from sparkdl.runspec import kind_of, typed

#: Bytes of each stream searched (its end: where a program prints its result).
MAX_OUTPUT_BYTES = 64 << 20
#: The group that makes a regex's matches per-epoch rows.
EPOCH = "epoch"
#: At most this many epoch rows a run (a regex matching every line of a long log is not an epoch counter).
MAX_EPOCHS = 100_000

Row = dict[str, Figure]


class _Unusable(Exception):
    """Why the job's figures cannot be used (it becomes the run's failure reason, not an error)."""


# ---------------------------------------------------------------- reading one run's output


def _tail(path: str | Path | None) -> str:
    if path is None:
        return ""
    with Source(path) as src:
        start = max(0, src.size - MAX_OUTPUT_BYTES)
        return src.read(start, src.size - start).decode("utf-8", "replace")


def _groups(match: re.Match[str]) -> dict[str, str]:
    return {n: v for n, v in match.groupdict().items() if v is not None}


def _last_values(rx: re.Pattern[str], texts: Sequence[str]) -> dict[str, str] | None:
    """Each group's text in the last match of ``rx``: in the first text where it matches at all, else None."""
    for text in texts:
        last = None
        for last in rx.finditer(text):
            pass
        if last is not None:
            return _groups(last)
    return None


def _all_values(rx: re.Pattern[str], texts: Sequence[str]) -> list[dict[str, str]]:
    """Each match's groups, in order: in the first text where ``rx`` matches at all ([] when none does)."""
    for text in texts:
        found = []
        for m in rx.finditer(text):
            found.append(_groups(m))
            if len(found) > MAX_EPOCHS:
                raise _Unusable(f"the job's figures regex {rx.pattern!r} with an epoch group matched more than "
                                f"{MAX_EPOCHS} times: make it match one line per epoch")
        if found:
            return found
    return []


def read_output_figures(out: Path, spec: FigureSpec, reserved: frozenset[str] | set[str] = frozenset(),
                        design: Mapping[str, object] | None = None,
                        measured: Mapping[str, object] | None = None) -> Metrics:
    """The run's declared figures from its .out (the driver's stdout) and the .err beside it, and its epoch rows
    (``Metrics.epochs``); a figure that cannot be read is :attr:`Metrics.problem` (the run fails with it), never
    an exception. ``measured``: the harness's measurements of the run (``spark_jobs_span_s``), which derived
    figures may use."""
    design = design or {}
    try:
        texts = [_tail(out), _tail(err_path_for(out))]
    except (LogParseError, OSError) as e:
        return Metrics(problem=f"cannot read the job's output: {e}")
    raw: dict[str, str] = {}
    matches: list[tuple[str, list[dict[str, str]]]] = []
    try:
        for rx in spec.compiled():
            found = _all_values(rx, texts) if EPOCH in rx.groupindex else None
            last = (found[-1] if found else None) if found is not None else _last_values(rx, texts)
            if last is None:
                return Metrics(problem=f"the job's output has no line matching its figures regex {rx.pattern!r}: "
                                       "check what the program prints (its .out and .err)")
            raw.update(last)
            if found is not None:
                matches.append((rx.pattern, found))
        rows = epoch_rows(matches, spec)
    except _Unusable as e:
        return Metrics(problem=str(e))
    # the printed epoch counter is not a figure of the run: epochs_completed is (one count, from 1)
    values: dict[str, Figure] = {n: typed(v, kind_of([v])) for n, v in raw.items()  # type: ignore[misc]
                                 if not (n == EPOCH and matches)}
    for name, f in spec.formulas():
        args = {n: values[n] if n in values else (measured or {}).get(n) for n in f.names}
        bad = [n for n, v in args.items() if not isinstance(v, (int, float))]
        if bad:
            return Metrics(problem=f"[derived] {name} = {f.text!r}: figure {bad[0]} is "
                                   f"{'missing' if args[bad[0]] is None else repr(args[bad[0]])}, not a number")
        values[name] = f(args)  # type: ignore[arg-type]
    if rows and "epochs_completed" not in values:
        values["epochs_completed"] = len(rows)
    return _checked(values, reserved, design, rows)


# ---------------------------------------------------------------- per-epoch rows


def _epoch_of(text: str | None, pattern: str) -> int:
    if text is None or kind_of([text]) != "int" or int(text) < 0:
        raise _Unusable(f"the job's figures regex {pattern!r} captured epoch {str(text)[:40]!r}: an epoch is a whole "
                        "number >= 0 (match it with (?P<epoch>\\d+))")
    return int(text)


def _regex_rows(pattern: str, found: Sequence[Mapping[str, str]]) -> dict[int, Row]:
    """One regex's matches by epoch (a repeated epoch keeps its last row), each group typed over all matches."""
    kinds = {n: kind_of([m.get(n) for m in found]) for n in dict.fromkeys(n for m in found for n in m)}
    rows: dict[int, Row] = {}
    previous = None
    for m in found:
        epoch = _epoch_of(m.get(EPOCH), pattern)
        if previous is not None and epoch < previous:
            raise _Unusable(f"the job printed epoch {epoch} after epoch {previous} (figures regex {pattern!r}): "
                            "epochs may not go back; match one counter (a run that trains twice prints two)")
        previous = epoch
        rows[epoch] = {n: typed(v, kinds[n]) for n, v in m.items() if n != EPOCH}
    return rows


def epoch_rows(matches: Sequence[tuple[str, Sequence[Mapping[str, str]]]], spec: FigureSpec) -> list[Row]:
    """The epoch rows of each regex's matches (``(pattern, matches)``, a regex with an ``epoch`` group), merged by
    epoch, counted from 1, with the derived figures each row can compute; :class:`_Unusable` names a problem."""
    merged: dict[int, Row] = {}
    for pattern, found in matches:
        for epoch, row in _regex_rows(pattern, found).items():
            merged.setdefault(epoch, {}).update(row)
    shift = 1 if 0 in merged else 0
    formulas = spec.formulas() if merged else ()
    rows = []
    for epoch in sorted(merged):
        row: Row = {EPOCH: epoch + shift, **merged[epoch]}
        for name, f in formulas:
            if all(isinstance(row.get(n), (int, float)) for n in f.names):
                row[name] = f({n: row[n] for n in f.names})  # type: ignore[misc]
        for name in ("accuracy", "wall_clock_s"):
            value = row.get(name)
            if name in row and not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
                                    and (name != "accuracy" or value <= 1)):
                what = "a fraction in [0, 1]" if name == "accuracy" else "a time in seconds >= 0"
                raise _Unusable(f"the job's figure {name} at epoch {epoch + shift} is {value!r}: it must be {what}")
        rows.append(row)
    return rows


# ---------------------------------------------------------------- the columns


def _checked(values: Mapping[str, Figure], reserved: frozenset[str] | set[str],
             design: Mapping[str, object], rows: Sequence[Row] = ()) -> Metrics:
    """The columns: numbers as floats (``epochs_completed`` a whole number), design echoes checked, the harness's
    names kept as ``job_<name>``; the epoch rows' figures renamed so too (a design echo left out)."""
    figures: dict[str, Figure] = {}
    names: dict[str, str | None] = {}  # each figure's column (None: a design echo)
    notes: list[str] = []
    taken = set(values) | {n for row in rows for n in row} | set(reserved)
    for name, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
            if not math.isfinite(value):
                return Metrics(problem=f"the job's figure {name} is {value!r}, not a finite number")
        if name in design:
            if not _same(value, design[name]):
                return Metrics(problem=f"the job printed {name} = {str(value)[:40]} but the design asked "
                                       f"{design[name]}: it ran another configuration")
            names[name] = None
            continue
        names[name] = name
        if harness_name(name, reserved):
            kept = names[name] = kept_name(name, taken)
            notes.append(f"the job's figure {name} is kept as {kept}: {name} is a name the harness writes itself")
            name = kept
        figures[name] = value
    for name in FILLED & set(figures):
        value = figures[name]
        if name == "epochs_completed" and isinstance(value, float) and value.is_integer() and value >= 0:
            figures[name] = int(value)
        elif name == "epochs_completed":
            return Metrics(problem=f"the job's figure epochs_completed is {value!r}: it must be a whole number >= 0")
        elif not isinstance(value, float) or value < 0 or (name == "accuracy" and value > 1):
            what = "a fraction in [0, 1]" if name == "accuracy" else "a time in seconds >= 0"
            return Metrics(problem=f"the job's figure {name} is {value!r}: it must be {what}")
    epochs = tuple({EPOCH: row[EPOCH], **{names.get(n, n): v for n, v in row.items()
                                          if n != EPOCH and names.get(n, n) is not None}} for row in rows)
    return Metrics(figures, notes=tuple(notes), epochs=epochs)  # type: ignore[misc]


# ---------------------------------------------------------------- a running job's epochs


#: Text of a stream kept while no epoch regex matches it (a regex spanning lines needs its lines together).
MAX_PENDING = 1 << 20


class _Stream:
    """One growing output file, read in whole lines; the text not yet behind every regex's last match is kept."""

    def __init__(self, path: str | Path | None, count: int) -> None:
        self.path, self.offset, self.partial = path, 0, b""
        self.text, self.positions = "", [0] * count
        self.found: list[list[dict[str, str]]] = [[] for _ in range(count)]

    def read(self, patterns: Sequence[re.Pattern[str]]) -> None:
        if self.path is None:
            return
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        data = self.partial + data
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        if not cut:
            return
        self.text += data[:cut].decode("utf-8", "replace")
        for i, rx in enumerate(patterns):
            for m in rx.finditer(self.text, self.positions[i]):
                if len(self.found[i]) <= MAX_EPOCHS:  # past it the finished output fails the run, and the tail is []
                    self.found[i].append(_groups(m))
                self.positions[i] = m.end()
        keep = max(min(self.positions), len(self.text) - MAX_PENDING)
        keep = self.text.rfind("\n", 0, keep) + 1  # from a line's start, so that ^ still means one
        self.text = self.text[keep:]
        self.positions = [max(0, p - keep) for p in self.positions]


class EpochTail:
    """The epoch rows of a job's output while it runs, as :func:`read_output_figures` reads them afterwards: each
    regex's matches in the .out, else in the .err; rows counted, typed and derived by :func:`epoch_rows`.

    ``read()`` reads what the files gained (whole lines) and returns every row so far; [] while the rows have a
    problem (the run's end says which)."""

    def __init__(self, out: Path, spec: FigureSpec) -> None:
        self.out, self.spec = Path(out), spec
        self.patterns = [rx for rx in spec.compiled() if EPOCH in rx.groupindex]
        self.streams = [_Stream(out, len(self.patterns)), _Stream(err_path_for(out), len(self.patterns))]
        self._seen, self._rows = -1, []  # the matches the rows were made of (made again only when there are more)

    def read(self) -> list[Row]:
        if not self.patterns:
            return []
        if self.streams[1].path is None:  # the .err appears with the job
            self.streams[1].path = err_path_for(self.out)
        for stream in self.streams:
            stream.read(self.patterns)
        seen = sum(len(found) for stream in self.streams for found in stream.found)
        if seen != self._seen:
            self._seen, self._rows = seen, self._made()
        return list(self._rows)

    def _made(self) -> list[Row]:
        matches = []
        for i, rx in enumerate(self.patterns):
            found = next((s.found[i] for s in self.streams if s.found[i]), [])
            if len(found) > MAX_EPOCHS:
                return []
            if found:
                matches.append((rx.pattern, found))
        try:
            return epoch_rows(matches, self.spec)
        except _Unusable:
            return []


def has_epochs(spec: FigureSpec) -> bool:
    """Whether a job's figures make per-epoch rows (a regex with an ``epoch`` group)."""
    return any(EPOCH in rx.groupindex for rx in spec.compiled())
