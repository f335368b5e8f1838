"""The noise ceiling: the best R^2 any model of the factors can reach on a table with replicates.

Rows that share every factor value are replicates of one design point (a cell). The pure-error
decomposition splits the total sum of squares into the part between cells and the pure error
within them:

    SS_total = SS_between + SS_pure_error,   noise_ceiling_r2 = 1 - SS_pure_error / SS_total

which is the R^2 of the cell means, i.e. of the saturated model that predicts each row by the mean
of its design point: no function of the factors fits the rows better. ``adjusted_r2`` =
1 - (SS_pure_error / (n - cells)) / (SS_total / (n - 1)) estimates 1 - sigma^2 / var(y), the R^2
the true cell means would score on new rows (the plain ceiling is a little optimistic: the cell
means were fitted to the very rows they are scored on). ``replicate_cv`` is the mean over
replicated cells of the sample standard deviation over the mean (how far replicates of one setting
differ). Without replicated cells no ceiling is known: ``known`` is False and the figures are NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models.errors import InvalidTableError
from models.predict.table import require_columns


@dataclass(frozen=True)
class NoiseCeiling:
    """Pure-error R^2 ceiling of a table (NaN figures and ``known`` False without replicates)."""

    r2: float
    adjusted_r2: float
    replicate_cv: float
    n_rows: int
    n_cells: int
    n_replicated_cells: int
    factors: tuple[str, ...]

    @property
    def known(self) -> bool:
        return bool(self.n_replicated_cells > 0 and np.isfinite(self.r2))

    def share(self, r2: float) -> float:
        """``r2`` as a fraction of the ceiling (NaN when no ceiling is known or it is not positive)."""
        if not self.known or not self.r2 > 0 or not np.isfinite(r2):
            return float("nan")
        return float(r2 / self.r2)

    def describe(self) -> str:
        """One line for the text report."""
        if not self.known:
            return (f"noise ceiling: not known ({self.n_cells} design points in {self.n_rows} rows, none replicated); "
                    "replicate some configurations to learn how much of the variation is noise")
        return (f"noise ceiling (R^2 of the cell means, pure error of {self.n_replicated_cells} replicated of "
                f"{self.n_cells} design points): noise_ceiling_r2 {self.r2:.3f} (adjusted, expected on new rows: "
                f"{self.adjusted_r2:.3f}); replicate CV {100 * self.replicate_cv:.1f} %")


def noise_ceiling(table: pd.DataFrame, target: str, factors: Sequence[str]) -> NoiseCeiling:
    """The pure-error ceiling of ``table[target]`` with design points given by ``factors``."""
    factors = list(factors)
    require_columns(table, [target, *factors], "the noise ceiling")
    y = pd.to_numeric(table[target], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(y).all():
        raise InvalidTableError(f"target column {target!r} has missing or non-finite values; drop those rows first")
    n = len(y)
    keys = table.groupby(factors, dropna=False, sort=False).ngroup().to_numpy() if factors else np.zeros(n, dtype=int)
    cells = pd.Series(y).groupby(keys)
    sizes = cells.size()
    n_cells, replicated = int(len(sizes)), int((sizes > 1).sum())
    nan = float("nan")
    ss_total = float(np.sum((y - y.mean()) ** 2)) if n else 0.0
    if replicated == 0 or ss_total <= 0:
        return NoiseCeiling(nan, nan, nan, n, n_cells, replicated if ss_total > 0 else 0, tuple(factors))
    ss_pure = float(np.sum((y - cells.transform("mean").to_numpy()) ** 2))
    df_pure = n - n_cells
    adjusted = 1.0 - (ss_pure / df_pure) / (ss_total / (n - 1)) if df_pure > 0 else nan
    stats = cells.agg(["mean", "std", "size"])
    stats = stats[stats["size"] > 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = float(np.mean(stats["std"] / stats["mean"].abs()))
    return NoiseCeiling(1.0 - ss_pure / ss_total, float(adjusted), cv, n, n_cells, replicated, tuple(factors))
