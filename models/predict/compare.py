"""Fit every model on every split and collect the comparison (used by the CLI and bench/predict.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from models.errors import InvalidTableError, ModelError
from models.predict._base import Predictor
from models.predict.ernest import ErnestModel
from models.predict.generic import PowerLawFit, PowerLawModel
from models.predict.linear import LinearModel
from models.predict.splits import Split, extrapolation_split, random_split
from models.predict.table import with_derived
from models.predict.trees import GradientBoostingModel, RandomForestModel

#: Model name -> factory(target, seed).
MODELS: dict[str, Callable[[str, int], Predictor]] = {
    "linear": lambda target, seed: LinearModel(target),
    "rf": lambda target, seed: RandomForestModel(target, seed=seed),
    "gb": lambda target, seed: GradientBoostingModel(target, seed=seed),
    "generic": lambda target, seed: PowerLawModel(target, seed=seed),
    "ernest": lambda target, seed: ErnestModel(target),
}
SPLITS: tuple[str, ...] = ("random", "extrapolate")


@dataclass(frozen=True)
class ComparisonRow:
    """One model on one split; ``error`` is set (and the metrics are NaN) when the fit failed."""

    model: str
    split: str
    n_train: int
    n_test: int
    r2: float
    mape: float
    mse: float
    fit_seconds: float
    error: str | None = None


@dataclass(frozen=True)
class Comparison:
    """All rows, each split's description, and the generic model's fit per split."""

    target: str
    rows: tuple[ComparisonRow, ...]
    splits: dict[str, str]
    generic_fits: dict[str, PowerLawFit] = field(default_factory=dict)


def parse_models(spec: str) -> list[str]:
    """'all' or a comma-separated subset of MODELS, in the order given."""
    if spec.strip() == "all":
        return list(MODELS)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown or not names:
        raise InvalidTableError(f"unknown models {unknown}; choose from all, {', '.join(MODELS)}")
    return names


def default_size_column(table: pd.DataFrame) -> str:
    """Column the extrapolation split sorts by: parallelism m, else seed 004's processes."""
    derived = with_derived(table)
    for column in ("parallelism", "processes"):
        if column in derived.columns:
            return column
    raise InvalidTableError("no parallelism column to extrapolate on: pass --extrapolate-by COLUMN")


def make_splits(
    table: pd.DataFrame, kinds: Sequence[str], seed: int = 0, by: str | None = None, test_fraction: float = 0.2
) -> list[Split]:
    """The requested splits of ``table`` ('random' and/or 'extrapolate')."""
    splits = []
    for kind in kinds:
        if kind == "random":
            splits.append(random_split(table, test_fraction, seed))
        elif kind == "extrapolate":
            splits.append(extrapolation_split(table, by or default_size_column(table), test_fraction))
        else:
            raise InvalidTableError(f"unknown split {kind!r}; choose from {', '.join(SPLITS)}")
    return splits


def compare(table_splits: Sequence[Split], target: str, models: Sequence[str], seed: int = 0,
            measured: Sequence[str] = ()) -> Comparison:
    """Fit each model on each split's train table and evaluate it on the test table; ``measured``
    columns are inputs beside the factors for the models that take them (the tree models)."""
    rows: list[ComparisonRow] = []
    fits: dict[str, PowerLawFit] = {}
    for split in table_splits:
        for name in models:
            model = MODELS[name](target, seed)
            model.measured = list(measured)
            start = time.perf_counter()
            try:
                model.fit(split.train)
                elapsed = time.perf_counter() - start
                result = model.evaluate(split.test)
            except ModelError as exc:
                nan = float("nan")
                rows.append(ComparisonRow(name, split.kind, len(split.train), len(split.test), nan, nan, nan,
                                          time.perf_counter() - start, str(exc)))
                continue
            rows.append(ComparisonRow(name, split.kind, len(split.train), len(split.test),
                                      result.r2, result.mape, result.mse, elapsed))
            if isinstance(model, PowerLawModel) and model.fit_ is not None:
                fits[split.kind] = model.fit_
    return Comparison(target, tuple(rows), {s.kind: s.description for s in table_splits}, fits)
