"""LMG shares of R^2 (models.anova.shares): checked against an independent average over every order of entry.

The cross-check builds the model columns by hand (numbers, products, one-hot contrasts), fits every
prefix of every admissible permutation with numpy's lstsq and averages the gains; it shares no code
with the module, which enumerates subsets and counts orders instead.
"""

from __future__ import annotations

import io
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models.anova import RESIDUAL, fit_anova
from models.anova.cli import main as anova_main
from models.anova.format import format_csv, format_summary, format_table
from models.anova.shares import MAX_TERMS, lmg

TABLE2 = Path(__file__).resolve().parents[1] / "examples" / "marinos2021" / "table2.csv"
FACTORS = ["nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size"]


def r2(cols: list[np.ndarray], y: np.ndarray) -> float:
    x = np.column_stack([np.ones_like(y), *cols])
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    e = y - x @ beta
    return 1 - float(e @ e) / float(np.sum((y - y.mean()) ** 2))


def lmg_by_permutations(columns: dict[str, list[np.ndarray]], parents: dict[str, set[str]],
                        y: np.ndarray) -> dict[str, float]:
    """Average gain in R^2 over every order in which each term enters after its parents."""
    gains = dict.fromkeys(columns, 0.0)
    orders = 0
    for perm in itertools.permutations(columns):
        if any(perm.index(p) > perm.index(t) for t in perm for p in parents[t]):
            continue
        orders += 1
        cols: list[np.ndarray] = []
        before = 0.0
        for t in perm:
            cols = cols + columns[t]
            after = r2(cols, y)
            gains[t] += after - before
            before = after
    return {t: g / orders for t, g in gains.items()}


def unbalanced_table(seed: int = 7) -> pd.DataFrame:
    """A 3 x 3 x 2 factorial (numeric a, b; text g), 3 replicates, 17 of 54 rows dropped at random."""
    rng = np.random.default_rng(seed)
    grid = pd.DataFrame(list(itertools.product([1.0, 2.0, 3.0], [10.0, 20.0, 40.0], ["x", "y"])) * 3,
                        columns=["a", "b", "g"])
    grid = grid.drop(index=rng.choice(len(grid), 17, replace=False)).reset_index(drop=True)
    y = (2.0 * grid["a"] + 0.05 * grid["b"] + 0.04 * grid["a"] * grid["b"] + np.where(grid["g"] == "y", 1.5, 0.0)
         + rng.normal(0, 1.0, len(grid)))
    return grid.assign(cost=y)


def test_lmg_of_an_unbalanced_table_equals_the_average_over_all_orders_and_sums_to_r2() -> None:
    t = unbalanced_table()
    result = fit_anova(t, "cost", "a + b + C(g) + a:b", factors=["a", "b", "g"])
    sh = result.shares
    assert sh is not None and sh.computed and not sh.orthogonal
    y = t["cost"].to_numpy()
    a, b = t["a"].to_numpy(), t["b"].to_numpy()
    columns = {"a": [a], "b": [b], "C(g)": [(t["g"] == "y").to_numpy(dtype=float)], "a:b": [a * b]}
    parents = {"a": set(), "b": set(), "C(g)": set(), "a:b": {"a", "b"}}
    expected = lmg_by_permutations(columns, parents, y)
    assert {t_: sh.share(t_) for t_ in columns} == pytest.approx({k: 100 * v for k, v in expected.items()}, abs=1e-9)
    assert sum(sh.lmg_pct) == pytest.approx(100 * r2(sum(columns.values(), []), y), abs=1e-9)
    assert sum(sh.lmg_pct) == pytest.approx(100 * result.summary.r_squared, abs=1e-9)
    assert sh.orders == 8  # of the 4! orders, a:b comes last of {a, b, a:b} in a third
    # the Type 2 SS shares do not add up here, and the result says by how much
    ss_sum = sum(r.pct_variation for r in result.rows)
    assert sh.ss_total_pct == pytest.approx(ss_sum, abs=1e-9) and abs(ss_sum - 100) > 0.5


def test_lmg_of_correlated_regressors_matches_the_two_variable_closed_form() -> None:
    # Two correlated regressors: LMG_1 = (r_1^2 + R^2 - r_2^2) / 2, with r_j^2 the R^2 of x_j alone.
    rng = np.random.default_rng(3)
    x1 = rng.normal(size=60)
    x2 = 0.8 * x1 + 0.6 * rng.normal(size=60)
    y = x1 + 0.5 * x2 + rng.normal(size=60)
    shares, orders = lmg(np.column_stack([x1, x2]), y, {"x1": [0], "x2": [1]},
                         {"x1": frozenset({"x1"}), "x2": frozenset({"x2"})})
    full, r1, r2_ = r2([x1, x2], y), r2([x1], y), r2([x2], y)
    assert orders == 2
    assert shares["x1"] == pytest.approx((r1 + full - r2_) / 2, abs=1e-12)
    assert shares["x2"] == pytest.approx((r2_ + full - r1) / 2, abs=1e-12)


@pytest.mark.parametrize("typ", [1, 2, 3])
def test_on_an_orthogonal_design_lmg_equals_the_ss_shares(typ: int) -> None:
    # 2^3 full factorial, two replicates, all two-factor interactions: orthogonal in coded units.
    rng = np.random.default_rng(11)
    grid = pd.DataFrame(list(itertools.product([1, 4], [64, 256], [0.01, 0.1])) * 2, columns=["p", "q", "r"])
    grid["cost"] = 3 * grid["p"] - 0.01 * grid["q"] + 20 * grid["r"] + 0.002 * grid["p"] * grid["q"] + rng.normal(
        0, 0.5, len(grid))
    result = fit_anova(grid, "cost", typ=typ, factors=["p", "q", "r"])
    sh = result.shares
    assert sh is not None and sh.computed and sh.orthogonal
    for row in result.rows:
        if row.term != RESIDUAL:
            assert sh.share(row.term) == pytest.approx(row.pct_variation, abs=1e-8), row.term
    assert sum(sh.lmg_pct) + sh.residual_pct == pytest.approx(100, abs=1e-9)
    assert "%LMG" not in format_table(result) and "shares:" not in format_summary(result)
    assert "lmg_pct" not in format_csv(result)


def test_lmg_on_marinos_table2_with_runs_dropped_matches_the_permutation_average() -> None:
    # Marinos 2021's Table II, runs 2, 3, 5 and 9 left out and every third remaining job dropped:
    # unbalanced; five main effects and one interaction (6 terms, 360 admissible orders).
    t = pd.read_csv(TABLE2)
    t = t[~t["run"].isin([2, 3, 5, 9])].iloc[::3].reset_index(drop=True)
    rhs = "nodes + executors + executor_cores + learning_rate + batch_size + learning_rate:batch_size"
    result = fit_anova(t, "cost", rhs, factors=FACTORS)
    sh = result.shares
    assert sh is not None and not sh.orthogonal
    cols = {f: [t[f].to_numpy(dtype=float)] for f in ("nodes", "executors", "executor_cores", "learning_rate",
                                                       "batch_size")}
    lr, bs = t["learning_rate"].to_numpy(dtype=float), t["batch_size"].to_numpy(dtype=float)
    cols["learning_rate:batch_size"] = [lr * bs]
    parents = {k: set() for k in cols} | {"learning_rate:batch_size": {"learning_rate", "batch_size"}}
    expected = lmg_by_permutations(cols, parents, t["cost"].to_numpy(dtype=float))
    assert {k: sh.share(k) for k in cols} == pytest.approx({k: 100 * v for k, v in expected.items()}, abs=1e-9)
    assert sh.orders == 240  # 720 orders; the interaction is last of {lr, bs, lr:bs} in a third of them


def test_more_terms_than_the_exact_limit_are_not_computed_and_the_text_says_so() -> None:
    t = pd.read_csv(TABLE2)
    t = t[~t["run"].isin([2, 3])].reset_index(drop=True)  # the default model has 6 + 15 = 21 terms
    result = fit_anova(t, "cost", factors=FACTORS)
    sh = result.shares
    assert sh is not None and not sh.computed and sh.lmg_pct == ()
    assert len(sh.terms) == 21 > MAX_TERMS
    assert "not computed" in format_summary(result) and "%LMG" not in format_table(result)
    with pytest.raises(ValueError, match="up to 12 terms"):
        lmg(np.zeros((2, 13)), np.arange(2.0), {str(i): [i] for i in range(13)},
            {str(i): frozenset({str(i)}) for i in range(13)})


def test_anova_cli_prints_lmg_beside_the_ss_shares_and_says_they_miss(tmp_path, capsys) -> None:
    t = unbalanced_table()
    path = tmp_path / "unbalanced.csv"
    t.to_csv(path, index=False)
    args = [str(path), "--factors", "a,b,g", "--terms", "a + b + C(g) + a:b"]
    assert anova_main(args) == 0
    text = capsys.readouterr().out
    ref = fit_anova(t, "cost", "a + b + C(g) + a:b", factors=["a", "b", "g"])
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("term"))
    table = lines[start:lines.index("", start)]
    assert "%SS(overlap)" in table[0] and "%LMG" in table[0] and "%var" not in table[0]
    total = ref.shares.ss_total_pct
    assert f"SS shares do not partition the total: with the residual they add up to {total:.1f} %" in text
    lmg_col = {line.split()[0]: float(line.split()[7]) for line in table[1:]}
    assert set(lmg_col) == {"a", "b", "C(g)", "a:b", RESIDUAL}
    assert sum(lmg_col.values()) == pytest.approx(100, abs=0.03)  # 5 figures rounded to 0.01
    assert anova_main(args + ["--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    shares = {d["term"]: d["lmg_pct"] for d in doc["shares"]["terms"]}
    assert sum(shares.values()) == pytest.approx(100 * doc["summary"]["r_squared"], abs=1e-9)
    assert doc["shares"]["orthogonal"] is False
    assert anova_main(args + ["--format", "csv"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("term")
    assert frame["lmg_pct"].sum() == pytest.approx(100, abs=1e-9)
    assert frame.loc["a", "lmg_pct"] == pytest.approx(shares["a"], abs=1e-12)
    assert not math.isclose(frame["pct_variation"].sum(), 100, abs_tol=0.5)


def test_type_1_shares_on_unbalanced_data_are_said_to_depend_on_the_order() -> None:
    t = unbalanced_table()
    result = fit_anova(t, "cost", "a + b + C(g) + a:b", typ=1, factors=["a", "b", "g"])
    sh = result.shares
    assert sh is not None and not sh.orthogonal
    assert sh.ss_total_pct == pytest.approx(100, abs=1e-9)  # sequential SS partition the total ...
    assert "Type 1 SS shares add up to 100.0 % but depend on the order of the terms" in format_summary(result)
    # ... but not as LMG does: LMG does not depend on the order the terms are written in
    swapped = fit_anova(t, "cost", "C(g) + b + a + a:b", typ=1, factors=["a", "b", "g"])
    assert swapped.shares.share("a") == pytest.approx(sh.share("a"), abs=1e-9)
    assert swapped.row("a").pct_variation != pytest.approx(result.row("a").pct_variation, abs=1e-3)


def test_the_report_shows_lmg_shares_beside_the_ss_shares_on_unbalanced_data(tmp_path) -> None:
    from report import build_report
    from tests.test_report import as_frame, tables_of

    t = unbalanced_table()
    path = tmp_path / "unbalanced.csv"
    t.to_csv(path, index=False)
    report = build_report(path, factors=["a", "b", "g"], plots=False, generated="fixed")
    sh = report.analysis.anova.shares
    assert sh is not None and sh.computed and not sh.orthogonal
    shown = as_frame(tables_of(report.html)["anova"]).set_index(as_frame(tables_of(report.html)["anova"])["term"]
                                                                .map(lambda c: c[0]))
    assert list(shown.columns)[-1] == "LMG share %" and list(shown.columns)[6] == "% of variation"
    lmg_shown = {term: cell[1] for term, cell in shown["LMG share %"].items()}
    assert sum(lmg_shown.values()) == pytest.approx(100, abs=0.05)
    assert lmg_shown["a"] == pytest.approx(sh.share("a"), abs=0.01)
    assert "SS shares do not partition the total" in report.html


def test_the_timing_sections_anova_adds_lmg_shares_on_unbalanced_data() -> None:
    from report.timing import _anova_table
    from tests.test_report import tables_of

    t = unbalanced_table().rename(columns={"cost": "phase_load_s"})
    html = _anova_table(t, "phase_load_s", ["a", "b", "g"]).replace("<table", '<table id="timing"', 1)
    table = tables_of(html)["timing"]
    assert [c for c, _ in table[0]][-1] == "LMG share %"
    ref = fit_anova(t, "phase_load_s", factors=["a", "b", "g"]).shares
    shown = {row[0][0]: row[-1][1] for row in table[1:]}
    assert shown["a"] == pytest.approx(ref.share("a"), abs=0.01)
    assert sum(shown.values()) == pytest.approx(100, abs=0.05)
