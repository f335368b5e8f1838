"""Results tables: reading a campaign's results.csv, derived columns, default factor columns.

The harness writes one row per run with the columns run, replicate, model (the NETWORK, birnn|lenet),
nodes, executors, executor_cores, epochs, learning_rate, batch_size, status, reason, wall_clock_s,
accuracy, elapsed_s, start, end, app_id. Seed 004 (Courier) tables use batch, cpus, njobs, network.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, MissingColumnError
from models.results import resolve_path

#: Factor columns of the harness's results table (``model`` is the network name).
HARNESS_FACTORS: tuple[str, ...] = (
    "model", "nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size",
)
#: Factor columns of seed 004's (Courier's) experiments.
COURIER_FACTORS: tuple[str, ...] = ("batch", "cpus", "njobs", "network")
#: Columns whose product is the parallelism m (total executor cores of a job).
PARALLELISM_COLUMNS: tuple[str, ...] = ("nodes", "executors", "executor_cores")
#: Columns that are never model inputs: identifiers, outcomes, timestamps, derived columns.
NON_FACTORS: frozenset[str] = frozenset({
    "run", "replicate", "status", "reason", "wall_clock_s", "accuracy", "elapsed_s",
    "start", "end", "app_id", "parallelism", "processes", "failure_kind", "attempts", "epochs_completed",
    "learning_rate_used", "batch_size_used", "exit_code", "log",
})


def read_results(path: str | Path) -> pd.DataFrame:
    """Read RESULTS (a campaign directory holding results.csv, or a CSV file); keep status == ok rows.

    Unlike ``models.results.load_results`` no cost is computed, so rows are not dropped for a missing
    accuracy when the target is the time."""
    csv = resolve_path(path)
    try:
        table = pd.read_csv(csv)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InvalidTableError(f"{csv} is not a readable CSV ({exc}); fix or regenerate the file") from exc
    if "status" in table.columns:
        table = table[table["status"].astype(str) == "ok"].reset_index(drop=True)
    return table


def with_derived(table: pd.DataFrame) -> pd.DataFrame:
    """Return a copy with ``parallelism`` (nodes*executors*executor_cores) and ``processes``
    (cpus*njobs, seed 004) added when their source columns are all present."""
    out = table.copy()
    if all(c in out.columns for c in PARALLELISM_COLUMNS) and "parallelism" not in out.columns:
        out["parallelism"] = np.prod([out[c].to_numpy(dtype=float) for c in PARALLELISM_COLUMNS], axis=0)
    if {"cpus", "njobs"} <= set(out.columns) and "processes" not in out.columns:
        out["processes"] = out["cpus"].to_numpy(dtype=float) * out["njobs"].to_numpy(dtype=float)
    return out


def is_courier_table(table: pd.DataFrame) -> bool:
    """True when all of seed 004's factor columns are present."""
    return all(c in table.columns for c in COURIER_FACTORS)


def factor_columns(table: pd.DataFrame, target: str) -> list[str]:
    """Default model inputs: seed 004's factors, else the harness factors present, else every column
    that is neither the target nor a known identifier/outcome column."""
    if is_courier_table(table):
        return list(COURIER_FACTORS)
    present = [c for c in HARNESS_FACTORS if c in table.columns]
    if present:
        return present
    return [c for c in table.columns if c != target and c not in NON_FACTORS]


def require_columns(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    """Raise MissingColumnError naming the first of ``columns`` that ``table`` lacks."""
    for column in columns:
        if column not in table.columns:
            raise MissingColumnError(
                f"column {column!r} ({what}) is not in the table; columns are {list(table.columns)}"
            )


def is_categorical(series: pd.Series) -> bool:
    """True for non-numeric columns (strings, categories, booleans)."""
    return not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


def varying(table: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns of ``columns`` that take more than one value in ``table``."""
    return [c for c in columns if table[c].nunique(dropna=False) > 1]
