"""The multiplicative (log-linear) prediction model: its coefficients against statsmodels' OLS of the
log target, its smearing back-transform against the lognormal closed form, and its errors."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from models.errors import InvalidTableError
from models.predict.compare import MODELS, compare
from models.predict.loglinear import LogLinearModel
from models.predict.splits import random_split


def multiplicative_table(seed: int, sigma: float, reps: int = 3) -> pd.DataFrame:
    """3 x 3 x 2 levels; time = 400 * nodes^-0.8 * batch^0.3 * 1.5 [birnn] * nodes^(0.1 log2 batch) * lognormal."""
    rng = np.random.default_rng(seed)
    levels = itertools.product([1, 2, 4], [64, 128, 256], ["lenet", "birnn"])
    df = pd.DataFrame([lv for lv in levels for _ in range(reps)], columns=["nodes", "batch_size", "model"])
    log_t = (np.log(400) - 0.8 * np.log(df["nodes"]) + 0.3 * np.log(df["batch_size"])
             + np.log(1.5) * (df["model"] == "birnn") + 0.1 * np.log2(df["batch_size"]) * np.log(df["nodes"]))
    df["wall_clock_s"] = np.exp(log_t + rng.normal(0, sigma, len(df)))
    return df


def test_coefficients_equal_statsmodels_ols_of_the_log_target():
    df = multiplicative_table(seed=1, sigma=0.1)
    model = LogLinearModel().fit(df)
    reference = smf.ols("np.log(wall_clock_s) ~ (np.log2(nodes) + np.log2(batch_size) + C(model))**2", df).fit()
    new = pd.DataFrame({"nodes": [3, 1, 8], "batch_size": [100, 64, 512], "model": ["lenet", "birnn", "birnn"]})
    smearing = float(np.mean(np.exp(reference.resid)))
    np.testing.assert_allclose(model.predict(new), np.exp(reference.predict(new)) * smearing, rtol=1e-9)
    assert len(model.terms_) == len(reference.params) == 7  # 1 + 3 main + 3 two-factor interactions


def test_recovers_the_exponents_of_a_multiplicative_law():
    df = multiplicative_table(seed=2, sigma=0.02, reps=4)
    model = LogLinearModel().fit(df)
    coef = dict(zip(model.terms_, model.coef_))
    ln2 = np.log(2)  # log2(x) coefficient = ln(2) * exponent of x
    assert coef["log2(nodes)"] == pytest.approx(-0.8 * ln2, abs=0.03)
    assert coef["log2(batch_size)"] == pytest.approx(0.3 * ln2, abs=0.03)
    # 0.1 * log2(batch) * ln(nodes) = 0.1 * ln(2) * log2(batch) * log2(nodes)
    assert coef["log2(nodes):log2(batch_size)"] == pytest.approx(0.1 * ln2, abs=0.01)
    assert np.exp(coef["model[lenet]"]) == pytest.approx(1 / 1.5, rel=0.03)  # birnn is the baseline level


def test_smearing_estimates_the_lognormal_mean_factor():
    """With lognormal noise of sd sigma, E[y | x] = exp(x'b) * exp(sigma^2 / 2) (closed form)."""
    sigma = 0.5
    df = multiplicative_table(seed=3, sigma=sigma, reps=400)
    model = LogLinearModel().fit(df)
    assert model.smearing_ == pytest.approx(np.exp(sigma**2 / 2), rel=0.02)
    cell = df[(df["nodes"] == 2) & (df["batch_size"] == 128) & (df["model"] == "lenet")]
    assert model.predict(cell.iloc[:1])[0] == pytest.approx(cell["wall_clock_s"].mean(), rel=0.06)


def test_beats_the_cell_means_when_the_law_is_multiplicative_and_noisy():
    """Pooling across cells: on held-out rows the log-linear model's R^2 is above the saturated model's
    (the cell means, `linear` with all interactions), on average over 20 random splits of 20 tables."""
    splits = [random_split(multiplicative_table(seed=seed, sigma=0.3, reps=3), seed=seed) for seed in range(20)]
    result = compare(splits, "wall_clock_s", ["linear", "loglinear"], level=None)
    mean = {name: np.mean([r.r2 for r in result.rows if r.model == name]) for name in ("linear", "loglinear")}
    assert mean["loglinear"] > mean["linear"] + 0.03  # 0.314 against 0.268


def test_refuses_a_target_that_is_not_positive():
    df = multiplicative_table(seed=4, sigma=0.1)
    df.loc[3, "wall_clock_s"] = 0.0
    with pytest.raises(InvalidTableError, match="positive target.*'wall_clock_s'"):
        LogLinearModel().fit(df)


def test_refuses_a_non_positive_value_of_a_log_factor_at_prediction():
    model = LogLinearModel().fit(multiplicative_table(seed=5, sigma=0.1))
    with pytest.raises(InvalidTableError, match="'nodes'.*log2"):
        model.predict(pd.DataFrame({"nodes": [0], "batch_size": [64], "model": ["lenet"]}))


def test_a_factor_with_non_positive_values_enters_standardized():
    df = multiplicative_table(seed=6, sigma=0.05)
    df["offset"] = np.tile([-1.0, 0.0, 1.0], len(df) // 3)
    model = LogLinearModel(features=["nodes", "batch_size", "offset"], max_order=1).fit(df)
    assert "z(offset)" in model.terms_ and "log2(nodes)" in model.terms_


def test_is_one_of_the_compared_models():
    assert "loglinear" in MODELS
