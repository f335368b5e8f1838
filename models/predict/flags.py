"""Warnings that keep a prediction from passing silently as a result: one function per kind.

Each returns a list of one-line messages (empty when there is nothing to say); the comparison joins
them into a row's ``warning``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from models.predict._base import Predictor
from models.predict.table import is_categorical, with_derived

#: Derived size columns checked beside a model's own inputs: a test configuration can lie outside the
#: training rows as a whole (e.g. a larger parallelism) while each factor's level was seen.
SIZE_COLUMNS: tuple[str, ...] = ("parallelism", "processes")


def one_level_inputs(model: Predictor) -> list[str]:
    """Inputs the model was asked to use that had one level in its training rows (so were left out)."""
    if not model.constant_inputs_:
        return []
    return [f"one level in the training rows, not learnt: {', '.join(model.constant_inputs_)}"]


def outside_ranges(model: Predictor, train: pd.DataFrame, test: pd.DataFrame) -> list[str]:
    """Numeric inputs of ``test`` (the model's, and the derived size columns) outside the training range."""
    train, test = with_derived(train), with_derived(test)
    columns = list(dict.fromkeys([*model.required_columns(), *SIZE_COLUMNS]))
    messages = []
    for column in columns:
        if column not in train.columns or column not in test.columns or is_categorical(train[column]):
            continue
        lo, hi = float(train[column].min()), float(train[column].max())
        values = test[column].to_numpy(dtype=float)
        outside = int(np.sum((values < lo) | (values > hi)))
        if outside:
            messages.append(f"{outside} of {len(values)} test rows outside the training range of {column} "
                            f"[{lo:g}, {hi:g}]")
    return messages


def predictions_outside(y_train: np.ndarray, predictions: np.ndarray, target: str) -> list[str]:
    """Predictions outside the range of the training target (the model extrapolates its output)."""
    lo, hi = float(np.min(y_train)), float(np.max(y_train))
    outside = (predictions < lo) | (predictions > hi) | ~np.isfinite(predictions)
    if not outside.any():
        return []
    extreme = predictions[outside][np.argmax(np.abs(predictions[outside] - 0.5 * (lo + hi)))]
    return [f"{int(outside.sum())} of {len(predictions)} predictions outside the training range of {target} "
            f"[{lo:.4g}, {hi:.4g}] (as far as {extreme:.4g})"]


def negative_r2(r2: float) -> list[str]:
    """R^2 below 0: the model predicts worse than the test rows' own mean."""
    return [f"R^2 {r2:.3g} < 0: worse than predicting the mean"] if np.isfinite(r2) and r2 < 0 else []


def join(messages: Sequence[str]) -> str | None:
    """The row's warning: the messages joined by '; ', or None."""
    return "; ".join(messages) if messages else None
