"""Tree ensembles of Albo Martínez 2021: Courier's random forest and the gradient-boosting baseline.

Both pick hyperparameters by a 5-fold grid search (shuffled folds, seeded) on the training table,
scored by mean squared error, then refit on the whole training table.

- ``RandomForestModel`` (Courier, Albo Martínez 2021, section 4.3): inputs are Albo Martínez 2021's batch, cpus, njobs,
  network and processes = cpus x njobs when present; otherwise the harness factors plus the
  parallelism m = nodes x executors x executor_cores (our analogue of "processes").
- ``GradientBoostingModel`` (Albo Martínez 2021 section 5.2, after Chao et al.): the baseline that sees no
  parallelism feature: batch, cpus and network on a Courier table, the bare factors otherwise.

Categorical inputs are one-hot encoded. Trees predict piecewise-constant values inside the range of
the training data: they cannot extrapolate to larger configurations (see splits.extrapolation_split).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from models.errors import TooFewRowsError
from models.predict._base import Predictor
from models.predict.table import factor_columns, is_categorical, is_courier_table

#: Random-forest grid, kept small for speed (Albo Martínez 2021 Table 7 searched 50..2000 trees, depth 4..10,
#: max_features; it chose depth 6 with all features for time).
RF_GRID: dict[str, list[Any]] = {"max_depth": [6, None], "max_features": [1.0, "sqrt"]}
#: Gradient-boosting grid (Albo Martínez 2021 Table 10: 50..2000 trees, depth 3..10, ls/lad/huber loss; it chose
#: 50 trees of depth 3). Squared-error loss only: lad/huber leaf updates are 3-7 times slower.
GB_GRID: dict[str, list[Any]] = {"n_estimators": [50, 150], "max_depth": [3, 5]}


class _GridSearchedTrees(Predictor):
    """Shared machinery: one-hot encoding + estimator in a pipeline, tuned by k-fold grid search."""

    takes_measured = True

    def __init__(
        self,
        target: str = "wall_clock_s",
        features: Sequence[str] | None = None,
        grid: Mapping[str, Sequence[Any]] | None = None,
        cv_folds: int = 5,
        seed: int = 0,
    ) -> None:
        super().__init__(target, features)
        self.grid = dict(self.default_grid() if grid is None else grid)
        self.cv_folds = cv_folds
        self.seed = seed
        self.search_: GridSearchCV | None = None
        self.pipeline_: Pipeline | None = None
        self.chosen_: dict[str, Any] = {}

    @property
    def best_params_(self) -> dict[str, Any]:
        """Hyperparameters the grid search chose (the grid's one combination when it had one)."""
        return dict(self.chosen_)

    def default_grid(self) -> Mapping[str, Sequence[Any]]:
        raise NotImplementedError

    def _estimator(self) -> Any:
        raise NotImplementedError

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        if len(table) < 2 * self.cv_folds:
            raise TooFewRowsError(
                f"{self.name} needs at least {2 * self.cv_folds} training rows for {self.cv_folds}-fold "
                f"cross-validation (2 per fold), got {len(table)}; run more configurations or lower cv_folds"
            )
        categorical = [c for c in self.features_ if is_categorical(table[c])]
        numeric = [c for c in self.features_ if c not in categorical]
        encode = ColumnTransformer(
            [("onehot", OneHotEncoder(handle_unknown="error"), categorical), ("numeric", "passthrough", numeric)]
        )
        pipeline = Pipeline([("encode", encode), ("estimator", self._estimator())])
        grid = {f"estimator__{k}": list(v) for k, v in self.grid.items()}
        if all(len(v) == 1 for v in grid.values()):  # nothing to choose: no cross-validated search
            self.search_ = None
            self.chosen_ = {k.removeprefix("estimator__"): v[0] for k, v in grid.items()}
            self.pipeline_ = pipeline.set_params(**{k: v[0] for k, v in grid.items()}).fit(table[self.features_], y)
            return
        folds = KFold(n_splits=self.cv_folds, shuffle=True, random_state=self.seed)
        self.search_ = GridSearchCV(pipeline, grid, cv=folds, scoring="neg_mean_squared_error", n_jobs=1)
        self.search_.fit(table[self.features_], y)
        self.chosen_ = {k.removeprefix("estimator__"): v for k, v in self.search_.best_params_.items()}
        self.pipeline_ = self.search_.best_estimator_

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        assert self.pipeline_ is not None
        return self.pipeline_.predict(configs[self.features_])


class RandomForestModel(_GridSearchedTrees):
    """Courier's random forest (Albo Martínez 2021): batch, cpus, njobs, network, processes = cpus x njobs."""

    name = "rf"

    def __init__(self, *args: Any, n_estimators: int = 100, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n_estimators = n_estimators

    def default_grid(self) -> Mapping[str, Sequence[Any]]:
        return RF_GRID

    def default_features(self, table: pd.DataFrame) -> list[str]:
        derived = [c for c in ("processes", "parallelism") if c in table.columns]
        return factor_columns(table, self.target) + derived

    def _estimator(self) -> RandomForestRegressor:
        return RandomForestRegressor(n_estimators=self.n_estimators, random_state=self.seed, n_jobs=1)


class GradientBoostingModel(_GridSearchedTrees):
    """Albo Martínez 2021's gradient-boosting baseline: no parallelism feature."""

    name = "gb"

    def default_grid(self) -> Mapping[str, Sequence[Any]]:
        return GB_GRID

    def default_features(self, table: pd.DataFrame) -> list[str]:
        if is_courier_table(table):
            return ["batch", "cpus", "network"]
        return factor_columns(table, self.target)

    def _estimator(self) -> GradientBoostingRegressor:
        return GradientBoostingRegressor(random_state=self.seed)
