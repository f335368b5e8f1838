"""Max epochs under a time budget (Schouten and Mukherjee, section V).

For a fixed job configuration, predict the time of every epoch count in ``lower..upper`` (step
``step``) as the mean of a random forest and the ANOVA regression (interactions up to order 3, as
Schouten and Mukherjee keep), both from :mod:`models.predict`, and return the largest epoch count whose predicted
time fits the budget. A forest cannot interpolate: between two epoch counts the campaign ran it predicts one of
their times (a step), so its prediction at an epoch count between two trained ones is the straight line between
its predictions at those two (time is close to linear in epochs); at a trained count, and beyond the largest, it is
the forest's own. An interval comes with each prediction: the prediction plus the
``(1-level)/2`` and ``(1+level)/2`` quantiles of the combined model's out-of-fold residuals
(K-fold cross-validation; the coverage is approximate). ``--safe`` picks by the interval's upper end.

``sparkdl epochs`` (:mod:`optimize.cli.epochs`) prints the choice and can confirm it with one real job
(``--confirm``).

The time is the harness's ``elapsed_s`` (what a user with a budget waits for) unless ``--time``
names another column (``wall_clock_s``: BigDL's own training clock).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

import logparse
from models.predict import LinearModel, RandomForestModel, read_results
from models.predict.table import HARNESS_FACTORS
from optimize.errors import CampaignDataError, OptimizeError, SearchOptionError
from sparkdl.cli import run_cli


@dataclass(frozen=True)
class EpochPrediction:
    epochs: int
    time: float  # mean of the two models
    forest: float
    regression: float
    low: float | None
    high: float | None
    fits: bool


@dataclass(frozen=True)
class EpochChoice:
    """The answer (None when even ``lower`` epochs do not fit) and every candidate's prediction."""

    epochs: int | None
    config: dict[str, object]
    budget: float
    safe: bool
    level: float | None
    largest_trained: int
    predictions: tuple[EpochPrediction, ...]

    @property
    def extrapolated(self) -> bool:
        return self.epochs is not None and self.epochs > self.largest_trained

    @property
    def chosen(self) -> EpochPrediction | None:
        return next((p for p in self.predictions if p.epochs == self.epochs), None)


def per_epoch_table(campaign: str | Path) -> pd.DataFrame:
    """One row per validated epoch of every ok run of a campaign: the run's factors with ``epochs = e`` and
    ``wall_clock_s`` = BigDL's cumulative wall clock at that epoch's validation (read from the run's log).

    A run of E epochs thus also says how long 1..E-1 epochs take with the same configuration (the same work up
    to that point; BigDL's accuracies are not bit-reproducible across runs, so only the time is meant to carry
    over); only BigDL's wall clock splits this way, not ``elapsed_s``."""
    runs = read_results(campaign)
    rows = []
    for _, run in runs.iterrows():
        log = logparse.parse(Path(campaign) / str(run["log"]), full=True)
        for v in log.validations:
            top1 = v.metric("Top1Accuracy")
            rows.append({**{c: run[c] for c in HARNESS_FACTORS if c in runs.columns}, "epochs": v.epoch,
                         "wall_clock_s": v.wall_clock_s, "accuracy": None if top1 is None else top1.value,
                         "source_run": f"{run['run']}-{run['replicate']}"})
    if not rows:
        raise CampaignDataError(f"no validated epochs in the logs of {campaign}: run the campaign first")
    return pd.DataFrame(rows)


def interpolate_in_epochs(predict, configs: pd.DataFrame, levels: Sequence[float]) -> np.ndarray:
    """``predict(configs)``, except that a row whose epochs lie strictly between two of ``levels`` (the epoch
    counts a model was trained on) gets the straight line between ``predict`` at the two levels around it, the
    row's other factors unchanged. A random forest splits epochs half-way between trained levels, so on its own
    it predicts a step there: 4 epochs between trained 3 and 5 got 3 epochs' time."""
    out = np.asarray(predict(configs), dtype=float).copy()
    levels = np.unique(np.asarray(levels, dtype=float))
    epochs = configs["epochs"].to_numpy(float)
    upper = np.searchsorted(levels, epochs, side="left")
    between = (upper > 0) & (upper < len(levels))
    between &= ~np.isin(epochs, levels)
    if between.any():
        rows = configs.loc[between].reset_index(drop=True)
        lo, hi = levels[upper[between] - 1], levels[upper[between]]
        at_lo = np.asarray(predict(rows.assign(epochs=lo.astype(configs["epochs"].dtype))), dtype=float)
        at_hi = np.asarray(predict(rows.assign(epochs=hi.astype(configs["epochs"].dtype))), dtype=float)
        share = (epochs[between] - lo) / (hi - lo)
        out[between] = at_lo + share * (at_hi - at_lo)
    return out


def largest_fitting(epochs: Sequence[int], times: Sequence[float], budget: float) -> int | None:
    """The largest epoch count whose time is <= budget (None if none is)."""
    fitting = [e for e, t in zip(epochs, times) if t <= budget]
    return max(fitting) if fitting else None


class EpochTimeModel:
    """Mean of a random forest and the order-3 ANOVA regression of time on the harness factors."""

    def __init__(self, target: str = "elapsed_s", seed: int = 0, cv_folds: int = 5, n_estimators: int = 100,
                 grid: dict[str, list[object]] | None = None, max_order: int = 3) -> None:
        self.target, self.seed, self.cv_folds = target, seed, cv_folds
        self.n_estimators, self.grid, self.max_order = n_estimators, grid, max_order
        self.residuals_: np.ndarray | None = None

    def _models(self, features: list[str], grid=None) -> tuple[RandomForestModel, LinearModel]:
        forest = RandomForestModel(target=self.target, features=features, seed=self.seed, cv_folds=self.cv_folds,
                                   n_estimators=self.n_estimators, grid=grid if grid is not None else self.grid)
        return forest, LinearModel(target=self.target, features=features, max_order=self.max_order)

    def fit(self, table: pd.DataFrame, intervals: bool = True) -> "EpochTimeModel":
        if self.target not in table.columns or "epochs" not in table.columns:
            raise CampaignDataError(f"the campaign table needs the columns epochs and {self.target}")
        if table["epochs"].nunique() < 2:
            raise CampaignDataError("the campaign never varied epochs, so no model can learn how time grows with "
                                    "them: add runs at other epoch counts")
        self.features = [c for c in HARNESS_FACTORS if c in table.columns]
        self.constants = {c: table[c].iloc[0] for c in self.features if table[c].nunique() == 1}
        self.forest, self.regression = self._models(self.features)
        self.forest.fit(table)
        self.regression.fit(table)
        self.largest_trained = int(table["epochs"].max())
        self.levels_ = np.unique(table["epochs"].to_numpy(float))
        if intervals:
            self.residuals_ = self._out_of_fold_residuals(table)
        return self

    def _out_of_fold_residuals(self, table: pd.DataFrame) -> np.ndarray:
        """Residuals of the combined model on each fold when fitted on the others (forest tuned once)."""
        tuned = {k: [v] for k, v in self.forest.best_params_.items()}
        folds = KFold(n_splits=self.cv_folds, shuffle=True, random_state=self.seed)
        out = np.empty(len(table))
        for train, test in folds.split(table):
            forest, regression = self._models(self.features, grid=tuned)
            forest.cv_folds = min(self.cv_folds, len(train) // 2)
            part = table.iloc[train]
            forest.fit(part)
            regression.fit(part)
            held = table.iloc[test]
            levels = part["epochs"].unique()
            out[test] = held[self.target].to_numpy(float) - 0.5 * (
                interpolate_in_epochs(forest.predict, held, levels) + regression.predict(held))
        return out

    def predict(self, configs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, forest, regression) predictions, one per row; the forest's interpolated in epochs between the
        trained epoch counts (:func:`interpolate_in_epochs`)."""
        forest = interpolate_in_epochs(self.forest.predict, configs, self.levels_)
        regression = self.regression.predict(configs)
        return 0.5 * (forest + regression), forest, regression

    def interval(self, prediction: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
        if self.residuals_ is None:
            raise OptimizeError("fit(table, intervals=True) first to get prediction intervals")
        lo, hi = np.quantile(self.residuals_, [(1 - level) / 2, (1 + level) / 2])
        return prediction + lo, prediction + hi


def max_epochs(model: EpochTimeModel, config: dict[str, object], budget: float, lower: int = 1, upper: int = 20,
               step: int = 1, level: float | None = 0.9, safe: bool = False) -> EpochChoice:
    """The largest epoch count in lower..upper (by step) whose predicted time (or interval top, ``safe``) fits."""
    if not (budget > 0 and math.isfinite(budget)):
        raise SearchOptionError(f"budget={budget!r} must be a positive number of seconds")
    if not (1 <= lower <= upper and step >= 1):
        raise SearchOptionError(f"need 1 <= lower <= upper and step >= 1, got {lower}, {upper}, {step}")
    if safe and level is None:
        raise SearchOptionError("safe choice needs an interval level, e.g. level=0.9")
    for column, value in model.constants.items():
        if column in config and config[column] != value:
            raise SearchOptionError(f"--fixed {column}={config[column]!r} but the campaign only ran {column}={value!r}: "
                                    "nothing can be predicted for it; use a campaign that varied it")
    config = {**model.constants, **config}
    missing = [c for c in model.features if c != "epochs" and c not in config]
    if "model" in missing:
        raise SearchOptionError("the campaign ran several jobs: name one with --job")
    if missing:
        raise SearchOptionError(f"--fixed lacks {', '.join(missing)}: give every factor the campaign varied except "
                                "epochs, e.g. model=lenet,batch_size=64")
    epochs = list(range(lower, upper + 1, step))
    configs = pd.DataFrame([{**config, "epochs": e} for e in epochs])
    mean, forest, regression = model.predict(configs)
    low, high = model.interval(mean, level) if level is not None else (None, None)
    judged = high if safe else mean
    preds = tuple(EpochPrediction(e, float(m), float(f), float(r), None if low is None else float(low[i]),
                                  None if high is None else float(high[i]), bool(judged[i] <= budget))
                  for i, (e, m, f, r) in enumerate(zip(epochs, mean, forest, regression)))
    answer = largest_fitting(epochs, judged, budget)
    return EpochChoice(answer, config, float(budget), safe, level, model.largest_trained, preds)


def parse_config(text: str) -> dict[str, object]:
    """``key=value,key=value`` with numbers as int or float."""
    out: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise SearchOptionError(f"--fixed item {part!r} is not key=value: write e.g. model=lenet,batch_size=64")
        key, value = (s.strip() for s in part.split("=", 1))
        for kind in (int, float):
            try:
                out[key] = kind(value)
                break
            except ValueError:
                continue
        else:
            out[key] = value
    return out


if __name__ == "__main__":
    from optimize.cli.epochs import main
    sys.exit(run_cli(main))
