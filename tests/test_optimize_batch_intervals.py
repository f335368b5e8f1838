"""optimize.batch prints each prediction with its CV+ interval."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from models.predict import RandomForestModel
from models.predict.intervals import ConformalPredictor
from optimize.batch import Courier
from optimize.cli.batch import main
from sparkdl.cli import run_cli

FAST = dict(cv_folds=3, n_estimators=30, grid={"max_depth": [None], "max_features": [1.0]})
TIME = {64: 283.0, 128: 200.0, 256: 141.0, 512: 100.0}
ACCURACY = {64: 0.95, 128: 0.93, 256: 0.90, 512: 0.85}


def noisy_table(seed: int = 0, reps: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [dict(batch=b, cpus=c, njobs=j, network="lenet", time=TIME[b] * j / c * np.exp(rng.normal(0, 0.1)),
                 accuracy=ACCURACY[b] + rng.normal(0, 0.01))
            for b, c, j, _ in itertools.product(TIME, (1, 2), (1, 2), range(reps))]
    return pd.DataFrame(rows)


def test_courier_intervals_are_those_of_a_conformal_forest_fitted_alone():
    """The intervals Courier attaches equal CV+ on a forest built by hand with the same options and seed."""
    table = noisy_table()
    courier = Courier(seed=2, level=0.8, interval_folds=4, **FAST).fit(table)
    job, batches = {"cpus": 1, "njobs": 2, "network": "lenet"}, [64, 128, 256, 512]
    choice = courier.choose(job, slo=500, batches=batches)
    features = ["batch", "cpus", "njobs", "network", "processes"]
    make = lambda: RandomForestModel(target="time", features=features, seed=2, **FAST)  # noqa: E731
    alone = ConformalPredictor(make, 0.8, 4, seed=2).fit(table)
    expected = alone.interval(pd.DataFrame([{**job, "batch": b} for b in batches]))
    got = np.array([c.time_interval for c in choice.candidates])
    np.testing.assert_allclose(got[:, 0], expected.low)
    np.testing.assert_allclose(got[:, 1], expected.high)
    assert all(lo <= c.time <= hi for c, (lo, hi) in zip(choice.candidates, got))
    assert all(c.accuracy_interval[0] < c.accuracy_interval[1] for c in choice.candidates)


def test_without_a_level_no_intervals_are_fitted():
    courier = Courier(seed=0, **FAST).fit(noisy_table())
    choice = courier.choose({"cpus": 1, "njobs": 1, "network": "lenet"}, slo=250)
    assert courier.conformal_ == {} and all(c.time_interval is None for c in choice.candidates)


def test_cli_prints_the_intervals_and_warns_when_the_chosen_one_reaches_past_the_slo(tmp_path, capsys):
    path = tmp_path / "courier.csv"
    noisy_table().to_csv(path, index=False)
    base = [str(path), "--cpus", "1", "--njobs", "1", "--job", "lenet", "--cv-folds", "3",
            "--trees", "30"]
    assert run_cli(main, [*base, "--slo", "400"]) == 0
    out = capsys.readouterr().out
    assert "90% PI" in out and out.count("[") >= 8 and "may be missed" not in out
    assert run_cli(main, [*base, "--slo", "101"]) == 0  # batch 512 predicted near 100 s: its interval reaches past
    out = capsys.readouterr().out
    assert "may be missed" in out
