"""What a ``json`` job reports: one JSON object of named figures, read strictly.

The harness appends ``--metrics-out PATH`` to a ``json`` job's arguments; the job writes there one
object such as ``{"accuracy": 0.91, "train_time_s": 12.3, "loss_history": [2.3, 1.1]}``:

* a number (finite) or a short string becomes a column of results.csv, named by its key; a name the
  harness writes itself (its ``spark_*``, ``host_*`` and ``phase_*`` measurements, a field of the run's
  record) is kept as ``job_<name>``, with a note on the run: a figure's name never costs a run;
* a list of numbers (e.g. one per epoch) is kept in the run's ``metrics.json`` only;
* ``accuracy`` (a fraction in [0, 1]) and ``wall_clock_s`` (seconds, >= 0) fill the columns the
  BigDL jobs fill from their logs, so the default cost ``T/(A*100)^2``, the ANOVA and the report
  work unchanged; ``epochs_completed`` (a whole number >= 0) fills the column of that name;
* a whole number stays an integer (``"processes": 2`` is 2 in results.csv, not 2.0).

No file, a file that is not one JSON object, a value of another kind or an impossible
accuracy or time is a failed run with that reason (:attr:`Metrics.problem`).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from sparkdl.runspec import RunSpec
from sparkdl.campaign import EXECUTION_COLUMNS, OUTCOME_COLUMNS
from sparkdl import config

MAX_METRICS_BYTES = 1 << 20
MAX_FIGURES = 100
MAX_TEXT = 200
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,63}", re.ASCII)
#: Prefixes of the figures the harness measures itself for every run (harness.observer): spark_*, host_*, phase_*.
HARNESS_PREFIXES = ("spark_", "host_", "phase_")

Figure = float | int | str | None
#: Figures that fill the columns the BigDL jobs fill from their logs.
FILLED = frozenset({"accuracy", "wall_clock_s", "epochs_completed"})


@dataclass(frozen=True)
class Metrics:
    """The scalar figures (columns), the per-epoch lists, or why the file is not usable."""

    figures: Mapping[str, Figure] = field(default_factory=dict)
    series: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    problem: str | None = None
    notes: tuple[str, ...] = ()  # what was done to keep a figure (a name the harness writes, renamed)
    #: One row per epoch ({"epoch": n, figure: value...}, epochs counted from 1): a ``results = "output"`` job's
    #: matches of a regex with an ``epoch`` group (:mod:`harness.outputfigures`); runs/<key>/epochs.csv
    epochs: tuple[Mapping[str, Figure], ...] = ()

    @property
    def accuracy(self) -> float | None:
        value = self.figures.get("accuracy")
        return value if isinstance(value, float) else None

    @property
    def wall_clock_s(self) -> float | None:
        value = self.figures.get("wall_clock_s")
        return value if isinstance(value, float) else None

    @property
    def epochs_completed(self) -> int | None:
        value = self.figures.get("epochs_completed")
        return value if isinstance(value, int) else None

    def extra(self, taken: frozenset[str] | set[str] = frozenset()) -> dict[str, Figure]:
        """The figures that are not ``accuracy``/``wall_clock_s`` nor a name in ``taken`` (e.g. design columns)."""
        return {k: v for k, v in self.figures.items() if k not in FILLED and k not in taken}


class _Unusable(Exception):
    """Why the metrics file cannot be read (it becomes the run's failure reason, not an error)."""


def _failed(problem: str) -> Metrics:
    return Metrics(problem=problem)


def _number(value: object) -> float | int | None:
    """A finite number: a JSON integer stays an int (a count), anything else a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None  # what SQLite and pandas hold as an integer
    return value if math.isfinite(value) else None


def _same(reported: object, planned: object) -> bool:
    """Whether a figure the job echoes equals the design's value (numbers by value: 40 == 40.0)."""
    if isinstance(reported, bool) or isinstance(planned, bool):
        return reported == planned
    if isinstance(reported, (int, float)) and isinstance(planned, (int, float)):
        return float(reported) == float(planned)
    return isinstance(reported, str) and reported == str(planned)


def parse_metrics(text: str, reserved: frozenset[str] | set[str] = frozenset(),
                  design: Mapping[str, object] | None = None) -> Metrics:
    """Check one metrics document; ``reserved`` are names the job may not use (the harness's own columns).

    ``design`` holds the run's design values: a figure of that name (a job echoing its settings, as
    MLflow-style scripts do) is accepted when it equals the design's value, and fails the run as
    having run another configuration when it does not.
    """
    design = design or {}
    try:
        doc = json.loads(text, parse_constant=lambda c: c)  # NaN/Infinity stay strings, refused below
    except (json.JSONDecodeError, RecursionError) as e:
        return _failed(f"the job's metrics file is not valid JSON ({e})")
    if not isinstance(doc, dict):
        return _failed("the job's metrics file must hold one JSON object of named figures, "
                       f"e.g. {{\"accuracy\": 0.9}}, not a {type(doc).__name__}")
    if not doc:
        return _failed("the job's metrics file holds no figures")
    if len(doc) > MAX_FIGURES:
        return _failed(f"the job reported {len(doc)} figures: at most {MAX_FIGURES}")
    figures: dict[str, Figure] = {}
    series: dict[str, tuple[float, ...]] = {}
    notes: list[str] = []
    for key, value in doc.items():
        if not NAME.fullmatch(key):
            return _failed(f"the job reported a figure named {key[:40]!r}: names are letters, digits, '_' and '.'")
        if key in design:
            if not _same(value, design[key]):
                return _failed(f"the job reported {key} = {str(value)[:40]} but the design asked {design[key]}: "
                               "it ran another configuration")
            continue  # an echo of the design's value: already a column
        if harness_name(key, reserved):
            kept = kept_name(key, set(doc) | set(figures) | set(series) | set(reserved))
            notes.append(f"the job's figure {key} is kept as {kept}: {key} is a name the harness writes itself")
            key = kept
        number = _number(value)
        if number is not None:
            figures[key] = number
        elif value is None:
            figures[key] = None
        elif isinstance(value, str) and value not in ("NaN", "Infinity", "-Infinity"):
            if len(value) > MAX_TEXT or not value.isprintable():
                return _failed(f"the job's figure {key!r} is a text of {len(value)} characters or with line breaks: "
                               f"keep it on one line, at most {MAX_TEXT}")
            figures[key] = value
        elif isinstance(value, list):
            numbers = [_number(v) for v in value]
            if any(n is None for n in numbers):
                return _failed(f"the job's figure {key!r} is a list with a value that is not a finite number")
            series[key] = tuple(float(n) for n in numbers)  # type: ignore[arg-type]
        else:
            return _failed(f"the job's figure {key!r} = {str(value)[:40]} is not a finite number, a text or a list "
                           "of numbers")
    for name in ("accuracy", "wall_clock_s"):  # these columns are floats, whatever JSON wrote
        if isinstance(figures.get(name), int):
            figures[name] = float(figures[name])  # type: ignore[arg-type]
    accuracy, wall = figures.get("accuracy"), figures.get("wall_clock_s")
    if "accuracy" in figures and not (isinstance(accuracy, float) and 0.0 <= accuracy <= 1.0):
        return _failed(f"the job reported accuracy {accuracy!r}: it must be a fraction in [0, 1]")
    if "wall_clock_s" in figures and not (isinstance(wall, float) and wall >= 0.0):
        return _failed(f"the job reported wall_clock_s {wall!r}: it must be a time in seconds >= 0")
    epochs = figures.get("epochs_completed")
    if isinstance(epochs, float) and epochs.is_integer() and epochs >= 0:  # 3.0 from a job that counts in floats
        epochs = figures["epochs_completed"] = int(epochs)
    if "epochs_completed" in figures and not (isinstance(epochs, int) and epochs >= 0):
        return _failed(f"the job reported epochs_completed {epochs!r}: it must be a whole number >= 0")
    return Metrics(figures, series, notes=tuple(notes))


def harness_name(name: str, reserved: frozenset[str] | set[str]) -> bool:
    """Whether ``name`` is one the harness writes itself: a field of the run's record, or a ``spark_``,
    ``host_`` or ``phase_`` measurement."""
    return name in reserved or name.startswith(HARNESS_PREFIXES)


def kept_name(name: str, taken: set[str]) -> str:
    """The name a job's figure is kept under when ``name`` is the harness's: ``job_<name>`` (prefixed again
    while that is taken too)."""
    kept = f"job_{name}"
    while kept in taken:
        kept = f"job_{kept}"
    return kept


def read_metrics(path: Path, reserved: frozenset[str] | set[str] = frozenset(),
                 design: Mapping[str, object] | None = None) -> Metrics:
    """Read ``path`` as :func:`parse_metrics` does; a missing or oversized file is a problem, not an error."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _failed(f"the job wrote no metrics to {path} (a json job must write its figures to --metrics-out)")
    except OSError as e:
        return _failed(f"cannot read the job's metrics {path} ({e.strerror})")
    if st.st_size > MAX_METRICS_BYTES:
        return _failed(f"the job's metrics file has {st.st_size} bytes: at most {MAX_METRICS_BYTES}")
    try:  # the one reader: a regular file (a FIFO never blocks), the size cap, UTF-8 with the line of a bad byte
        text = config.read_text(path, "job's metrics file", MAX_METRICS_BYTES, _Unusable)
    except _Unusable as e:
        return _failed(str(e))
    return parse_metrics(text, reserved, design)


def reserved_names(spec: RunSpec) -> set[str]:
    """Names a json job's figures may not take: the harness's own columns and the run's design columns."""
    from harness.times import HARNESS_TIMES

    return (set(OUTCOME_COLUMNS) | set(EXECUTION_COLUMNS) | {"status"} | set(HARNESS_TIMES)
            | set(spec.as_row())) - FILLED
