"""ANOVA against independent least-squares computations, Marinos 2021's Fig. 2 and textbook values."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models.anova import boxcox_lambda, default_terms, fit_anova, lenth, press
from models.anova.cli import main
from sparkdl.cli import run_cli as run_command
from models.errors import AnalysisOptionError, FormulaError

TABLE2 = Path(__file__).resolve().parents[1] / "examples" / "marinos2021" / "table2.csv"
FACTORS = ["nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size"]
PAPER_TERMS = "nodes + executors + executor_cores + epochs*learning_rate*batch_size"

# Marinos 2021, Fig. 2: term -> (sum_sq, F, Percentage_Variation_Explained).
FIG2 = {
    "nodes": (0.000835, 0.811084, 0.168076),
    "executors": (0.002662, 2.586327, 0.535950),
    "executor_cores": (0.000555, 0.539326, 0.111761),
    "epochs": (0.003148, 3.058204, 0.633734),
    "learning_rate": (0.065909, 64.030983, 13.268775),
    "epochs:learning_rate": (0.013646, 13.257446, 2.747265),
    "batch_size": (0.007529, 7.314456, 1.515733),
    "epochs:batch_size": (0.023049, 22.392219, 4.640212),
    "learning_rate:batch_size": (0.055835, 54.244237, 11.240724),
    "epochs:learning_rate:batch_size": (0.026078, 25.334631, 5.249951),
    "Residual": (0.297477, float("nan"), 59.887820),
}


@pytest.fixture(scope="module")
def table2() -> pd.DataFrame:
    return pd.read_csv(TABLE2)


@pytest.fixture(scope="module")
def fig2_data(table2: pd.DataFrame) -> pd.DataFrame:
    return table2[~table2["run"].isin([2, 3])].reset_index(drop=True)


# --- independent least squares ---------------------------------------------------------------


def column(frame: pd.DataFrame, term: str) -> np.ndarray:
    out = np.ones(len(frame))
    for f in term.split(":"):
        out = out * frame[f].to_numpy(dtype=float)
    return out


def rss(frame: pd.DataFrame, y: np.ndarray, terms: list[str]) -> float:
    x = np.column_stack([np.ones(len(frame))] + [column(frame, t) for t in terms])
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    r = y - x @ beta
    return float(r @ r)


def contains(big: str, small: str) -> bool:
    return set(small.split(":")) <= set(big.split(":"))


def sequential_ss(frame, y, terms):
    return {t: rss(frame, y, terms[:i]) - rss(frame, y, terms[: i + 1]) for i, t in enumerate(terms)}


def type2_ss(frame, y, terms):
    out = {}
    for t in terms:
        base = [u for u in terms if not contains(u, t)]
        out[t] = rss(frame, y, base) - rss(frame, y, base + [t])
    return out


def type3_ss(frame, y, terms):
    full = rss(frame, y, terms)
    return {t: rss(frame, y, [u for u in terms if u != t]) - full for t in terms}


def coded(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for f in FACTORS:
        lo, hi = out[f].min(), out[f].max()
        out[f] = (out[f] - (lo + hi) / 2) / ((hi - lo) / 2)
    return out


def check_against(result, ss: dict[str, float], frame, y, terms):
    n, p = len(y), len(terms) + 1
    mse = rss(frame, y, terms) / (n - p)
    for t in terms:
        row = result.row(t)
        assert row.sum_sq == pytest.approx(ss[t], rel=1e-7, abs=1e-12)
        assert row.F == pytest.approx(ss[t] / mse, rel=1e-7, abs=1e-9)
        assert row.p == pytest.approx(stats.f.sf(ss[t] / mse, 1, n - p), rel=1e-6, abs=1e-300)
    res = result.row("Residual")
    assert res.df == n - p
    assert res.sum_sq == pytest.approx(rss(frame, y, terms), rel=1e-9)


PAPER_ORDER = list(FIG2)[:-1]
ALL_2FI = FACTORS + [f"{a}:{b}" for a, b in itertools.combinations(FACTORS, 2)]


@pytest.mark.parametrize("typ", [1, 2])
@pytest.mark.parametrize("which", ["full", "fig2"])
def test_paper_model_ss_f_p_match_nested_least_squares(table2, fig2_data, typ, which):
    frame = table2 if which == "full" else fig2_data
    y = frame["cost"].to_numpy(dtype=float)
    result = fit_anova(frame, "cost", PAPER_TERMS, typ=typ)
    ss = sequential_ss(frame, y, PAPER_ORDER) if typ == 1 else type2_ss(frame, y, PAPER_ORDER)
    check_against(result, ss, frame, y, PAPER_ORDER)


@pytest.mark.parametrize("typ", [1, 2])
def test_default_model_ss_f_p_match_nested_least_squares(table2, typ):
    y = table2["cost"].to_numpy(dtype=float)
    result = fit_anova(table2, "cost", typ=typ, factors=FACTORS)
    assert [r.term for r in result.rows[:-1]] == ALL_2FI  # resolution VI: every 2FI estimable
    ss = sequential_ss(table2, y, ALL_2FI) if typ == 1 else type2_ss(table2, y, ALL_2FI)
    check_against(result, ss, table2, y, ALL_2FI)


def test_type3_uses_coded_factors_and_matches_drop_one_least_squares(fig2_data):
    frame = coded(fig2_data)
    y = frame["cost"].to_numpy(dtype=float)
    result = fit_anova(fig2_data, "cost", PAPER_TERMS, typ=3)
    check_against(result, type3_ss(frame, y, PAPER_ORDER), frame, y, PAPER_ORDER)
    # In natural units the drop-one SS of a main effect differs: the coding matters for Type III.
    raw = type3_ss(fig2_data, y, PAPER_ORDER)
    assert abs(raw["epochs"] - result.row("epochs").sum_sq) > 1e-3


def test_type3_categorical_factor_gets_sum_to_zero_contrasts():
    rng = np.random.default_rng(7)
    g = np.repeat(["a", "b", "c"], [5, 8, 11])
    x = np.array([1.0, 2.0, 2.0, 1.0, 2.0] + [1.0, 2.0] * 2 + [2.0] * 4 + [1.0] * 3 + [2.0] * 8)
    y = rng.normal(size=g.size) + (g == "b") * 1.0 + x * (g == "c")
    frame = pd.DataFrame({"g": g, "x": x, "y": y})
    result = fit_anova(frame, "y", "C(g)*x", typ=3)
    # Independent: sum-to-zero columns for g, x coded to -1/+1, drop-one residual SS.
    s1 = np.where(g == "a", 1.0, np.where(g == "c", -1.0, 0.0))
    s2 = np.where(g == "b", 1.0, np.where(g == "c", -1.0, 0.0))
    xc = (x - 1.5) / 0.5
    cols = {"C(g)": [s1, s2], "x": [xc], "C(g):x": [s1 * xc, s2 * xc]}

    def rss_cols(keep):
        xs = np.column_stack([np.ones(g.size)] + [c for k in keep for c in cols[k]])
        b, *_ = np.linalg.lstsq(xs, y, rcond=None)
        return float(np.sum((y - xs @ b) ** 2))

    full = rss_cols(list(cols))
    for term in cols:
        ss = rss_cols([k for k in cols if k != term]) - full
        got = result.row(term.replace("C(g)", "C(g, Sum)"))
        assert got.sum_sq == pytest.approx(ss, rel=1e-8)
        assert got.df == len(cols[term])


def test_reproduces_marinos2021_fig2_within_rounding(fig2_data):
    result = fit_anova(fig2_data, "cost", PAPER_TERMS, typ=1)
    assert result.summary.df_resid == 289
    assert result.summary.r_squared == pytest.approx(0.40, abs=0.005)
    for term, (_, F, pct) in FIG2.items():
        row = result.row(term)
        # Table II prints costs to 3 decimals; the authors fitted unrounded costs.
        assert row.pct_variation == pytest.approx(pct, abs=0.05), term
        if term != "Residual":
            assert row.F == pytest.approx(F, rel=0.05), term
    assert result.row("learning_rate").pct_variation == pytest.approx(13.27, abs=0.05)
    assert sum(r.pct_variation for r in result.rows) == pytest.approx(100.0)


def test_coded_effects_are_differences_of_means_on_balanced_data(table2):
    result = fit_anova(table2, "cost", typ=2, factors=FACTORS)
    c = coded(table2)
    y = table2["cost"].to_numpy()
    for term in ["learning_rate", "nodes", "epochs:batch_size", "executors:executor_cores"]:
        sign = column(c, term)
        expected = y[sign > 0].mean() - y[sign < 0].mean()
        row = result.row(term)
        assert row.effect == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert row.coefficient == pytest.approx(expected / 2, rel=1e-9, abs=1e-12)
        # Orthogonal +-1 columns: SS = N * effect^2 / 4.
        assert row.sum_sq == pytest.approx(len(y) * expected**2 / 4, rel=1e-9, abs=1e-12)


# Montgomery, Design and Analysis of Experiments, Example 6.2: filtration rate, 2^4 unreplicated.
FILTRATION = {
    "(1)": 45, "a": 71, "b": 48, "ab": 65, "c": 68, "ac": 60, "bc": 80, "abc": 65,
    "d": 43, "ad": 100, "bd": 45, "abd": 104, "cd": 75, "acd": 86, "bcd": 70, "abcd": 96,
}


def filtration() -> pd.DataFrame:
    rows = []
    for label, y in FILTRATION.items():
        rows.append({f: (1 if f in label else -1) for f in "abcd"} | {"y": float(y)})
    return pd.DataFrame(rows)


def test_lenth_pse_matches_hand_computation_on_montgomery_example():
    frame = filtration()
    result = fit_anova(frame, "y", "a*b*c*d", typ=1)
    assert result.summary.df_resid == 0 and not result.summary.replicated
    effects = {e.term: e.effect for e in result.effects}
    assert effects["a"] == pytest.approx(21.625)
    assert effects["a:c"] == pytest.approx(-18.125)
    assert effects["a:d"] == pytest.approx(16.625)
    # By hand: median|c| = 2.625 -> s0 = 3.9375; |c| < 9.84375 leaves 10 effects whose median
    # is (1.625 + 1.875) / 2 = 1.75 -> PSE = 1.5 * 1.75 = 2.625; d = 15 / 3 = 5.
    assert result.lenth.pse == pytest.approx(2.625)
    assert result.lenth.df == pytest.approx(5.0)
    assert result.lenth.margin_of_error == pytest.approx(2.625 * stats.t.ppf(0.975, 5))
    gamma = (1 + 0.95 ** (1 / 15)) / 2
    assert result.lenth.simultaneous_margin_of_error == pytest.approx(2.625 * stats.t.ppf(gamma, 5))
    assert set(result.lenth.active) == {"a", "c", "d", "a:c", "a:d"}
    assert np.isnan(result.row("a").F) and np.isnan(result.row("a").p)
    se = result.standardized_effects()
    assert se.basis == "Lenth"
    assert dict(zip(se.terms, se.values))["a"] == pytest.approx(21.625 / 2.625)


@pytest.mark.parametrize("typ", [1, 2, 3])
def test_saturated_fit_sums_of_squares_are_n_effect_squared_over_4(typ):
    result = fit_anova(filtration(), "y", "a*b*c*d", typ=typ)
    for e in result.effects:
        assert result.row(e.term).sum_sq == pytest.approx(16 * e.effect**2 / 4, rel=1e-9, abs=1e-9)
    assert sum(r.sum_sq for r in result.rows) == pytest.approx(np.var(filtration()["y"]) * 16)


def test_lenth_function_on_plain_effects():
    out = lenth([10.0, -1.0, 2.0, 1.5, -0.5, 0.8], alpha=0.05)
    s0 = 1.5 * np.median([10, 1, 2, 1.5, 0.5, 0.8])
    kept = [v for v in [10, 1, 2, 1.5, 0.5, 0.8] if v < 2.5 * s0]
    assert out.pse == pytest.approx(1.5 * np.median(kept))


def test_predicted_r2_matches_leave_one_out_refits(fig2_data):
    result = fit_anova(fig2_data, "cost", PAPER_TERMS, typ=1)
    x = np.column_stack([np.ones(len(fig2_data))] + [column(fig2_data, t) for t in PAPER_ORDER])
    y = fig2_data["cost"].to_numpy(dtype=float)
    errs = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        b, *_ = np.linalg.lstsq(x[keep], y[keep], rcond=None)
        errs.append(y[i] - x[i] @ b)
    loo_press = float(np.sum(np.square(errs)))
    assert result.summary.press == pytest.approx(loo_press, rel=1e-8)
    sst = float(np.sum((y - y.mean()) ** 2))
    assert result.summary.pred_r_squared == pytest.approx(1 - loo_press / sst, rel=1e-8)
    assert result.summary.pred_r_squared < result.summary.adj_r_squared < result.summary.r_squared


def test_press_is_infinite_for_a_saturated_fit():
    result = fit_anova(filtration(), "y", "a*b*c*d", typ=1)
    assert press(result.fit) == float("inf") and np.isnan(result.summary.pred_r_squared)


def test_robust_hc3_type3_f_equals_squared_hc3_wald_t(fig2_data):
    result = fit_anova(fig2_data, "cost", PAPER_TERMS, typ=3, robust="hc3")
    frame = coded(fig2_data)
    x = np.column_stack([np.ones(len(frame))] + [column(frame, t) for t in PAPER_ORDER])
    y = frame["cost"].to_numpy(dtype=float)
    xtx_inv = np.linalg.inv(x.T @ x)
    b = xtx_inv @ x.T @ y
    e = y - x @ b
    h = np.einsum("ij,jk,ik->i", x, xtx_inv, x)
    cov = xtx_inv @ (x.T * (e / (1 - h)) ** 2) @ x @ xtx_inv
    for j, term in enumerate(PAPER_ORDER, start=1):
        f = b[j] ** 2 / cov[j, j]
        assert result.row(term).F == pytest.approx(f, rel=1e-7)
        assert result.row(term).p == pytest.approx(stats.f.sf(f, 1, len(y) - x.shape[1]), rel=1e-6)
    # Sums of squares stay those of the ordinary fit.
    assert result.row("learning_rate").sum_sq == pytest.approx(
        fit_anova(fig2_data, "cost", PAPER_TERMS, typ=3).row("learning_rate").sum_sq
    )


def test_robust_with_type1_is_refused(table2):
    with pytest.raises(AnalysisOptionError, match="typ 2 or 3"):
        fit_anova(table2, "cost", typ=1, robust="hc3")


def test_log_transform_analyses_log_response(table2):
    result = fit_anova(table2, "cost", PAPER_TERMS, typ=1, transform="log")
    y = np.log(table2["cost"].to_numpy())
    ss = sequential_ss(table2, y, PAPER_ORDER)
    assert result.row("learning_rate").sum_sq == pytest.approx(ss["learning_rate"], rel=1e-8)
    assert result.summary.response == "log(cost)"


def test_boxcox_lambda_matches_scipy_mle_for_intercept_only_model():
    rng = np.random.default_rng(3)
    y = rng.lognormal(mean=1.0, sigma=0.6, size=200) ** 1.7
    _, lam_scipy = stats.boxcox(y)
    assert boxcox_lambda(y, np.ones((y.size, 1))) == pytest.approx(lam_scipy, abs=1e-4)


def test_boxcox_transform_reports_lambda_and_fits_transformed_response(table2):
    result = fit_anova(table2, "cost", typ=2, transform="boxcox", factors=FACTORS)
    lam = result.summary.boxcox_lambda
    assert -3 < lam < 3
    from scipy import special

    assert np.allclose(result.y, special.boxcox(table2["cost"].to_numpy(), lam))


def test_transform_needs_positive_response():
    frame = pd.DataFrame({"a": [1, 2, 1, 2], "y": [1.0, -1.0, 2.0, 3.0]})
    with pytest.raises(AnalysisOptionError, match="positive"):
        fit_anova(frame, "y", "a", transform="log")


def test_default_terms_resolution_iv_keeps_one_of_each_alias_pair():
    rows = [(a, b, c, a * b * c) for a, b, c in itertools.product([-1, 1], repeat=3)]
    frame = pd.DataFrame(rows, columns=list("abcd"))
    dt = default_terms(frame, list("abcd"))
    assert dt.terms == ("a", "b", "c", "d", "a:b", "a:c", "a:d")
    assert {(al.term, al.aliased_with) for al in dt.aliased} == {
        ("b:c", ("a:d",)), ("b:d", ("a:c",)), ("c:d", ("a:b",))
    }
    chosen = default_terms(frame, list("abcd"), aliases=["c:d = a:b"])
    assert "c:d" in chosen.terms and "a:b" not in chosen.terms


def test_aliased_user_terms_are_refused_with_the_culprit_named():
    rows = [(a, b, c, a * b * c) for a, b, c in itertools.product([-1, 1], repeat=3)]
    frame = pd.DataFrame(rows, columns=list("abcd")).assign(y=np.arange(8.0))
    with pytest.raises(FormulaError, match="c:d"):
        fit_anova(frame, "y", "a + b + c + d + a:b + c:d")


def test_unknown_column_in_terms_is_a_formula_error(table2):
    with pytest.raises(FormulaError):
        fit_anova(table2, "cost", "nodes + no_such_factor")


# --- CLI -------------------------------------------------------------------------------------


def run_cli(args, capsys):
    code = run_command(main, [str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_rows_and_summary(capsys):
    code, out, _ = run_cli([TABLE2, "--response", "cost", "--typ", "1", "--format", "json",
                            "--exclude-runs", "2,3", "--terms", PAPER_TERMS], capsys)
    assert code == 0
    doc = json.loads(out)
    keys = {"term", "df", "sum_sq", "mean_sq", "F", "p", "pct_variation"}
    assert all(keys <= set(r) for r in doc["rows"])
    lr = next(r for r in doc["rows"] if r["term"] == "learning_rate")
    assert lr["pct_variation"] == pytest.approx(13.27, abs=0.05)
    assert doc["summary"]["df_resid"] == 289
    assert doc["input"]["dropped"] == {"run in [2, 3] (excluded on request)": 20}
    verdicts = {c["name"]: c["verdict"] for c in doc["diagnostics"]["checks"]}
    assert verdicts["Shapiro-Wilk"] == "violated" and verdicts["Levene (median)"] == "violated"
    assert doc["log_transform_preview"]["after"] == "log(cost)"


def test_cli_csv_and_text(capsys, tmp_path):
    code, out, _ = run_cli([TABLE2, "--format", "csv"], capsys)
    assert code == 0
    frame = pd.read_csv(io.StringIO(out))
    assert list(frame.columns[:7]) == ["term", "df", "sum_sq", "mean_sq", "F", "p", "pct_variation"]
    assert frame["term"].iloc[-1] == "Residual"
    code, out, _ = run_cli([TABLE2, "--kruskal"], capsys)
    assert code == 0
    assert "Kruskal-Wallis" in out and "violated" in out and "what analysing log(cost)" in out
    small = tmp_path / "filtration.csv"
    filtration().rename(columns={"y": "cost"}).to_csv(small, index=False)
    code, out, _ = run_cli([small, "--terms", "a + b + c + d", "--plots", tmp_path / "plots"], capsys)
    assert code == 0 and "plots:" in out
    assert (tmp_path / "plots" / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_errors_are_one_line_with_exit_2(capsys, tmp_path):
    code, _, err = run_cli([tmp_path / "missing"], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    code, _, err = run_cli([TABLE2, "--typ", "1", "--robust", "hc3"], capsys)
    assert code == 2 and "typ 2 or 3" in err
