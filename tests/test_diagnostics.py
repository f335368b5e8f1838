"""Assumption checks against closed forms, and Marinos 2021's data read the right way round."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models.anova import fit_anova
from models.diagnostics import (
    breusch_pagan_check,
    check_assumptions,
    compare_transforms,
    kruskal_wallis,
    shapiro_check,
    variance_check,
    vif_table,
)

TABLE2 = Path(__file__).resolve().parents[1] / "examples" / "marinos2021" / "table2.csv"
PAPER_TERMS = "nodes + executors + executor_cores + epochs*learning_rate*batch_size"

# Marinos 2021, Table V: VIFs of the natural-unit model columns (they depend on the design only).
TABLE5 = {
    "nodes": 1.0044642857142865,
    "executors": 1.0044642857142851,
    "executor_cores": 1.0666666666666662,
    "epochs": 9.08568815729309,
    "learning_rate": 18.162962962962965,
    "epochs:learning_rate": 23.67992684042065,
    "batch_size": 17.56378600823049,
    "epochs:batch_size": 24.788608008361116,
    "learning_rate:batch_size": 32.26149323927107,
    "epochs:learning_rate:batch_size": 33.942282317591015,
}


@pytest.fixture(scope="module")
def fig2():
    t = pd.read_csv(TABLE2)
    data = t[~t["run"].isin([2, 3])].reset_index(drop=True)
    return data, fit_anova(data, "cost", PAPER_TERMS, typ=1)


def normal_replicated(seed: int, sd_by_point=None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    pts = list(itertools.product([-1, 1], repeat=3))
    rows = []
    for k, (a, b, c) in enumerate(pts):
        sd = 1.0 if sd_by_point is None else sd_by_point[k]
        for _ in range(6):
            rows.append({"a": a, "b": b, "c": c, "y": 10 + 2 * a - b + rng.normal(0, sd)})
    return pd.DataFrame(rows)


def bartlett_by_hand(groups):
    k = len(groups)
    n = np.array([len(g) for g in groups])
    s2 = np.array([np.var(g, ddof=1) for g in groups])
    big_n = n.sum()
    sp2 = np.sum((n - 1) * s2) / (big_n - k)
    num = (big_n - k) * np.log(sp2) - np.sum((n - 1) * np.log(s2))
    den = 1 + (np.sum(1 / (n - 1)) - 1 / (big_n - k)) / (3 * (k - 1))
    stat = num / den
    return stat, stats.chi2.sf(stat, k - 1)


def levene_median_by_hand(groups):
    z = [np.abs(g - np.median(g)) for g in groups]
    allz = np.concatenate(z)
    k, big_n = len(z), allz.size
    between = sum(len(g) * (g.mean() - allz.mean()) ** 2 for g in z) / (k - 1)
    within = sum(((g - g.mean()) ** 2).sum() for g in z) / (big_n - k)
    w = between / within
    return w, stats.f.sf(w, k - 1, big_n - k)


def groups_of(data, response="y", factors=("a", "b", "c")):
    return [g[response].to_numpy(dtype=float) for _, g in data.groupby(list(factors), sort=False)]


def test_shapiro_is_on_the_residuals():
    data = normal_replicated(1)
    result = fit_anova(data, "y", "a + b + c")
    x = np.column_stack([np.ones(len(data)), data[["a", "b", "c"]].to_numpy(float)])
    beta, *_ = np.linalg.lstsq(x, data["y"].to_numpy(), rcond=None)
    resid = data["y"].to_numpy() - x @ beta
    w, p = stats.shapiro(resid)
    check = check_assumptions(result).check("Shapiro-Wilk")
    assert check.statistic == pytest.approx(w, rel=1e-9) and check.p == pytest.approx(p, rel=1e-6)


def test_bartlett_when_normal_matches_closed_form_on_response_by_design_point():
    data = normal_replicated(2)
    result = fit_anova(data, "y", "a + b + c")
    diag = check_assumptions(result)
    assert diag.check("Shapiro-Wilk").holds is True
    check = diag.checks[1]
    assert check.name == "Bartlett"
    stat, p = bartlett_by_hand(groups_of(data))
    assert check.statistic == pytest.approx(stat, rel=1e-9)
    assert check.p == pytest.approx(p, rel=1e-7)
    assert check.holds is bool(p >= 0.05)


def test_levene_median_matches_closed_form_and_detects_unequal_variances():
    data = normal_replicated(3, sd_by_point=[0.2, 0.2, 0.2, 0.2, 5, 5, 5, 5])
    result = fit_anova(data, "y", "a + b + c")
    check = variance_check(result, normal=False)
    assert check.name == "Levene (median)"
    w, p = levene_median_by_hand(groups_of(data))
    assert check.statistic == pytest.approx(w, rel=1e-9)
    assert check.p == pytest.approx(p, rel=1e-7)
    assert check.holds is False and "too small or too large" in check.meaning


def test_breusch_pagan_is_n_times_r2_of_squared_residuals():
    data = normal_replicated(4, sd_by_point=[0.5, 0.5, 1, 1, 2, 2, 4, 4])
    result = fit_anova(data, "y", "a + b + c")
    x = np.column_stack([np.ones(len(data)), data[["a", "b", "c"]].to_numpy(float)])
    e2 = result.residuals**2
    beta, *_ = np.linalg.lstsq(x, e2, rcond=None)
    r2 = 1 - np.sum((e2 - x @ beta) ** 2) / np.sum((e2 - e2.mean()) ** 2)
    lm = len(e2) * r2  # Koenker's studentized statistic
    check = breusch_pagan_check(result)
    assert check.statistic == pytest.approx(lm, rel=1e-9)
    assert check.p == pytest.approx(stats.chi2.sf(lm, 3), rel=1e-7)


def test_vif_reproduces_marinos2021_table_v_and_centring_removes_it(fig2):
    _, result = fig2
    rows = {r.term: r for r in vif_table(result)}
    assert "Intercept" not in rows  # an intercept's "VIF" measures nothing
    for term, vif in TABLE5.items():
        assert rows[term].vif == pytest.approx(vif, rel=1e-9)
        assert rows[term].vif_coded < 1.1
    check = check_assumptions(result).check("VIF")
    assert check.holds is True and "coding artefact" in check.meaning


def test_vif_equals_diagonal_of_inverse_correlation_matrix(fig2):
    data, result = fig2
    x = np.asarray(result.fit.model.exog)[:, 1:]
    expected = np.diag(np.linalg.inv(np.corrcoef(x, rowvar=False)))
    got = np.array([r.vif for r in vif_table(result)])
    assert np.allclose(got, expected, rtol=1e-8)


def test_marinos2021_data_rejects_normality_and_equal_variances(fig2):
    data, result = fig2
    diag = check_assumptions(result)
    shapiro = diag.check("Shapiro-Wilk")
    # Table III printed W = 0.472, p = 7.4e-29 and called it "normal"; it is the opposite.
    assert shapiro.statistic == pytest.approx(0.4723, abs=0.01)
    assert shapiro.p < 1e-20 and shapiro.holds is False
    variance = diag.checks[1]
    assert variance.name == "Levene (median)"  # not Bartlett: the residuals are not normal
    w, p = levene_median_by_hand(groups_of(data, "cost", result.factors))
    assert variance.statistic == pytest.approx(w, rel=1e-9) and variance.holds is False
    assert not diag.all_hold
    assert any(r.startswith("--transform log") for r in diag.remedies)
    assert any(r.startswith("--robust hc3") for r in diag.remedies)


def test_log_transform_comparison_on_marinos2021_data(fig2):
    data, before = fig2
    after = fit_anova(data, "cost", PAPER_TERMS, typ=1, transform="log")
    cmp = compare_transforms(before, after)
    shapiro_before, shapiro_after = cmp.checks[0]
    assert shapiro_after.statistic > shapiro_before.statistic + 0.3  # far closer to normal
    assert cmp.r_squared[1] > cmp.r_squared[0]
    changed = {t.term for t in cmp.terms if (t.p_before < 0.05) != (t.p_after < 0.05)}
    text = cmp.to_text()
    assert "log(cost)" in text
    for term in changed:
        assert term in text
    # The verdicts are recomputed, not copied: the log fit's Levene test is on log(cost).
    groups = groups_of(data.assign(lc=np.log(data["cost"])), "lc", before.factors)
    w, _ = levene_median_by_hand(groups)
    assert cmp.checks[1][1].statistic == pytest.approx(w, rel=1e-9)


def test_variance_check_not_applicable_without_replicates():
    rows = [(a, b, c, float(i)) for i, (a, b, c) in enumerate(itertools.product([-1, 1], repeat=3))]
    data = pd.DataFrame(rows, columns=["a", "b", "c", "y"])
    result = fit_anova(data, "y", "a + b + c")
    check = variance_check(result, normal=True)
    assert check.holds is None and check.verdict == "not tested"


def test_shapiro_on_constant_residuals_is_not_tested():
    assert shapiro_check(np.zeros(10)).holds is None


def test_kruskal_wallis_matches_rank_formula(fig2):
    data, result = fig2
    y = data["cost"].to_numpy()
    ranks = stats.rankdata(y)
    big_n = len(y)
    _, counts = np.unique(y, return_counts=True)
    tie = 1 - np.sum(counts**3 - counts) / (big_n**3 - big_n)
    for row in kruskal_wallis(result):
        levels = data[row.factor].to_numpy()
        h = 12 / (big_n * (big_n + 1)) * sum(
            ranks[levels == v].sum() ** 2 / np.sum(levels == v) for v in np.unique(levels)
        ) - 3 * (big_n + 1)
        h /= tie
        assert row.H == pytest.approx(h, rel=1e-9)
        assert row.p == pytest.approx(stats.chi2.sf(h, 1), rel=1e-7)


def test_bartlett_with_a_flat_design_point_is_violated_not_a_huge_number():
    data = normal_replicated(5)
    data.loc[(data.a == 1) & (data.b == 1) & (data.c == 1), "y"] = 0.008  # e.g. rounded costs
    result = fit_anova(data, "y", "a + b + c")
    check = variance_check(result, normal=True)
    assert check.holds is False and check.statistic == float("inf") and check.p == 0.0
    assert "no spread" in check.meaning
