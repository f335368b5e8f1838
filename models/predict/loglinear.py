"""Multiplicative model: the log of the target as main effects and two-factor interactions of the
log factors, back-transformed with Duan's smearing estimate.

Training times (and the cost T/(A*100)^2) are products: doubling the nodes divides the scalable part,
doubling the epochs multiplies it, and replicates of one setting differ by a ratio rather than by a
fixed amount (Marinos 2021's Table II: replicate CV about 22 % at every level). On the log scale such a
response is additive and its noise homoscedastic, which is what least squares assumes. Keeping the
main effects and two-factor interactions only is the effect-hierarchy (sparsity) principle of
designed experiments: higher-order interactions are rarely real, and a fractional factorial aliases
them anyway. Fewer coefficients than design points means each cell's prediction pools the rows of
other cells, so its estimation error is below that of the cell mean (the saturated ``linear`` model).

Numeric factors whose values are all positive enter as log2(x) (a coefficient is then the change of
log(target) per doubling); other numeric factors enter standardized; categorical ones by treatment
coding. The fit is ordinary least squares on log(y) (numpy's minimum-norm ``lstsq`` when terms are
aliased). The prediction on the original scale is exp(x'b) * mean(exp(residuals)) (Duan 1983, the
smearing estimate of E[y | x] that needs no normality assumption). Needs a positive target.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from models.errors import InvalidTableError
from models.predict._base import Predictor
from models.predict.table import factor_columns, is_categorical


class LogLinearModel(Predictor):
    """OLS of log(target) on the (log) factors and their interactions up to ``max_order`` (2)."""

    name = "loglinear"
    min_rows = 3

    def __init__(self, target: str = "wall_clock_s", features: Sequence[str] | None = None, max_order: int = 2) -> None:
        super().__init__(target, features)
        if max_order < 1:
            raise InvalidTableError(f"max_order must be >= 1, got {max_order}")
        self.max_order = max_order
        self._encoders: list[tuple[str, str, object]] = []  # (column, kind, parameter)
        self.coef_: np.ndarray | None = None
        self.smearing_: float = float("nan")
        self.terms_: list[str] = []

    def default_features(self, table: pd.DataFrame) -> list[str]:
        return factor_columns(table, self.target)

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        if not (np.isfinite(y).all() and (y > 0).all()):
            raise InvalidTableError(
                f"the loglinear model needs a positive target; {self.target!r} has {int((~(y > 0)).sum())} "
                "values <= 0: use the linear model or another target"
            )
        self._encoders = []
        for column in self.features_:
            if is_categorical(table[column]):
                levels = sorted(table[column].astype(str).unique())
                self._encoders.append((column, "categorical", levels))
                continue
            values = table[column].to_numpy(dtype=float)
            if (values > 0).all():
                self._encoders.append((column, "log2", None))
            else:
                self._encoders.append((column, "standard", (float(values.mean()), float(values.std()) or 1.0)))
        x, self.terms_ = self._design(table)
        log_y = np.log(y)
        self.coef_, *_ = np.linalg.lstsq(x, log_y, rcond=None)
        self.smearing_ = float(np.mean(np.exp(log_y - x @ self.coef_)))

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        assert self.coef_ is not None
        x, _ = self._design(configs)
        return np.exp(x @ self.coef_) * self.smearing_

    def _design(self, table: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
        """The intercept, the main-effect columns of every factor and the products of up to
        ``max_order`` columns of distinct factors."""
        groups: list[list[tuple[str, np.ndarray]]] = []
        for column, kind, parameter in self._encoders:
            if kind == "categorical":
                text = table[column].astype(str).to_numpy()
                levels = list(parameter)  # type: ignore[call-overload]
                groups.append([(f"{column}[{level}]", (text == level).astype(float)) for level in levels[1:]])
            elif kind == "log2":
                values = table[column].to_numpy(dtype=float)
                if not (values > 0).all():
                    raise InvalidTableError(
                        f"column {column!r} was positive in training and enters as log2({column}); "
                        f"got {values[~(values > 0)][0]!r}: predict for positive values only"
                    )
                groups.append([(f"log2({column})", np.log2(values))])
            else:
                center, scale = parameter  # type: ignore[misc]
                groups.append([(f"z({column})", (table[column].to_numpy(dtype=float) - center) / scale)])
        names, columns = ["1"], [np.ones(len(table))]
        for order in range(1, min(self.max_order, len(groups)) + 1):
            for combo in itertools.combinations(groups, order):
                for parts in itertools.product(*combo):
                    names.append(":".join(name for name, _ in parts))
                    columns.append(np.prod([values for _, values in parts], axis=0))
        return np.column_stack(columns), names
