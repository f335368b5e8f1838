"""Which column is the scale: the parallelism m every scaling model (Amdahl, the USL, Ernest) reads.

``--parallelism SPEC`` names it: one column (``nodes``) or a product of columns
(``nodes*executors*executor_cores``); nothing else is evaluated (no arithmetic but ``*``, no code).
Without it the parallelism is, in this order, the harness's nodes x executors x executor_cores,
Albo Martínez 2021's processes = cpus x njobs, or the product of the resource columns the table has
(an ingested study often records ``nodes`` only), and :attr:`Parallelism.note` says which in one line.

Every value must be a finite number >= 1 (a scale of 0.5 machines, 0, a negative count, text or a
missing value is refused in one line naming the column and the row): 1/m and log m need it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, MissingColumnError
from models.predict.table import PARALLELISM_COLUMNS

#: The column the resolved parallelism is written to (models.predict.table.with_derived's name).
COLUMN = "parallelism"
#: Resource columns an ingested or foreign table may have, in the order they multiply.
RESOURCE_COLUMNS: tuple[str, ...] = (*PARALLELISM_COLUMNS, "cpus")
_NAME = re.compile(r"[A-Za-z_][\w.-]{0,99}", re.ASCII)
MAX_SPEC = 300



def scale_column(table: pd.DataFrame, column: str, axis: str, flag: str, floor: float, what: str, need: str,
                 strict: bool = False) -> np.ndarray:
    """The numbers of one column of a scaling axis (parallelism m, work s): InvalidTableError naming the column, the
    first bad row and ``flag`` when a value is text, true/false, not finite, or below ``floor`` (at or below it when
    ``strict``)."""
    series = table[column]
    if pd.api.types.is_bool_dtype(series):
        raise InvalidTableError(f"{axis} column {column!r} holds true/false, not {what}; name a numeric column with "
                                f"{flag}")
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(numbers) | ((numbers <= floor) if strict else (numbers < floor))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        bound = f"> {floor:g}" if strict else f">= {floor:g}"
        raise InvalidTableError(
            f"{axis} column {column!r} has {int(bad.sum())} value(s) that are not a number {bound} "
            f"(row {i + 1}: {str(series.iloc[i])[:40]!r}); every run needs {need}: drop those rows or name another "
            f"column with {flag}")
    return numbers

@dataclass(frozen=True)
class Parallelism:
    """The columns whose product is m, and the one line that says where they came from."""

    columns: tuple[str, ...]
    source: str  # "--parallelism", "harness", "Albo Martínez 2021", "resource columns"

    @property
    def spec(self) -> str:
        return "*".join(self.columns)

    @property
    def note(self) -> str:
        if self.source == "--parallelism":
            return f"parallelism m = {self.spec} (--parallelism)"
        if self.source == "resource columns":
            return (f"parallelism m = {self.spec} (the only resource column{'s' if len(self.columns) > 1 else ''} "
                    "in the table; --parallelism COLUMN chooses another)")
        return f"parallelism m = {self.spec} ({self.source})"

    def values(self, table: pd.DataFrame) -> np.ndarray:
        """m for every row of ``table``; InvalidTableError naming the column and row when a value is not >= 1."""
        m = np.ones(len(table))
        for column in self.columns:
            if column not in table.columns:
                raise MissingColumnError(f"--parallelism {self.spec}: column {column!r} is not in the table; "
                                         f"columns are {list(table.columns)}")
            numbers = scale_column(table, column, "parallelism", "--parallelism", 1.0, "a count of machines or cores",
                                   "a scale of at least one machine or core")
            m = m * numbers
        return m


def parse(spec: str) -> tuple[str, ...]:
    """``'nodes*executors'`` -> ('nodes', 'executors'); InvalidTableError for anything but names joined by *."""
    if len(spec) > MAX_SPEC:
        raise InvalidTableError(f"--parallelism is {len(spec)} characters long; give column names joined by *")
    names = tuple(part.strip() for part in spec.split("*"))
    for name in names:
        if not _NAME.fullmatch(name):
            raise InvalidTableError(
                f"--parallelism {spec[:60]!r}: {name[:40]!r} is not a column name; give one column or a "
                "product of columns, e.g. nodes or nodes*executors*executor_cores")
    if len(set(names)) < len(names):
        raise InvalidTableError(f"--parallelism {spec[:60]!r} names a column twice; name each once")
    return names


def resolve(table: pd.DataFrame, spec: str | None = None) -> Parallelism | None:
    """The parallelism of ``table``: ``spec`` if given, else the default (module docstring); None when the
    table has no resource column at all."""
    if spec is not None:
        chosen = Parallelism(parse(spec), "--parallelism")
        chosen.values(table)  # every column present and every value >= 1, said now
        return chosen
    if all(c in table.columns for c in PARALLELISM_COLUMNS):
        return Parallelism(PARALLELISM_COLUMNS, "harness")
    if {"cpus", "njobs"} <= set(table.columns):
        return Parallelism(("cpus", "njobs"), "Albo Martínez 2021")
    present = tuple(c for c in RESOURCE_COLUMNS if c in table.columns)
    return Parallelism(present, "resource columns") if present else None


def with_parallelism(table: pd.DataFrame, parallelism: Parallelism) -> pd.DataFrame:
    """A copy of ``table`` whose ``parallelism`` column is m (replacing one derived otherwise)."""
    out = table.copy()
    out[COLUMN] = parallelism.values(table)
    return out
