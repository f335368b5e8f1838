"""The contract every prediction model follows, and the metrics it reports.

A model is built with its options (target column, input columns, seed), then

- ``fit(table) -> self`` learns from a results table (a pandas DataFrame, one row per run);
- ``predict(configs) -> np.ndarray`` returns one prediction per row of ``configs``, which needs the
  model's input columns only;
- ``evaluate(test) -> Evaluation`` compares predictions with ``test[target]``.

Inputs are checked up front: a missing column, a NaN, a non-numeric target or a categorical level
never seen in training raise a ``models.errors.ModelError`` subclass that names the column.
Derived columns (``parallelism``, ``processes``; see ``table.with_derived``) are added before fitting
and predicting. Columns that are constant in the training table are dropped from the inputs (nothing can be learnt
about them); ``features_`` lists the inputs actually used. Predicting for a categorical level the
training table did not contain is an error, also when that column was constant in training.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
import pandas as pd

from models.errors import InvalidTableError, NotFittedError, TooFewRowsError
from models.predict.table import is_categorical, require_columns, varying, with_derived


@dataclass(frozen=True)
class Evaluation:
    """Prediction error on a test table: n rows, mean squared error, R^2 and MAPE (a fraction)."""

    n: int
    mse: float
    r2: float
    mape: float


def evaluation(y_true: np.ndarray, y_pred: np.ndarray) -> Evaluation:
    """MSE, R^2 = 1 - SS_res/SS_tot (NaN when the observations are constant) and
    MAPE = mean(|y - yhat| / max(|y|, eps)), the definitions sklearn.metrics uses."""
    y = np.asarray(y_true, dtype=float)
    yhat = np.asarray(y_pred, dtype=float)
    if y.shape != yhat.shape or y.ndim != 1 or y.size == 0:
        raise InvalidTableError(f"need two equal-length non-empty vectors, got {y.shape} and {yhat.shape}")
    # R^2 is computed on values scaled to at most 1, so figures near 1e200 do not overflow when squared;
    # the MSE of such figures is honestly infinite.
    scale = float(max(np.max(np.abs(y)), np.max(np.abs(yhat))))
    scale = scale if 0 < scale < np.inf else 1.0
    ys = y / scale
    rs = ys - yhat / scale
    ss_tot = float(np.sum((ys - ys.mean()) ** 2))
    r2 = 1.0 - float(np.sum(rs**2)) / ss_tot if ss_tot > 0 else float("nan")
    with np.errstate(over="ignore"):
        resid = y - yhat
        mape = float(np.mean(np.abs(resid) / np.maximum(np.abs(y), np.finfo(float).eps)))
        mse = float(np.mean(rs**2)) * scale * scale  # a float product past the range is inf, not an error
    return Evaluation(n=int(y.size), mse=mse, r2=r2, mape=mape)


class Predictor(ABC):
    """Base class: input checking, constant-column dropping and evaluate(); subclasses fit and predict."""

    name: ClassVar[str]
    #: Fewest training rows the model accepts.
    min_rows: ClassVar[int] = 2
    #: Whether the model can take measured columns (spark_*, host_*) beside the factors: the tree
    #: models can; the linear model (all interactions of its inputs) and the structural ones (generic
    #: power law, Ernest) model the factors only.
    takes_measured: ClassVar[bool] = False

    def __init__(self, target: str = "wall_clock_s", features: Sequence[str] | None = None) -> None:
        self.target = target
        self.features = None if features is None else list(features)
        self.measured: list[str] = []  # added to the default features when takes_measured
        self.features_: list[str] = []
        #: Inputs the model would use that were constant in the training rows (left out of features_).
        self.constant_inputs_: list[str] = []
        self._levels: dict[str, set[object]] = {}
        self._fitted = False

    # -- the contract ---------------------------------------------------------------------------

    def fit(self, table: pd.DataFrame) -> Self:
        """Fit on ``table`` (needs the target and the input columns); returns self."""
        require_columns(table, [self.target], "the prediction target")
        table = with_derived(table)
        y = self._target_values(table)
        candidates = self.features if self.features is not None else self.default_features(table)
        if self.takes_measured:
            candidates = candidates + [c for c in self.measured if c not in candidates]
        require_columns(table, candidates, "a model input")
        self._check_inputs(table, candidates)
        if len(table) < self.min_rows:
            raise TooFewRowsError(
                f"{self.name} needs at least {self.min_rows} training rows, got {len(table)}; run more configurations"
            )
        self.features_ = varying(table, candidates)
        self.constant_inputs_ = [c for c in candidates if c not in self.features_]
        self._levels = {c: set(table[c].unique()) for c in candidates if is_categorical(table[c])}
        self._fit(table.reset_index(drop=True), y)
        self._fitted = True
        return self

    def predict(self, configs: pd.DataFrame) -> np.ndarray:
        """Predicted target, one value per row of ``configs``."""
        if not self._fitted:
            raise NotFittedError(f"{self.name} model is not fitted: call fit(table) first")
        configs = with_derived(configs)
        require_columns(configs, self.required_columns(), "a model input")
        self._check_inputs(configs, self.required_columns())
        for column, levels in self._levels.items():
            if column not in configs.columns:
                continue
            unseen = set(configs[column].unique()) - levels
            if unseen:
                raise InvalidTableError(
                    f"column {column!r} has levels {sorted(map(str, unseen))} not seen in training "
                    f"(seen: {sorted(map(str, levels))}); train on a table that includes them"
                )
        return np.asarray(self._predict(configs.reset_index(drop=True)), dtype=float)

    def evaluate(self, test: pd.DataFrame) -> Evaluation:
        """MSE, R^2 and MAPE of the predictions for ``test`` against ``test[target]``."""
        require_columns(test, [self.target], "the prediction target")
        return evaluation(self._target_values(test), self.predict(test))

    # -- for subclasses -------------------------------------------------------------------------

    @abstractmethod
    def default_features(self, table: pd.DataFrame) -> list[str]:
        """Input columns used when none are given."""

    @abstractmethod
    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        """Fit on checked input; ``self.features_`` holds the varying input columns."""

    @abstractmethod
    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        """Predict for checked input."""

    def required_columns(self) -> list[str]:
        """Columns predict() reads (by default the fitted inputs)."""
        return list(self.features_)

    # -- helpers --------------------------------------------------------------------------------

    def _target_values(self, table: pd.DataFrame) -> np.ndarray:
        column = table[self.target]
        if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            raise InvalidTableError(f"target column {self.target!r} is not numeric (dtype {column.dtype})")
        y = column.to_numpy(dtype=float)
        if np.isnan(y).any():
            raise InvalidTableError(
                f"target column {self.target!r} has {int(np.isnan(y).sum())} missing values; drop those rows first"
            )
        return y

    @staticmethod
    def _check_inputs(table: pd.DataFrame, columns: Sequence[str]) -> None:
        for column in columns:
            missing = int(table[column].isna().sum())
            if missing:
                raise InvalidTableError(f"input column {column!r} has {missing} missing values; drop those rows first")
