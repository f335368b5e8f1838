"""What makes ``sparkdl predict`` fast keeps its numbers: the trees' written-out grid search chooses as sklearn's
GridSearchCV does, and the CV+ folds it hands over are the models a refit would give. (Timing is bench/'s:
bench/predict_speed.py.)"""

from __future__ import annotations

import itertools
import json
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from models.predict.intervals import ConformalPredictor
from models.predict.trees import GradientBoostingModel, RandomForestModel, grid_search


def study(seed: int = 0, replicates: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    levels = itertools.product(["lenet", "birnn"], [1, 2, 4], [1, 2], [64, 256])
    df = pd.DataFrame(list(levels) * replicates, columns=["model", "nodes", "executors", "batch_size"])
    df["executor_cores"], df["epochs"] = 1, 3
    m = df["nodes"] * df["executors"]
    df["wall_clock_s"] = (20 + np.where(df["model"] == "birnn", 300, 100) / m**0.8 + 2e3 / df["batch_size"]) \
        * np.exp(rng.normal(0, 0.05, len(df)))
    return df


def pipeline(estimator) -> Pipeline:
    encode = ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="error"), ["model"]),
                                ("numeric", "passthrough", ["nodes", "executors", "batch_size"])])
    return Pipeline([("encode", encode), ("estimator", estimator)])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("estimator, grid", [
    (RandomForestRegressor(n_estimators=10, random_state=0), {"estimator__max_depth": [2, None],
                                                             "estimator__max_features": [1.0, "sqrt"]}),
    (GradientBoostingRegressor(random_state=0), {"estimator__n_estimators": [5, 20], "estimator__max_depth": [1, 3]}),
])
def test_the_written_out_search_chooses_as_gridsearchcv(seed, estimator, grid):
    df = study(seed)
    x, y = df[["model", "nodes", "executors", "batch_size"]], df["wall_clock_s"].to_numpy()
    folds = KFold(5, shuffle=True, random_state=seed)
    ours = grid_search(pipeline(estimator), grid, x, y, folds)
    theirs = GridSearchCV(pipeline(estimator), grid, cv=folds, scoring="neg_mean_squared_error").fit(x, y)
    assert ours.best_params == theirs.best_params_
    np.testing.assert_array_equal(ours.mean_scores, theirs.cv_results_["mean_test_score"])
    assert [dict(c) for c in ours.candidates] == list(theirs.cv_results_["params"])


def test_a_fold_that_cannot_be_scored_counts_as_gridsearchcv_counts_it():
    """A level seen in one fold only cannot be encoded when that fold is held out: NaN, the worst score."""
    df = study(0, replicates=1)
    df.loc[0, "model"] = "rare"
    x, y = df[["model", "nodes", "executors", "batch_size"]], df["wall_clock_s"].to_numpy()
    folds = KFold(5, shuffle=True, random_state=0)
    grid = {"estimator__max_depth": [2, None]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = grid_search(pipeline(RandomForestRegressor(n_estimators=5, random_state=0)), grid, x, y, folds)
        theirs = GridSearchCV(pipeline(RandomForestRegressor(n_estimators=5, random_state=0)), grid, cv=folds,
                              scoring="neg_mean_squared_error").fit(x, y)
    np.testing.assert_array_equal(ours.mean_scores, theirs.cv_results_["mean_test_score"])
    assert ours.best_params == theirs.best_params_


@pytest.mark.parametrize("make", [lambda: RandomForestModel(n_estimators=20, seed=3),
                                  lambda: GradientBoostingModel(seed=3)])
def test_the_searchs_fold_fits_are_the_cv_plus_refits(make):
    """CV+ from the search's fold fits gives the very interval CV+ gets by refitting the chosen setting."""
    df = study(4, replicates=4)
    train, test = df.iloc[:80], df.iloc[80:]
    model = make().fit(train)
    chosen = {k: [v] for k, v in model.best_params_.items()}

    def refit():
        tree = make()
        tree.grid = dict(chosen)
        return tree

    reused = model.cv_fits(5, 3)
    assert reused is not None and len(reused) == 5
    fast = ConformalPredictor(refit, 0.9, 5, 3).fit(train, model, reused)
    slow = ConformalPredictor(refit, 0.9, 5, 3).fit(train, model)
    assert all(a is b for a, (_, b) in zip(fast.fold_models_, reused))
    np.testing.assert_array_equal(fast.residuals_, slow.residuals_)
    for a, b in zip(fast.interval(test).__dict__.values(), slow.interval(test).__dict__.values()):
        np.testing.assert_array_equal(a, b)


def test_no_fold_fits_are_handed_over_for_other_folds_or_when_a_refit_would_differ():
    df = study(5)
    model = RandomForestModel(n_estimators=5, seed=1).fit(df)
    assert model.cv_fits(5, 1) is not None
    assert model.cv_fits(4, 1) is None and model.cv_fits(5, 2) is None
    # batch_size varies in the whole table but not without some fold: a refit there would leave it out
    narrow = df.copy()
    narrow["batch_size"] = 64
    narrow.loc[0, "batch_size"] = 256
    assert RandomForestModel(n_estimators=5, seed=1).fit(narrow).cv_fits(5, 1) is None
    # fold fits for other folds than CV+'s are not taken
    given = [(np.arange(3), model)] * 5
    conformal = ConformalPredictor(lambda: RandomForestModel(n_estimators=5, seed=1, grid={"max_depth": [None]}),
                                   0.9, 5, 1).fit(df, model, given)
    assert all(m is not model for m in conformal.fold_models_)


# --- progress: on stderr, never on stdout ----------------------------------------------------


@pytest.fixture()
def campaign(tmp_path):
    study(6, replicates=3).to_csv(tmp_path / "results.csv", index=False)
    return tmp_path


def run_predict(argv, tty: bool, monkeypatch, capsys) -> tuple[int, str, str]:
    from models.predict.cli import main
    from sparkdl.cli import run_cli

    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty)
    code = run_cli(main, argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_terminal_hears_each_model_start_on_each_split_and_stdout_stays_the_json(campaign, processes, monkeypatch,
                                                                                   capsys):
    argv = [str(campaign), "--models", "rf,linear,amdahl", "--format", "json", "--fit-processes", processes]
    code, out, err = run_predict(argv, True, monkeypatch, capsys)
    assert code == 0
    json.loads(out)  # stdout is the JSON alone
    assert "predict [" not in out
    lines = [line for line in err.splitlines() if line.startswith("predict [")]
    assert len(lines) == 6, err  # 3 models x 2 splits, each as it starts
    assert {(line.split()[2], line.split()[5]) for line in lines} == {
        (m, s) for m in ("rf", "linear", "amdahl") for s in ("random", "extrapolate")}
    assert all(line.startswith(f"predict [{i}/6]: ") for i, line in enumerate(lines, 1))
    rf = [line for line in lines if line.split()[2] == "rf"]
    assert all("grid search over 4 settings x 5 folds, CV+ from its folds" in line for line in rf)
    assert "predict: the scale-out interval over model form on the extrapolate split" in err


def test_no_progress_where_stderr_is_not_a_terminal_unless_asked(campaign, monkeypatch, capsys):
    argv = [str(campaign), "--models", "linear", "--format", "csv"]
    _, out, err = run_predict(argv, False, monkeypatch, capsys)
    assert "predict [" not in err and "predict [" not in out
    _, out, err = run_predict(argv + ["--progress", "always"], False, monkeypatch, capsys)
    assert err.count("predict [") == 2 and "predict [" not in out
    _, out, err = run_predict(argv + ["--progress", "never"], True, monkeypatch, capsys)
    assert "predict [" not in err and "predict [" not in out


def test_worker_processes_give_the_serial_figures(campaign):
    from models.predict.compare import MODELS, compare, make_splits

    table = pd.read_csv(campaign / "results.csv")
    splits = make_splits(table, ["random", "extrapolate"], 0)
    serial = compare(splits, "wall_clock_s", list(MODELS), 0, jobs=1).to_dict()
    parallel = compare(splits, "wall_clock_s", list(MODELS), 0, jobs=2).to_dict()
    assert json.dumps(untimed(parallel), default=str) == json.dumps(untimed(serial), default=str)


def untimed(value):
    """``value`` without its fit times (``fit_seconds``), the one figure that depends on the machine."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "fit_seconds"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value
