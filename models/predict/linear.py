"""ANOVA-linear model (Albo Martínez 2021, section 4.1): the target as a linear function of every factor and
every interaction of factors, fitted by ordinary least squares.

Numeric factors enter as numbers (one coefficient per unit, as in Albo Martínez 2021's tables), categorical ones
by treatment coding. Numeric factors are standardized on the training table before the products are
formed; with all interactions up to a given order this is a reparametrization (the span of the
design's columns is unchanged), so predictions are those of the raw-unit fit, with better conditioning.
When the design has more terms than distinct configurations (e.g. all interactions of a fractional
factorial), the terms are aliased and statsmodels' pseudo-inverse returns the minimum-norm solution;
``rank`` and ``n_terms`` show this.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from statsmodels.regression.linear_model import RegressionResultsWrapper
from statsmodels.tools.sm_exceptions import SingularMatrixWarning

from models.errors import InvalidTableError
from models.predict._base import Predictor
from models.predict.table import factor_columns, is_categorical


class LinearModel(Predictor):
    """OLS on all main effects and interactions up to ``max_order`` (None: all of them)."""

    name = "linear"

    def __init__(
        self,
        target: str = "wall_clock_s",
        features: Sequence[str] | None = None,
        max_order: int | None = None,
    ) -> None:
        super().__init__(target, features)
        if max_order is not None and max_order < 1:
            raise InvalidTableError(f"max_order must be >= 1 or None (all interactions), got {max_order}")
        self.max_order = max_order
        self._categorical: list[bool] = []
        self._center: dict[str, float] = {}
        self._scale: dict[str, float] = {}
        self.results_: RegressionResultsWrapper | None = None

    def default_features(self, table: pd.DataFrame) -> list[str]:
        return factor_columns(table, self.target)

    @property
    def formula(self) -> str:
        """The patsy formula over the standardized columns f0, f1, ... (in ``features_`` order)."""
        if not self.features_:
            return "y ~ 1"
        terms = [f"C(f{i})" if i_cat else f"f{i}" for i, i_cat in enumerate(self._categorical)]
        order = len(terms) if self.max_order is None else min(self.max_order, len(terms))
        return f"y ~ ({' + '.join(terms)})**{order}"

    @property
    def n_terms(self) -> int:
        """Number of coefficients, intercept included."""
        return 0 if self.results_ is None else int(len(self.results_.params))

    @property
    def rank(self) -> int:
        """Rank of the design matrix (< n_terms when terms are aliased)."""
        return 0 if self.results_ is None else int(self.results_.model.rank)

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        self._categorical = [is_categorical(table[c]) for c in self.features_]
        self._center, self._scale = {}, {}
        for column, categorical in zip(self.features_, self._categorical):
            if not categorical:
                values = table[column].to_numpy(dtype=float)
                self._center[column] = float(values.mean())
                self._scale[column] = float(values.std()) or 1.0
        frame = self._design_frame(table)
        frame["y"] = y
        with warnings.catch_warnings():  # aliasing is expected and reported by rank < n_terms
            warnings.simplefilter("ignore", SingularMatrixWarning)
            self.results_ = smf.ols(self.formula, data=frame).fit()

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        assert self.results_ is not None
        return np.asarray(self.results_.predict(self._design_frame(configs)), dtype=float)

    def _design_frame(self, table: pd.DataFrame) -> pd.DataFrame:
        columns = {}
        for i, column in enumerate(self.features_):
            if column in self._center:
                columns[f"f{i}"] = (table[column].to_numpy(dtype=float) - self._center[column]) / self._scale[column]
            else:
                columns[f"f{i}"] = table[column].astype(str).to_numpy()
        return pd.DataFrame(columns, index=table.index)
