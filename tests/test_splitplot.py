"""Split-plot analysis (models.anova.splitplot): a published example, hand-computed stratum ANOVAs, statsmodels'
MixedLM on unbalanced data, the untestable whole-plot factor, and the command line.

Fixture ``tests/fixtures/splitplot/oats.csv``: Yates' (1935) oats split-plot field trial, as R's MASS::oats
(Venables & Ripley 2002): 6 blocks (B), each split into 3 whole plots sown with one variety (V), each split into
4 subplots given one dose of nitrogen (N); Y is the yield. The 72 rows were copied from the Rdatasets export of
MASS::oats. The published figures tested below are those printed by nlme's ``anova(lme(yield ~ variety*nitrogen,
random = ~1|block/mainplot))``, lme4 and ASReml-R in L. Apiolaza, "Linear mixed models in R" (quantumforest.com,
2011): variety F = 1.48534 on 2 and 10 df (p = 0.2724), nitrogen F = 37.68562 on 3 and 45 df (p = 2.457710e-12),
variety:nitrogen F = 0.30282 on 6 and 45 df (p = 0.9322); stratum variances 601.3306 on 10 df (block:mainplot)
and 177.0833 on 45 df (residual); REML variance of main plots within blocks 106.06. The same stratum ANOVA is
the textbook ``aov(Y ~ N*V + Error(B/V), data = oats)`` of Venables & Ripley. Blocks are random there and fixed
here: on balanced data the tests of V, N and V:N are the same.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models.anova.cli import main as anova_main
from models.anova.splitplot import SplitPlotError, fit_split_plot, split_plot_structure
from models.errors import AnalysisOptionError, CostInputsMissingError

OATS = Path(__file__).parent / "fixtures" / "splitplot" / "oats.csv"
#: Montgomery's paper tensile-strength split plot (Design and Analysis of Experiments, section 14.4 in the 8th
#: edition, 2012): 3 days (blocks), 3 pulp preparation methods (whole plots: one batch of pulp each), 4 cooking
#: temperatures (subplots). The 36 rows, in run order, are those of Stat-Ease's tutorial data file for this example
#: (cdn.statease.com .../pulp.dxpx, "Split-Plot Multilevel Categoric Factorial" tutorial). Montgomery's whole-plot
#: test of the method is F = 7.08 on 2 and 4 df (MS 64.20 against the day x method MS 9.07), p = 0.049.
PULP = Path(__file__).parent / "fixtures" / "splitplot" / "pulp.csv"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert anova_main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def by_term(doc: dict) -> dict[str, dict]:
    return {r["term"]: r for r in doc["rows"]}


# --- the published example -------------------------------------------------------------------------


def test_oats_reproduces_the_published_split_plot_anova(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, str(OATS), "--response", "Y", "--whole-plot", "V", "--block", "B")
    assert doc["analysis"] == "split-plot" and doc["df_method"] == "containment"
    rows = by_term(doc)
    published = {  # term: (stratum, num df, den df, F, p)
        "C(V)": ("whole plot", 2, 10, 1.48534, 0.2724),
        "C(N)": ("subplot", 3, 45, 37.68562, 2.457710e-12),
        "C(V):C(N)": ("subplot", 6, 45, 0.30282, 0.9322),
    }
    for term, (stratum, df1, df2, F, p) in published.items():
        r = rows[term]
        assert (r["stratum"], r["df_num"], r["df_den"]) == (stratum, df1, df2), term
        assert r["F"] == pytest.approx(F, rel=5e-4), term
        assert r["p"] == pytest.approx(p, rel=5e-4), term
    strata = {s["name"]: s for s in doc["strata"]}
    assert strata["whole-plot error"]["df"] == 10
    assert strata["whole-plot error"]["mean_sq"] == pytest.approx(601.3306, rel=1e-5)
    assert strata["residual"]["df"] == 45
    assert strata["residual"]["mean_sq"] == pytest.approx(177.0833, rel=1e-5)
    comps = {v["name"]: v for v in doc["variance_components"]}
    assert comps["whole plot"]["variance"] == pytest.approx(106.06, rel=1e-3)
    assert comps["residual"]["variance"] == pytest.approx(177.0833, rel=1e-5)
    assert comps["whole plot"]["share"] + comps["residual"]["share"] == pytest.approx(1.0)
    assert doc["whole_plots"]["count"] == 18 and doc["whole_plots"]["factors"] == ["V"]
    assert doc["untestable"] == [] and doc["input"]["read"] == 72


def test_oats_ordinary_anova_is_the_overconfident_one(capsys: pytest.CaptureFixture[str]) -> None:
    """--whole-plot none fits the randomized-design ANOVA: with the blocks, V is then tested against the pooled
    error (whole-plot error + residual, 10 + 45 df), and looks significant."""
    doc = run_json(capsys, str(OATS), "--response", "Y", "--factors", "V,N", "--whole-plot", "none",
                   "--terms", "C(B) + C(V) + C(N) + C(V):C(N)")
    v = by_term(doc)["C(V)"]
    pooled = (6013.3056 + 7968.75) / 55  # the published strata's sums of squares
    F = 1786.3611 / 2 / pooled  # the published SS of V
    assert v["df"] == 2 and v["F"] == pytest.approx(F, rel=1e-4)
    assert v["p"] == pytest.approx(stats.f.sf(F, 2, 55), rel=1e-3)
    assert v["p"] < 0.05 < 0.2724  # the ordinary ANOVA calls the variety effect significant; the split-plot does not


def test_pulp_whole_plot_test_is_montgomerys(capsys: pytest.CaptureFixture[str]) -> None:
    """The example of the issue: the method's correct test is F = 7.08 on 2 and 4 df, p = 0.049, where the
    ordinary ANOVA of the same runs (with or without the days) says p < 0.002."""
    doc = run_json(capsys, str(PULP), "--response", "strength", "--factors", "method,temperature",
                   "--terms", "C(method) + C(temperature) + C(method):C(temperature)",
                   "--whole-plot", "method", "--block", "day")
    method = by_term(doc)["C(method)"]
    assert (method["stratum"], method["df_num"], method["df_den"]) == ("whole plot", 2, 4)
    assert method["F"] == pytest.approx(7.08, abs=0.005) and method["p"] == pytest.approx(0.049, abs=0.0005)
    wp = {s["name"]: s for s in doc["strata"]}["whole-plot error"]
    assert wp["df"] == 4 and wp["mean_sq"] == pytest.approx(9.07, abs=0.005)
    for terms in ("C(day) + C(method)*C(temperature)", "C(method)*C(temperature)"):
        ordinary = by_term(run_json(capsys, str(PULP), "--response", "strength", "--factors", "method,temperature",
                                    "--whole-plot", "none", "--terms", terms))["C(method)"]
        assert ordinary["p"] < 0.002 < method["p"] / 20


# --- balanced data equals the hand-computed stratum ANOVA ----------------------------------------------


def blocked_split_plot(seed: int, blocks: int = 4, plot_sd: float = 2.0) -> pd.DataFrame:
    """Blocks x whole-plot factor A (3 text levels) x subplot factor S (4 text levels), one run per cell."""
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(blocks):
        block_effect = rng.normal(0, 3)
        for a in ("a1", "a2", "a3"):
            plot = rng.normal(0, plot_sd)
            for s in ("s1", "s2", "s3", "s4"):
                y = 50 + block_effect + {"a1": 0, "a2": 1.5, "a3": -1}[a] + {"s1": 0, "s2": 2, "s3": 3, "s4": -1}[s]
                rows.append({"block": f"b{b}", "A": a, "S": s, "y": y + plot + rng.normal(0, 1.0)})
    return pd.DataFrame(rows)


def stratum_anova(d: pd.DataFrame) -> dict[str, tuple[float, int]]:
    """The classical split-plot ANOVA by sums of squares of means (balanced data): SS and df per line."""
    y = d["y"].to_numpy()
    grand = y.mean()

    def ss_of(keys: list[str]) -> float:
        means = d.groupby(keys)["y"].transform("mean").to_numpy()
        return float(((means - grand) ** 2).sum())

    r, a, s = d["block"].nunique(), d["A"].nunique(), d["S"].nunique()
    ss_block, ss_a, ss_s = ss_of(["block"]), ss_of(["A"]), ss_of(["S"])
    ss_wp = ss_of(["block", "A"]) - ss_block - ss_a
    ss_as = ss_of(["A", "S"]) - ss_a - ss_s
    ss_res = float(((y - grand) ** 2).sum()) - ss_block - ss_a - ss_wp - ss_s - ss_as
    return {"block": (ss_block, r - 1), "A": (ss_a, a - 1), "wp_error": (ss_wp, (r - 1) * (a - 1)),
            "S": (ss_s, s - 1), "A:S": (ss_as, (a - 1) * (s - 1)),
            "residual": (ss_res, r * a * (s - 1) - (s - 1) - (a - 1) * (s - 1))}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_balanced_blocked_split_plot_equals_the_stratum_anova(seed: int) -> None:
    d = blocked_split_plot(seed)
    result = fit_split_plot(d, "y", ["A", "S"], whole_plot_factors=["A"], block="block")
    table = stratum_anova(d)
    ms = {k: ss / df for k, (ss, df) in table.items()}
    wp_df, res_df = table["wp_error"][1], table["residual"][1]
    expected = {"C(block)": ("block", wp_df), "C(A)": ("A", wp_df), "C(S)": ("S", res_df), "C(A):C(S)": ("A:S", res_df)}
    for term, (line, den) in expected.items():
        error = ms["wp_error"] if den == wp_df else ms["residual"]
        F = ms[line] / error
        row = result.row(term)
        assert (row.df_num, row.df_den) == (table[line][1], den), term
        assert row.F == pytest.approx(F, rel=1e-6), term
        assert row.p == pytest.approx(stats.f.sf(F, table[line][1], den), rel=1e-5), term
    assert result.stratum("whole-plot error").mean_sq == pytest.approx(ms["wp_error"], rel=1e-9)
    assert result.stratum("residual").mean_sq == pytest.approx(ms["residual"], rel=1e-9)
    wp_var, res_var = (v.variance for v in result.variance_components)
    assert res_var == pytest.approx(ms["residual"], rel=1e-6)
    assert wp_var == pytest.approx((ms["wp_error"] - ms["residual"]) / 4, rel=1e-5, abs=1e-6)


def test_negative_whole_plot_variance_is_kept_unbounded_and_said() -> None:
    """No whole-plot variation: the first seed whose whole-plot error MS is below the residual MS (by the hand
    computation) gives a negative REML estimate, a note, and still the stratum ANOVA's F."""
    for seed in range(100):
        d = blocked_split_plot(seed, plot_sd=0.0)
        table = stratum_anova(d)
        ms = {k: ss / df for k, (ss, df) in table.items()}
        if ms["wp_error"] < ms["residual"]:
            break
    else:
        pytest.fail("no seed gave a whole-plot error mean square below the residual's")
    result = fit_split_plot(d, "y", ["A", "S"], whole_plot_factors=["A"], block="block")
    wp_var = result.variance_components[0]
    assert wp_var.variance == pytest.approx((ms["wp_error"] - ms["residual"]) / 4, rel=1e-5)
    assert wp_var.variance < 0 and wp_var.share == 0.0
    assert any("whole-plot variance is" in n and "read it as 0" in n for n in result.notes)
    assert result.row("C(A)").F == pytest.approx(ms["A"] / ms["wp_error"], rel=1e-6)


def two_level_split_plot(seed: int, reps: int = 3, drift: float = 2.0) -> pd.DataFrame:
    """nodes (whole plot, 2 levels) x x1, x2 (subplot, 2 levels each, 2^2 per whole plot); each replicate has its
    own whole plots, numbered across the campaign as the harness numbers them."""
    rng = np.random.default_rng(seed)
    rows, plot_id = [], 0
    for rep in range(1, reps + 1):
        for nodes in rng.permutation([2, 4]):
            plot_id += 1
            plot = rng.normal(0, drift)
            for x1, x2 in rng.permutation(list(itertools.product([-1, 1], [-1, 1]))):
                y = 100 - 8 * (nodes == 4) + 3 * x1 - 1.5 * x2 + 1.0 * x1 * (nodes == 4)
                rows.append({"run": len(rows) + 1, "replicate": rep, "whole_plot": plot_id, "nodes": int(nodes),
                             "x1": int(x1), "x2": int(x2), "status": "ok",
                             "wall_clock_s": y + plot + rng.normal(0, 1.0), "accuracy": 0.9})
    return pd.DataFrame(rows)


def test_balanced_two_level_split_plot_equals_contrast_sums_of_squares() -> None:
    """Orthogonal +-1 contrasts: SS = (sum c*y)^2 / n; whole-plot error = whole-plot means about nodes."""
    d = two_level_split_plot(seed=7)
    result = fit_split_plot(d, "wall_clock_s", ["nodes", "x1", "x2"], whole_plot_factors=None, whole_plot="whole_plot")
    y = d["wall_clock_s"].to_numpy()
    n = len(y)
    c = {"nodes": np.where(d["nodes"] == 4, 1.0, -1.0), "x1": d["x1"].to_numpy(float), "x2": d["x2"].to_numpy(float)}
    c.update({"nodes:x1": c["nodes"] * c["x1"], "nodes:x2": c["nodes"] * c["x2"], "x1:x2": c["x1"] * c["x2"]})
    ss = {k: float(v @ y) ** 2 / n for k, v in c.items()}
    plot_means = d.groupby("whole_plot")["wall_clock_s"].transform("mean").to_numpy()
    ss_plots = float(((plot_means - y.mean()) ** 2).sum())
    ss_wp, df_wp = ss_plots - ss["nodes"], 6 - 2
    ss_res = float(((y - y.mean()) ** 2).sum()) - ss_plots - sum(v for k, v in ss.items() if k != "nodes")
    df_res = n - 6 - 5
    assert result.whole_plots.factors == ("nodes",)
    for term, value in ss.items():
        row = result.row(term)
        wp = term == "nodes"
        F = value / (ss_wp / df_wp if wp else ss_res / df_res)
        assert row.stratum == ("whole plot" if wp else "subplot"), term
        assert row.df_den == (df_wp if wp else df_res), term
        assert row.F == pytest.approx(F, rel=1e-6), term
    assert result.stratum("residual").sum_sq == pytest.approx(ss_res, rel=1e-9)


# --- unbalanced data: statsmodels MixedLM ---------------------------------------------------------------


def test_unbalanced_matches_statsmodels_mixedlm() -> None:
    import statsmodels.formula.api as smf

    d = blocked_split_plot(seed=11, blocks=5)
    d = d.drop(index=[5, 30]).reset_index(drop=True)  # two dropped runs, in different whole plots
    result = fit_split_plot(d, "y", ["A", "S"], whole_plot_factors=["A"], block="block")
    d["plot"] = d["block"] + d["A"]
    fit = smf.mixedlm("y ~ C(block, Sum) + C(A, Sum) + C(S, Sum) + C(A, Sum):C(S, Sum)", d, groups=d["plot"]).fit(
        reml=True, method=["bfgs"], gtol=1e-10)
    ours = {c.name: c for c in result.coefficients}
    for name, value in fit.fe_params.items():
        assert ours[name].estimate == pytest.approx(value, rel=1e-4, abs=1e-6), name
        assert ours[name].se == pytest.approx(fit.bse[name], rel=1e-3), name
    wp_var, res_var = (v.variance for v in result.variance_components)
    assert wp_var == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-3)
    assert res_var == pytest.approx(float(fit.scale), rel=1e-4)
    # Wald F of A from MixedLM's own estimates and covariance, on the containment df (15 plots - 1 - 4 - 2 = 8)
    cols = [i for i, nm in enumerate(fit.fe_params.index) if nm.startswith("C(A, Sum)[") and ":" not in nm]
    b = fit.fe_params.to_numpy()[cols]
    cov = fit.cov_params().to_numpy()[np.ix_(cols, cols)]
    F = float(b @ np.linalg.solve(cov, b)) / len(cols)
    row = result.row("C(A)")
    assert (row.df_num, row.df_den) == (2, 8)
    assert row.F == pytest.approx(F, rel=1e-3)
    assert result.row("C(S)").df_den == 5 * 3 * 3 - 3 - 6 - 2  # the residual df lose the dropped runs
    assert result.whole_plots.sizes == (3, 4)


# --- a factor that cannot be tested -------------------------------------------------------------------


def test_one_whole_plot_per_level_gets_a_line_and_no_p_value(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    """One block per level of nodes (what grouping runs by nodes gives): nodes has no whole-plot error df."""
    d = two_level_split_plot(seed=3, reps=3)
    d["whole_plot"] = np.where(d["nodes"] == 2, 1, 2)  # every run at one level of nodes in one whole plot
    path = tmp_path / "results.csv"
    d.to_csv(path, index=False)
    doc = run_json(capsys, str(path), "--response", "wall_clock_s", "--factors", "nodes,x1,x2")
    rows = by_term(doc)
    assert rows["nodes"]["p"] is None and rows["nodes"]["F"] is None and rows["nodes"]["df_den"] is None
    assert rows["nodes"]["testable"] is False
    assert doc["untestable"] == ["nodes: one whole plot per level, its effect is confounded with drift"]
    assert rows["nodes"]["note"] == doc["untestable"][0]
    # the subplot terms are still tested, and equal the ordinary ANOVA's (the whole plots are the nodes levels)
    ordinary = by_term(run_json(capsys, str(path), "--response", "wall_clock_s", "--factors", "nodes,x1,x2",
                                "--whole-plot", "none"))
    for term in ("x1", "x2", "nodes:x1", "x1:x2"):
        assert rows[term]["F"] == pytest.approx(ordinary[term]["F"], rel=1e-6), term
        assert rows[term]["df_den"] == 24 - 7
    assert any("cannot be estimated" in n for n in doc["notes"])
    assert doc["variance_components"][0]["variance"] is None and doc["variance_components"][0]["share"] is None
    assert anova_main([str(path), "--response", "wall_clock_s", "--factors", "nodes,x1,x2"]) == 0
    text = capsys.readouterr().out
    assert "cannot be tested: nodes: one whole plot per level, its effect is confounded with drift" in text


# --- the command line ------------------------------------------------------------------------------------


def test_campaign_table_with_whole_plots_is_analysed_as_split_plot_with_no_flags(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    d = two_level_split_plot(seed=5)
    path = tmp_path / "results.csv"
    d.to_csv(path, index=False)
    assert split_plot_structure(d, ["nodes", "x1", "x2"]) == (("nodes",), 6)
    assert anova_main([str(path), "--response", "wall_clock_s", "--factors", "nodes,x1,x2", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "whole-plot factors (constant within every whole plot): nodes" in err
    doc = json.loads(out)
    assert doc["analysis"] == "split-plot"
    assert by_term(doc)["nodes"]["stratum"] == "whole plot" and by_term(doc)["nodes"]["df_den"] == 4
    direct = fit_split_plot(d, "wall_clock_s", ["nodes", "x1", "x2"], whole_plot_factors=["nodes"],
                            whole_plot="whole_plot")
    assert by_term(doc)["nodes"]["F"] == pytest.approx(direct.row("nodes").F, rel=1e-12)
    with pytest.raises(AnalysisOptionError, match="--kruskal is not available with the split-plot"):
        anova_main([str(path), "--response", "wall_clock_s", "--factors", "nodes,x1,x2", "--kruskal"])
    assert anova_main([str(path), "--response", "wall_clock_s", "--factors", "nodes,x1,x2", "--format", "csv"]) == 0
    csv_out = capsys.readouterr().out
    assert csv_out.splitlines()[0] == "term,stratum,role,df_num,df_den,F,p,note"


def test_whole_plot_factor_that_changes_within_a_whole_plot_is_refused() -> None:
    d = two_level_split_plot(seed=5)
    with pytest.raises(SplitPlotError, match="'x1' changes within a whole plot"):
        fit_split_plot(d, "wall_clock_s", ["nodes", "x1", "x2"], whole_plot_factors=["nodes", "x1"],
                       whole_plot="whole_plot")


def test_block_without_whole_plots_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    blocked_split_plot(seed=1).to_csv(path, index=False)
    with pytest.raises(AnalysisOptionError, match="--block block needs whole plots"):
        anova_main([str(path), "--response", "y", "--factors", "A,S", "--block", "block"])


def test_any_response_of_a_table_without_cost_columns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """No wall_clock_s, accuracy or cost: another --response is analysed; the cost is still refused."""
    path = tmp_path / "t.csv"
    d = blocked_split_plot(seed=2)
    d.to_csv(path, index=False)
    doc = run_json(capsys, str(path), "--response", "y", "--factors", "A,S")
    assert doc["input"]["cost"] == "not computed"
    import statsmodels.formula.api as smf

    expected = smf.ols("y ~ C(A) + C(S) + C(A):C(S)", d).fit()
    assert by_term(doc)["C(S)"]["df"] == 3
    assert sum(r["sum_sq"] for r in doc["rows"] if r["term"] == "Residual") == pytest.approx(expected.ssr, rel=1e-9)
    with pytest.raises(CostInputsMissingError, match="cannot compute the cost"):
        anova_main([str(path), "--factors", "A,S"])


# --- response surfaces -------------------------------------------------------------------------------


def surface_split_plot_table(seed: int) -> pd.DataFrame:
    """nodes (whole plot, 3 levels) x a 3^2 grid of learning_rate and batch_size in each whole plot, 2 replicates
    with their own whole plots (6 in all), one run dropped."""
    rng = np.random.default_rng(seed)
    rows, plot_id = [], 0
    for rep in (1, 2):
        for nodes in rng.permutation([2, 4, 6]):
            plot_id += 1
            plot = rng.normal(0, 3.0)
            for lr, bs in itertools.product([0.01, 0.02, 0.03], [64, 128, 192]):
                w, a, b = (nodes - 4) / 2, (lr - 0.02) / 0.01, (bs - 128) / 64
                y = 80 + 4 * w - 3 * w * w + 2 * a - 2.5 * a * a + 1.5 * b + 0.8 * a * b
                rows.append({"whole_plot": plot_id, "replicate": rep, "nodes": int(nodes), "learning_rate": lr,
                             "batch_size": bs, "accuracy_pct": y + plot + rng.normal(0, 1.0)})
    return pd.DataFrame(rows).drop(index=[10]).reset_index(drop=True)


def test_rsm_tests_terms_by_the_split_plot_fit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import statsmodels.formula.api as smf

    from models.rsm.cli import main as rsm_main

    d = surface_split_plot_table(seed=4)
    path = tmp_path / "results.csv"
    d.to_csv(path, index=False)
    factors = "nodes,learning_rate,batch_size"
    assert rsm_main([str(path), "--response", "accuracy_pct", "--factors", factors, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sp = doc["split_plot"]
    assert sp["whole_plot_factors"] == ["nodes"] and sp["whole_plots"] == 6
    assert all(c["p"] is None for c in doc["coded_coefficients"].values())  # no randomized-design p-values
    assert all(r["p"] is None for r in doc["anova"] if r["term"] != "lack of fit")
    # statsmodels MixedLM on the same coded columns
    coded = pd.DataFrame({"w": (d["nodes"] - 4) / 2, "a": (d["learning_rate"] - 0.02) / 0.01,
                          "b": (d["batch_size"] - 128) / 64, "y": d["accuracy_pct"], "g": d["whole_plot"]})
    fit = smf.mixedlm("y ~ w + a + b + w:a + w:b + a:b + I(w**2) + I(a**2) + I(b**2)", coded, groups=coded["g"]).fit(
        reml=True, method=["bfgs"], gtol=1e-10)
    names = {"nodes": "w", "learning_rate": "a", "batch_size": "b", "nodes:learning_rate": "w:a",
             "nodes:batch_size": "w:b", "learning_rate:batch_size": "a:b", "I(nodes**2)": "I(w ** 2)",
             "I(learning_rate**2)": "I(a ** 2)", "I(batch_size**2)": "I(b ** 2)"}
    tests = {t["term"]: t for t in sp["tests"]}
    for ours, theirs in names.items():
        t = tests[ours]
        assert t["estimate"] == pytest.approx(fit.fe_params[theirs], rel=1e-4, abs=1e-6), ours
        assert t["se"] == pytest.approx(fit.bse[theirs], rel=1e-3), ours
        whole = ours in ("nodes", "I(nodes**2)")
        assert t["stratum"] == ("whole plot" if whole else "subplot"), ours
        assert t["df_den"] == (6 - 3 if whole else 53 - 6 - 7), ours
        assert t["p"] == pytest.approx(2 * stats.t.sf(abs(fit.fe_params[theirs] / fit.bse[theirs]), t["df_den"]),
                                       rel=2e-3), ours
    assert sp["variance_components"]["whole_plot"] == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-3)
    assert tests["quadratic"]["stratum"] == "subplot" and tests["quadratic"]["df_num"] == 3
    assert rsm_main([str(path), "--response", "accuracy_pct", "--factors", factors]) == 0
    text = capsys.readouterr().out
    assert "split-plot tests (6 whole plots; whole-plot factors: nodes)" in text


@pytest.mark.parametrize("extra, message", [
    (["--whole-plot", "foo"], "--whole-plot foo: foo not among the factors V, N"),
    (["--whole-plot", "V", "--block", "Q"], "block column 'Q' is not in the table"),
    (["--whole-plot", "V", "--block", "B", "--robust", "hc3"], "--robust is not available with the split-plot"),
    (["--whole-plot", "none", "--block", "B"], "--block goes with the split-plot analysis"),
])
def test_bad_split_plot_options_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], extra: list[str],
                                                       message: str) -> None:
    from sparkdl.cli import run_cli

    code = run_cli(anova_main, [str(OATS), "--response", "Y", "--factors", "V,N", *extra])
    err = capsys.readouterr().err
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and message in lines[0]
