"""Derringer-Suich desirability: the functions against hand values, the search against brute force over
the region, the intervals against statsmodels, and the confirmation design read back by sparkdl.runspec."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from harness.design import box_behnken, make_factors
from harness.designfile import read_design
from models.desirability import Goal, compromise, confirmation_design, desirability, overall, parse_goal
from models.desirability.confirm import steps_of
from models.desirability.cli import main
from models.errors import DesirabilityError
from sparkdl.cli import run_cli

FACTORS = ("learning_rate", "batch_size", "epochs")


def test_one_sided_values_by_hand():
    up = Goal("acc", "max", 0.5, 0.9)
    assert desirability(up, np.array([0.4, 0.5, 0.7, 0.9, 0.95])) == pytest.approx([0, 0, 0.5, 1, 1])
    up2 = Goal("acc", "max", 0.5, 0.9, weight=2)
    assert desirability(up2, np.array([0.7]))[0] == pytest.approx(0.25)
    down = Goal("t", "min", 10, 30, weight=0.5)
    assert desirability(down, np.array([5, 10, 25, 30, 40])) == pytest.approx([1, 1, 0.25**0.5, 0, 0])
    assert desirability(down, np.array([np.nan]))[0] == 0


def test_two_sided_values_by_hand():
    g = Goal("b", "target", 1, 4, target=2, weight=2, weight_high=0.5)
    y = np.array([0.5, 1, 1.5, 2, 3, 4, 5])
    expect = [0, 0, 0.5**2, 1, (1 / 2) ** 0.5, 0, 0]
    assert desirability(g, y) == pytest.approx(expect)


def test_overall_is_the_weighted_geometric_mean():
    d = np.array([[0.5, 0.2, 1.0], [0.8, 0.9, 0.0]])
    r = [1.0, 3.0]
    expect = (d[0] ** 1 * d[1] ** 3) ** (1 / 4)
    assert overall(d, r) == pytest.approx(expect)
    assert overall(d, r)[2] == 0.0
    # equal importances: the plain geometric mean
    assert overall(d, [2, 2]) == pytest.approx(np.sqrt(d[0] * d[1]))


@pytest.mark.parametrize(
    "spec,expect",
    [
        ("accuracy:max:0.9:1", Goal("accuracy", "max", 0.9, 1.0)),
        ("wall_clock_s:min", Goal("wall_clock_s", "min", 3.0, 9.0)),
        ("accuracy:max:0.5:0.9:w=2:i=3", Goal("accuracy", "max", 0.5, 0.9, weight=2, importance=3)),
        ("x:target:1:2:4:w=1:w2=0.5", Goal("x", "target", 1, 4, target=2, weight_high=0.5)),
    ],
)
def test_parse_goal(spec, expect):
    assert parse_goal(spec, np.array([3.0, 9.0, 5.0])) == expect


@pytest.mark.parametrize(
    "spec,message",
    [
        ("accuracy", "NAME:GOAL"),
        ("accuracy:best", "not one of"),
        ("accuracy:max:1:0.9", "low < high"),
        ("accuracy:max:0.9", "takes 2 limits"),
        ("x:target:1:4", "LOW:TARGET:HIGH"),
        ("x:target:1:5:4", "LOW < TARGET < HIGH"),
        ("accuracy:max:0.5:1:w=0", "> 0"),
        ("accuracy:max:0.5:1:q=2", "unknown option"),
        ("accuracy:max:a:1", "not a number"),
    ],
)
def test_bad_goal_is_one_line(spec, message):
    with pytest.raises(DesirabilityError, match=message) as e:
        parse_goal(spec, np.array([0.1, 0.9]))
    assert "\n" not in str(e.value)


def campaign(seed: int = 0, noise: float = 0.01) -> pd.DataFrame:
    """A Box-Behnken campaign where time falls with batch size and rises with epochs, accuracy peaks inside."""
    d = box_behnken(make_factors({"learning_rate": [0.01, 0.1], "batch_size": [32, 128], "epochs": [1, 3]}), 4)
    x = d.coded
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(list(d.points), columns=list(d.names))
    frame["wall_clock_s"] = 20 - 4 * x[:, 1] + 6 * x[:, 2] + 1.5 * x[:, 1] ** 2 + rng.normal(0, noise * 10, len(x))
    frame["accuracy"] = (0.8 + 0.05 * x[:, 0] - 0.04 * x[:, 1] + 0.08 * x[:, 2] - 0.06 * x[:, 0] ** 2
                         - 0.03 * x[:, 2] ** 2 + 0.02 * x[:, 0] * x[:, 1] + rng.normal(0, noise, len(x)))
    frame["model"], frame["nodes"], frame["executors"], frame["executor_cores"] = "lenet", 1, 1, 2
    frame["status"] = "ok"
    return frame


GOALS = [Goal("wall_clock_s", "min", 12, 30), Goal("accuracy", "max", 0.6, 0.9, importance=2)]


def brute_force(result, goals) -> float:
    g = np.linspace(-1, 1, 41)
    grid = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    grid = grid[result.fits[0].region.contains(grid)]
    ds = [goal(f.predict_coded(grid)) for goal, f in zip(goals, result.fits)]
    return float(overall(ds, [x.importance for x in goals]).max())


def test_search_beats_a_grid_over_the_region_and_the_observed_runs():
    frame = campaign()
    res = compromise(frame, GOALS, FACTORS, seed=1)
    # before rounding the search reaches the dense grid's best; rounding batch/epochs costs a little
    best_grid = brute_force(res, GOALS)
    assert res.D <= best_grid + 0.02
    from models.rsm.search import maximize_in_region

    def D(x):
        return overall([g(f.predict_coded(x)) for g, f in zip(GOALS, res.fits)], [g.importance for g in GOALS])

    unrounded = maximize_in_region(D, res.fits[0].region, seed=1)
    assert unrounded.value >= best_grid - 1e-6
    predicted_at_runs = D(res.fits[0].coded_x)
    assert unrounded.value >= predicted_at_runs.max() - 1e-9
    assert res.inside
    assert float(res.setting()["batch_size"]).is_integer() and float(res.setting()["epochs"]).is_integer()
    # D at the recommendation is recomputed from the per-response desirabilities
    ds = [r.desirability for r in res.responses]
    assert res.D == pytest.approx((ds[0] ** 1 * ds[1] ** 2) ** (1 / 3))


def test_sacrifice_against_each_response_alone():
    frame = campaign(seed=2)
    res = compromise(frame, GOALS, FACTORS, seed=0)
    t, a = res.responses
    g = np.linspace(-1, 1, 41)
    grid = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    grid = grid[res.fits[0].region.contains(grid)]
    assert t.best_alone <= res.fits[0].predict_coded(grid).min() + 1e-6
    assert a.best_alone >= res.fits[1].predict_coded(grid).max() - 1e-6
    assert t.sacrifice == pytest.approx(max(t.predicted - t.best_alone, 0))
    assert a.sacrifice == pytest.approx(max(a.best_alone - a.predicted, 0))
    assert t.best_observed == pytest.approx(frame["wall_clock_s"].min())


def test_interval_for_the_mean_of_the_confirmation_jobs_matches_statsmodels():
    frame = campaign(seed=3, noise=0.03)
    res = compromise(frame, GOALS, FACTORS, new_jobs=3)
    r = res.responses[1]
    f = "accuracy ~ " + " + ".join(t.replace("**", " ** ") for t in res.fits[1].natural_coefficients() if t != "Intercept")
    sm = smf.ols(f, data=frame).fit()
    sf = sm.get_prediction(pd.DataFrame([res.setting()])).summary_frame(alpha=0.05)
    from scipy import stats
    half = stats.t.ppf(0.975, sm.df_resid) * np.sqrt(sm.mse_resid / 3 + sf["mean_se"].iloc[0] ** 2)
    assert r.predicted == pytest.approx(sf["mean"].iloc[0], rel=1e-9)
    assert r.interval.confidence == pytest.approx((sf["mean_ci_lower"].iloc[0], sf["mean_ci_upper"].iloc[0]), rel=1e-8)
    assert r.interval.prediction == pytest.approx((r.predicted - half, r.predicted + half), rel=1e-8)


def test_confirmation_design_is_read_by_the_harness(tmp_path):
    frame = campaign()
    res = compromise(frame, GOALS, FACTORS)
    design = confirmation_design(frame, {**res.setting(), "batch_size": 77.0}, jobs=4)
    path = design.write(tmp_path / "confirm.csv")
    specs = read_design(path)
    assert len(specs) == 4 and {s.replicate for s in specs} == {1, 2, 3, 4}
    assert {s.batch_size for s in specs} == {78}  # a multiple of the 2 cores
    assert {s.model for s in specs} == {"lenet"}
    assert specs[0].learning_rate == pytest.approx(res.setting()["learning_rate"])
    assert "batch_size 77 -> 78" in design.notes[0]
    frame.loc[0, "nodes"] = 2
    with pytest.raises(DesirabilityError, match="'nodes' takes 2 values"):
        confirmation_design(frame, res.setting(), 3)


def test_cli_json_and_confirmation(tmp_path, capsys):
    campaign().to_csv(tmp_path / "results.csv", index=False)
    out = tmp_path / "confirm.csv"
    argv = [str(tmp_path), "--factors", ",".join(FACTORS), "--objective", "wall_clock_s:min:12:30",
            "--objective", "accuracy:max:0.6:0.9:i=2", "--format", "json", "--out", str(out)]
    assert run_cli(main, argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["recommended"]) == set(FACTORS)
    assert 0 < d["overall_desirability"] <= 1
    assert [r["response"] for r in d["responses"]] == ["wall_clock_s", "accuracy"]
    assert all(r["prediction_interval"][0] < r["predicted"] < r["prediction_interval"][1] for r in d["responses"])
    assert len(read_design(out)) == 3


def test_cli_bad_spec_exit_2(tmp_path, capsys):
    campaign().to_csv(tmp_path / "results.csv", index=False)
    assert run_cli(main, [str(tmp_path), "--factors", ",".join(FACTORS), "--objective", "accuracy:up"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "not one of" in err


def test_log_goal_fits_log_time():
    frame = campaign(seed=6)
    g = parse_goal("wall_clock_s:min:t=log", frame["wall_clock_s"].to_numpy())
    assert g.transform == "log" and (g.low, g.high) == (frame["wall_clock_s"].min(), frame["wall_clock_s"].max())
    res = compromise(frame, [g, GOALS[1]], FACTORS)
    assert res.fits[0].transform == "log" and res.fits[1].transform == "none"
    with pytest.raises(DesirabilityError, match="t=sqrt"):
        parse_goal("wall_clock_s:min:t=sqrt", np.array([3.0, 9.0]))


def test_batch_size_rounded_to_a_multiple_of_the_cores():
    frame = campaign(seed=7)
    assert steps_of(frame) == {"batch_size": 2}
    res = compromise(frame, GOALS, FACTORS, steps=steps_of(frame))
    assert res.setting()["batch_size"] % 2 == 0
    design = confirmation_design(frame, res.setting(), 2)
    assert design.notes == ()  # nothing left to fix
    assert steps_of(frame.assign(executors=[1, 2] * (len(frame) // 2) + [1] * (len(frame) % 2))) == {}


def test_confirmation_design_takes_the_manifest_columns(tmp_path):
    """A campaign folder's manifest.json names the design columns (any job), not the built-in list."""
    from sparkdl.campaign import CampaignDir, Manifest
    from models.desirability.confirm import design_columns
    frame = campaign().assign(momentum=0.9)
    (tmp_path / "campaign.sqlite").write_bytes(b"")
    frame.to_csv(tmp_path / "results.csv", index=False)
    cols = ("nodes", "executors", "executor_cores", "learning_rate", "batch_size", "epochs", "momentum")
    CampaignDir(tmp_path).write_manifest(Manifest(cols))
    assert design_columns(tmp_path) == cols and design_columns(tmp_path / "results.csv") == cols
    design = confirmation_design(frame, {"learning_rate": 0.05, "batch_size": 64, "epochs": 2}, 2, cols)
    assert design.columns == ("run", "replicate", *cols)
    assert design.rows[0] == (1, 1, 1, 1, 2, 0.05, 64, 2, 0.9)
    assert design_columns(tmp_path / "elsewhere.csv") is None


def test_check_confirmation_against_the_interval_by_hand(tmp_path, capsys):
    frame = campaign(seed=8, noise=0.02)
    frame.to_csv(tmp_path / "results.csv", index=False)
    goals = [Goal("wall_clock_s", "min", 12, 30), Goal("accuracy", "max", 0.6, 0.9)]
    res = compromise(frame, goals, FACTORS)
    at = res.setting()
    acc = res.fits[1].predict(np.array([list(at.values())]))[0]
    rows = [{**at, "nodes": 1, "executors": 1, "executor_cores": 2, "status": "ok",
             "wall_clock_s": 500.0, "accuracy": acc + d} for d in (-0.01, 0.0, 0.01)]
    confirm = pd.DataFrame(rows)
    from models.desirability import check_confirmation
    setting, checks = check_confirmation(res.fits, confirm)
    assert setting == tuple(at.values())
    t, a = checks
    assert a.mean == pytest.approx(acc) and a.inside and a.jobs == 3
    # the interval for the mean of 3 jobs, by hand from the fit
    f = res.fits[1]
    from models.rsm.coding import model_matrix
    x = model_matrix(f.coding.to_coded(np.array([list(at.values())])))[0]
    half = stats.t.ppf(0.975, f.df_resid) * np.sqrt(f.mse * (1 / 3 + x @ f.xtx_inv @ x))
    assert a.interval.prediction == pytest.approx((acc - half, acc + half), rel=1e-9)
    assert not t.inside  # 500 s is far outside
    (tmp_path / "c").mkdir()
    confirm.to_csv(tmp_path / "c" / "results.csv", index=False)
    argv = [str(tmp_path), "--factors", ",".join(FACTORS), "--objective", "wall_clock_s:min:12:30",
            "--objective", "accuracy:max:0.6:0.9", "--check", str(tmp_path / "c")]
    assert run_cli(main, argv) == 3  # a response not confirmed
    out = capsys.readouterr().out
    assert "wall_clock_s: mean of 3 confirmation job(s) 500, " in out and "OUTSIDE" in out
    confirm.loc[0, "batch_size"] += 2
    with pytest.raises(DesirabilityError, match="2 different settings"):
        check_confirmation(res.fits, confirm)


def test_unreachable_limits_are_a_one_line_error():
    frame = campaign(seed=9)
    with pytest.raises(DesirabilityError, match=r"accuracy reaches at most 0\.9\d* \(it must exceed 0\.99\)") as e:
        compromise(frame, [GOALS[0], Goal("accuracy", "max", 0.99, 1.0)], FACTORS)
    assert "\n" not in str(e.value) and "relax the limits" in str(e.value)
    # each limit reachable alone but not together: fast jobs are the inaccurate ones
    with pytest.raises(DesirabilityError, match="not all at one setting"):
        compromise(frame, [Goal("wall_clock_s", "min", 9.0, 12.0), Goal("accuracy", "max", 0.88, 0.9)], FACTORS)


def test_tradeoff_front_against_a_grid_over_the_region(capsys, tmp_path):
    from models.desirability.tradeoff import tradeoff
    frame = campaign(seed=10)
    res = compromise(frame, GOALS, FACTORS)
    time_fit, acc_fit = res.fits
    floors = np.linspace(0.7, acc_fit.predict_coded(np.zeros((1, 3)))[0] + 0.05, 5)
    points = tradeoff(acc_fit, time_fit, "min", floors)
    g = np.linspace(-1, 1, 31)
    grid = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    grid = grid[acc_fit.region.contains(grid)]
    acc, t = acc_fit.predict_coded(grid), time_fit.predict_coded(grid)
    for p in points:
        assert p.reachable
        feasible = acc >= p.floor
        assert p.best <= t[feasible].min() + 1e-6  # at least as good as the best grid point that qualifies
        x = acc_fit.coding.to_coded(np.array(p.natural))
        assert acc_fit.predict_coded(x[None])[0] >= p.floor - 1e-6 and acc_fit.region.contains(x)[0]
    bests = [p.best for p in points]
    assert all(b >= a - 1e-9 for a, b in zip(bests, bests[1:]))  # a higher floor never costs less
    assert not tradeoff(acc_fit, time_fit, "min", np.array([5.0]))[0].reachable
    frame.to_csv(tmp_path / "results.csv", index=False)
    argv = [str(tmp_path), "--factors", ",".join(FACTORS), "--objective", "wall_clock_s:min:12:30",
            "--objective", "accuracy:max:0.6:0.9", "--tradeoff", "4", "--format", "json"]
    assert run_cli(main, argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["tradeoff"]["floor_of"] == "accuracy" and len(d["tradeoff"]["points"]) == 4
    capsys.readouterr()
    assert run_cli(main, [str(tmp_path), "--factors", ",".join(FACTORS), "--objective", "accuracy:max:0.6:0.9",
                          "--tradeoff", "4"]) == 2
    assert "needs exactly two goals" in capsys.readouterr().err
