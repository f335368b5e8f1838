"""Tree ensembles of Albo Martínez 2021: Courier's random forest and the gradient-boosting baseline.

Both pick hyperparameters by a 5-fold grid search (shuffled folds, seeded) on the training table,
scored by mean squared error, then refit on the whole training table. The search is sklearn's GridSearchCV
written out (:func:`grid_search`: the same candidates in the same order, the same scorer, the same choice among
ties) so that the chosen setting's fold fits can be kept: they are the models CV+ would fit without each fold
(:meth:`_GridSearchedTrees.cv_fits`), which saves an interval its K refits of the forest.

- ``RandomForestModel`` (Courier, Albo Martínez 2021, section 4.3): inputs are Albo Martínez 2021's batch, cpus, njobs,
  network and processes = cpus x njobs when present; otherwise the harness factors plus the
  parallelism m = nodes x executors x executor_cores (our analogue of "processes").
- ``GradientBoostingModel`` (Albo Martínez 2021 section 5.2, after Chao et al.): the baseline that sees no
  parallelism feature: batch, cpus and network on a Courier table, the bare factors otherwise.

Categorical inputs are one-hot encoded. Trees predict piecewise-constant values inside the range of
the training data: they cannot extrapolate to larger configurations (see splits.extrapolation_split).
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import sklearn
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import KFold, ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from models.errors import FitError, TooFewRowsError
from models.predict._base import Predictor
from models.predict.table import factor_columns, is_categorical, is_courier_table, varying

#: Random-forest grid, kept small for speed (Albo Martínez 2021 Table 7 searched 50..2000 trees, depth 4..10,
#: max_features; it chose depth 6 with all features for time).
RF_GRID: dict[str, list[Any]] = {"max_depth": [6, None], "max_features": [1.0, "sqrt"]}
#: Gradient-boosting grid (Albo Martínez 2021 Table 10: 50..2000 trees, depth 3..10, ls/lad/huber loss; it chose
#: 50 trees of depth 3). Squared-error loss only: lad/huber leaf updates are 3-7 times slower.
GB_GRID: dict[str, list[Any]] = {"n_estimators": [50, 150], "max_depth": [3, 5]}


@dataclass(frozen=True, eq=False)
class GridSearch:
    """What a k-fold grid search tried and chose: GridSearchCV's candidates (``ParameterGrid`` order), mean test
    scores (negative MSE, NaN where a fold failed), the index of the chosen one, and the chosen one's fold fits
    (each fitted without the rows ``held[k]``; None where that fit failed)."""

    candidates: tuple[dict[str, Any], ...]
    mean_scores: np.ndarray
    best_index: int
    held: tuple[np.ndarray, ...]
    fold_fits: tuple[Pipeline | None, ...]

    @property
    def n_splits(self) -> int:
        return len(self.held)

    @property
    def best_params(self) -> dict[str, Any]:
        return dict(self.candidates[self.best_index])


def grid_search(pipeline: Pipeline, grid: Mapping[str, Sequence[Any]], x: pd.DataFrame, y: np.ndarray,
                folds: KFold) -> GridSearch:
    """sklearn's ``GridSearchCV(pipeline, grid, cv=folds, scoring="neg_mean_squared_error", error_score=nan)``
    up to its choice: each candidate in ParameterGrid order fitted on each fold's other rows (in the same row
    order), scored on the fold by negative MSE; the mean over folds (np.average); the first of the best means
    (GridSearchCV's rank 1 with method="min"), NaN means counted as the worst. A fit or score that fails scores
    NaN with sklearn's FitFailedWarning, as GridSearchCV's error_score=nan does; when every fit fails the search
    fails. It keeps the chosen candidate's fold fits, which GridSearchCV drops.

    Two things GridSearchCV repeats are done once: the steps before the last (the encoding), which ``grid``
    (naming the last step's parameters only) cannot change, are fitted once per fold and shared by that fold's
    candidates; and sklearn checks a candidate's parameters on its first fit only (they are the same on every
    fold; the nested checks of a forest's trees are skipped with them)."""
    *head, (last, estimator) = pipeline.steps
    if not all(k.startswith(f"{last}__") for k in grid):
        raise ValueError(f"the grid may name the pipeline's last step ({last}__...) only, got {sorted(grid)}")
    splits = list(folds.split(x))
    candidates = tuple(ParameterGrid({k: list(v) for k, v in grid.items()}))
    scores = np.full((len(candidates), len(splits)), np.nan)
    fits: list[list[Pipeline | None]] = [[None] * len(splits) for _ in candidates]
    checked = [False] * len(candidates)
    failed = 0
    for k, (rest, held) in enumerate(splits):
        steps, x_rest, x_held = [], x.iloc[rest], x.iloc[held]
        try:
            for name, step in head:
                fitted = clone(step)
                x_rest = fitted.fit_transform(x_rest, y[rest])
                steps.append((name, fitted))
        except Exception as exc:  # noqa: BLE001 - GridSearchCV's error_score=nan: every candidate fails on this fold
            warnings.warn(f"fit failed on fold {k}: {exc}", FitFailedWarning, stacklevel=2)
            failed += len(candidates)
            continue
        try:
            for _, fitted in steps:
                x_held = fitted.transform(x_held)
        except Exception as exc:  # noqa: BLE001 - the fold cannot be scored (e.g. a level the other rows lack)
            warnings.warn(f"scoring failed on fold {k}: {exc}", FitFailedWarning, stacklevel=2)
            x_held = None
        for i, params in enumerate(candidates):
            model = clone(estimator).set_params(**{n.removeprefix(f"{last}__"): v
                                                  for n, v in clone(params, safe=False).items()})
            try:
                with sklearn.config_context(skip_parameter_validation=checked[i]):
                    model.fit(x_rest, y[rest])
            except Exception as exc:  # noqa: BLE001 - as GridSearchCV: the candidate scores NaN on this fold
                warnings.warn(f"fit failed for {params}: {exc}", FitFailedWarning, stacklevel=2)
                failed += 1
                continue
            checked[i] = True
            fits[i][k] = Pipeline([*steps, (last, model)])
            if x_held is None:
                continue
            try:
                scores[i, k] = -mean_squared_error(y[held], model.predict(x_held))
            except Exception as exc:  # noqa: BLE001 - as GridSearchCV: a score that fails is NaN
                warnings.warn(f"scoring failed for {params}: {exc}", FitFailedWarning, stacklevel=2)
    if failed == scores.size:
        raise FitError(f"all {failed} fits of the grid search failed; see the warnings")
    means = np.average(scores, axis=1)
    best = 0
    for i in range(1, len(candidates)):
        if _better(float(means[i]), float(means[best])):
            best = i
    return GridSearch(candidates, means, best, tuple(held for _, held in splits), tuple(fits[best]))


def _better(score: float, best: float) -> bool:
    """Strictly better than the best so far (ties keep the first); NaN is never better, anything beats NaN."""
    if math.isnan(score):
        return False
    return math.isnan(best) or score > best


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
        self.search_: GridSearch | None = None
        self.pipeline_: Pipeline | None = None
        self.chosen_: dict[str, Any] = {}
        self._fold_levels: list[dict[str, set[object]] | None] = []

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
        self._fold_levels = []
        if all(len(v) == 1 for v in grid.values()):  # nothing to choose: no cross-validated search
            self.search_ = None
            self.chosen_ = {k.removeprefix("estimator__"): v[0] for k, v in grid.items()}
            self.pipeline_ = pipeline.set_params(**{k: v[0] for k, v in grid.items()}).fit(table[self.features_], y)
            return
        folds = KFold(n_splits=self.cv_folds, shuffle=True, random_state=self.seed)
        x = table[self.features_]
        self.search_ = grid_search(pipeline, grid, x, y, folds)
        best = self.search_.best_params
        self.chosen_ = {k.removeprefix("estimator__"): v for k, v in best.items()}
        self.pipeline_ = clone(pipeline).set_params(**clone(best, safe=False)).fit(x, y)  # GridSearchCV's refit
        rows = np.arange(len(table))
        self._fold_levels = [self._same_fit_levels(table.iloc[np.setdiff1d(rows, held)])
                             for held in self.search_.held]

    def _same_fit_levels(self, rest: pd.DataFrame) -> dict[str, set[object]] | None:
        """The categorical levels a model of the chosen setting fitted on ``rest`` alone would record, or None when
        that fit would differ from the search's fold fit on the same rows: too few rows for it, or an input that
        varies here constant there (it would be left out)."""
        if len(rest) < max(2 * self.cv_folds, self.min_rows) or varying(rest, self.features_) != self.features_:
            return None
        return {c: set(rest[c].unique()) for c in self._levels}

    def cv_fits(self, folds: int, seed: int) -> list[tuple[np.ndarray, Predictor]] | None:
        """The chosen setting's fits of the search without each fold, with that fold's rows, as models: each is the
        model that this one's class, setting (a grid of one) and seed fitted on the same training rows without that
        fold give (same rows in the same order, same estimator), so CV+ on ``KFold(folds, shuffle=True,
        random_state=seed)`` can take them instead of refitting. None when the search used other folds, or when
        some fold's fit would not be that model (see _same_fit_levels) or failed."""
        search = self.search_
        if (search is None or folds != self.cv_folds or seed != self.seed or len(self._fold_levels) != folds
                or any(levels is None for levels in self._fold_levels) or any(f is None for f in search.fold_fits)):
            return None
        out: list[tuple[np.ndarray, Predictor]] = []
        for held, pipeline, levels in zip(search.held, search.fold_fits, self._fold_levels):
            fold = copy.copy(self)
            fold.grid = {k: [v] for k, v in self.chosen_.items()}
            fold.search_, fold.pipeline_, fold._levels, fold._fold_levels = None, pipeline, dict(levels or {}), []
            out.append((held, fold))
        return out

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
