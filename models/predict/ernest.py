"""Ernest-style scaling model (Venkataraman et al., NSDI 2016), fitted by non-negative least squares.

    t = theta0 + theta1 * s / m + theta2 * log(m) + theta3 * m,   theta >= 0

m is the parallelism (default: the derived ``parallelism`` = nodes x executors x executor_cores, or
Albo Martínez 2021's ``processes`` = cpus x njobs), s the amount of work (Ernest's "scale", the input fraction;
default ``epochs`` when present, else 1). The terms are: fixed cost, perfectly parallel work, tree
aggregation, per-machine overhead. Non-negativity keeps each term's physical meaning.

Ernest models one workload at a time; ``by`` names columns that tell workloads apart (default: the
categorical factors, e.g. the network), and one fit is made per group; a group with fewer rows than
the 4 coefficients uses the fit over all groups. A level never seen in training is an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from models.errors import InvalidTableError, NotIdentifiedError
from models.predict._base import Predictor
from models.predict.table import factor_columns, is_categorical

FEATURE_NAMES: tuple[str, ...] = ("1", "s/m", "log m", "m")


def ernest_design(m: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Ernest's design matrix, columns 1, s/m, log m, m (s = 1 when ``scale`` is None)."""
    m = np.asarray(m, dtype=float)
    if (m < 1).any():
        raise InvalidTableError("parallelism m must be >= 1 for every row (log m and 1/m need it)")
    s = np.ones_like(m) if scale is None else np.asarray(scale, dtype=float)
    return np.column_stack([np.ones_like(m), s / m, np.log(m), m])


class ErnestModel(Predictor):
    """Per-workload NNLS on 1, s/m, log m, m."""

    name = "ernest"

    def __init__(
        self,
        target: str = "wall_clock_s",
        parallelism: str | None = None,
        scale: str | None = None,
        by: Sequence[str] | None = None,
    ) -> None:
        super().__init__(target)
        self.parallelism = parallelism
        self.scale = scale
        self.by = None if by is None else list(by)
        self.coefficients_: dict[tuple[str, ...], np.ndarray] = {}
        self.pooled_: np.ndarray = np.zeros(len(FEATURE_NAMES))

    def _columns(self, table: pd.DataFrame) -> tuple[str, str | None, list[str]]:
        m = self.parallelism
        if m is None:
            m = next((c for c in ("parallelism", "processes", "cpus") if c in table.columns), None)
            if m is None:
                raise InvalidTableError(
                    "no parallelism column: need nodes, executors and executor_cores, or name it with "
                    "--parallelism COLUMN"
                )
        scale = self.scale if self.scale is not None else ("epochs" if "epochs" in table.columns else None)
        if self.by is not None:
            by = self.by
        else:
            by = [c for c in factor_columns(table, self.target) if c in table.columns and is_categorical(table[c])]
        return m, scale, by

    def default_features(self, table: pd.DataFrame) -> list[str]:
        m, scale, by = self._columns(table)
        return [m] + ([scale] if scale else []) + [c for c in by if c not in (m, scale)]

    def required_columns(self) -> list[str]:
        return [self._m] + ([self._scale] if self._scale else []) + self._by

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        m, scale, by = self._columns(table)
        self._m, self._scale, self._by = m, scale, [c for c in by if c in self.features_]
        design = self._design(table)
        rank = int(np.linalg.matrix_rank(design))
        if rank < len(FEATURE_NAMES):
            levels = ", ".join(f"{v:g}" for v in np.unique(table[m].to_numpy(dtype=float)))
            raise NotIdentifiedError(
                f"not identified: 4 coefficients ({', '.join(FEATURE_NAMES)}) and a design of rank {rank} in the "
                f"training rows (parallelism {levels}); runs at more levels of parallelism (or of {scale or 'scale'}) "
                "identify it")
        self.pooled_ = nnls(design, y)[0]
        self.coefficients_ = {}
        if self._by:
            for key, index in table.groupby(self._by, sort=True).indices.items():
                key = key if isinstance(key, tuple) else (key,)
                if len(index) >= len(FEATURE_NAMES):
                    self.coefficients_[tuple(map(str, key))] = nnls(design[index], y[index])[0]

    def _design(self, table: pd.DataFrame) -> np.ndarray:
        scale = table[self._scale].to_numpy(dtype=float) if self._scale else None
        return ernest_design(table[self._m].to_numpy(dtype=float), scale)

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        design = self._design(configs)
        if not self._by:
            return design @ self.pooled_
        keys = configs[self._by].astype(str).itertuples(index=False, name=None)
        theta = np.array([self.coefficients_.get(tuple(k), self.pooled_) for k in keys])
        return np.einsum("ij,ij->i", design, theta)
