"""Tests for models.predict: each model against an independent computation or a known truth."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import nnls
from sklearn.metrics import mean_absolute_percentage_error, mean_squared_error, r2_score

from models.errors import (
    InvalidTableError,
    MissingColumnError,
    NotFittedError,
    ResultsNotFoundError,
    TooFewRowsError,
)
from models.predict import (
    ErnestModel,
    GradientBoostingModel,
    LinearModel,
    PowerLawModel,
    RandomForestModel,
    describe_exponent,
    evaluation,
    extrapolation_split,
    random_split,
    read_results,
)
from models.predict.cli import main
from models.predict.compare import compare, make_splits
from models.predict.table import measured_columns
from models.predict.compare import MODELS
from sparkdl.cli import run_cli


def cli(argv):
    """The command as a user runs it: errors become one line and an exit code."""
    return run_cli(main, argv)


# --- synthetic tables ---------------------------------------------------------------------------

#: Parameters of the generic model the synthetic harness table is drawn from.
TRUTH = {
    "a_epochs": 30.0, "p_epochs": 1.0, "a_level": {"birnn": 80.0, "lenet": 20.0},
    "q": {"batch_size": -0.3, "nodes": -0.9, "executors": -0.7, "executor_cores": -0.5}, "C": 25.0,
}
SMALL_RF = {"max_depth": [None], "max_features": [1.0]}
SMALL_GB = {"n_estimators": [50], "max_depth": [3]}


def truth_time(df: pd.DataFrame) -> np.ndarray:
    """t = (a e^p + a_net) * prod E^q + C with TRUTH's parameters."""
    work = TRUTH["a_epochs"] * df["epochs"] ** TRUTH["p_epochs"] + df["model"].map(TRUTH["a_level"])
    scale = np.prod([df[c] ** q for c, q in TRUTH["q"].items()], axis=0)
    return np.asarray(work * scale + TRUTH["C"], dtype=float)


def harness_table(seed: int = 0, noise: float = 0.01) -> pd.DataFrame:
    """A 192-run full factorial in the harness's column layout, times from TRUTH with lognormal noise."""
    rng = np.random.default_rng(seed)
    levels = itertools.product(["lenet", "birnn"], [1, 2, 4], [1, 2], [1, 3], [1, 2, 4, 8], [64, 256])
    df = pd.DataFrame(list(levels), columns=["model", "nodes", "executors", "executor_cores", "epochs", "batch_size"])
    df["learning_rate"] = 0.01
    df["wall_clock_s"] = truth_time(df) * np.exp(rng.normal(0.0, noise, len(df)))
    return df


# --- metrics ------------------------------------------------------------------------------------


def test_metrics_match_sklearn():
    rng = np.random.default_rng(1)
    y = rng.uniform(10, 100, 50)
    yhat = y + rng.normal(0, 5, 50)
    ev = evaluation(y, yhat)
    assert ev.n == 50
    assert ev.mse == pytest.approx(mean_squared_error(y, yhat), rel=1e-12)
    assert ev.r2 == pytest.approx(r2_score(y, yhat), rel=1e-12)
    assert ev.mape == pytest.approx(mean_absolute_percentage_error(y, yhat), rel=1e-12)


@pytest.mark.filterwarnings("error")
def test_metrics_of_huge_figures_do_not_overflow():
    """R^2 and MAPE are scale-free: figures near 1e200 give sklearn's values for the same figures scaled down."""
    rng = np.random.default_rng(2)
    y = rng.uniform(10, 100, 30)
    yhat = y + rng.normal(0, 5, 30)
    ev = evaluation(y * 1e200, yhat * 1e200)
    assert ev.r2 == pytest.approx(r2_score(y, yhat), rel=1e-9)
    assert ev.mape == pytest.approx(mean_absolute_percentage_error(y, yhat), rel=1e-9)
    assert ev.mse == np.inf  # (5e200)^2 is beyond a float
    assert evaluation(y * 1e150, yhat * 1e150).mse == pytest.approx(mean_squared_error(y, yhat) * 1e300, rel=1e-9)


def test_r2_is_nan_for_constant_observations():
    assert np.isnan(evaluation(np.ones(4), np.arange(4.0)).r2)


# --- generic power-law model (Kavarakuntla 2024) -----------------------------------------------------------


def test_differential_evolution_recovers_the_exponents():
    df = harness_table()
    fit = PowerLawModel(seed=3, search="de").fit(df).fit_
    assert fit is not None and fit.converged and not fit.degenerate
    for column, q in TRUTH["q"].items():
        assert fit.exponents[column] == pytest.approx(q, abs=0.05), column
    epochs = next(t for t in fit.terms if t.column == "epochs")
    assert epochs.p == pytest.approx(TRUTH["p_epochs"], abs=0.08)
    assert fit.constant == pytest.approx(TRUTH["C"], rel=0.15)


def test_power_law_fit_is_at_least_as_good_as_the_truth():
    """A global optimizer of the MAE must not end above the MAE of the generating parameters."""
    df = harness_table(seed=4, noise=0.05)
    model = PowerLawModel(seed=0, search="de").fit(df)
    y = df["wall_clock_s"].to_numpy()
    mae_fit = np.mean(np.abs(y - model.predict(df)))
    mae_truth = np.mean(np.abs(y - truth_time(df)))
    assert mae_fit <= mae_truth * 1.001


@pytest.mark.parametrize("search", ["de", "normal-form"])
def test_reported_parameters_reproduce_the_predictions(search):
    """The fit's a, p, q, log powers and C (in target units) plugged into the formula by hand give predict()."""
    df = harness_table(seed=5, noise=0.05)
    model = PowerLawModel(seed=1, search=search).fit(df)
    fit = model.fit_
    assert fit is not None
    work = np.zeros(len(df))
    for term in fit.terms:
        if term.p is not None:
            x = df[term.column].to_numpy(dtype=float)
            work += term.a * x**term.p * np.log2(x) ** term.log
        else:
            work += term.a * (df[term.column].astype(str) == term.level).to_numpy()
    scale = np.prod([df[c].to_numpy(dtype=float) ** q * np.log2(df[c].to_numpy(dtype=float)) ** fit.logs.get(c, 0)
                     for c, q in fit.exponents.items()], axis=0)
    np.testing.assert_allclose(work * scale + fit.constant, model.predict(df), rtol=1e-9)


def test_l2_penalty_shrinks_the_exponents():
    df = harness_table(seed=6)
    plain = PowerLawModel(seed=0, search="de").fit(df).fit_
    shrunk = PowerLawModel(seed=0, search="de", penalty="l2", alpha=1.0).fit(df).fit_
    assert plain is not None and shrunk is not None
    assert sum(abs(q) for q in shrunk.exponents.values()) < sum(abs(q) for q in plain.exponents.values())


@pytest.mark.parametrize("search", ["de", "normal-form"])
def test_power_law_with_only_extrinsic_inputs_uses_a_constant_term(search):
    m = np.array([1, 2, 4, 8, 16] * 4, dtype=float)
    df = pd.DataFrame({"m": m, "t": 100.0 * m**-1.0 + 5.0})
    fit = PowerLawModel("t", intrinsic=[], extrinsic=["m"], seed=0, search=search).fit(df).fit_
    assert fit is not None
    assert fit.exponents["m"] == pytest.approx(-1.0, abs=0.01)
    assert [t.column for t in fit.terms] == ["1"] and fit.terms[0].a == pytest.approx(100.0, rel=0.02)


def test_power_law_rejects_non_positive_inputs():
    df = harness_table()
    df.loc[0, "nodes"] = 0
    with pytest.raises(InvalidTableError, match="nodes"):
        PowerLawModel().fit(df)


def test_describe_exponent():
    assert "near-ideal" in describe_exponent("nodes", -1.0)
    assert "0.500" in describe_exponent("nodes", -1.0)
    assert "sublinear" in describe_exponent("nodes", -0.73)  # Kavarakuntla 2024 calls -0.73 "less than -1": it is not
    assert "slower" in describe_exponent("nodes", 0.4)


# --- Ernest -------------------------------------------------------------------------------------


def ernest_table(theta: dict[str, np.ndarray], seed: int = 0, noise: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for network, th in theta.items():
        nodes, executors, cores = np.meshgrid([1, 2, 4], [1, 2], [1, 2, 4], indexing="ij")
        df = pd.DataFrame({"nodes": nodes.ravel(), "executors": executors.ravel(), "executor_cores": cores.ravel()})
        df = pd.concat([df.assign(epochs=e) for e in (2, 5)], ignore_index=True)
        df["model"] = network
        m = (df["nodes"] * df["executors"] * df["executor_cores"]).to_numpy(dtype=float)
        design = np.column_stack([np.ones_like(m), df["epochs"] / m, np.log(m), m])
        df["wall_clock_s"] = design @ th + rng.normal(0, noise, len(df))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def test_ernest_recovers_non_negative_coefficients_and_matches_scipy_nnls():
    """Ernest's own fit: NNLS on the times, features 1, s/m, log m, m (s = epochs here, named as the work)."""
    theta = np.array([20.0, 300.0, 0.0, 1.5])
    df = ernest_table({"lenet": theta}, noise=0.5)
    model = ErnestModel(work="epochs").fit(df)
    np.testing.assert_allclose(model.fit_.theta, theta, atol=1.0)
    m = (df["nodes"] * df["executors"] * df["executor_cores"]).to_numpy(dtype=float)
    design = np.column_stack([np.ones_like(m), df["epochs"] / m, np.log(m), m])
    np.testing.assert_allclose(model.fit_.theta, nnls(design, df["wall_clock_s"].to_numpy())[0], rtol=1e-10)


def test_ernest_solution_satisfies_the_nnls_optimality_conditions():
    """KKT: x >= 0, gradient A^T(Ax - b) >= 0, and zero where x > 0 (checked without scipy)."""
    theta = np.array([50.0, 100.0, 0.0, 0.0])  # the last two pull negative under noise
    df = ernest_table({"lenet": theta}, seed=7, noise=5.0)
    x = ErnestModel(work="epochs").fit(df).fit_.theta
    m = (df["nodes"] * df["executors"] * df["executor_cores"]).to_numpy(dtype=float)
    a = np.column_stack([np.ones_like(m), df["epochs"] / m, np.log(m), m])
    grad = a.T @ (a @ x - df["wall_clock_s"].to_numpy())
    assert (x >= 0).all()
    assert (grad >= -1e-6 * np.abs(a.T @ df["wall_clock_s"].to_numpy()).max()).all()
    np.testing.assert_allclose(grad[x > 1e-9], 0.0, atol=1e-6 * np.abs(grad).max() + 1e-6)
    assert (x == 0).any()  # the constraint is active in this case, so nnls differs from lstsq


def test_ernest_with_a_network_column_fits_one_shape_each_network_its_level():
    """One Ernest: the other factors multiply the curve, as they do every scaling curve's."""
    theta = np.array([10.0, 100.0, 2.0, 0.5])
    model = ErnestModel(work="epochs").fit(ernest_table({"lenet": theta, "birnn": 3 * theta}))
    df = ernest_table({"lenet": theta, "birnn": 3 * theta})
    np.testing.assert_allclose(model.predict(df), df["wall_clock_s"], rtol=1e-6)


# --- ANOVA-linear model ---------------------------------------------------------------------------


def interaction_design(df: pd.DataFrame, numeric: list[str], dummy: np.ndarray) -> np.ndarray:
    """Raw-unit design: every product of a subset of the numeric columns, times (1, dummy)."""
    columns = []
    for k in range(len(numeric) + 1):
        for subset in itertools.combinations(numeric, k):
            base = np.prod([df[c].to_numpy(dtype=float) for c in subset], axis=0) if subset else np.ones(len(df))
            columns += [base, base * dummy]
    return np.column_stack(columns)


def test_linear_model_matches_numpy_lstsq_on_all_interactions():
    rng = np.random.default_rng(2)
    levels = itertools.product([1, 2, 4], [64, 128, 256], [2, 5, 10], ["lenet", "birnn"])
    df = pd.DataFrame(list(levels), columns=["nodes", "batch_size", "epochs", "model"])
    df = pd.concat([df, df], ignore_index=True)
    df["wall_clock_s"] = 100 * df["epochs"] / df["nodes"] + 0.1 * df["batch_size"] + rng.normal(0, 3, len(df))
    model = LinearModel().fit(df)
    assert model.n_terms == 16 and model.rank == 16
    numeric = ["nodes", "batch_size", "epochs"]
    x = interaction_design(df, numeric, (df["model"] == "lenet").to_numpy(dtype=float))
    beta = np.linalg.lstsq(x, df["wall_clock_s"].to_numpy(), rcond=None)[0]
    new = pd.DataFrame({"nodes": [3, 1.5], "batch_size": [100, 200], "epochs": [7, 3], "model": ["lenet", "birnn"]})
    x_new = interaction_design(new, numeric, (new["model"] == "lenet").to_numpy(dtype=float))
    np.testing.assert_allclose(model.predict(new), x_new @ beta, rtol=1e-8)


def test_linear_model_on_an_aliased_fraction_gives_the_least_squares_fitted_values():
    """2^(4-1) design with all 16 terms: rank 8; fitted values are still the unique projection."""
    base = np.array(list(itertools.product([-1, 1], repeat=3)), dtype=float)
    d = base.prod(axis=1)
    df = pd.DataFrame({"a": base[:, 0] + 3, "b": base[:, 1] + 3, "c": base[:, 2] + 3, "d": d + 3})
    df["y"] = np.random.default_rng(3).normal(50, 5, 8) + 2 * df["a"]
    model = LinearModel("y").fit(df)
    assert model.n_terms == 16 and model.rank == 8
    x = interaction_design(df, ["a", "b", "c", "d"], np.zeros(8))[:, ::2]
    fitted = x @ np.linalg.lstsq(x, df["y"].to_numpy(), rcond=None)[0]
    np.testing.assert_allclose(model.predict(df), fitted, rtol=1e-8)


def test_linear_model_max_order_one_is_main_effects():
    df = harness_table()
    model = LinearModel(max_order=1).fit(df)
    assert model.n_terms == 1 + len(model.features_)


# --- tree ensembles ---------------------------------------------------------------------------------


def courier_table(n_rep: int = 2) -> pd.DataFrame:
    levels = itertools.product([64, 128, 256, 512], [1, 2, 4, 8], [1, 3, 5], ["shallow", "deep"])
    df = pd.DataFrame(list(levels) * n_rep, columns=["batch", "cpus", "njobs", "network"])
    df["t"] = 2e4 / df["batch"] + 5 * df["cpus"] * df["njobs"] + np.where(df["network"] == "deep", 100, 0)
    return df


def test_forest_uses_seed_004_features_and_gb_baseline_does_not_see_parallelism():
    df = courier_table(1)
    rf = RandomForestModel("t", grid=SMALL_RF, n_estimators=20).fit(df)
    gb = GradientBoostingModel("t", grid=SMALL_GB).fit(df)
    assert rf.features_ == ["batch", "cpus", "njobs", "network", "processes"]
    assert gb.features_ == ["batch", "cpus", "network"]
    assert rf.evaluate(df).r2 > 0.9


def test_forest_grid_search_picks_from_the_grid():
    df = courier_table(1)
    rf = RandomForestModel("t", grid={"max_depth": [2, None]}, n_estimators=20, seed=1).fit(df)
    assert rf.best_params_["max_depth"] in (2, None)
    assert rf.search_ is not None and rf.search_.n_splits == 5


def test_forest_needs_two_rows_per_fold():
    with pytest.raises(TooFewRowsError, match="cross-validation"):
        RandomForestModel("t", grid=SMALL_RF).fit(courier_table(1).head(9))


def test_random_forest_cannot_extrapolate_but_the_generic_model_can():
    """Target increasing in epochs; train on epochs 1, 2, 4 and test on epochs 8. (With only two
    training levels a*e^p + a_network cannot separate a from p: three are needed.)"""
    df = harness_table(seed=8, noise=0.02)
    random, extrapolate = random_split(df, seed=0), extrapolation_split(df, by="epochs")
    scores = {}
    for kind, split in (("random", random), ("extrapolate", extrapolate)):
        rf = RandomForestModel(grid=SMALL_RF, n_estimators=50, seed=0).fit(split.train)
        generic = PowerLawModel(seed=0).fit(split.train)
        scores[kind] = (rf.evaluate(split.test), generic.evaluate(split.test))
    rf_random, generic_random = scores["random"]
    rf_extra, generic_extra = scores["extrapolate"]
    assert rf_extra.r2 < rf_random.r2 - 0.2
    assert rf_extra.mape > 2 * rf_random.mape
    assert generic_extra.r2 > 0.97 and generic_random.r2 > 0.97
    assert generic_extra.mape < 0.05


# --- splits -----------------------------------------------------------------------------------------


def test_random_split_is_a_seeded_partition():
    df = harness_table().reset_index(names="row")
    a, b = random_split(df, 0.2, seed=4), random_split(df, 0.2, seed=4)
    assert len(a.test) == round(0.2 * len(df))
    assert sorted(pd.concat([a.train, a.test])["row"]) == list(range(len(df)))
    assert list(a.test["row"]) == list(b.test["row"])
    assert list(random_split(df, 0.2, seed=5).test["row"]) != list(a.test["row"])


def test_extrapolation_split_tests_on_the_largest_configurations():
    df = harness_table()
    split = extrapolation_split(df, by="parallelism", test_fraction=0.2)
    assert split.train["parallelism"].max() < split.test["parallelism"].min()
    assert len(split.test) >= 0.2 * len(df) and len(split.train) + len(split.test) == len(df)


def test_a_table_with_nodes_only_extrapolates_on_nodes_and_one_without_resources_says_how_to_choose():
    """An ingested study may record nodes but not executors or cores: no parallelism can be derived."""
    df = harness_table().drop(columns=["executors", "executor_cores"])
    (split,) = make_splits(df, ["extrapolate"])
    assert split.train["nodes"].max() < split.test["nodes"].min()
    with pytest.raises(InvalidTableError, match="--extrapolate-by COLUMN, or --split random"):
        make_splits(df.drop(columns=["nodes"]), ["extrapolate"])


def test_extrapolation_split_needs_two_levels():
    df = harness_table()
    with pytest.raises(TooFewRowsError, match="learning_rate"):
        extrapolation_split(df, by="learning_rate")


# --- interface errors ---------------------------------------------------------------------------------


def test_clear_errors():
    df = harness_table()
    with pytest.raises(MissingColumnError, match="accuracy"):
        LinearModel("accuracy").fit(df)
    with pytest.raises(NotFittedError):
        ErnestModel().predict(df)
    model = LinearModel().fit(df[df["model"] == "lenet"])
    with pytest.raises(InvalidTableError, match="birnn"):
        model.predict(df)
    with pytest.raises(MissingColumnError, match="nodes"):
        model.predict(df.drop(columns="nodes"))


def test_read_results_keeps_ok_rows(tmp_path):
    df = harness_table().head(6)
    df["status"] = ["ok", "failed", "ok", "incomplete", "ok", "ok"]
    df.to_csv(tmp_path / "results.csv", index=False)
    assert len(read_results(tmp_path)) == 4
    assert len(read_results(tmp_path / "results.csv")) == 4
    with pytest.raises(ResultsNotFoundError):
        read_results(tmp_path / "nope")


# --- CLI ----------------------------------------------------------------------------------------------


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    monkeypatch.setitem(MODELS, "rf", lambda t, s: RandomForestModel(t, grid=SMALL_RF, n_estimators=20, seed=s))
    monkeypatch.setitem(MODELS, "gb", lambda t, s: GradientBoostingModel(t, grid=SMALL_GB, seed=s))
    df = harness_table()
    df["status"] = "ok"
    df.to_csv(tmp_path / "results.csv", index=False)
    return tmp_path


def test_cli_prints_every_model_on_both_splits(campaign, capsys):
    assert cli([str(campaign), "--response", "wall_clock_s", "--interval-folds", "2"]) == 0
    out = capsys.readouterr().out
    table = [line.split() for line in out.splitlines()]
    table = [row for row in table if len(row) in (10, 11) and row[1] in ("random", "extrapolate")]
    assert {(row[0], row[1]) for row in table} == {
        (m, s) for m in ("linear", "loglinear", "rf", "gb", "generic", "ernest", "amdahl", "usl")
        for s in ("random", "extrapolate")
    }
    assert "q[nodes]" in out


def test_cli_json(campaign, capsys):
    assert cli([str(campaign), "--models", "generic,ernest", "--split", "random", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["model"] for r in payload["rows"]] == ["generic", "ernest"]
    nodes = payload["generic"]["random"]["exponents"]["nodes"]  # the normal form's set holds -1 and -0.75
    assert nodes in (-1.0, -0.75) and payload["generic"]["random"]["search"] == "normal-form"


def test_cli_exits_2_on_a_missing_column(campaign, capsys):
    assert cli([str(campaign), "--response", "throughput"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "throughput" in err and len(err.strip().splitlines()) == 1


def test_cli_exits_2_on_an_unknown_model(campaign, capsys):
    assert cli([str(campaign), "--models", "rf,svm"]) == 2
    assert "svm" in capsys.readouterr().err


def test_cli_says_on_its_row_that_a_model_cannot_be_fitted_on_so_few_rows_and_exits_0(tmp_path, capsys):
    # issue 61: too few rows for a tree's cross-validation is a note on that model's row, not an error of the command
    df = harness_table().head(9)
    df.to_csv(tmp_path / "results.csv", index=False)
    assert cli([str(tmp_path), "--models", "rf,ernest", "--split", "random"]) == 0
    captured = capsys.readouterr()
    assert "failed" not in captured.out and "error" not in captured.err
    assert "rf needs at least 10 training rows for 5-fold cross-validation" in captured.out


def test_model_inputs_are_the_declared_factors(tmp_path, capsys):
    from models.errors import InvalidTableError
    from models.predict.table import model_inputs

    table = harness_table().assign(rep=lambda t: [i % 3 for i in range(len(t))], status="ok")
    narrowed, choice = model_inputs(table, "wall_clock_s", ("nodes", "batch_size"))
    assert list(narrowed.columns) == ["nodes", "batch_size", "wall_clock_s"] and choice.source == "--factors"
    bare = table.drop(columns=["model", "executors"])  # no longer a harness table: its factors are guessed
    bare.to_csv(tmp_path / "bare.csv", index=False)
    with pytest.raises(InvalidTableError, match="'rep' is named like an identifier"):
        model_inputs(bare, "wall_clock_s", None, tmp_path / "bare.csv")
    assert cli([str(tmp_path / "bare.csv"), "--models", "linear", "--split", "random"]) == 2
    assert "error: column 'rep'" in capsys.readouterr().err


# --- measured inputs -------------------------------------------------------------------


def loaded_table(seed: int = 0) -> pd.DataFrame:
    """The harness table with a host load drawn independently of the factors that slows every run:
    no factor can explain that part of the time, the measured load can."""
    rng = np.random.default_rng(seed)
    df = harness_table(seed, noise=0.01)
    df["host_cpu_busy_mean"] = rng.uniform(0.1, 0.9, len(df))
    df["wall_clock_s"] *= 1 + 2 * df["host_cpu_busy_mean"]
    df["host_samples"] = np.arange(len(df))  # bookkeeping: never an input
    df["spark_executors"] = 2  # constant: not an input
    df["status"] = "ok"
    return df


def test_a_measured_load_is_taken_by_the_forest_only_and_explains_what_the_factors_cannot():
    df = loaded_table()
    split = make_splits(df, ["random"], seed=1)
    plain = compare(split, "wall_clock_s", ["rf", "linear"], seed=1, level=None)
    with_load = compare(split, "wall_clock_s", ["rf", "linear"], seed=1, measured=["host_cpu_busy_mean"], level=None)
    r2 = {(c, r.model): r.r2 for c, cmp_ in (("plain", plain), ("load", with_load)) for r in cmp_.rows}
    assert r2[("load", "rf")] > r2[("plain", "rf")] + 0.1  # the forest uses the load...
    assert r2[("load", "linear")] == r2[("plain", "linear")]  # ...the linear model takes the factors only
    rf = RandomForestModel("wall_clock_s", grid=SMALL_RF, n_estimators=20, seed=0)
    rf.measured = ["host_cpu_busy_mean"]
    assert "host_cpu_busy_mean" in rf.fit(df).features_


def test_measured_all_is_every_varying_numeric_measurement_but_the_samplers_bookkeeping():
    df = loaded_table()
    df["host_note"] = "x"
    assert measured_columns(df, "all", "wall_clock_s") == ["host_cpu_busy_mean"]
    assert measured_columns(df, None, "wall_clock_s") == []
    with pytest.raises(MissingColumnError, match="host_iowait_mean"):
        measured_columns(df, "host_iowait_mean", "wall_clock_s")
    with pytest.raises(InvalidTableError, match="not numeric"):
        measured_columns(df, "host_note", "wall_clock_s")
    with pytest.raises(InvalidTableError, match="the target"):
        measured_columns(df, "wall_clock_s", "wall_clock_s")


def test_cli_measured(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(MODELS, "rf", lambda t, s: RandomForestModel(t, grid=SMALL_RF, n_estimators=20, seed=s))
    df = loaded_table()
    df.loc[3, "host_cpu_busy_mean"] = np.nan  # a run without the measurement is left out, and counted
    df.to_csv(tmp_path / "results.csv", index=False)
    base = ["--factors", "model,nodes,executors,executor_cores,epochs,batch_size", "--models", "rf", "--split", "random"]
    assert cli([str(tmp_path), *base, "--measured", "all", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["rows"][0]["n_train"] + json.loads(captured.out)["rows"][0]["n_test"] == len(df) - 1
    assert "dropped 1 rows with no finite wall_clock_s or measured input" in captured.err
    assert "rf and gb also take the measured columns host_cpu_busy_mean" in captured.err
    assert cli([str(tmp_path), *base, "--measured", "spark_gc_share"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "spark_gc_share" in err and len(err.strip().splitlines()) == 1


def test_a_tree_given_one_combination_fits_it_without_a_search_and_predicts_as_the_searched_refit():
    """The CV+ folds of a tree refit with the hyperparameters its full fit chose (one combination: no search);
    that refit must be the very model the grid search would have refitted on the same rows."""
    df = harness_table()
    searched = RandomForestModel(n_estimators=20, seed=3).fit(df)
    chosen = searched.best_params_
    direct = RandomForestModel(n_estimators=20, seed=3, grid={k: [v] for k, v in chosen.items()}).fit(df)
    assert direct.search_ is None and direct.best_params_ == chosen
    np.testing.assert_array_equal(direct.predict(df), searched.predict(df))
