"""Response surfaces: every figure cross-checked against an independent computation (numpy lstsq on
explicit natural-unit columns, statsmodels formulas, the closed-form stationary point, lack of fit
from a cell-means model, constrained optimisation on the sphere)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import optimize
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.anova import anova_lm

from harness.design import box_behnken, central_composite, make_factors
from models.errors import ModelError, SurfaceError
from models.rsm import analyse, fit_surface, optimum, ridge_path, stationary_point
from models.rsm.canonical import ridge_point
from models.rsm.coding import model_matrix, term_names
from models.rsm.cli import main
from models.rsm.plots import contour, save_all, surface
from sparkdl.cli import run_cli

ROOT = Path(__file__).resolve().parents[1]
FACTORS = ("lr", "batch", "epochs")
LEVELS = {"lr": [0.01, 0.1], "batch": [32, 128], "epochs": [1, 3]}


def design_frame(design, replicate_centre: int = 0) -> pd.DataFrame:
    pts = pd.DataFrame(list(design.points), columns=list(design.names))
    if replicate_centre:
        centre = pts.iloc[[-1]]
        pts = pd.concat([pts] + [centre] * replicate_centre, ignore_index=True)
    return pts


def truth_coded(x: np.ndarray, b0: float, b: np.ndarray, B: np.ndarray) -> np.ndarray:
    return b0 + x @ b + np.einsum("ij,jk,ik->i", x, B, x)


def bbd_data(seed: int = 1, noise: float = 0.05, B: np.ndarray | None = None, b: np.ndarray | None = None,
             centre: int = 5) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    d = box_behnken(make_factors(LEVELS), center_points=centre)
    frame = design_frame(d)
    B = np.array([[-1.0, 0.3, 0.1], [0.3, -0.8, 0.2], [0.1, 0.2, -0.5]]) if B is None else B
    b = np.array([0.4, -0.3, 0.2]) if b is None else b
    rng = np.random.default_rng(seed)
    frame["y"] = truth_coded(d.coded, 5.0, b, B) + rng.normal(0, noise, len(frame))
    return frame, B, b


def sm_name(term: str) -> str:
    """statsmodels 0.15 (formulaic) prints I(a**2) as I(a ** 2)."""
    return term.replace("**", " ** ")


def formula(factors=FACTORS) -> str:
    return "y ~ " + " + ".join(t for t in term_names(tuple(factors)) if t != "Intercept")


def test_natural_coefficients_match_lstsq_and_statsmodels():
    frame, _, _ = bbd_data()
    fit = fit_surface(frame, "y", FACTORS)
    X = frame[list(FACTORS)].to_numpy(float)
    beta, *_ = np.linalg.lstsq(model_matrix(X), frame["y"].to_numpy(), rcond=None)
    nat = fit.natural_coefficients()
    assert np.allclose([nat[t] for t in term_names(FACTORS)], beta, rtol=1e-6, atol=1e-9)
    sm = smf.ols(formula(), data=frame).fit()
    for term in term_names(FACTORS):
        assert nat[term] == pytest.approx(sm.params[sm_name(term)], rel=1e-6, abs=1e-9), term
    assert fit.r2 == pytest.approx(sm.rsquared, rel=1e-10)
    assert fit.adj_r2 == pytest.approx(sm.rsquared_adj, rel=1e-10)
    assert fit.rmse == pytest.approx(np.sqrt(sm.mse_resid), rel=1e-10)
    # predictions agree at every row, in natural units
    assert np.allclose(fit.predict(X), sm.fittedvalues, rtol=1e-9)


def test_coded_se_t_p_match_statsmodels_on_coded_columns():
    frame, _, _ = bbd_data(seed=2)
    fit = fit_surface(frame, "y", FACTORS)
    coded = pd.DataFrame(fit.coded_x, columns=list(FACTORS))
    coded["y"] = frame["y"]
    sm = smf.ols(formula(), data=coded).fit()
    for c in fit.coefficients:
        assert c.coded == pytest.approx(sm.params[sm_name(c.term)], rel=1e-8, abs=1e-12)
        assert c.se == pytest.approx(sm.bse[sm_name(c.term)], rel=1e-8)
        assert c.p == pytest.approx(sm.pvalues[sm_name(c.term)], rel=1e-6, abs=1e-14)
    # BBD levels -1, 0, +1
    assert set(np.unique(np.round(fit.coded_x, 12))) == {-1.0, 0.0, 1.0}


def test_sequential_anova_groups_match_statsmodels_type1():
    frame, _, _ = bbd_data(seed=3)
    fit = fit_surface(frame, "y", FACTORS)
    table = anova_lm(smf.ols(formula(), data=frame).fit(), typ=1)
    names = term_names(FACTORS)[1:]
    groups = {"linear": names[:3], "two-factor interaction": names[3:6], "quadratic": names[6:]}
    rows = {r.term: r for r in fit.anova}
    for group, terms in groups.items():
        assert rows[group].sum_sq == pytest.approx(table.loc[[sm_name(t) for t in terms], "sum_sq"].sum(), rel=1e-8)
        assert rows[group].df == 3
    assert rows["residual"].sum_sq == pytest.approx(table.loc["Residual", "sum_sq"], rel=1e-8)
    assert rows["model"].sum_sq + rows["residual"].sum_sq == pytest.approx(rows["total"].sum_sq, rel=1e-10)


def test_lack_of_fit_by_hand_and_against_a_cell_means_model():
    frame, _, _ = bbd_data(seed=4, noise=0.2)
    frame.loc[:11, "y"] += np.random.default_rng(9).normal(0, 0.6, 12)  # structure the quadratic misses
    fit = fit_surface(frame, "y", FACTORS)
    lof = fit.lack_of_fit
    # by hand: pure error from the 5 centre points, 4 df
    centre = frame[(frame.lr == 0.055) & (frame.batch == 80) & (frame.epochs == 2)]["y"]
    ss_pe = float(((centre - centre.mean()) ** 2).sum())
    sm = smf.ols(formula(), data=frame).fit()
    ss_lof = sm.ssr - ss_pe
    df_pe, df_lof = 4, 13 - 10  # 13 distinct settings, 10 terms
    F = (ss_lof / df_lof) / (ss_pe / df_pe)
    assert (lof.df_pe, lof.df_lof) == (df_pe, df_lof)
    assert lof.ss_pe == pytest.approx(ss_pe, rel=1e-9)
    assert lof.F == pytest.approx(F, rel=1e-8)
    # independent: the quadratic against the cell-means model (one mean per distinct setting)
    frame["cell"] = frame[list(FACTORS)].astype(str).agg("/".join, axis=1)
    cells = smf.ols("y ~ C(cell)", data=frame).fit()
    cmp_ = anova_lm(sm, cells)
    assert lof.F == pytest.approx(cmp_["F"].iloc[1], rel=1e-8)
    assert lof.p == pytest.approx(cmp_["Pr(>F)"].iloc[1], rel=1e-7)
    rows = {r.term: r for r in fit.anova}
    assert rows["lack of fit"].sum_sq + rows["pure error"].sum_sq == pytest.approx(rows["residual"].sum_sq)


def test_lack_of_fit_not_testable_without_replicates():
    d = central_composite(make_factors({"a": [1.0, 2.0], "b": [10.0, 20.0]}), "rotatable", 1)
    frame = design_frame(d)
    frame["y"] = np.random.default_rng(0).normal(size=len(frame))
    fit = fit_surface(frame, "y", ("a", "b"))
    assert not fit.lack_of_fit.testable and "no replicated" in fit.lack_of_fit.note
    assert "lack of fit" not in {r.term for r in fit.anova}


@pytest.mark.parametrize(
    "B,kind",
    [
        (np.diag([-1.0, -0.6, -0.4]), "maximum"),
        (np.diag([1.0, 0.6, 0.4]), "minimum"),
        (np.array([[-1.0, 0.2, 0.0], [0.2, 0.7, 0.1], [0.0, 0.1, -0.3]]), "saddle"),
    ],
)
def test_stationary_point_closed_form_and_kind(B, kind):
    b = np.array([0.2, -0.1, 0.15])
    frame, _, _ = bbd_data(seed=5, noise=0.002, B=B, b=b)
    fit = fit_surface(frame, "y", FACTORS)
    sp = stationary_point(fit)
    assert sp.kind == kind
    # closed form from the coded fit ...
    xs = -0.5 * np.linalg.solve(fit.B, fit.b)
    assert np.allclose(sp.coded, xs)
    # ... and, independently, from the natural-unit statsmodels coefficients, mapped back
    sm = smf.ols(formula(), data=frame).fit().params
    bn = np.array([sm[f] for f in FACTORS])
    Bn = np.diag([sm[f"I({f} ** 2)"] for f in FACTORS])
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        Bn[i, j] = Bn[j, i] = sm[f"{FACTORS[i]}:{FACTORS[j]}"] / 2
    Xs = -0.5 * np.linalg.solve(Bn, bn)
    assert np.allclose(sp.natural, Xs, rtol=1e-6)
    # near the true stationary point, and the gradient of the fit vanishes there
    assert np.allclose(sp.coded, -0.5 * np.linalg.solve(B, b), atol=0.02)
    grad = optimize.approx_fprime(np.array(sp.coded), lambda x: float(fit.predict_coded(x)[0]), 1e-7)
    assert np.allclose(grad, 0, atol=1e-5)
    assert np.allclose(np.sort(sp.eigenvalues), np.sort(np.linalg.eigvalsh(B)), atol=0.01)


def test_ridge_point_is_the_constrained_optimum_on_the_sphere():
    B = np.array([[-1.0, 0.2, 0.0], [0.2, 0.7, 0.1], [0.0, 0.1, -0.3]])  # saddle: ridge needed
    frame, _, _ = bbd_data(seed=6, noise=0.01, B=B, b=np.array([0.5, 0.3, -0.2]))
    fit = fit_surface(frame, "y", FACTORS)
    for goal, sign in (("max", 1), ("min", -1)):
        for r in (0.4, 0.9, 1.3):
            x = ridge_point(fit, r, goal)
            assert np.linalg.norm(x) == pytest.approx(r, rel=1e-8)
            best = -np.inf
            for start in np.random.default_rng(1).normal(size=(20, 3)):
                res = optimize.minimize(lambda z: -sign * float(fit.predict_coded(z)[0]), r * start / np.linalg.norm(start),
                                        method="SLSQP", constraints=[{"type": "eq", "fun": lambda z: z @ z - r * r}])
                best = max(best, sign * float(fit.predict_coded(res.x)[0]))
            assert sign * float(fit.predict_coded(x)[0]) == pytest.approx(best, abs=1e-6)
    path = ridge_path(fit, "max", steps=5)
    assert path[0].radius == 0 and path[-1].radius == pytest.approx(np.sqrt(2))
    values = [p.predicted for p in path]
    assert all(b >= a - 1e-9 for a, b in zip(values, values[1:]))  # the max on growing spheres cannot drop


def test_analysis_uses_ridge_when_the_stationary_point_is_outside():
    B = np.diag([-0.2, -0.3, -0.25])
    b = np.array([1.5, 0.2, 0.1])  # maximum at x1 = 3.75: far outside
    frame, _, _ = bbd_data(seed=7, noise=0.01, B=B, b=b)
    res = analyse(frame, "y", FACTORS, goal="max")
    assert res.stationary.kind == "maximum" and not res.stationary.inside
    assert res.ridge and "outside" in res.ridge_reason
    # the best in the region is on its boundary (BBD: radius sqrt(2), box +-1), not at an observed run
    x = np.array(res.best.coded)
    assert res.fit.region.contains(x)[0]
    assert np.isclose(np.linalg.norm(x), np.sqrt(2), atol=1e-4) or np.isclose(np.abs(x).max(), 1, atol=1e-6)
    observed = res.fit.predict_coded(res.fit.coded_x).max()
    assert res.best.predicted >= observed - 1e-9
    # independent brute force over a dense grid of the region
    g = np.linspace(-1, 1, 41)
    grid = np.array(np.meshgrid(g, g, g)).reshape(3, -1).T
    grid = grid[res.fit.region.contains(grid)]
    assert res.best.predicted >= res.fit.predict_coded(grid).max() - 1e-6


def test_interior_maximum_is_the_stationary_point():
    frame, B, b = bbd_data(seed=8, noise=0.01)
    res = analyse(frame, "y", FACTORS, goal="max")
    assert res.stationary.kind == "maximum" and res.stationary.inside
    assert res.best.at_stationary_point and not res.ridge
    assert res.best.predicted == pytest.approx(res.stationary.predicted)


def test_ccd_coding_puts_the_cube_at_one_and_axial_at_alpha():
    d = central_composite(make_factors({"a": [1.0, 2.0], "b": [10.0, 20.0]}), "rotatable", 4)
    frame = design_frame(d)
    frame["y"] = truth_coded(d.coded, 1.0, np.array([0.3, -0.2]), np.diag([-0.5, -0.4]))
    fit = fit_surface(frame, "y", ("a", "b"))
    assert np.allclose(fit.coded_x, d.coded)
    assert fit.region.radius == pytest.approx(np.sqrt(2), rel=1e-5)
    assert not fit.region.box_only
    assert fit.r2 == pytest.approx(1.0)


def test_face_centred_region_is_the_whole_box():
    d = central_composite(make_factors({"a": [1.0, 2.0], "b": [10.0, 20.0]}), "face-centred", 3)
    frame = design_frame(d)
    frame["y"] = np.arange(len(frame), dtype=float) ** 0.5
    fit = fit_surface(frame, "y", ("a", "b"))
    assert fit.region.box_only and fit.region.contains(np.array([[1.0, 1.0]]))[0]


def test_prediction_interval_matches_statsmodels():
    frame, _, _ = bbd_data(seed=10, noise=0.1)
    fit = fit_surface(frame, "y", FACTORS)
    at = np.array([0.03, 100.0, 2.5])
    pi = fit.interval(at, new_jobs=1, level=0.95)
    sm = smf.ols(formula(), data=frame).fit()
    sf = sm.get_prediction(pd.DataFrame([dict(zip(FACTORS, at))])).summary_frame(alpha=0.05)
    assert pi.predicted == pytest.approx(sf["mean"].iloc[0], rel=1e-9)
    assert pi.confidence == pytest.approx((sf["mean_ci_lower"].iloc[0], sf["mean_ci_upper"].iloc[0]), rel=1e-8)
    assert pi.prediction == pytest.approx((sf["obs_ci_lower"].iloc[0], sf["obs_ci_upper"].iloc[0]), rel=1e-8)
    # the mean of 4 confirmation jobs: narrower, by the closed form
    pi4 = fit.interval(at, new_jobs=4)
    half4 = (pi4.prediction[1] - pi4.prediction[0]) / 2
    assert half4 == pytest.approx(sm.t_test(np.zeros(10)).df_denom and
                                  __import__("scipy").stats.t.ppf(0.975, sm.df_resid)
                                  * np.sqrt(sm.mse_resid / 4 + sf["mean_se"].iloc[0] ** 2), rel=1e-8)


@pytest.mark.parametrize(
    "frame,factors,message",
    [
        (pd.DataFrame({"a": [1, 2, 1, 2, 1, 2], "b": [1, 1, 2, 2, 3, 3], "y": range(6)}), ("a", "b"), "2 level"),
        (pd.DataFrame({"a": [1, 2, 3, 1, 2, 3], "b": [1, 2, 3, 1, 2, 3], "y": range(6)}), ("a", "b"), "distinct"),
        (pd.DataFrame({"a": [1, 2, 3], "y": [1, 2, 3]}), ("zz",), "no column 'zz'"),
        (pd.DataFrame({"a": ["x", "y", "z"], "y": [1, 2, 3]}), ("a",), "non-numeric"),
        (pd.DataFrame({"a": [1, 2, 3], "y": [1, 2, 3]}), ("a", "a"), "twice"),
    ],
)
def test_unfittable_input_is_a_one_line_surface_error(frame, factors, message):
    with pytest.raises(SurfaceError, match=message) as e:
        fit_surface(frame, "y", factors)
    assert isinstance(e.value, ModelError) and "\n" not in str(e.value)


def test_plots_blank_outside_the_region_and_save(tmp_path):
    frame, _, _ = bbd_data(seed=11)
    fit = fit_surface(frame, "y", FACTORS)
    fig = contour(fit, 0, 1)
    assert fig.axes and "lr x batch" in fig.axes[0].get_title()
    from models.rsm.plots import _grid
    X, Y, Z = _grid(fit, 0, 1, np.array([0.0, 0.0, 1.0]))  # epochs at its high level: only radius 1 left
    assert np.isnan(Z[0, 0]) and np.isfinite(Z[Z.shape[0] // 2, Z.shape[1] // 2])
    assert surface(fit, 1, 2).axes
    paths = save_all(fit, tmp_path)
    assert len(paths) == 6 and all(p.stat().st_size > 5000 for p in paths)


def write_results(tmp_path: Path) -> Path:
    frame, _, _ = bbd_data(seed=12)
    frame = frame.rename(columns={"y": "accuracy"})
    frame["accuracy"] = frame["accuracy"] / 10
    frame["wall_clock_s"] = 10 + frame["batch"] / 10
    frame["status"] = "ok"
    bad = frame.iloc[[0]].assign(status="failed", accuracy=np.nan)
    out = tmp_path / "results.csv"
    pd.concat([frame, bad], ignore_index=True).to_csv(out, index=False)
    return out


@pytest.mark.slow
def test_cli_json(tmp_path):
    path = write_results(tmp_path)
    r = subprocess.run([sys.executable, "-m", "models.rsm", str(tmp_path), "--response", "accuracy",
                        "--factors", "lr,batch,epochs", "--format", "json", "--plots", str(tmp_path / "p")],
                       capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    ok = pd.read_csv(path).query("status == 'ok'")
    sm = smf.ols(formula().replace("y ~", "accuracy ~"), data=ok).fit()
    assert d["n"] == len(ok) == 17
    for term in ("lr", "lr:batch", "I(lr**2)", "I(epochs**2)"):
        assert d["coefficients"][term] == pytest.approx(sm.params[sm_name(term)], rel=1e-6)
    assert d["r2"] == pytest.approx(sm.rsquared)
    assert 0 <= d["lack_of_fit_p"] <= 1
    assert d["stationary_point"]["kind"] in ("maximum", "minimum", "saddle")
    assert set(d["stationary_point"]["natural"]) == {"lr", "batch", "epochs"}
    assert len(d["plots"]) == 6 and "1 status=failed" in d["rows"]


def test_cli_bad_input_one_line_exit_2(tmp_path, capsys):
    write_results(tmp_path)
    cases = ((["--response", "nope", "--factors", "lr,batch"], "no column 'nope'"),
             (["--response", "accuracy"], "--factors"),
             (["--response", "accuracy", "--factors", "lr,batch,status"], "non-numeric"))
    for extra, message in cases:
        assert run_cli(main, [str(tmp_path), *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert run_cli(main, [str(tmp_path / "none.csv"), "--response", "y", "--factors", "a"]) == 2
    assert capsys.readouterr().err.startswith("error: no results")


def test_optimum_min_goal_on_known_bowl():
    frame, _, _ = bbd_data(seed=13, noise=0.001, B=np.diag([0.8, 0.6, 0.5]), b=np.array([0.1, 0.2, -0.1]))
    best = optimum(fit_surface(frame, "y", FACTORS), "min")
    assert best.at_stationary_point
    assert np.allclose(best.coded, -0.5 * np.linalg.solve(np.diag([0.8, 0.6, 0.5]), [0.1, 0.2, -0.1]), atol=0.01)


def test_load_results_without_cost_keeps_accuracy_zero_and_drops_failed(tmp_path):
    from models.results import load_results
    pd.DataFrame({"a": [1, 2, 3, 4], "status": ["ok", "ok", "failed", "ok"], "wall_clock_s": [5.0, 6.0, 7.0, 8.0],
                  "accuracy": [0.0, 0.5, float("nan"), 0.7]}).to_csv(tmp_path / "r.csv", index=False)
    table = load_results(tmp_path / "r.csv", compute_cost=False)
    assert list(table.frame["wall_clock_s"]) == [5.0, 6.0, 8.0]  # accuracy 0 is an observation of time
    assert table.dropped == {"status=failed": 1} and "cost" not in table.frame.columns
    with_cost = load_results(tmp_path / "r.csv")
    assert len(with_cost.frame) == 2  # the cost T/(100A)^2 is infinite at accuracy 0


REAL = ROOT / "examples" / "rsm_lenet" / "results.csv"
REAL_FACTORS = ("learning_rate", "batch_size", "epochs")


def test_real_box_behnken_campaign_against_statsmodels():
    """15 real LeNet jobs (examples/rsm_lenet): the fit and its lack of fit agree with statsmodels."""
    from models.results import load_results
    frame = load_results(REAL, compute_cost=False).frame
    assert len(frame) == 15
    fit = fit_surface(frame, "accuracy", REAL_FACTORS)
    f = "accuracy ~ " + " + ".join(t.replace("**", " ** ") for t in term_names(REAL_FACTORS)[1:])
    sm = smf.ols(f, data=frame).fit()
    for c in fit.coefficients:
        assert c.natural == pytest.approx(sm.params[sm_name(c.term)], rel=1e-6, abs=1e-12)
    assert fit.r2 == pytest.approx(sm.rsquared)
    frame = frame.assign(cell=frame[list(REAL_FACTORS)].astype(str).agg("/".join, axis=1))
    cmp_ = anova_lm(sm, smf.ols("accuracy ~ C(cell)", data=frame).fit())
    assert fit.lack_of_fit.p == pytest.approx(cmp_["Pr(>F)"].iloc[1], rel=1e-7)
    assert (fit.lack_of_fit.df_lof, fit.lack_of_fit.df_pe) == (3, 2)


def test_log_transform_against_statsmodels_on_log_y():
    frame, _, _ = bbd_data(seed=14, noise=0.05)
    frame["y"] = np.exp(frame["y"] / 3)
    fit = fit_surface(frame, "y", FACTORS, transform="log")
    sm = smf.ols(formula().replace("y ~", "np.log(y) ~"), data=frame).fit()
    for c in fit.coefficients:
        assert c.natural == pytest.approx(sm.params[sm_name(c.term)], rel=1e-6, abs=1e-12)
    assert fit.r2 == pytest.approx(sm.rsquared)
    at = np.array([0.04, 60.0, 1.5])
    pi = fit.interval(at, new_jobs=1)
    sf = sm.get_prediction(pd.DataFrame([dict(zip(FACTORS, at))])).summary_frame(alpha=0.05)
    assert pi.predicted == pytest.approx(np.exp(sf["mean"].iloc[0]), rel=1e-9)
    assert pi.prediction == pytest.approx(tuple(np.exp(sf[["obs_ci_lower", "obs_ci_upper"]].iloc[0])), rel=1e-8)
    assert np.all(fit.predict_coded(fit.region.sample(500, np.random.default_rng(0))) > 0)
    sp = stationary_point(fit)
    assert sp.predicted == pytest.approx(float(fit.predict_coded(np.array(sp.coded))[0]), rel=1e-9)
    with pytest.raises(SurfaceError, match="<= 0"):
        fit_surface(frame.assign(y=frame["y"] - 10), "y", FACTORS, transform="log")


@pytest.mark.parametrize(
    "make,expect",
    [
        (lambda fs: box_behnken(fs, 3), "Box-Behnken (3 factors, 12 edge points + centre x3)"),
        (lambda fs: central_composite(fs, "face-centred", 2), "face-centred central composite (3 factors + centre x2)"),
        (lambda fs: central_composite(fs, "rotatable", 4), "central composite, rotatable alpha = 1.6818"),
        # orthogonal, k = 3, 4 centre points: sqrt((sqrt(8 * 18) - 8) / 2) = sqrt(2)
        (lambda fs: central_composite(fs, "orthogonal", 4), "central composite, alpha = 1.4142"),
    ],
)
def test_recognise_design_kinds(make, expect):
    from models.rsm.recognise import recognise
    fs = make_factors({"a": [10.0, 20.0], "b": [100.0, 200.0], "c": [1.0, 3.0]})
    d = make(fs)
    frame = design_frame(d)
    frame["y"] = np.random.default_rng(0).normal(size=len(frame))
    fit = fit_surface(frame, "y", ("a", "b", "c"))
    assert recognise(fit.coded_x).startswith(expect)
    grid = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=3)))
    assert recognise(grid) == "3^3 full factorial + centre x1"
    # for two factors the 3^2 grid is the face-centred CCD with one centre point
    grid2 = np.array(list(itertools.product([-1.0, 0.0, 1.0], repeat=2)))
    assert recognise(grid2).startswith("face-centred central composite (2 factors")
    assert "not a standard" in recognise(grid[:-1])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=10, max_size=10),
       st.lists(st.floats(-100, 100), min_size=3, max_size=3),
       st.lists(st.floats(0.01, 50), min_size=3, max_size=3))
def test_natural_coefficients_reproduce_coded_predictions(beta, centre, half):
    from models.rsm.coding import Coding
    from models.rsm.fit import natural_from_coded
    coding = Coding(FACTORS, tuple(centre), tuple(half))
    nat = natural_from_coded(np.array(beta), coding)
    X = coding.to_natural(np.random.default_rng(0).uniform(-1.5, 1.5, size=(20, 3)))
    coded_pred = model_matrix(coding.to_coded(X)) @ np.array(beta)
    natural_pred = model_matrix(X) @ nat
    scale = 1 + np.abs(coded_pred).max()
    assert np.allclose(natural_pred, coded_pred, atol=1e-7 * scale * (1 + np.abs(X).max() ** 2))


def test_real_face_centred_campaign():
    """11 real LeNet jobs of a face-centred CCD (examples/rsm_lenet_ccd): recognised, fitted as statsmodels does."""
    from models.results import load_results
    from models.rsm.recognise import recognise
    frame = load_results(ROOT / "examples" / "rsm_lenet_ccd", compute_cost=False).frame
    fit = fit_surface(frame, "accuracy", ("learning_rate", "batch_size"))
    assert recognise(fit.coded_x) == "face-centred central composite (2 factors + centre x3)"
    sm = smf.ols("accuracy ~ learning_rate + batch_size + learning_rate:batch_size + I(learning_rate ** 2)"
                 " + I(batch_size ** 2)", data=frame).fit()
    for c in fit.coefficients:
        assert c.natural == pytest.approx(sm.params[sm_name(c.term)], rel=1e-6, abs=1e-12)
    assert (fit.lack_of_fit.df_lof, fit.lack_of_fit.df_pe) == (3, 2)
    assert fit.region.box_only
