"""Train/test splits: a seeded random split, and an extrapolation split that trains on the smaller
configurations and tests on the largest ones (tree ensembles cannot predict beyond the training range;
this split shows it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, TooFewRowsError
from models.predict.table import require_columns, with_derived


@dataclass(frozen=True)
class Split:
    """A named train/test partition of a table."""

    kind: str
    train: pd.DataFrame
    test: pd.DataFrame
    description: str


def _check_fraction(test_fraction: float) -> None:
    if not 0 < test_fraction < 1:
        raise InvalidTableError(f"test_fraction must be in (0, 1), got {test_fraction}")


def random_split(table: pd.DataFrame, test_fraction: float = 0.2, seed: int = 0) -> Split:
    """Shuffle the rows with ``seed`` and hold out round(test_fraction * n) of them (at least 1)."""
    _check_fraction(test_fraction)
    n = len(table)
    if n < 2:
        raise TooFewRowsError(f"a random split needs at least 2 rows, got {n}")
    n_test = min(n - 1, max(1, round(test_fraction * n)))
    order = np.random.default_rng(seed).permutation(n)
    test, train = table.iloc[order[:n_test]], table.iloc[order[n_test:]]
    return Split(
        "random", train.reset_index(drop=True), test.reset_index(drop=True),
        f"random {n - n_test}/{n_test} rows (seed {seed})",
    )


def extrapolation_split(table: pd.DataFrame, by: str = "parallelism", test_fraction: float = 0.2) -> Split:
    """Test on the largest values of column ``by`` (derived columns such as parallelism are added):
    whole levels, from the largest down, until at least test_fraction of the rows are held out;
    train on the rest. Needs at least two levels of ``by``."""
    _check_fraction(test_fraction)
    table = with_derived(table)
    require_columns(table, [by], "the extrapolation size column")
    values = pd.to_numeric(table[by], errors="coerce")
    if values.isna().any():
        raise InvalidTableError(f"extrapolation column {by!r} must be numeric with no missing values")
    levels = np.sort(values.unique())[::-1]
    if len(levels) < 2:
        raise TooFewRowsError(f"column {by!r} has one level; extrapolation needs at least two")
    held = 0
    for k, level in enumerate(levels[:-1]):
        held += int((values == level).sum())
        threshold = level
        if held >= test_fraction * len(table) or k == len(levels) - 2:
            break
    test_mask = (values >= threshold).to_numpy()
    train, test = table[~test_mask], table[test_mask]
    return Split(
        "extrapolate", train.reset_index(drop=True), test.reset_index(drop=True),
        f"train {by} < {threshold:g} ({len(train)} rows), test {by} >= {threshold:g} ({len(test)} rows)",
    )
