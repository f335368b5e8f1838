"""The results table: one row per job, with its factor levels and its cost.

Input is a campaign directory (its ``results.csv``) or any CSV with factor columns and either a
``cost`` column or the ``wall_clock_s`` and ``accuracy`` columns the cost is computed from.
The harness writes these columns: ``run, replicate, model, nodes, executors, executor_cores,
epochs, learning_rate, batch_size, status, reason, wall_clock_s, accuracy, elapsed_s, start, end,
app_id``.

Rules, in order:

1. When a ``status`` column exists, only ``status == "ok"`` rows are kept (unless
   ``include_failed``); the others are counted in :attr:`ResultsTable.dropped`.
2. The cost: an existing ``cost`` column is used as is when no cost function is asked for;
   otherwise the cost (default ``T / (A*100)^2``) is computed from ``wall_clock_s`` and ``accuracy``.
   Accuracy must be a fraction in [0, 1].
3. Rows whose cost is NaN or infinite (e.g. accuracy 0, or a time-to-accuracy target not reached)
   are dropped and counted.

Factors are the columns that are neither bookkeeping nor measurements and take more than one
value; numeric ones are analysed as numbers, text ones as categories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from models.cost import CostFunction, parse_cost
from models.errors import InvalidTableError, MissingColumnError, ResultsNotFoundError

RESULTS_FILE = "results.csv"
TIME_COLUMN = "wall_clock_s"
ACCURACY_COLUMN = "accuracy"
COST_COLUMN = "cost"
STATUS_COLUMN = "status"
OK_STATUS = "ok"

#: Columns that are never factors: identifiers, bookkeeping and measurements.
NON_FACTOR_COLUMNS = frozenset(
    {
        "run",
        "replicate",
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


@dataclass(frozen=True)
class ResultsTable:
    """Jobs that enter the analysis, and what was left out.

    ``frame`` has one row per job and a ``cost`` column; ``factors`` are its factor columns in
    file order; ``dropped`` maps a reason (e.g. ``"status=failed"``) to a count of rows.
    """

    frame: pd.DataFrame
    source: str
    factors: tuple[str, ...]
    n_read: int
    dropped: Mapping[str, int] = field(default_factory=dict)
    cost_name: str = "as given"

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


def resolve_path(path: str | Path) -> Path:
    """The CSV file behind a results path: the file itself, or ``DIR/results.csv``."""
    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_FILE
    if not p.is_file():
        raise ResultsNotFoundError(
            f"no results at {str(path)!r}: give a results CSV or a campaign directory with {RESULTS_FILE}"
        )
    return p


#: Prefixes of the measurements a campaign records per run (Spark's metrics, host use, phases).
MEASUREMENT_PREFIXES = ("spark_", "host_", "phase_")


def detect_factors(frame: pd.DataFrame, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """Columns that vary and are not bookkeeping, measurement or ``exclude`` columns."""
    skip = NON_FACTOR_COLUMNS | set(exclude)
    return tuple(c for c in frame.columns if c not in skip and not str(c).startswith(MEASUREMENT_PREFIXES)
                 and frame[c].nunique(dropna=True) > 1)


def _check_accuracy(values: pd.Series) -> None:
    a = pd.to_numeric(values, errors="coerce")
    finite = a[np.isfinite(a)]
    if len(finite) and (finite.max() > 1.0 or finite.min() < 0.0):
        raise InvalidTableError(
            f"column {ACCURACY_COLUMN!r} ranges {finite.min():g}..{finite.max():g}; it must be a "
            "fraction in [0, 1] (divide percentages by 100)"
        )


def build_table(
    frame: pd.DataFrame,
    *,
    cost: CostFunction | str | None = None,
    include_failed: bool = False,
    source: str = "<frame>",
    exclude_runs: Iterable[int] = (),
) -> ResultsTable:
    """Apply the module's rules to an in-memory table (see the module docstring)."""
    df = frame.copy()
    n_read = len(df)
    dropped: dict[str, int] = {}

    runs = sorted(set(exclude_runs))
    if runs:
        if "run" not in df.columns:
            raise MissingColumnError("exclude_runs needs a 'run' column in the results table")
        mask = df["run"].isin(runs)
        if mask.any():
            dropped[f"run in {runs} (excluded on request)"] = int(mask.sum())
        df = df[~mask]

    if STATUS_COLUMN in df.columns and not include_failed:
        status = df[STATUS_COLUMN].astype("string").str.strip().str.lower().fillna("<missing>")
        keep = (status == OK_STATUS).to_numpy(dtype=bool)
        for value, n in status[~keep].value_counts().items():
            dropped[f"status={value}"] = int(n)
        df = df[keep]

    if cost is None and COST_COLUMN in df.columns:
        cost_name = "as given"
        df[COST_COLUMN] = pd.to_numeric(df[COST_COLUMN], errors="coerce")
    else:
        fn = cost if isinstance(cost, CostFunction) else parse_cost(cost)
        missing = [c for c in (TIME_COLUMN, ACCURACY_COLUMN) if c not in df.columns]
        if missing:
            raise MissingColumnError(
                f"cannot compute the cost: column(s) {missing} missing; the table needs "
                f"{TIME_COLUMN!r} and {ACCURACY_COLUMN!r} (or a {COST_COLUMN!r} column)"
            )
        _check_accuracy(df[ACCURACY_COLUMN])
        t = pd.to_numeric(df[TIME_COLUMN], errors="coerce").to_numpy(dtype=float)
        a = pd.to_numeric(df[ACCURACY_COLUMN], errors="coerce").to_numpy(dtype=float)
        df[COST_COLUMN] = fn(t, a)
        cost_name = fn.formula

    bad = ~np.isfinite(df[COST_COLUMN].to_numpy(dtype=float))
    if bad.any():
        dropped["cost not finite (missing time/accuracy, accuracy 0, or target not reached)"] = int(
            bad.sum()
        )
        df = df[~bad]

    df = df.reset_index(drop=True)
    return ResultsTable(
        frame=df,
        source=source,
        factors=detect_factors(df),
        n_read=n_read,
        dropped=dropped,
        cost_name=cost_name,
    )


def load_results(
    path: str | Path,
    *,
    cost: CostFunction | str | None = None,
    include_failed: bool = False,
    exclude_runs: Iterable[int] = (),
) -> ResultsTable:
    """Read a results CSV (or ``DIR/results.csv``) into a :class:`ResultsTable`."""
    p = resolve_path(path)
    try:
        frame = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InvalidTableError(f"{p}: not a readable CSV ({exc}); write one header row then one row per job") from None
    return build_table(
        frame, cost=cost, include_failed=include_failed, source=str(p), exclude_runs=exclude_runs
    )
