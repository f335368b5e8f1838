"""The noise ceiling, CV+ prediction intervals, the warnings, and the Extra-P
normal form of Kavarakuntla 2024's model, each against an independent computation."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from models.errors import InvalidTableError
from models.predict import PowerLawModel, RandomForestModel
from models.predict._base import Predictor
from models.predict.ceiling import noise_ceiling
from models.predict.cli import main
from models.predict.compare import MODELS, compare
from models.predict.flags import predictions_outside
from models.predict.generic import EXTRINSIC_EXPONENTS
from models.predict.intervals import ConformalPredictor, cv_plus_ends, empirical_coverage
from models.predict.splits import Split, extrapolation_split, random_split
from sparkdl.cli import run_cli

SMALL_RF = {"max_depth": [None], "max_features": [1.0]}


class OlsModel(Predictor):
    """Ordinary least squares on numeric columns with numpy (fast, for simulations)."""

    name = "ols"
    min_rows = 2

    def default_features(self, table: pd.DataFrame) -> list[str]:
        return [c for c in table.columns if c != self.target]

    def _fit(self, table: pd.DataFrame, y: np.ndarray) -> None:
        self.beta_ = np.linalg.lstsq(self._x(table), y, rcond=None)[0]

    def _x(self, table: pd.DataFrame) -> np.ndarray:
        return np.column_stack([np.ones(len(table))] + [table[c].to_numpy(dtype=float) for c in self.features_])

    def _predict(self, configs: pd.DataFrame) -> np.ndarray:
        return self._x(configs) @ self.beta_


def linear_data(rng: np.random.Generator, n: int, sigma: float = 1.0) -> pd.DataFrame:
    x = rng.uniform(0, 10, n)
    return pd.DataFrame({"x": x, "y": 3.0 + 2.0 * x + rng.normal(0, sigma, n)})


def replicated_table(seed: int = 0, sigma: float = 0.2, reps=(1, 2, 3, 4)) -> pd.DataFrame:
    """A 2^3 design, each point replicated a varying number of times, multiplicative effects + noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, (a, b, c) in enumerate(itertools.product([1, 4], [1, 2], [64, 256])):
        for _ in range(reps[k % len(reps)]):
            rows.append({"nodes": a, "executors": b, "batch_size": c,
                         "cost": 10.0 / a + 2.0 * b + c / 64 + rng.normal(0, sigma * 4)})
    return pd.DataFrame(rows)


# --- the noise ceiling ------------------------------------------------------------------------


def test_ceiling_is_the_r2_of_a_regression_on_the_cells():
    """statsmodels' OLS on one dummy per design point gives R^2 and adjusted R^2 of the cell means."""
    df = replicated_table(seed=1)
    ceiling = noise_ceiling(df, "cost", ["nodes", "executors", "batch_size"])
    ols = smf.ols("cost ~ C(nodes):C(executors):C(batch_size)", data=df).fit()
    assert ceiling.n_cells == 8 and ceiling.n_replicated_cells == 6 and ceiling.known
    assert ceiling.r2 == pytest.approx(ols.rsquared, rel=1e-10)
    assert ceiling.adjusted_r2 == pytest.approx(ols.rsquared_adj, rel=1e-10)
    groups = [g["cost"].to_numpy() for _, g in df.groupby(["nodes", "executors", "batch_size"]) if len(g) > 1]
    assert ceiling.replicate_cv == pytest.approx(np.mean([np.std(g, ddof=1) / np.mean(g) for g in groups]))
    assert ceiling.share(ceiling.r2 / 2) == pytest.approx(0.5)


def test_adjusted_ceiling_estimates_the_r2_of_the_true_means():
    """Simulation: with true cell means mu and noise sigma, 1 - sigma^2/(var(mu) + sigma^2) is what the
    true means score on new rows; the adjusted ceiling estimates it, the plain one is above it."""
    rng = np.random.default_rng(2)
    mu = rng.normal(0, 1, 16)
    sigma = 0.8
    truth = 1 - sigma**2 / (np.var(mu) + sigma**2)
    plain, adjusted = [], []
    for _ in range(400):
        cells = np.repeat(np.arange(16), 5)
        df = pd.DataFrame({"cell": cells, "y": mu[cells] + rng.normal(0, sigma, cells.size)})
        c = noise_ceiling(df, "y", ["cell"])
        plain.append(c.r2)
        adjusted.append(c.adjusted_r2)
    assert np.mean(adjusted) == pytest.approx(truth, abs=0.01)
    assert np.mean(plain) > truth + 0.02


def test_no_ceiling_without_replicates():
    df = replicated_table(reps=(1,))
    ceiling = noise_ceiling(df, "cost", ["nodes", "executors", "batch_size"])
    assert not ceiling.known and np.isnan(ceiling.r2) and np.isnan(ceiling.share(0.5))
    assert "not known" in ceiling.describe()


# --- CV+ intervals ----------------------------------------------------------------------------


def test_jackknife_plus_matches_the_closed_form_leave_one_out_of_ols():
    """K = n folds is the jackknife+: the leave-one-out fits of OLS have a closed form,
    beta_-i = beta - (X'X)^-1 x_i e_i / (1 - h_ii), so the interval ends follow without refitting."""
    rng = np.random.default_rng(3)
    train, new = linear_data(rng, 30), linear_data(rng, 7)
    got = ConformalPredictor(lambda: OlsModel("y"), level=0.8, folds=len(train), seed=0).fit(train).interval(new)
    x = np.column_stack([np.ones(len(train)), train["x"]])
    y = train["y"].to_numpy()
    xtx_inv = np.linalg.inv(x.T @ x)
    beta = xtx_inv @ x.T @ y
    e = y - x @ beta
    h = np.einsum("ij,jk,ik->i", x, xtx_inv, x)
    loo_beta = beta[None, :] - (xtx_inv @ x.T).T * (e / (1 - h))[:, None]
    r = np.abs(e) / (1 - h)
    mu = loo_beta @ np.column_stack([np.ones(len(new)), new["x"]]).T  # (n, m)
    n, alpha = len(train), 0.2
    low = np.sort(mu - r[:, None], axis=0)[int(np.floor(alpha * (n + 1))) - 1]
    high = np.sort(mu + r[:, None], axis=0)[int(np.ceil((1 - alpha) * (n + 1))) - 1]
    np.testing.assert_allclose(got.low, low, rtol=1e-9)
    np.testing.assert_allclose(got.high, high, rtol=1e-9)


def test_cv_plus_covers_at_the_nominal_level_and_is_as_wide_as_the_normal_interval():
    """Simulation: Gaussian noise, 5-fold CV+ at 90 %: mean coverage near 0.9 and mean width near the
    normal 2 * z_0.95 * sigma."""
    rng = np.random.default_rng(4)
    coverage, width = [], []
    for _ in range(150):
        train, test = linear_data(rng, 80), linear_data(rng, 100)
        intervals = ConformalPredictor(lambda: OlsModel("y"), level=0.9, folds=5).fit(train).interval(test)
        coverage.append(intervals.coverage(test["y"].to_numpy()))
        width.append(intervals.mean_width())
    assert np.mean(coverage) == pytest.approx(0.9, abs=0.015)
    assert np.mean(width) == pytest.approx(2 * stats.norm.ppf(0.95), rel=0.08)


def test_cv_plus_ends_are_infinite_when_n_is_too_small_for_the_level():
    low, high = cv_plus_ends(np.zeros((5, 2)), np.ones(5), 0.9)  # ceil(0.9 * 6) = 6 > 5
    assert np.isinf(high).all() and np.isinf(low).all() and (low < 0).all()
    low, high = cv_plus_ends(np.zeros((19, 1)), np.arange(1.0, 20.0), 0.9)  # ranks 2 and 18 of 19
    assert (low[0], high[0]) == (-18.0, 18.0)


def test_coverage_counts_the_ends_and_rejects_bad_levels():
    assert empirical_coverage(np.array([0.0, 1.0, 2.0, 3.0]), np.zeros(4), np.full(4, 2.0)) == 0.75
    with pytest.raises(InvalidTableError, match="level"):
        ConformalPredictor(lambda: OlsModel("y"), level=90)


# --- warnings ----------------------------------------------------------------------------------


def test_free_exponents_on_their_bounds_are_flagged_and_their_reading_withheld():
    m = np.array([1, 2, 4, 8, 16] * 4, dtype=float)
    df = pd.DataFrame({"m": m, "t": 100.0 * m**-1.0 + 5.0})
    fit = PowerLawModel("t", intrinsic=[], extrinsic=["m"], seed=0, search="de",
                        power_bounds=(-0.5, 0.5)).fit(df).fit_
    assert fit is not None and fit.exponents["m"] == pytest.approx(-0.5, abs=0.01)
    assert fit.degenerate and "q[m]" in fit.problems[0]
    assert len(fit.scaling_notes()) == 1 and fit.scaling_notes()[0].startswith("reading withheld")


def test_normal_form_recovers_exponents_on_its_grid_with_a_log_factor():
    """t = 3 e^1 * b^-0.5 * m^-1 * log2(m) + 7 with m > 1: the cross-validated search finds each exponent."""
    rng = np.random.default_rng(5)
    levels = itertools.product([1, 2, 3, 4], [64, 128, 256, 512], [2, 4, 8, 16, 32])
    df = pd.DataFrame(list(levels), columns=["epochs", "batch_size", "nodes"])
    b, m = df["batch_size"] / 64.0, df["nodes"].astype(float)
    df["t"] = (3 * df["epochs"] * b**-0.5 * m**-1.0 * np.log2(m) + 7) * np.exp(rng.normal(0, 0.01, len(df)))
    model = PowerLawModel("t", intrinsic=["epochs"], extrinsic=["batch_size", "nodes"], seed=0).fit(df)
    fit = model.fit_
    assert fit is not None and fit.search == "normal-form" and not fit.degenerate
    assert fit.exponents == {"batch_size": -0.5, "nodes": -1.0} and fit.logs == {"nodes": 1}
    assert fit.terms[0].p == 1.0 and fit.constant == pytest.approx(7, rel=0.05)
    assert "log2(nodes)^1" in fit.formula()


def test_normal_form_exponent_at_the_end_of_its_set_is_flagged():
    m = np.array([1, 2, 4, 8] * 5, dtype=float)
    df = pd.DataFrame({"m": m, "t": 1000.0 * m**-4.0 + 1.0})
    fit = PowerLawModel("t", intrinsic=[], extrinsic=["m"], seed=0).fit(df).fit_
    assert fit is not None and fit.exponents["m"] == min(EXTRINSIC_EXPONENTS)
    assert fit.degenerate and "end of the exponent set" in fit.problems[0]


def test_predictions_outside_the_training_target_range():
    assert predictions_outside(np.array([1.0, 2.0]), np.array([1.5, 1.9]), "t") == []
    message = predictions_outside(np.array([1.0, 2.0]), np.array([1.5, 900.0, -3.0]), "t")[0]
    assert message.startswith("2 of 3 predictions") and "900" in message


def harness_replicated(seed: int = 0) -> pd.DataFrame:
    """A 2^4 design of harness factors, 4 replicates, times with 10 % noise."""
    rng = np.random.default_rng(seed)
    levels = itertools.product([1, 4], [1, 2], [1, 2], [64, 256])
    df = pd.DataFrame(list(levels) * 4, columns=["nodes", "executors", "executor_cores", "batch_size"])
    m = (df["nodes"] * df["executors"] * df["executor_cores"]).to_numpy(dtype=float)
    df["epochs"], df["model"], df["status"] = 2, "lenet", "ok"
    df["wall_clock_s"] = (20 + 600 / m + 2000 / df["batch_size"]) * np.exp(rng.normal(0, 0.1, len(df)))
    return df


def test_compare_flags_extrapolation_one_level_inputs_and_reports_ceiling_and_coverage(monkeypatch):
    monkeypatch.setitem(MODELS, "rf", lambda t, s: RandomForestModel(t, grid=SMALL_RF, n_estimators=20, seed=s))
    df = harness_replicated()
    one_level = df[df["executors"] == 1]
    splits = [random_split(df, 0.25, seed=0), extrapolation_split(df),
              Split("custom", one_level.reset_index(drop=True), df.head(8).reset_index(drop=True), "executors 1")]
    result = compare(splits, "wall_clock_s", ["rf", "ernest"], seed=0, level=0.8, interval_folds=4)
    rows = {(r.model, r.split): r for r in result.rows}
    expected = noise_ceiling(df, "wall_clock_s", ["nodes", "executors", "executor_cores", "epochs", "batch_size"])
    assert result.ceiling is not None and result.ceiling.r2 == pytest.approx(expected.r2)
    # Ernest's 4 coefficients are not identified by the extrapolate split's 3 training levels of m (1, 2, 4)
    assert rows[("ernest", "extrapolate")].not_identified.startswith("not identified")
    for r in (r for r in result.rows if not r.not_identified):
        assert r.r2_share_of_ceiling == pytest.approx(r.r2 / expected.r2)
        assert 0 <= r.coverage <= 1 and r.interval_level == 0.8
    assert "outside the training range of parallelism" in rows[("rf", "extrapolate")].warning
    assert "one level in the training rows" in rows[("rf", "custom")].warning
    assert "executors" in rows[("rf", "custom")].warning
    assert all((r.r2 < 0) == ("R^2" in (r.warning or "")) for r in result.rows if not r.not_identified)
    random_rows = [r for r in result.rows if r.split == "random"]
    assert all(r.warning is None or "outside the training range of parallelism" not in r.warning for r in random_rows)


def test_cli_json_states_the_ceiling_and_coverage(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(MODELS, "rf", lambda t, s: RandomForestModel(t, grid=SMALL_RF, n_estimators=20, seed=s))
    df = harness_replicated(seed=1)
    df.to_csv(tmp_path / "results.csv", index=False)
    factors = "nodes,executors,executor_cores,batch_size"
    assert run_cli(main, [str(tmp_path), "--factors", factors, "--models", "rf,generic", "--format", "json"]) in (0, 3)
    payload = json.loads(capsys.readouterr().out)
    cells = df.groupby(factors.split(","))["wall_clock_s"]
    y = df["wall_clock_s"]
    independent = 1 - ((y - cells.transform("mean")) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert payload["noise_ceiling_r2"] == pytest.approx(independent)
    assert payload["noise_ceiling"]["n_replicated_cells"] == 16
    for row in payload["rows"]:
        assert 0 <= row["coverage"] <= 1 and row["interval_level"] == 0.9
        assert row["r2_share_of_ceiling"] == pytest.approx(row["r2"] / independent)
    flagged = [r for r in payload["rows"] if r["r2"] < 0]
    assert all(r["warning"] and "R^2" in r["warning"] for r in flagged)
    assert run_cli(main, [str(tmp_path), "--models", "rf", "--level", "1.5"]) == 2
    assert "level" in capsys.readouterr().err


def test_cli_text_says_when_no_ceiling_is_known(tmp_path, capsys):
    df = harness_replicated().drop_duplicates(["nodes", "executors", "executor_cores", "batch_size"])
    df.to_csv(tmp_path / "results.csv", index=False)
    assert run_cli(main, [str(tmp_path), "--models", "ernest", "--split", "random", "--no-intervals"]) == 0
    out = capsys.readouterr().out
    assert "noise ceiling: not known" in out
