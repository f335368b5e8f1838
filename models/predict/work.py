"""Which column is the amount of work: Ernest's scale s, the second axis of every scaling curve.

``--work COLUMN[=VALUE]`` names it: the column that holds each run's amount of work (an input fraction,
``train_samples``, epochs x samples written as a column), and, with ``=VALUE``, the amount of work to predict at
(the full data: ``--work input_fraction=1`` or ``--work train_samples=60000``). Without ``--work`` every run's work
is 1 and the other factors multiply the curves (models.predict.scaling).

Every value must be a finite number > 0 (s / m and a time proportional to s need it) and a VALUE at most
:data:`MAX_WORK`; a bad value is refused in one line naming the column and the row.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, MissingColumnError
from models.predict.parallelism import scale_column

#: The largest amount of work --work COLUMN=VALUE takes (samples, records, bytes: 1e12 is past any job here).
MAX_WORK = 1e12
_NAME = re.compile(r"[A-Za-z_][\w.-]{0,99}", re.ASCII)
MAX_SPEC = 300


@dataclass(frozen=True)
class Work:
    """The column that holds each run's amount of work, and the amount to predict at (None: the runs' own)."""

    column: str
    value: float | None = None

    @property
    def spec(self) -> str:
        return self.column if self.value is None else f"{self.column}={self.value:g}"

    def values(self, table: pd.DataFrame) -> np.ndarray:
        """s for every row of ``table``; InvalidTableError naming the column and row when a value is not > 0."""
        if self.column not in table.columns:
            raise MissingColumnError(f"--work {self.spec}: column {self.column!r} is not in the table; columns are "
                                     f"{list(table.columns)}")
        numbers = scale_column(table, self.column, "work", "--work", 0.0,
                               "an amount of work (an input fraction, a number of samples)",
                               "a positive amount of work", strict=True)
        return numbers


def parse(spec: str) -> Work:
    """``'input_fraction=1'`` -> Work('input_fraction', 1.0); InvalidTableError for anything else."""
    if len(spec) > MAX_SPEC:
        raise InvalidTableError(f"--work is {len(spec)} characters long; give COLUMN or COLUMN=VALUE")
    column, _, value = spec.partition("=")
    column = column.strip()
    if not _NAME.fullmatch(column):
        raise InvalidTableError(f"--work {spec[:60]!r}: {column[:40]!r} is not a column name; give COLUMN or "
                                "COLUMN=VALUE, e.g. input_fraction=1 or train_samples=60000")
    if not _:
        return Work(column)
    try:
        amount = float(value)
    except ValueError:
        amount = math.nan
    if not (math.isfinite(amount) and 0 < amount <= MAX_WORK):
        raise InvalidTableError(f"--work {spec[:60]!r}: the amount of work to predict at must be a number above 0 "
                                f"and at most {MAX_WORK:g}, e.g. {column}=1 for the full data")
    return Work(column, amount)


def resolve(table: pd.DataFrame, spec: str | None) -> Work | None:
    """The work of ``table`` (every value checked now), or None without ``--work``."""
    if spec is None:
        return None
    work = parse(spec)
    work.values(table)
    return work
