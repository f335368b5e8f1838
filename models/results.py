"""The results table: one row per job, with its factor levels and its cost.

Input is a campaign directory (its ``results.csv``, and the ``manifest.json`` beside it that
declares the design's factors) or any CSV with factor columns and either a ``cost`` column or
the ``wall_clock_s`` and ``accuracy`` columns the cost is computed from.

Rules, in order:

1. Status: when a ``status`` column exists, only rows whose status is ``logparse.Status.OK``
   are kept (unless ``include_failed``); the others are counted in :attr:`ResultsTable.dropped`.
   Without a ``status`` column every row is assumed ok, and :meth:`ResultsTable.notices` says so.
   This module is the one place that decides which rows are ok (:func:`ok_mask`).
2. What a measurement is (:func:`invalid_measurements`, the one rule of every command that reads runs): a time
   (``wall_clock_s``, ``fit_s``, ``elapsed_s``, ``time``, and a response named ``*_s``/``*_ms``) is a finite number in
   [0, 1 year], an ``accuracy`` a fraction in [0, 1], a count (``epochs_completed``, ``attempts``) not negative; rows
   that break it are set aside and counted, and :func:`set_aside_note` is the one note that says so (a table whose
   every accuracy is above 1 is refused instead: percentages). One span: when the kept rows'
   ``wall_clock_of`` differ (BigDL's own Wall Clock beside other jobs' training call,
   :mod:`sparkdl.times`), ``wall_clock_s`` becomes every row's ``fit_s`` (the training call) if every
   row has one; if not, the rows stay as they are and a notice says the time mixes spans.
3. The cost: an existing ``cost`` column is used as is when no cost function is asked for;
   otherwise the cost (default ``T / (A*100)^2``) is computed from ``wall_clock_s`` and ``accuracy``. A table with neither, analysed for another ``response``,
   has no cost (it is not refused).
4. Rows whose response (the cost, and ``response`` if another column) is NaN, infinite or beyond
   +-1e100 are dropped and counted.

Factors are declared, never silently guessed: ``factors=`` (the CLIs' ``--factors a,b,c``), else
the campaign's ``manifest.json``, else the harness's design columns when the table has them all.
Only a bare CSV without any of these has its factors taken from its columns (those that are
neither bookkeeping nor measurements and vary), and :meth:`ResultsTable.notices` names them;
a column that cannot be a factor (named like an identifier such as ``rep``/``id``/``seed``, or
text with a different value in every row) is refused with the ``--factors`` to give instead.
Declared factors that take one value among the kept rows are left out, with a notice.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from logparse import Status
from sparkdl.cost import CostFunction, parse_cost
from models.errors import CostInputsMissingError, InvalidTableError, MissingColumnError, ResultsNotFoundError
from sparkdl.campaign import CampaignDir, Manifest
from sparkdl.errors import CampaignError
from sparkdl.options import CommandParser, add_campaign
from sparkdl.measurements import (COUNT_COLUMNS, MAX_WALL_CLOCK_S, TIME_COLUMNS, _numbers, _present_not_number,  # noqa: F401
                                  breaks_the_rule, invalid_measurements, time_columns)
from sparkdl.times import WALL_CLOCK_OF

RESULTS_FILE = "results.csv"
MANIFEST_FILE = "manifest.json"  # sparkdl.campaign.CampaignDir.MANIFEST
TIME_COLUMN = "wall_clock_s"
FIT_COLUMN = "fit_s"
WALL_CLOCK_OF_COLUMN = "wall_clock_of"  # which span a row's wall_clock_s is (sparkdl.times)
ACCURACY_COLUMN = "accuracy"
COST_COLUMN = "cost"
STATUS_COLUMN = "status"
#: Responses beyond this magnitude are dropped: their squares overflow a float's range.
MAX_ABS_RESPONSE = 1e100

#: The design columns of the harness's results table (``model`` is the network name).
HARNESS_FACTORS: tuple[str, ...] = (
    "model", "nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size",
)

#: Columns that are never factors: identifiers, bookkeeping and measurements.
NON_FACTOR_COLUMNS = frozenset(
    {
        "run",
        "replicate",
        "whole_plot",
        "status",
        "reason",
        "wall_clock_s",
        "accuracy",
        "elapsed_s",
        "start",
        "end",
        "app_id",
        "cost",
        # what the harness read back from each job's log, and its bookkeeping (harness/store.py)
        "failure_kind",
        "attempts",
        "epochs_completed",
        "learning_rate_used",
        "batch_size_used",
        "exit_code",
        "log",
    }
)

#: Names of identifier columns: never a design factor.
IDENTIFIER_NAME = re.compile(
    r"(?i)^(rep|reps|replicate|replicates|replication|repetition|repeat|run|runs|run_?id|run_?no|id|.*_id|"
    r"uuid|seed|random_?seed|trial|index|idx|job|job_?id)$"
)


@dataclass(frozen=True)
class FactorGuess:
    """Columns taken as factors from a bare table, and numeric columns set aside as measurements."""

    factors: tuple[str, ...]
    measurements: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultsTable:
    """Jobs that enter the analysis, and what was left out.

    ``frame`` has one row per job and a ``cost`` column (when one could be computed); ``factors``
    are its factor columns; ``factors_from`` says where they come from (``--factors``,
    ``manifest.json``, ``harness design columns`` or ``guessed``); ``dropped`` maps a reason
    (e.g. ``"status=failed"``) to a count of rows.
    """

    frame: pd.DataFrame
    source: str
    factors: tuple[str, ...]
    n_read: int
    dropped: Mapping[str, int] = field(default_factory=dict)
    cost_name: str = "as given"
    factors_from: str = "guessed"
    measurements: tuple[str, ...] = ()
    constant_factors: tuple[str, ...] = ()
    has_status: bool = True
    #: a campaign's reference runs (ok, plausible): out of ``frame``, in for the drift check
    reference: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: what rule 2 did with a time that measured different spans ("" when the rows measured one)
    time_span: str = ""

    @property
    def n_dropped(self) -> int:
        return sum(self.dropped.values())

    def describe_dropped(self) -> str:
        """One line: how many rows were read, kept and dropped, and why."""
        kept = len(self.frame)
        if not self.dropped:
            return f"{kept} of {self.n_read} rows analysed; none dropped"
        why = ", ".join(f"{n} {reason}" for reason, n in self.dropped.items())
        return f"{kept} of {self.n_read} rows analysed; dropped {self.n_dropped}: {why}"

    def notices(self) -> tuple[str, ...]:
        """What was assumed rather than read: guessed factors, rows assumed ok, factors left out."""
        out = list(assumptions(self.has_status, self.n_read,
                               FactorChoice(self.factors, self.factors_from, self.measurements)))
        if self.time_span:
            out.append(self.time_span)
        if (note := set_aside_note(self.n_read, self.dropped)) is not None:
            out.append(note)
        if self.constant_factors and self.factors_from == "--factors" and len(self.frame):
            out.append("factor(s) with one value among the analysed rows, left out: "
                       + ", ".join(self.constant_factors))
        return tuple(out)

    def say(self) -> "ResultsTable":
        """Print the one note on the rows the validity rule set aside (:func:`set_aside_note`) on stderr as
        ``note: ...``, the wording of every reader of runs (:meth:`Runs.say`); returns itself. (anova prints all of
        :meth:`notices`.)"""
        import sys

        if (line := set_aside_note(self.n_read, self.dropped)) is not None:
            print(f"note: {line}", file=sys.stderr)
        return self

    def require_rows(self) -> None:
        """Refuse an empty table with one line saying why no row is left."""
        if len(self.frame):
            return
        statuses = {k: v for k, v in self.dropped.items() if k.startswith(f"{STATUS_COLUMN}=")}
        if statuses and sum(statuses.values()) == self.n_read:
            why = ", ".join(f"{n} {k.removeprefix(STATUS_COLUMN + '=')}" for k, n in statuses.items())
            raise InvalidTableError(f"0 of {self.n_read} rows are ok ({why}): nothing to analyse")
        if not self.n_read:
            raise InvalidTableError(f"{self.source} has no rows: nothing to analyse yet")
        why = ", ".join(f"{n} {reason}" for reason, n in self.dropped.items())
        raise InvalidTableError(f"0 of {self.n_read} rows are usable ({why}): nothing to analyse")

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "read": self.n_read, "dropped": dict(self.dropped), "cost": self.cost_name,
                "factors": list(self.factors), "factors_from": self.factors_from,
                "status_assumed_ok": not self.has_status}


def assumptions(has_status: bool, n_rows: int, choice: FactorChoice) -> tuple[str, ...]:
    """The lines that say what was assumed: rows taken as ok without a status, factors guessed."""
    out = []
    if not has_status:
        out.append(f"no {STATUS_COLUMN!r} column: all {n_rows} rows assumed ok")
    return (*out, *factor_notes(choice))


def factor_notes(choice: FactorChoice) -> tuple[str, ...]:
    """The lines every command prints for factors taken from a bare table's columns: which, and which columns were
    read as measurements (:func:`guess_factors`, the one rule); () for declared factors."""
    if choice.source != "guessed":
        return ()
    out = [f"factors taken from the columns (no {MANIFEST_FILE}, no --factors): {', '.join(choice.factors) or 'none'}"]
    if choice.measurements:
        out.append(f"set aside as measurements (not factors): {', '.join(choice.measurements)}")
    return tuple(out)


def resolve_path(path: str | Path) -> Path:
    """The CSV file behind a results path: the file itself, or ``DIR/results.csv``."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_FILE
    if not p.exists():
        raise ResultsNotFoundError(
            f"no results at {str(path)!r}: give a results CSV or a campaign directory with {RESULTS_FILE}"
        )
    return p


def table_options() -> argparse.ArgumentParser:
    """The options of every command that reads a results table: RESULTS and ``--factors``.

    Use as ``CommandParser(parents=[table_options()])``; parse ``--factors`` with
    :func:`factor_list`.
    """
    p = CommandParser(add_help=False)
    add_campaign(p, f"its {RESULTS_FILE}, factors from its {MANIFEST_FILE}", dest="results")
    p.add_argument("--factors", help=f"comma-separated factor columns (default: the campaign's {MANIFEST_FILE}; for a "
                                     "bare CSV the columns taken as factors are named on stderr)")
    return p


def factor_list(text: str | None, flag: str = "--factors") -> tuple[str, ...] | None:
    """``--factors a,b,c`` as a tuple (None when not given); an empty list, or a name given twice, is refused."""
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise InvalidTableError(f"{flag} {text!r} names no column; give e.g. {flag} nodes,epochs")
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise InvalidTableError(f"{flag} {text[:80]!r} names {twice[:40]!r} twice: give each column once, e.g. "
                                f"{flag} {','.join(dict.fromkeys(names))[:80]}")
    return names


def manifest_of(csv_path: Path) -> Manifest | None:
    """The campaign manifest beside a campaign's ``results.csv`` (None if absent or not a campaign's table).

    Read by :class:`sparkdl.campaign.CampaignDir`, the one owner of the campaign folder's layout.
    """
    if csv_path.name != RESULTS_FILE:
        return None
    folder = CampaignDir(csv_path.parent)
    try:
        return folder.read_manifest()
    except CampaignError as exc:
        raise InvalidTableError(f"{exc}") from None


def time_response(path: str | Path, fallback: str = TIME_COLUMN) -> str:
    """The column that holds the runs' time, as the campaign's manifest records it (``Manifest.time``: e.g.
    ``spark_jobs_span_s`` for a job that reports no time of its own); ``fallback`` without one."""
    try:
        manifest = manifest_of(resolve_path(path))
    except (ResultsNotFoundError, InvalidTableError):
        return fallback  # the command's own reader says what is wrong with the path
    return manifest.time if manifest is not None and manifest.time not in ("", "mixed") else fallback


def manifest_factors(csv_path: Path) -> tuple[str, ...] | None:
    """The factors declared by the campaign manifest beside a campaign's ``results.csv`` (None if absent)."""
    manifest = manifest_of(csv_path)
    return None if manifest is None else manifest.factors


#: The reason a reference run is kept out of the analysed rows (``harness.submit --reference-every``).
REFERENCE_REASON = "reference runs (kept for the drift check)"


def _split_reference(df: pd.DataFrame, csv_path: Path | None, dropped: dict[str, int]) -> tuple[pd.DataFrame,
                                                                                             pd.DataFrame]:
    """(design rows, reference rows): a campaign's reference runs measure drift, they are not design points."""
    manifest = manifest_of(csv_path) if csv_path is not None else None
    if manifest is None or manifest.reference_run is None or "run" not in df.columns:
        return df, df.iloc[0:0]
    is_reference = pd.to_numeric(df["run"], errors="coerce") == manifest.reference_run
    if is_reference.any():
        dropped[REFERENCE_REASON] = int(is_reference.sum())
    return df[~is_reference], df[is_reference].reset_index(drop=True)


def status_is_ok(value: object) -> bool:
    """Whether one status field says ok (``Status.OK``, ignoring case and surrounding blanks)."""
    return isinstance(value, str) and value.strip().lower() == Status.OK.value


def ok_mask(frame: pd.DataFrame) -> np.ndarray:
    """Rows whose status is ``Status.OK`` (every row when there is no status column)."""
    if STATUS_COLUMN not in frame.columns:
        return np.ones(len(frame), dtype=bool)
    return np.array([status_is_ok(v) for v in frame[STATUS_COLUMN].astype("string").fillna("")], dtype=bool)


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows whose status is ok (every row when there is no status column), re-indexed."""
    return frame[ok_mask(frame)].reset_index(drop=True)


#: Prefixes of the measurements a campaign records per run (Spark's metrics, host use, phases).
MEASUREMENT_PREFIXES = ("spark_", "host_", "phase_")


#: Names of what a run measures (a time, a loss, a size, a share, a rate of throughput): never a design factor.
MEASUREMENT_NAME = re.compile(
    r"(?i)^(.*_(s|ms|us|ns|sec|secs|seconds|bytes|kb|mb|gb|share|mean|median|max|min|std|count|total|pct)|"
    r"(.*_)?(loss|time|duration|throughput|latency|accuracy|acc|error|f1|auc|precision|recall)(_.*)?)$"
)


def is_measurement(column: pd.Series) -> bool:
    """The one rule that tells a bare table's measurements from its factors (a numeric column only): named like a
    measurement (:data:`MEASUREMENT_NAME`: ``epoch_wall_clock_ms``, ``final_loss``), or more than 10 distinct values
    in over half the rows, or (4 rows or more) a different value in every row, most of them not whole: a design's
    levels repeat, a measurement's do not."""
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return False
    if MEASUREMENT_NAME.match(str(column.name)):
        return True
    values = pd.to_numeric(column, errors="coerce").dropna()
    distinct = values.nunique()
    if distinct > 10 and distinct > len(column) / 2:
        return True
    with np.errstate(invalid="ignore"):
        fractional = float(np.mean(np.asarray(values, dtype=float) % 1 != 0)) if len(values) else 0.0
    return len(column) >= 4 and distinct == len(column) and fractional >= 0.5


def guess_factors(frame: pd.DataFrame, exclude: Iterable[str] = ()) -> FactorGuess:
    """Factors of a bare table: varying columns that are not bookkeeping, measurements or ``exclude``.

    Refuses (one line naming the ``--factors`` to give) a column named like an identifier or a
    text column with a different value in every row. Measurements (:func:`is_measurement`) are set aside, named.
    """
    skip = NON_FACTOR_COLUMNS | set(exclude)
    varying = [c for c in frame.columns if c not in skip and not str(c).startswith(MEASUREMENT_PREFIXES)
               and frame[c].nunique(dropna=True) > 1]
    factors, measured = [], []
    for c in varying:
        (measured if is_measurement(frame[c]) else factors).append(c)
    for c in factors:
        why = None
        if IDENTIFIER_NAME.match(str(c)):
            why = "is named like an identifier (run, replicate, id, seed), not a design factor"
        elif not pd.api.types.is_numeric_dtype(frame[c]) and len(frame) > 2 and frame[c].nunique() == len(frame):
            why = "is text with a different value in every row, so it cannot be a factor"
        if why:
            others = ",".join(str(f) for f in factors if f != c) or "a,b"
            raise InvalidTableError(f"column {c!r} {why}; name the factors, e.g. --factors {others}")
    return FactorGuess(tuple(factors), tuple(measured))


def detect_factors(frame: pd.DataFrame, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The factors :func:`guess_factors` takes from a bare table."""
    return guess_factors(frame, exclude).factors


def _check_accuracy(values: pd.Series) -> None:
    a = pd.to_numeric(values, errors="coerce")
    finite = a[np.isfinite(a)]
    if len(finite) and (finite.max() > 1.0 or finite.min() < 0.0):
        raise InvalidTableError(
            f"column {ACCURACY_COLUMN!r} ranges {finite.min():g}..{finite.max():g}; it must be a "
            "fraction in [0, 1] (divide percentages by 100)"
        )


#: Columns the harness writes as whole numbers >= 1 (the cell and the cluster factors).
WHOLE_COLUMNS = ("run", "replicate", "nodes", "executors", "executor_cores")


def _check_whole_columns(df: pd.DataFrame) -> None:
    """The cell and cluster columns hold whole numbers >= 1 (a blank cell is left to the other rules)."""
    for c in WHOLE_COLUMNS:
        if c not in df.columns or pd.api.types.is_integer_dtype(df[c]):
            continue
        values = df[c][df[c].notna()]
        numbers = pd.to_numeric(values, errors="coerce")
        bad = values[numbers.isna() | (numbers < 1) | (numbers % 1 != 0)]
        if len(bad):
            raise InvalidTableError(f"column {c!r} holds {str(bad.iloc[0])[:40]!r}: {c} is a whole number >= 1 "
                                    "in every run: fix that value")


def _check_factor_values(df: pd.DataFrame, factors: Sequence[str]) -> None:
    """A factor's levels are finite numbers, or all text: ``inf`` or a word among numbers is refused, never turned
    into a category or a failed fit."""
    for f in factors:
        if f not in df.columns:
            continue
        values = df[f]
        numbers = pd.to_numeric(values, errors="coerce")
        given = values.notna()
        if pd.api.types.is_numeric_dtype(values) or numbers[given].notna().sum() * 2 > given.sum():
            words = values[given & numbers.isna()]
            if len(words):
                raise InvalidTableError(f"factor {f!r} holds the text {str(words.iloc[0])[:40]!r} among numbers: "
                                        "fix that value (or give the factors with --factors)")
            infinite = values[given & ~np.isfinite(numbers.to_numpy(dtype=float))]
            if len(infinite):
                raise InvalidTableError(f"factor {f!r} holds {infinite.iloc[0]!r}: a factor's level is a finite "
                                        "number: fix that value")


def _drop(df: pd.DataFrame, bad: np.ndarray, reason: str, dropped: dict[str, int]) -> pd.DataFrame:
    if bad.any():
        dropped[reason] = dropped.get(reason, 0) + int(bad.sum())
        return df[~bad]
    return df


def _drop_excluded_runs(df: pd.DataFrame, exclude_runs: Iterable[int], dropped: dict[str, int]) -> pd.DataFrame:
    runs = sorted(set(exclude_runs))
    if not runs:
        return df
    if "run" not in df.columns:
        raise MissingColumnError("exclude_runs needs a 'run' column in the results table")
    return _drop(df, df["run"].isin(runs).to_numpy(dtype=bool), f"run in {runs} (excluded on request)", dropped)


def _keep_ok(df: pd.DataFrame, dropped: dict[str, int]) -> pd.DataFrame:
    """Rule 1: the ok rows; the others counted by status."""
    status = df[STATUS_COLUMN].astype("string").str.strip().str.lower().fillna("<missing>")
    keep = ok_mask(df)
    for value, n in status[~keep].value_counts().items():
        dropped[f"status={value}"] = int(n)
    return df[keep]


def set_aside_invalid(df: pd.DataFrame, dropped: dict[str, int], also: Iterable[str | None] = ()) -> pd.DataFrame:
    """``df`` without the rows that break the validity rule (:func:`invalid_measurements`), each counted in ``dropped``
    under its first reason. A table whose every accuracy is a percentage is refused instead (divide by 100)."""
    if ACCURACY_COLUMN in df.columns:
        a = _numbers(df[ACCURACY_COLUMN])
        finite = a[np.isfinite(a)]
        if len(finite) and (finite > 1).all() and (finite <= 100).all():
            raise InvalidTableError(
                f"column {ACCURACY_COLUMN!r} ranges {finite.min():g}..{finite.max():g}; it must be a fraction in "
                "[0, 1] (divide percentages by 100)")
    left = np.zeros(len(df), dtype=bool)
    for reason, bad in invalid_measurements(df, also).items():
        new = bad & ~left
        if new.any():
            dropped[reason] = dropped.get(reason, 0) + int(new.sum())
        left |= bad
    return df[~left] if left.any() else df


def is_validity_reason(reason: str) -> bool:
    """Whether a reason in a ``dropped`` count is the validity rule's (not a status, a reference run, a cost)."""
    return _VALIDITY_REASON.fullmatch(reason) is not None


_VALIDITY_REASON = re.compile(r".+ (not a time in \[0, [0-9]+\] m?s|not a fraction in \[0, 1\]|a negative or infinite "
                              r"count)")


def set_aside_note(n_read: int, dropped: Mapping[str, int]) -> str | None:
    """The one note every command prints when the validity rule set rows aside (None when it set none aside)."""
    why = {k: n for k, n in dropped.items() if is_validity_reason(k)}
    if not why:
        return None
    n = sum(why.values())
    return (f"set aside {n} of {n_read} row{'s' if n_read != 1 else ''} that are not measurements: "
            + ", ".join(f"{k} ({v})" for k, v in why.items()))


def _drop_bad_values(df: pd.DataFrame, column: str, dropped: dict[str, int]) -> pd.DataFrame:
    """Rule 4: a response that is missing, not finite or beyond +-MAX_ABS_RESPONSE."""
    why = " (missing time/accuracy, accuracy 0, or target not reached)" if column == COST_COLUMN else ""
    df = _drop(df, ~np.isfinite(_numbers(df[column])), f"{column} not finite{why}", dropped)
    with np.errstate(invalid="ignore"):
        return _drop(df, np.abs(_numbers(df[column])) > MAX_ABS_RESPONSE, f"{column} beyond +-{MAX_ABS_RESPONSE:g}",
                     dropped)


def _with_cost(df: pd.DataFrame, cost: CostFunction | str | None) -> tuple[pd.DataFrame, str]:
    if cost is None and COST_COLUMN in df.columns:
        return df.assign(**{COST_COLUMN: _numbers(df[COST_COLUMN])}), "as given"
    fn = cost if isinstance(cost, CostFunction) else parse_cost(cost)
    missing = [c for c in (TIME_COLUMN, ACCURACY_COLUMN) if c not in df.columns]
    if missing:
        raise CostInputsMissingError(
            f"cannot compute the cost: column(s) {missing} missing; the table needs "
            f"{TIME_COLUMN!r} and {ACCURACY_COLUMN!r} (or a {COST_COLUMN!r} column)"
        )
    _check_accuracy(df[ACCURACY_COLUMN])
    with np.errstate(all="ignore"):
        values = fn(_numbers(df[TIME_COLUMN]), _numbers(df[ACCURACY_COLUMN]))
    return df.assign(**{COST_COLUMN: values}), fn.formula


def one_time_span(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Rule 2's one span: ``wall_clock_s`` as every row's ``fit_s`` when the rows' ``wall_clock_of`` differ and
    every row has a ``fit_s``; else the frame unchanged. The note says what was done ("" when nothing was)."""
    if WALL_CLOCK_OF_COLUMN not in df.columns or TIME_COLUMN not in df.columns:
        return df, ""
    timed = np.isfinite(_numbers(df[TIME_COLUMN]))
    kinds = df.loc[timed, WALL_CLOCK_OF_COLUMN].dropna().astype(str)
    counts = kinds[kinds != ""].value_counts()
    if len(counts) < 2:
        return df, ""
    spans = ", ".join(f"{WALL_CLOCK_OF.get(k, k)} in {n} row{'s' if n > 1 else ''}" for k, n in sorted(counts.items()))
    fit = _numbers(df[FIT_COLUMN]) if FIT_COLUMN in df.columns else None
    if fit is not None and bool(np.isfinite(fit[timed]).all()):
        return (df.assign(**{TIME_COLUMN: fit, WALL_CLOCK_OF_COLUMN: "fit"}),
                f"{TIME_COLUMN} measured different spans in these runs: {spans}. So that they compare, "
                f"{TIME_COLUMN} is each run's {FIT_COLUMN} here (the training call)")
    return df, (f"{TIME_COLUMN} measured different spans in these runs: {spans}. Not every run has a {FIT_COLUMN}, "
                "so a factor that separates them (the job, the framework) compares different spans: analyse a time "
                "every run measured with --response (e.g. elapsed_s)")


def measured_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rules 1 and 2 alone: the ok rows, with one span and a plausible ``wall_clock_s`` (for an analysis of another
    response, where rules 3 and 4, the cost's, do not apply: a job with accuracy 0 is an observation there)."""
    df = _keep_ok(frame, {}) if STATUS_COLUMN in frame.columns else frame
    df, _ = one_time_span(df)
    return set_aside_invalid(df, {}).reset_index(drop=True)


def _cost_wanted(df: pd.DataFrame, cost: CostFunction | str | None, response: str | None) -> bool:
    """Whether rule 3 applies: the response is the cost, a cost function was asked for, or the table has
    the cost or what it is computed from. A table without them analysed for another response is not refused."""
    if response in (None, COST_COLUMN) or cost is not None or COST_COLUMN in df.columns:
        return True
    return all(c in df.columns for c in (TIME_COLUMN, ACCURACY_COLUMN))


@dataclass(frozen=True)
class FactorChoice:
    """The factor columns of a table, where they come from, and columns set aside as measurements."""

    factors: tuple[str, ...]
    source: str
    measurements: tuple[str, ...] = ()


def choose_factors(frame: pd.DataFrame, factors: Sequence[str] | None = None, csv_path: Path | None = None,
                   response: str | None = None) -> FactorChoice:
    """``factors`` if given, else the manifest's, else the harness's design columns, else a checked guess."""
    if factors is not None:
        choice = FactorChoice(tuple(factors), "--factors")
    elif (declared := manifest_factors(csv_path) if csv_path is not None else None) is not None:
        choice = FactorChoice(declared, MANIFEST_FILE)
    elif all(c in frame.columns for c in HARNESS_FACTORS[1:]):
        choice = FactorChoice(tuple(c for c in HARNESS_FACTORS if c in frame.columns), "harness design columns")
    else:
        guess = guess_factors(frame, exclude=[c for c in (response, COST_COLUMN) if c])
        return FactorChoice(guess.factors, "guessed", guess.measurements)
    missing = [f for f in choice.factors if f not in frame.columns]
    if missing:
        raise MissingColumnError(f"factor column(s) {missing} ({choice.source}) are not in the table; "
                                 f"columns are {list(frame.columns)}")
    return FactorChoice(tuple(f for f in choice.factors if f != response), choice.source)


def build_table(
    frame: pd.DataFrame,
    *,
    cost: CostFunction | str | None = None,
    include_failed: bool = False,
    source: str = "<frame>",
    exclude_runs: Iterable[int] = (),
    factors: Sequence[str] | None = None,
    response: str | None = None,
    csv_path: Path | None = None,
    compute_cost: bool = True,
) -> ResultsTable:
    """Apply the module's rules to an in-memory table (see the module docstring).

    ``compute_cost=False`` skips rule 3 (e.g. for a model of time or accuracy, where a job with
    accuracy 0 is a valid observation, not a row to drop); rule 4 then applies to ``response`` only.
    """
    dropped: dict[str, int] = {}
    choice = choose_factors(frame, factors, csv_path, response)
    df = _drop_excluded_runs(frame, exclude_runs, dropped)
    if STATUS_COLUMN in df.columns and not include_failed:
        df = _keep_ok(df, dropped)
    df, time_span = one_time_span(df)
    df = set_aside_invalid(df, dropped, also=[response])
    _check_whole_columns(df)
    _check_factor_values(df, choice.factors)
    if compute_cost and not _cost_wanted(df, cost, response):
        compute_cost = False  # the response is another column and this table has nothing to compute a cost from
    df, cost_name = _with_cost(df, cost) if compute_cost else (df, "not computed")
    for column in dict.fromkeys([COST_COLUMN if compute_cost else None, response]):
        if column is not None and column in df.columns:
            df = _drop_bad_values(df, column, dropped)
    df, reference = _split_reference(df, csv_path, dropped)
    df = df.reset_index(drop=True)
    constant = tuple(f for f in choice.factors if df[f].nunique(dropna=True) <= 1)
    return ResultsTable(
        frame=df, source=source, factors=tuple(f for f in choice.factors if f not in constant), n_read=len(frame),
        dropped=dropped, cost_name=cost_name, factors_from=choice.source, measurements=choice.measurements,
        constant_factors=constant, has_status=STATUS_COLUMN in frame.columns, reference=reference,
        time_span=time_span,
    )


_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def _check_numbers(p: Path, table) -> None:
    """Every cell written as a number passes the one bounded parser (:func:`sparkdl.numbers.number`): a 400-digit
    integer (which no float holds: numpy and statsmodels overflow on it), a 400-digit accuracy or a short number
    beyond a float's range (``1e309``, which pandas reads as inf) is refused, naming its line and column. Short
    cells without an exponent (the usual ones) are not parsed twice."""
    from sparkdl.numbers import MAX_INT_DIGITS, NumberError, number

    for line, record in table.rows:
        for name, cell in zip(table.header, record):
            text = cell.strip()
            if (len(text) <= MAX_INT_DIGITS and "e" not in text.lower()) or not _NUMBER_TEXT.fullmatch(text):
                continue
            try:
                number(text, integer=text.lstrip("+-").isdigit())
            except NumberError as e:
                raise InvalidTableError(f"{p}: line {line}, column {name!r}: {e}: fix that value") from None


def read_csv(path: str | Path) -> tuple[Path, pd.DataFrame]:
    """The CSV behind a results path, read through the one table reader (:func:`sparkdl.config.read_table`: a
    regular UTF-8 file, strict CSV, every column named once); an unreadable file is an :class:`InvalidTableError`."""
    import io

    from sparkdl import config

    p = resolve_path(path)
    table = config.read_table(p, "results table", InvalidTableError, same_width=True)
    _check_numbers(p, table)
    try:
        # round_trip: pandas' default parser is not correctly rounded (9 of 24 wall clocks of a split-plot table came
        # back 1-2 ulp off what pandas itself wrote), so a CLI's statistic differed from the same one on the table
        return p, pd.read_csv(io.StringIO(table.text), float_precision="round_trip")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidTableError(f"{p}: not a readable CSV ({exc}); write one header row then one row per job") from None


def load_results(
    path: str | Path,
    *,
    cost: CostFunction | str | None = None,
    include_failed: bool = False,
    exclude_runs: Iterable[int] = (),
    factors: Sequence[str] | None = None,
    response: str | None = None,
    compute_cost: bool = True,
) -> ResultsTable:
    """Read a results CSV (or ``DIR/results.csv``) into a :class:`ResultsTable`.

    ``compute_cost=False`` skips the cost (e.g. for a model of time or accuracy, where a job with
    accuracy 0 is a valid observation, not a row to drop).
    """
    p, frame = read_csv(path)
    return build_table(frame, cost=cost, include_failed=include_failed, source=str(p), exclude_runs=exclude_runs,
                       factors=factors, response=response, csv_path=p, compute_cost=compute_cost)


@dataclass(frozen=True)
class Runs:
    """The runs of a results table as every command reads them: rule 1 (the ok rows, unless asked for all), rule 2's
    one span and the validity rule (:func:`invalid_measurements`); ``dropped`` says how many rows each rule left out."""

    frame: pd.DataFrame
    source: str
    n_read: int
    dropped: Mapping[str, int] = field(default_factory=dict)

    def note(self) -> str | None:
        """The one note on the rows the validity rule set aside (:func:`set_aside_note`), None when none were."""
        return set_aside_note(self.n_read, self.dropped)

    def say(self) -> "Runs":
        """Print :meth:`note` on stderr as ``note: ...`` (the commands' one wording); returns itself."""
        import sys

        if (line := self.note()) is not None:
            print(f"note: {line}", file=sys.stderr)
        return self


def runs_of(frame: pd.DataFrame, source: str = "<frame>", *, ok_only: bool = True,
            also: Iterable[str | None] = ()) -> Runs:
    """An in-memory table's :class:`Runs` (rule 1 unless ``ok_only=False``, one span, the validity rule; ``also``: a
    response to check as a time or an accuracy)."""
    dropped: dict[str, int] = {}
    df = _keep_ok(frame, dropped) if ok_only and STATUS_COLUMN in frame.columns else frame
    df, _ = one_time_span(df)
    df = set_aside_invalid(df, dropped, also)
    return Runs(df.reset_index(drop=True), source, len(frame), dropped)


def read_runs(path: str | Path, *, ok_only: bool = True, also: Iterable[str | None] = ()) -> Runs:
    """Read a results CSV (or ``DIR/results.csv``) through :func:`read_csv` into :class:`Runs`: the reader of every
    command that reads runs without a cost (predict, pareto, batch, epochs, concurrent, the stopping rules)."""
    p, frame = read_csv(path)
    return runs_of(frame, str(p), ok_only=ok_only, also=also)
