"""Prediction intervals for any model of :mod:`models.predict`: CV+ (cross-conformal) intervals.

CV+ (Barber, Candes, Ramdas and Tibshirani, "Predictive inference with the jackknife+", Ann. Statist.
2021, section 3): split the n training rows into K folds; fit the model K times, each time without
one fold, and keep each row's out-of-fold residual R_i = |y_i - mu_{-k(i)}(x_i)|. For a new x the
interval at level 1 - alpha is

    [ the floor(alpha (n+1))-th smallest of  mu_{-k(i)}(x) - R_i ,
      the ceil((1-alpha)(n+1))-th smallest of mu_{-k(i)}(x) + R_i ]

(an end is infinite when its rank falls outside 1..n). It needs no assumption on the model or the
noise; for exchangeable rows its coverage is at least 1 - 2 alpha - sqrt(2/n) in the worst case and
close to 1 - alpha in practice. The point prediction stays the model fitted on all training rows.
Each fold repeats the whole fit (the trees' grid search included), so an interval costs K more fits,
unless the caller already has them: ``fit(..., fold_models=...)`` takes models fitted without each of the
same K folds (a tree's grid search keeps its chosen setting's, see models.predict.trees). With K = n this is
the jackknife+.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from models.errors import InvalidTableError, NotFittedError, TooFewRowsError
from models.predict._base import Predictor

DEFAULT_LEVEL = 0.9
DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class Intervals:
    """Lower and upper ends, one per predicted row, at the nominal ``level``."""

    level: float
    low: np.ndarray
    high: np.ndarray

    def coverage(self, y: np.ndarray) -> float:
        """Fraction of ``y`` inside [low, high] (the empirical coverage)."""
        return empirical_coverage(y, self.low, self.high)

    def mean_width(self) -> float:
        return float(np.mean(self.high - self.low))


def empirical_coverage(y: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    """Share of the observations inside their interval, ends included."""
    y = np.asarray(y, dtype=float)
    if y.shape != np.shape(low) or y.shape != np.shape(high) or y.size == 0:
        raise InvalidTableError(f"need one interval per observation, got {y.shape}, {np.shape(low)}, {np.shape(high)}")
    return float(np.mean((np.asarray(low) <= y) & (y <= np.asarray(high))))


def check_level(level: float) -> None:
    if not 0 < level < 1:
        raise InvalidTableError(f"interval level must be in (0, 1), e.g. 0.9, got {level}")


def cv_plus_ends(fold_predictions: np.ndarray, residuals: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """CV+ ends from ``fold_predictions`` (n_train, m): row i is mu_{-k(i)} at the m new points, and the
    n_train out-of-fold absolute residuals."""
    check_level(level)
    preds = np.asarray(fold_predictions, dtype=float)
    r = np.asarray(residuals, dtype=float)
    n = len(r)
    if preds.ndim != 2 or preds.shape[0] != n:
        raise InvalidTableError(f"need one row of fold predictions per residual, got {preds.shape} and {r.shape}")
    alpha = 1.0 - level
    k_low = math.floor(alpha * (n + 1) + 1e-9)
    k_high = math.ceil((1.0 - alpha) * (n + 1) - 1e-9)
    m = preds.shape[1]
    low = np.sort(preds - r[:, None], axis=0)[k_low - 1] if k_low >= 1 else np.full(m, -np.inf)
    high = np.sort(preds + r[:, None], axis=0)[k_high - 1] if k_high <= n else np.full(m, np.inf)
    return low, high


class ConformalPredictor:
    """A model with CV+ intervals: ``fit(table)``, then ``predict(configs)`` and ``interval(configs)``.

    ``make`` builds a fresh unfitted model (the same options each call); the model fitted on all rows
    gives the point predictions, the K fold models the intervals."""

    def __init__(self, make: Callable[[], Predictor], level: float = DEFAULT_LEVEL, folds: int = DEFAULT_FOLDS,
                 seed: int = 0) -> None:
        check_level(level)
        if folds < 2:
            raise InvalidTableError(f"CV+ needs at least 2 folds, got {folds}")
        self.make, self.level, self.folds, self.seed = make, level, folds, seed
        self.model: Predictor | None = None
        self.fold_models_: list[Predictor] = []
        self.fold_of_: np.ndarray = np.empty(0, dtype=int)
        self.residuals_: np.ndarray = np.empty(0)

    def fit(self, table: pd.DataFrame, model: Predictor | None = None,
            fold_models: Sequence[tuple[np.ndarray, Predictor]] | None = None) -> ConformalPredictor:
        """Fit the point model (or take ``model``, already fitted on ``table``) and the K fold models.

        ``fold_models``: (held-out rows, model) pairs, each the model ``make()`` fits on ``table`` without those
        rows; they stand in for the fold fits when their rows are this predictor's K folds (checked row by row),
        and are ignored otherwise."""
        table = table.reset_index(drop=True)
        if len(table) < self.folds:
            raise TooFewRowsError(f"CV+ intervals with {self.folds} folds need at least {self.folds} training "
                                  f"rows, got {len(table)}; run more configurations or use fewer folds")
        self.model = model if model is not None else self.make().fit(table)
        y = self.model._target_values(table)
        self.fold_models_, self.fold_of_ = [], np.empty(len(table), dtype=int)
        self.residuals_ = np.empty(len(table))
        splits = list(KFold(n_splits=self.folds, shuffle=True, random_state=self.seed).split(table))
        given = None
        if fold_models is not None and len(fold_models) == len(splits) and all(
                np.array_equal(np.sort(h), np.sort(held)) for (h, _), (_, held) in zip(fold_models, splits)):
            given = [m for _, m in fold_models]
        for k, (rest, held) in enumerate(splits):
            fold_model = given[k] if given is not None else self.make().fit(table.iloc[rest])
            self.residuals_[held] = np.abs(y[held] - fold_model.predict(table.iloc[held]))
            self.fold_of_[held] = k
            self.fold_models_.append(fold_model)
        return self

    def predict(self, configs: pd.DataFrame) -> np.ndarray:
        if self.model is None:
            raise NotFittedError("the conformal model is not fitted: call fit(table) first")
        return self.model.predict(configs)

    def interval(self, configs: pd.DataFrame, level: float | None = None) -> Intervals:
        """CV+ interval for each row of ``configs`` at ``level`` (default: the one given at construction)."""
        if self.model is None:
            raise NotFittedError("the conformal model is not fitted: call fit(table) first")
        level = self.level if level is None else level
        per_fold = np.array([m.predict(configs) for m in self.fold_models_])  # (K, m)
        low, high = cv_plus_ends(per_fold[self.fold_of_], self.residuals_, level)
        return Intervals(level, low, high)
