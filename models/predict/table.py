"""Results tables for prediction: the ok rows of a campaign's results.csv, derived columns, model inputs.

Which rows are ok and which columns are factors are decided by :mod:`models.results` (the one
place): :func:`read_results` keeps its ok rows, :func:`model_inputs` narrows a table to the
declared factors (``--factors``, the campaign's manifest.json, the harness's design columns, or a
checked guess named in the returned choice) and the target, so every model's default inputs are
those factors.

The harness writes one row per run with the columns run, replicate, model (the NETWORK, birnn|lenet),
nodes, executors, executor_cores, epochs, learning_rate, batch_size, status, reason, wall_clock_s,
accuracy, elapsed_s, start, end, app_id. Albo Martínez 2021 (Courier) tables use batch, cpus, njobs, network.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, MissingColumnError
from models.results import (
    HARNESS_FACTORS,
    NON_FACTOR_COLUMNS,
    FactorChoice,
    choose_factors,
    read_runs,
    resolve_path,
)

__all__ = [
    "COURIER_FACTORS", "HARNESS_FACTORS", "NON_FACTORS", "PARALLELISM_COLUMNS", "factor_columns", "is_categorical",
    "is_courier_table", "model_inputs", "read_results", "require_columns", "varying", "with_derived",
]

#: Factor columns of Albo Martínez 2021's (Courier's) experiments.
COURIER_FACTORS: tuple[str, ...] = ("batch", "cpus", "njobs", "network")
#: Columns whose product is the parallelism m (total executor cores of a job).
PARALLELISM_COLUMNS: tuple[str, ...] = ("nodes", "executors", "executor_cores")
#: Columns that are never model inputs: identifiers, outcomes, timestamps (models.results), derived columns.
NON_FACTORS: frozenset[str] = NON_FACTOR_COLUMNS | {"parallelism", "processes"}


def read_results(path: str | Path, also: Sequence[str | None] = ()) -> pd.DataFrame:
    """Read RESULTS (a campaign directory holding results.csv, or a CSV file): its ok runs that are measurements
    (:func:`models.results.read_runs`, the one reader and its validity rule; its note, if any, on stderr).

    Unlike ``models.results.load_results`` no cost is computed, so rows are not dropped for a missing
    accuracy when the target is the time."""
    return read_runs(path, also=also).say().frame


def model_inputs(table: pd.DataFrame, target: str, factors: Sequence[str] | None = None,
                 path: str | Path | None = None, measured: Sequence[str] = ()) -> tuple[pd.DataFrame, FactorChoice]:
    """``table`` narrowed to its factor columns, the ``measured`` columns and ``target``, and where the
    factors come from.

    Albo Martínez 2021 (Courier) tables keep their four factors when none are declared."""
    csv = resolve_path(path) if path is not None else None
    if factors is None and is_courier_table(table) and (csv is None or not (csv.parent / "manifest.json").is_file()):
        choice = FactorChoice(COURIER_FACTORS, "Albo Martínez 2021 columns")
    else:
        choice = choose_factors(table, factors, csv, response=target)
    require_columns(table, [target], "the prediction target (--response)")
    keep = [c for c in table.columns if c in choice.factors or c == target or c in measured]
    return table[keep], choice


#: Prefixes of the columns the harness measures during a run (Spark's event log, the hosts' sampler).
MEASURED_PREFIXES = ("spark_", "host_")
#: The sampler's own bookkeeping (how many samples, what sampling cost): not a property of the run.
MEASURED_BOOKKEEPING = frozenset({"host_samples", "host_sampler_cpu_s", "host_sampler_share"})


def measured_columns(table: pd.DataFrame, spec: str | None, target: str) -> list[str]:
    """The measured columns ``spec`` names: ``all`` (every numeric spark_*/host_* column that varies, but
    the sampler's bookkeeping) or
    a comma list; a name the table lacks, a non-numeric one or the target itself is refused."""
    if not spec:
        return []
    if spec.strip() == "all":
        found = [c for c in table.columns if c.startswith(MEASURED_PREFIXES) and c != target
                 and c not in MEASURED_BOOKKEEPING
                 and pd.api.types.is_numeric_dtype(table[c]) and table[c].nunique(dropna=True) > 1]
        if not found:
            raise MissingColumnError("--measured all: the table has no varying spark_* or host_* column (a campaign "
                                     "run with the harness's observation on has them)")
        return found
    names = [n.strip() for n in spec.split(",") if n.strip()]
    for n in names:
        require_columns(table, [n], "a measured input (--measured)")
        if n == target:
            raise InvalidTableError(f"--measured {n}: that is the target; a model cannot take it as an input")
        if not pd.api.types.is_numeric_dtype(table[n]) or pd.api.types.is_bool_dtype(table[n]):
            raise InvalidTableError(f"--measured {n}: the column is not numeric; name spark_* or host_* figures")
    return names


def with_derived(table: pd.DataFrame) -> pd.DataFrame:
    """Return a copy with ``parallelism`` (nodes*executors*executor_cores) and ``processes``
    (cpus*njobs, Albo Martínez 2021) added when their source columns are all present."""
    out = table.copy()
    if all(c in out.columns for c in PARALLELISM_COLUMNS) and "parallelism" not in out.columns:
        out["parallelism"] = np.prod([out[c].to_numpy(dtype=float) for c in PARALLELISM_COLUMNS], axis=0)
    if {"cpus", "njobs"} <= set(out.columns) and "processes" not in out.columns:
        out["processes"] = out["cpus"].to_numpy(dtype=float) * out["njobs"].to_numpy(dtype=float)
    return out


def is_courier_table(table: pd.DataFrame) -> bool:
    """True when all of Albo Martínez 2021's factor columns are present."""
    return all(c in table.columns for c in COURIER_FACTORS)


def factor_columns(table: pd.DataFrame, target: str) -> list[str]:
    """Default model inputs: Albo Martínez 2021's factors, else the harness factors present, else every column
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
