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
must be a fraction in [0, 1] and seconds >= 0, as for a ``json`` job (:mod:`harness.metrics`).
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

# ---------------------------------------------------------------- reading one run's output


def _tail(path: str | Path | None) -> str:
    if path is None:
        return ""
    with Source(path) as src:
        start = max(0, src.size - MAX_OUTPUT_BYTES)
        return src.read(start, src.size - start).decode("utf-8", "replace")


def _last_values(rx: re.Pattern[str], texts: Sequence[str]) -> dict[str, str] | None:
    """Each group's text in the last match of ``rx``: in the first text where it matches at all, else None."""
    for text in texts:
        last = None
        for last in rx.finditer(text):
            pass
        if last is not None:
            return {n: v for n, v in last.groupdict().items() if v is not None}
    return None


def read_output_figures(out: Path, spec: FigureSpec, reserved: frozenset[str] | set[str] = frozenset(),
                        design: Mapping[str, object] | None = None,
                        measured: Mapping[str, object] | None = None) -> Metrics:
    """The run's declared figures from its .out (the driver's stdout) and the .err beside it; a figure that
    cannot be read is :attr:`Metrics.problem` (the run fails with it), never an exception. ``measured``: the
    harness's measurements of the run (``spark_jobs_span_s``), which derived figures may use."""
    design = design or {}
    try:
        texts = [_tail(out), _tail(err_path_for(out))]
    except (LogParseError, OSError) as e:
        return Metrics(problem=f"cannot read the job's output: {e}")
    raw: dict[str, str] = {}
    for rx in spec.compiled():
        found = _last_values(rx, texts)
        if found is None:
            return Metrics(problem=f"the job's output has no line matching its figures regex {rx.pattern!r}: "
                                   "check what the program prints (its .out and .err)")
        raw.update(found)
    values: dict[str, Figure] = {n: typed(v, kind_of([v])) for n, v in raw.items()}  # type: ignore[misc]
    for name, f in spec.formulas():
        args = {n: values[n] if n in values else (measured or {}).get(n) for n in f.names}
        bad = [n for n, v in args.items() if not isinstance(v, (int, float))]
        if bad:
            return Metrics(problem=f"[derived] {name} = {f.text!r}: figure {bad[0]} is "
                                   f"{'missing' if args[bad[0]] is None else repr(args[bad[0]])}, not a number")
        values[name] = f(args)  # type: ignore[arg-type]
    return _checked(values, reserved, design)


def _checked(values: Mapping[str, Figure], reserved: frozenset[str] | set[str],
             design: Mapping[str, object]) -> Metrics:
    """The columns: numbers as floats, design echoes checked, the harness's names kept as ``job_<name>``."""
    figures: dict[str, Figure] = {}
    notes: list[str] = []
    for name, value in values.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
            if not math.isfinite(value):
                return Metrics(problem=f"the job's figure {name} is {value!r}, not a finite number")
        if name in design:
            if not _same(value, design[name]):
                return Metrics(problem=f"the job printed {name} = {str(value)[:40]} but the design asked "
                                       f"{design[name]}: it ran another configuration")
            continue
        if harness_name(name, reserved):
            kept = kept_name(name, set(values) | set(reserved))
            notes.append(f"the job's figure {name} is kept as {kept}: {name} is a name the harness writes itself")
            name = kept
        figures[name] = value
    for name in FILLED & set(figures):
        value = figures[name]
        if not isinstance(value, float) or value < 0 or (name == "accuracy" and value > 1):
            what = "a fraction in [0, 1]" if name == "accuracy" else "a time in seconds >= 0"
            return Metrics(problem=f"the job's figure {name} is {value!r}: it must be {what}")
    return Metrics(figures, notes=tuple(notes))
