"""Max epochs under a time budget (Schouten and Mukherjee, section V).

For a fixed job configuration, predict the time of every epoch count in ``lower..upper`` (step
``step``) as the mean of a random forest and the ANOVA regression (interactions up to order 3, as
Schouten and Mukherjee keep), both from :mod:`models.predict`, and return the largest epoch count whose predicted
time fits the budget. An interval comes with each prediction: the prediction plus the
``(1-level)/2`` and ``(1+level)/2`` quantiles of the combined model's out-of-fold residuals
(K-fold cross-validation; the coverage is approximate). ``--safe`` picks by the interval's upper end.

    sparkdl epochs runs/NAME --budget 120 --job lenet --fixed batch_size=64
    sparkdl epochs ... --confirm --out runs/NAME-confirm     # one real job at the answer

The time is the harness's ``elapsed_s`` (what a user with a budget waits for) unless ``--time``
names another column (``wall_clock_s``: BigDL's own training clock).
"""

from __future__ import annotations

import argparse
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
from optimize.errors import CampaignDataError, JobFailedError, OptimizeError, SearchOptionError
from optimize.session import ClusterOptions, JobConfig, check_job, open_session, optimizer_jobs, submit_options
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.options import (SAMPLES, add_budget, add_campaign, add_job, add_out, add_seed, cluster_options,
                             now_positional, renamed)


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
            out[test] = held[self.target].to_numpy(float) - 0.5 * (forest.predict(held) + regression.predict(held))
        return out

    def predict(self, configs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, forest, regression) predictions, one per row."""
        forest, regression = self.forest.predict(configs), self.regression.predict(configs)
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


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sparkdl epochs", description=__doc__.split("\n")[0],
                                parents=[cluster_options()])
    add_campaign(p, "the runs to learn each epoch count's time from")
    now_positional(p, "--campaign")
    add_budget(p, "the time one job may take", required=True)
    add_job(p, optimizer_jobs(), "the job whose epochs to choose (default: the campaign's, when it ran one)", default=None)
    p.add_argument("--fixed", default="", help="the job's other factors, fixed: key=value,... (nodes, batch_size...)")
    renamed(p, "--config", "--fixed")
    p.add_argument("--time", default="elapsed_s", help="time column (default elapsed_s; or wall_clock_s)")
    p.add_argument("--per-epoch", action="store_true",
                   help="learn from every validated epoch of each run's log (needs --time wall_clock_s)")
    p.add_argument("--lower", type=int, default=1, help="the fewest epochs to consider (default 1)")
    p.add_argument("--upper", type=int, default=20, help="the most epochs to consider (default 20)")
    p.add_argument("--step", type=int, default=1, help="the step between epoch counts (default 1)")
    p.add_argument("--level", type=float, default=0.9, help="interval level (default 0.9)")
    p.add_argument("--safe", action="store_true", help="choose by the interval's upper end")
    p.add_argument("--cv-folds", type=int, default=5, help="cross-validation folds of the intervals (default 5)")
    p.add_argument("--trees", type=int, default=100, help="trees per random forest (default 100)")
    add_seed(p, "the random forest and the cross-validation folds")
    p.add_argument("--confirm", action="store_true", help="run one real job at the answer and report its time")
    add_out(p, "with --confirm: the campaign folder of the confirming job")
    p.add_argument("--train-samples", type=SAMPLES, help="with --confirm: train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="with --confirm: validate on the first N digits only")
    return p


def _confirm(args: argparse.Namespace, config: dict[str, object], epochs: int) -> float:
    if args.out is None:
        raise SearchOptionError("--confirm needs --out DIR for the confirming job's campaign")
    fields = {k: config[k] for k in ("model", "nodes", "executors", "executor_cores", "batch_size", "learning_rate")
              if k in config}
    job = JobConfig(**{**fields, "epochs": epochs})  # type: ignore[arg-type]
    cluster = ClusterOptions.from_args(args)
    settings = {"optimizer": "epochs-confirm", "job": job.__dict__, "budget": args.budget,
                "train_samples": args.train_samples, "test_samples": args.test_samples}
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    on_interrupt(f"the confirming job's campaign is {args.out}; run the same command again to resume it")
    with open_session(args.out, settings, options, cluster, [job.spec(1, 1)], True, say) as session:
        result = session.run(job.spec(1, 1))
    if result.status != "ok":
        raise JobFailedError(f"the confirming job {result.status}: {result.reason} (log: {args.out / result.execution.log})")
    return float(getattr(result, args.time))


def print_choice(choice: EpochChoice, args: argparse.Namespace) -> None:
    print(f"{'epochs':>6}  {'predicted s':>11}  {'forest':>8}  {'regression':>10}  {f'{args.level:.0%} interval':>17}")
    for p in choice.predictions:
        mark = " <- chosen" if p.epochs == choice.epochs else ""
        print(f"{p.epochs:>6}  {p.time:>11.1f}  {p.forest:>8.1f}  {p.regression:>10.1f}  "
              f"{p.low:>7.1f} .. {p.high:>7.1f}  {'fits' if p.fits else 'over'}{mark}")
    chosen = choice.chosen
    if chosen is None:
        print(f"no epoch count from {args.lower} fits a budget of {args.budget:g} s")
        return
    print(f"max epochs within {args.budget:g} s: {choice.epochs} (predicted {chosen.time:.1f} s, "
          f"{args.level:.0%} interval {chosen.low:.1f} .. {chosen.high:.1f} s)")
    if choice.extrapolated:
        print(f"note: the campaign's largest epoch count is {choice.largest_trained}; beyond it the forest "
              "cannot extrapolate and the answer rests on the regression")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = parse_config(args.fixed)
    if "model" in config:
        raise SearchOptionError(f"--fixed model={config['model']}: the job is named by --job; write --job "
                                f"{config['model']} and drop model= from --fixed")
    if args.per_epoch and args.time != "wall_clock_s":
        raise SearchOptionError("--per-epoch splits BigDL's wall clock by epoch only: add --time wall_clock_s")
    table = per_epoch_table(args.campaign) if args.per_epoch else read_results(args.campaign)
    if args.job is not None:
        config["model"] = check_job(args.job)
    model = EpochTimeModel(target=args.time, seed=args.seed, cv_folds=args.cv_folds, n_estimators=args.trees).fit(table)
    choice = max_epochs(model, config, args.budget, args.lower, args.upper, args.step, args.level, args.safe)
    print_choice(choice, args)
    if args.confirm and choice.epochs is not None:
        measured = _confirm(args, choice.config, choice.epochs)
        verdict = "within" if measured <= args.budget else "OVER"
        print(f"confirming job: {args.time} = {measured:.1f} s, {verdict} the budget of {args.budget:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
