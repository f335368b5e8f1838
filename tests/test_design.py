"""Designs checked against the papers and against brute force on their own columns."""

from __future__ import annotations

import csv
import doctest
import importlib
import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness.design as hd
from harness.design import (
    box_behnken,
    by_resolution,
    fractional,
    full_factorial,
    load_factors,
    make_factors,
    parse_generators,
    schedule,
    search_generators,
)
from harness.design.__main__ import main as design_main
from sparkdl import cli
from harness.errors import DesignError


def main(argv):
    """The command as a user runs it: errors become one line and an exit code."""
    return cli.run_cli(design_main, argv)


ROOT = Path(__file__).resolve().parents[1]
MARINOS = ROOT / "examples" / "marinos2021" / "factors.toml"
COURIER = ROOT / "examples" / "courier2021" / "factors.toml"

# Marinos 2021, Table I, exactly as printed (columns A..F, rows 1..32). Row 11 is a typo.
TABLE_I = [
    [-1, -1, -1, -1, -1, -1], [+1, -1, -1, -1, -1, +1], [-1, +1, -1, -1, -1, +1], [+1, +1, -1, -1, -1, -1],
    [-1, -1, +1, -1, -1, +1], [+1, -1, +1, -1, -1, -1], [-1, +1, +1, -1, -1, -1], [+1, +1, +1, -1, -1, +1],
    [-1, -1, -1, +1, -1, +1], [+1, -1, -1, +1, -1, -1], [-1, +1, -1, -1, -1, -1], [+1, +1, -1, +1, -1, +1],
    [-1, -1, +1, +1, -1, -1], [+1, -1, +1, +1, -1, +1], [-1, +1, +1, +1, -1, +1], [+1, +1, +1, +1, -1, -1],
    [-1, -1, -1, -1, +1, +1], [+1, -1, -1, -1, +1, -1], [-1, +1, -1, -1, +1, -1], [+1, +1, -1, -1, +1, +1],
    [-1, -1, +1, -1, +1, -1], [+1, -1, +1, -1, +1, +1], [-1, +1, +1, -1, +1, +1], [+1, +1, +1, -1, +1, -1],
    [-1, -1, -1, +1, +1, -1], [+1, -1, -1, +1, +1, +1], [-1, +1, -1, +1, +1, +1], [+1, +1, -1, +1, +1, -1],
    [-1, -1, +1, +1, +1, +1], [+1, -1, +1, +1, +1, -1], [-1, +1, +1, +1, +1, -1], [+1, +1, +1, +1, +1, +1],
]
# Marinos 2021, Table II, row 11: nodes, executors, executor_cores, epochs, learning_rate, batch_size.
TABLE_II_ROW_11 = (1, 4, 1, 3, 0.001, 64)

# The DoE-tool report's Box-Behnken matrix (gpu_count 8..64, batch_per_gpu 32..256, compression 0..90).
DOE_TOOL_REPORT_BBD = [
    (36, 32, 0), (36, 144, 45), (64, 144, 90), (64, 144, 0), (36, 144, 45), (36, 144, 45), (8, 144, 90),
    (64, 32, 45), (36, 32, 90), (64, 256, 45), (8, 144, 0), (36, 256, 90), (8, 32, 45), (8, 256, 45),
    (36, 256, 0),
]

# Fewest runs of a two-level design of resolution >= R for k factors (Box, Hunter & Hunter,
# Table 6.22; Montgomery, Table 8.14; the full factorial 2^k when no fraction reaches R).
MIN_RUNS = {
    3: {4: 8, 5: 8, 6: 8, 7: 8, 8: 16},
    4: {4: 8, 5: 16, 6: 16, 7: 16, 8: 16},
    5: {4: 16, 5: 16, 6: 32, 7: 64, 8: 64},
    6: {4: 16, 5: 32, 6: 32, 7: 64, 8: 128},
}


def two_level(k: int):
    return make_factors({f"x{j}": [0, 1] for j in range(k)})


def marinos():
    fs = load_factors(MARINOS)
    return fractional(fs, parse_generators("F=ABCDE", fs))


def column_product(coded: np.ndarray, subset) -> np.ndarray:
    return np.prod(coded[:, list(subset)], axis=1)


def brute_resolution(coded: np.ndarray) -> int | None:
    """Length of the shortest set of columns whose product is constant, from the columns alone."""
    k = coded.shape[1]
    for size in range(1, k + 1):
        for subset in itertools.combinations(range(k), size):
            if np.all(column_product(coded, subset) == column_product(coded, subset)[0]):
                return size
    return None


def brute_relation(coded: np.ndarray, letters: str) -> set[str]:
    """Every signed word I = +-W whose column product is constant."""
    out = set()
    for size in range(1, coded.shape[1] + 1):
        for subset in itertools.combinations(range(coded.shape[1]), size):
            p = column_product(coded, subset)
            if np.all(p == p[0]):
                out.add(("-" if p[0] < 0 else "") + "".join(letters[j] for j in subset))
    return out


def check_aliases(design) -> None:
    """Chains against column products: aliased iff products are equal up to sign."""
    letters, coded = design.factors.letters, design.coded
    cols = lambda word: column_product(coded, [letters.index(ch) for ch in word])  # noqa: E731
    p = len(design.generators)
    in_chain = {}
    for chain in design.aliases:
        assert len(chain.aliases) == 2**p - 1
        for w in chain.aliases:
            assert np.array_equal(cols(chain.effect), w.sign * cols(w.letters)), (chain.effect, str(w))
        for member in (chain.effect, *(w.letters for w in chain.aliases)):
            in_chain.setdefault(member, chain.effect)
    k = len(letters)
    low = ["".join(letters[j] for j in s) for n in (1, 2) for s in itertools.combinations(range(k), n)]
    for a, b in itertools.combinations(low, 2):
        aliased = abs(int(cols(a) @ cols(b))) == design.n_runs
        assert aliased == (in_chain[a] == in_chain[b]), (a, b)


# -- Marinos 2021: Table I ------------------------------------------------------------------


def test_seed_001_table_i_in_standard_order_except_the_row_11_typo():
    d = marinos()
    ours = d.coded.astype(int)
    paper = np.array(TABLE_I)
    for i in range(32):
        if i != 10:
            assert ours[i].tolist() == paper[i].tolist(), f"row {i + 1}"
    # Row 11: the paper prints D = -1, but with I = ABCDEF its D must be +1.
    assert ours[10].tolist() == [-1, +1, -1, +1, -1, -1]
    assert paper[10, 3] == -1 and ours[10, [0, 1, 2, 4, 5]].tolist() == paper[10, [0, 1, 2, 4, 5]].tolist()
    # Independently: every printed row satisfies ABCDEF = +1 except row 11, and Table II agrees.
    assert [i + 1 for i in range(32) if np.prod(paper[i]) != 1] == [11]
    assert d.points[10] == TABLE_II_ROW_11


def test_seed_001_resolution_vi_balanced_and_orthogonal():
    d = marinos()
    assert d.n_runs == 32 and d.resolution == 6 == brute_resolution(d.coded)
    assert [str(w) for w in d.defining_relation] == ["ABCDEF"]
    assert brute_relation(d.coded, d.factors.letters) == {"ABCDEF"}
    for j, f in enumerate(d.factors.factors):
        assert Counter(p[j] for p in d.points) == {f.levels[0]: 16, f.levels[1]: 16}
    assert np.array_equal(d.coded.T @ d.coded, 32 * np.eye(6))
    check_aliases(d)
    assert all(len(w.letters) >= 4 for c in d.aliases for w in c.aliases)


def test_cli_writes_seed_001_table_with_real_levels(tmp_path, capsys):
    out = tmp_path / "d.csv"
    args = ["--factors", str(MARINOS), "--kind", "fractional", "--generators", "F=ABCDE"]
    assert main([*args, "--no-randomize", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "I = ABCDEF" in printed and "resolution: VI" in printed and "AB = CDEF" in printed
    rows = list(csv.reader(out.open()))
    header = ["run", "replicate", "nodes", "executors", "executor_cores", "epochs", "learning_rate", "batch_size"]
    assert rows[0] == header
    assert rows[1] == ["1", "1", "1", "1", "1", "1", "0.001", "64"]
    assert rows[11] == ["11", "1", "1", "4", "1", "3", "0.001", "64"]
    levels = {
        "nodes": ["1", "4"], "executors": ["1", "4"], "executor_cores": ["1", "4"], "epochs": ["1", "3"],
        "batch_size": ["64", "256"],
    }
    for r in rows[1:]:
        assert r[6] in ("0.001", "0.01")
        for name, allowed in levels.items():
            assert r[header.index(name)] in allowed
    assert [r[0] for r in rows[1:]] == [str(i) for i in range(1, 33)]


def test_committed_marinos2021_csv_is_what_the_cli_makes(tmp_path):
    out = tmp_path / "d.csv"
    args = ["--factors", str(MARINOS), "--kind", "fractional", "--generators", "F=ABCDE", "--no-randomize"]
    assert main([*args, "--out", str(out)]) == 0
    assert out.read_text() == (ROOT / "examples" / "marinos2021.csv").read_text()


# -- Albo Martínez 2021: full factorial -----------------------------------------------------------


def test_seed_004_full_factorial_96_points_3_replications(tmp_path):
    out = tmp_path / "c.csv"
    args = ["--factors", str(COURIER), "--kind", "full", "--replications", "3", "--seed", "4"]
    assert main([*args, "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 288
    names = ["executors", "batch_size", "njobs", "model"]
    points = Counter(tuple(r[n] for n in names) for r in rows)
    fs = load_factors(COURIER)
    expected = set(itertools.product(*[[str(v) for v in f.levels] for f in fs.factors]))
    assert set(points) == expected and len(expected) == 96 and set(points.values()) == {3}
    assert Counter((r["run"], r["replicate"]) for r in rows) == {
        (str(run), str(rep)): 1 for run in range(1, 97) for rep in (1, 2, 3)
    }
    constants = {(r["nodes"], r["executor_cores"], r["epochs"], r["learning_rate"]) for r in rows}
    assert constants == {("1", "1", "10", "0.01")}


def test_full_factorial_standard_order_first_factor_fastest():
    d = full_factorial(make_factors({"a": [1, 2, 3], "b": [10, 20], "c": ["x", "y"]}))
    expected = [(a, b, c) for c in ["x", "y"] for b in [10, 20] for a in [1, 2, 3]]
    assert list(d.points) == expected
    assert d.resolution is None and d.aliases == ()


# -- resolution search, brute force -----------------------------------------------------


@pytest.mark.parametrize("k", [4, 5, 6, 7, 8])
@pytest.mark.parametrize("resolution", [3, 4, 5, 6])
def test_by_resolution_is_smallest_and_brute_force_resolution_holds(k, resolution):
    d = by_resolution(two_level(k), resolution)
    assert d.n_runs == MIN_RUNS[resolution][k]
    assert len({tuple(r) for r in d.coded.tolist()}) == d.n_runs
    brute = brute_resolution(d.coded)
    assert d.resolution == brute
    assert brute is None or brute >= resolution
    if d.generators:
        relation = {str(w) for w in d.defining_relation}
        assert relation == brute_relation(d.coded, d.factors.letters)
        assert len(relation) == 2 ** len(d.generators) - 1
        check_aliases(d)


def test_by_resolution_picks_minimum_aberration():
    # 16 runs, 5 factors: E=ABCD (resolution V) beats E=ABC (IV) although IV was asked for.
    d = by_resolution(two_level(5), 4)
    assert d.n_runs == 16 and brute_relation(d.coded, d.factors.letters) == {"ABCDE"}
    # 16 runs, 8 factors: the 2^(8-4)_IV (14 four-letter words and ABCDEFGH) beats any res III set.
    d = by_resolution(two_level(8), 3)
    lengths = Counter(len(w) for w in brute_relation(d.coded, d.factors.letters))
    assert d.n_runs == 16 and lengths == {4: 14, 8: 1}


def test_search_budget_returns_a_valid_design_or_a_clear_error(monkeypatch):
    import harness.design.resolution as res

    monkeypatch.setattr(res, "MAX_WORK", 50)
    found = res.search_generators(two_level(8), 3)
    assert not found.minimum_aberration and len(found.generators) == 4
    d = fractional(two_level(8), found.generators)
    assert d.n_runs == 16 and brute_resolution(d.coded) >= 3
    monkeypatch.setattr(res, "MAX_WORK", 5)
    with pytest.raises(DesignError, match="too large; give --generators"):
        res.search_generators(two_level(8), 3)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_generated_fractions_match_brute_force(data):
    k = data.draw(st.integers(4, 8))
    p = data.draw(st.integers(1, k - 3))
    letters = make_factors({f"x{j}": [0, 1] for j in range(k)}).letters
    base = letters[: k - p]
    words = data.draw(
        st.lists(
            st.sets(st.sampled_from(base), min_size=2, max_size=len(base)).map(lambda s: "".join(sorted(s))),
            min_size=p, max_size=p, unique=True,
        )
    )
    signs = data.draw(st.lists(st.sampled_from(["", "-"]), min_size=p, max_size=p))
    text = ", ".join(f"{letters[k - p + i]}={signs[i]}{w}" for i, w in enumerate(words))
    fs = two_level(k)
    try:
        d = fractional(fs, parse_generators(text, fs))
    except DesignError as exc:
        assert "not independent" in str(exc) or "resolution II" in str(exc)
        assert brute_resolution(_raw_columns(k, p, words, signs)) in (1, 2)
        return
    assert d.n_runs == 2 ** (k - p) and len({tuple(r) for r in d.coded.tolist()}) == d.n_runs
    assert d.resolution == brute_resolution(d.coded)
    assert {str(w) for w in d.defining_relation} == brute_relation(d.coded, letters)
    check_aliases(d)


def _raw_columns(k: int, p: int, words: list[str], signs: list[str]) -> np.ndarray:
    """The design columns straight from the generator text, without the library."""
    letters = "ABCDEFGH"[:k]
    n = k - p
    base = np.array(list(itertools.product([-1, 1], repeat=n)))[:, ::-1]
    cols = [base[:, j] for j in range(n)]
    for w, s in zip(words, signs):
        cols.append((-1 if s else 1) * np.prod([cols[letters.index(ch)] for ch in w], axis=0))
    return np.column_stack(cols)


def test_generator_with_sign_and_generated_letter_in_word():
    fs = two_level(6)
    d = fractional(fs, parse_generators("e = -abc,F=ADE", fs))  # F = AD(-ABC) = -BCD
    x = d.coded
    assert np.array_equal(x[:, 4], -x[:, 0] * x[:, 1] * x[:, 2])
    assert np.array_equal(x[:, 5], x[:, 0] * x[:, 3] * x[:, 4])
    assert {str(w) for w in d.defining_relation} == {"-ABCE", "ADEF", "-BCDF"} == brute_relation(x, "ABCDEF")
    assert d.resolution == 4
    check_aliases(d)


# -- run order --------------------------------------------------------------------------


def test_randomization_reproducible_from_seed_and_different_across_seeds():
    d = marinos()
    a, b, c = (schedule(d, 10, seed=s) for s in (42, 42, 43))
    assert a.jobs == b.jobs and a.jobs != c.jobs
    cells = Counter((j.run, j.replicate) for j in a.jobs)
    assert cells == {(r, k): 1 for r in range(1, 33) for k in range(1, 11)}
    for j in a.jobs:
        assert j.values == d.points[j.run - 1]
    seen: dict[int, int] = {}
    for j in a.jobs:  # replicate numbers count each run's executions in order
        seen[j.run] = seen.get(j.run, 0) + 1
        assert j.replicate == seen[j.run]
    plain = schedule(d, 2, randomize=False)
    assert [(j.run, j.replicate) for j in plain.jobs] == [(r, k) for k in (1, 2) for r in range(1, 33)]


def _plots(plan):
    """Whole plot -> its jobs, in execution order."""
    plots: dict[int, list] = {}
    for job in plan.jobs:
        plots.setdefault(job.whole_plot, []).append(job)
    return plots


@pytest.mark.parametrize("replications", [1, 2, 3])
def test_split_plot_whole_plots_are_contiguous_per_replicate_and_cover_every_job(replications):
    d = marinos()
    orders = []
    for seed in (1, 2, 3):
        plan = schedule(d, replications, seed=seed, hard_to_change=("nodes",))
        plots = _plots(plan)
        numbers = [j.whole_plot for j in plan.jobs]
        assert numbers == sorted(numbers)  # contiguous, numbered in execution order
        assert len(plots) == 2 * replications == plan.n_whole_plots
        for jobs in plots.values():  # one replicate at one nodes level, all 16 of its runs
            assert len({j.replicate for j in jobs}) == 1 and len({j.values[0] for j in jobs}) == 1
            assert len(jobs) == 16
        levels = Counter(jobs[0].values[0] for jobs in plots.values())
        assert levels == {1: replications, 4: replications}  # each level has one whole plot per replicate
        assert plan.whole_plot_error_df == 2 * replications - 2
        assert plan.cluster_changes() == 2 * replications - 1
        orders.append([(j.run, j.replicate) for j in plan.jobs])
        assert Counter(orders[-1]) == {(r, k): 1 for r in range(1, 33) for k in range(1, replications + 1)}
        for j in plan.jobs:
            assert j.values == d.points[j.run - 1]
    assert len({tuple(o) for o in orders}) == 3  # seeds give different orders


def test_split_plot_order_is_random_at_both_levels():
    """Over seeds, every whole plot comes first about equally often and a run's position inside its whole
    plot is uniform: the randomization is not restricted beyond the whole plots."""
    d = marinos()
    first_plot, first_inside = Counter(), Counter()
    for seed in range(400):
        plan = schedule(d, 2, seed=seed, hard_to_change=("nodes",))
        head = plan.jobs[0]
        first_plot[(head.replicate, head.values[0])] += 1
        first_inside[head.run] += 1
    assert len(first_plot) == 4 and min(first_plot.values()) > 60  # 100 expected each
    assert len(first_inside) > 25  # 32 runs, each about 12 times


def test_two_hard_to_change_factors_make_whole_plots_of_their_combinations():
    c = full_factorial(load_factors(COURIER))
    names = c.names[:2]
    plan = schedule(c, 2, seed=4, hard_to_change=names)
    combos = len({tuple(j.values[:2]) for j in plan.jobs})
    assert plan.n_whole_plots == 2 * combos and plan.whole_plot_error_df == combos
    for jobs in _plots(plan).values():
        assert len({tuple(j.values[:2]) for j in jobs}) == 1


def test_unreplicated_split_plot_warns_that_the_whole_plot_factor_cannot_be_tested(tmp_path):
    plan = schedule(marinos(), 1, seed=3, hard_to_change=("nodes",))
    text = "\n".join(hd.describe_schedule(plan))
    assert "whole-plot error df: 0" in text and "warning: whole-plot error df is 0" in text
    text2 = "\n".join(hd.describe_schedule(schedule(marinos(), 2, seed=3, hard_to_change=("nodes",))))
    assert "warning" not in text2 and "whole-plot error df: 2 (4 whole plots - 2 level combinations)" in text2
    assert "cluster rescales or restarts: 3 (one per whole-plot boundary), against about 32" in text2


def test_expected_random_changes_matches_simulation():
    plan = schedule(full_factorial(load_factors(COURIER)), 3, seed=5)
    seq = np.array(plan.level_sequence("njobs"))
    rng = np.random.default_rng(0)
    sims = [np.count_nonzero(np.diff(rng.permutation(seq))) for _ in range(4000)]
    assert abs(np.mean(sims) - plan.expected_random_changes("njobs")) < 4 * np.std(sims) / np.sqrt(4000)


# -- Box-Behnken ------------------------------------------------------------------------


def test_box_behnken_matches_seed_003_matrix():
    fs = make_factors({"gpu_count": [8, 64], "batch_per_gpu": [32, 256], "gradient_compression": [0, 90]})
    d = box_behnken(fs, center_points=3)
    assert Counter(d.points) == Counter(DOE_TOOL_REPORT_BBD)


@pytest.mark.parametrize("k", [3, 4, 5])
def test_box_behnken_structure(k):
    d = box_behnken(two_level_numeric(k), center_points=2)
    x = d.coded
    assert d.n_runs == 4 * k * (k - 1) // 2 + 2
    edge = x[: d.n_runs - 2]
    assert np.all(np.count_nonzero(edge, axis=1) == 2) and np.all(x[-2:] == 0)
    assert np.allclose(x.T @ x, np.diag(np.diag(x.T @ x)))  # first-order columns orthogonal
    for i, j in itertools.combinations(range(k), 2):  # each pair runs a full 2^2 at the others' center
        rows = edge[(edge[:, i] != 0) & (edge[:, j] != 0)]
        assert sorted(map(tuple, rows[:, [i, j]].tolist())) == [(-1, -1), (-1, 1), (1, -1), (1, 1)]


def two_level_numeric(k: int):
    return make_factors({f"x{j}": [0, 10] for j in range(k)})


def test_box_behnken_middle_levels():
    d = box_behnken(make_factors({"a": [1, 2, 4], "b": [0.001, 0.01], "c": [64, 256]}))
    assert [f.levels for f in d.factors.factors] == [(1, 2, 4), (0.001, 0.0055, 0.01), (64, 160, 256)]
    with pytest.raises(DesignError, match="not an integer"):
        box_behnken(make_factors({"a": [1, 4], "b": [1, 3], "c": [1, 3]}))


# -- errors -----------------------------------------------------------------------------

TWO = "[factors.a]\nlevels = [1, 2]\n[factors.b]\nlevels = [1, 2]\n"
GOOD = TWO + "[factors.c]\nlevels = [1, 2]\n[factors.d]\nlevels = [1, 2]\n"
THREE_LEVEL_A = GOOD.replace("[1, 2]", "[1, 2, 3]", 1)


@pytest.mark.parametrize(
    "toml, extra, message",
    [
        ("[factors.a\nlevels = [1]", ["--kind", "full"], "not valid TOML"),
        ("[factors.a]\nlevel = [1, 2]\n", ["--kind", "full"], "unknown key 'level'"),
        ("[factors.a]\nlevels = [1]\n", ["--kind", "full"], "needs >= 2"),
        ("[factors.a]\nlevels = [1, 'x']\n", ["--kind", "full"], "mixes numbers and strings"),
        ("[factors.a]\nlevels = [1, 1]\n", ["--kind", "full"], "repeated level"),
        ("[factors.run]\nlevels = [1, 2]\n", ["--kind", "full"], "reserved"),
        ("[other]\nx = 1\n", ["--kind", "full"], "unknown table"),
        (GOOD, ["--kind", "fractional", "--generators", "E=ABC"], "unknown letter E"),
        (GOOD, ["--kind", "fractional", "--generators", "ABC"], "not of the form X=WORD"),
        (GOOD, ["--kind", "fractional", "--generators", "D="], "not of the form X=WORD"),
        (GOOD, ["--kind", "fractional", "--generators", "I=ABCD"], "defining word"),
        (GOOD, ["--kind", "fractional", "--generators", "D=AAB"], "repeats letter A"),
        (GOOD, ["--kind", "fractional", "--generators", "D=ABD"], "both sides"),
        (GOOD, ["--kind", "fractional", "--generators", "C=AD D=AC"], "not independent"),
        (GOOD, ["--kind", "fractional", "--generators", "C=AB D=ABC"], "not independent"),
        (GOOD, ["--kind", "fractional", "--generators", "C=AB D=AB"], "resolution II"),
        (GOOD, ["--kind", "fractional", "--generators", "D=A"], "resolution II"),
        (GOOD, ["--kind", "fractional", "--generators", "D=ABC D=AB"], "generated twice"),
        (GOOD, ["--kind", "fractional"], "exactly one of"),
        (GOOD, ["--kind", "fractional", "--resolution", "2"], "must be >= 3"),
        (GOOD, ["--kind", "full", "--generators", "D=ABC"], "apply to --kind fractional"),
        (THREE_LEVEL_A, ["--kind", "fractional", "--generators", "D=ABC"], "exactly 2"),
        (THREE_LEVEL_A, ["--kind", "fractional", "--resolution", "3"], "exactly 2"),
        (TWO, ["--kind", "box-behnken"], "at least 3 factors"),
        (GOOD.replace("[1, 2]", "['x', 'y']", 1), ["--kind", "box-behnken"], "non-numeric"),
        (GOOD, ["--kind", "full", "--hard-to-change", "zz", "--seed", "1"], "unknown factor 'zz'"),
        (GOOD, ["--kind", "full", "--hard-to-change", ",", "--seed", "1"], "name factors"),
        (GOOD, ["--kind", "full", "--replications", "0", "--seed", "1"], "replications must be >= 1"),
        (GOOD, ["--kind", "nope"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_no_file(tmp_path, capsys, toml, extra, message):
    f = tmp_path / "f.toml"
    f.write_text(toml)
    out = tmp_path / "d.csv"
    argv = ["--factors", str(f), *extra, "--out", str(out)]
    if "--seed" not in extra and extra[-1] != "nope":
        argv.append("--no-randomize")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert not out.exists()


def test_randomized_without_seed_is_refused(tmp_path, capsys):
    assert main(["--factors", str(MARINOS), "--kind", "full", "--out", str(tmp_path / "d.csv")]) == 2
    assert "--seed" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=20))
def test_any_generator_text_is_a_design_or_a_design_error(text):
    fs = two_level(6)
    try:
        d = fractional(fs, parse_generators(text, fs))
    except DesignError:
        return
    assert d.resolution == brute_resolution(d.coded)


def test_doctests():
    names = ["boxbehnken", "fractional", "full", "resolution"]
    for module in [importlib.import_module(f"harness.design.{n}") for n in names] + [hd]:
        failed, tried = doctest.testmod(module)
        assert tried > 0, module.__name__
        assert failed == 0, module.__name__


@pytest.mark.parametrize("k, resolution", [(6, 4), (7, 3), (8, 5)])
def test_summary_lists_exactly_the_confounded_low_order_effects(k, resolution):
    d = by_resolution(two_level(k), resolution)
    letters, x = d.factors.letters, d.coded
    low = ["".join(letters[j] for j in s) for n in (1, 2) for s in itertools.combinations(range(k), n)]
    cols = {e: column_product(x, [letters.index(ch) for ch in e]) for e in low}
    brute = {
        frozenset((a, b)) for a, b in itertools.combinations(low, 2) if abs(int(cols[a] @ cols[b])) == d.n_runs
    }
    text = "\n".join(hd.describe(d))
    listed = set()
    for line in text.splitlines():
        if line.startswith(("main effects aliased", "two-factor interactions aliased")):
            for group in line.split(": ", 1)[1].split("; "):
                members = [m.lstrip("-") for m in group.split(" = ")]
                listed |= {frozenset(p) for p in itertools.combinations(members, 2)}
    assert listed == brute
    assert ("main effects are clear" in text) == (d.resolution >= 4)
    assert ("two-factor interactions are clear" in text) == (d.resolution >= 5)


def _cli_order(tmp_path, toml, *extra):
    f = tmp_path / "f.toml"
    f.write_text(toml)
    out = tmp_path / "d.csv"
    assert design_main(["--factors", str(f), "--kind", "full", "--out", str(out), *extra]) == 0
    return list(csv.DictReader(open(out)))


NODES_TOML = "[factors.nodes]\nlevels = [1, 2]\n[factors.learning_rate]\nlevels = [0.01, 0.1]\n[factors.batch_size]\nlevels = [32, 64]\n"


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_by_default_nodes_is_hard_to_change_with_two_whole_plots_per_level(tmp_path, seed):
    rows = _cli_order(tmp_path, NODES_TOML, "--seed", str(seed), "--replications", "2")
    assert list(rows[0])[:3] == ["run", "replicate", "whole_plot"] and len(rows) == 16
    plots: dict[str, set] = {}
    for r in rows:
        plots.setdefault(r["whole_plot"], set()).add((r["nodes"], r["replicate"]))
    assert len(plots) == 4 and all(len(v) == 1 for v in plots.values())
    assert Counter(n for v in plots.values() for n, _ in v) == {"1": 2, "2": 2}
    changes = [a["whole_plot"] != b["whole_plot"] for a, b in zip(rows, rows[1:])]
    assert sum(changes) == 3  # contiguous whole plots
    assert Counter((r["run"], r["replicate"]) for r in rows) == {(str(r), str(k)): 1 for r in range(1, 9) for k in (1, 2)}
    named = _cli_order(tmp_path, NODES_TOML, "--seed", str(seed), "--replications", "2", "--hard-to-change", "nodes")
    assert named == rows


def test_hard_to_change_none_is_complete_randomization_and_no_randomize_keeps_standard_order(tmp_path):
    d = full_factorial(load_factors(_write(tmp_path, NODES_TOML)))
    rows = _cli_order(tmp_path, NODES_TOML, "--seed", "7", "--replications", "3", "--hard-to-change", "none")
    plan = schedule(d, 3, seed=7)  # no hard-to-change factors
    assert "whole_plot" not in rows[0]
    assert [(int(r["run"]), int(r["replicate"])) for r in rows] == [(j.run, j.replicate) for j in plan.jobs]
    nodes = [r["nodes"] for r in rows]
    assert sum(a != b for a, b in zip(nodes, nodes[1:])) > 1  # seed 7 changes nodes more than once
    plain = _cli_order(tmp_path, NODES_TOML, "--no-randomize")
    assert [int(r["run"]) for r in plain] == list(range(1, 9))


def test_a_design_without_hard_to_change_factors_is_completely_randomized(tmp_path):
    toml = NODES_TOML.replace("nodes", "executors")
    d = full_factorial(load_factors(_write(tmp_path, toml)))
    rows = _cli_order(tmp_path, toml, "--seed", "3", "--replications", "2")
    assert [(int(r["run"]), int(r["replicate"])) for r in rows] == [(j.run, j.replicate) for j in schedule(d, 2, seed=3).jobs]


def test_block_on_is_refused_with_the_new_spelling(tmp_path, capsys):
    f = _write(tmp_path, NODES_TOML)
    assert main(["--factors", str(f), "--kind", "full", "--seed", "1", "--block-on", "nodes",
                        "--out", str(tmp_path / "d.csv")]) == 2
    assert "--block-on nodes is now --hard-to-change nodes" in capsys.readouterr().err
    assert not (tmp_path / "d.csv").exists()


def test_fraction_with_a_whole_plot_factor_generated_from_subplot_factors_is_refused(tmp_path, capsys):
    f = _write(tmp_path, "".join(f"[factors.{n}]\nlevels = [1, 2]\n" for n in ("a", "b", "c", "nodes")))
    out = tmp_path / "d.csv"
    assert main(["--factors", str(f), "--kind", "fractional", "--generators", "D=ABC", "--seed", "1",
                        "--replications", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "generator D=ABC makes hard-to-change factor D from subplot factors" in err and not out.exists()
    # nodes first: a base factor, the generated factor a subplot one
    f2 = _write(tmp_path, "".join(f"[factors.{n}]\nlevels = [1, 2]\n" for n in ("nodes", "a", "b", "c")))
    assert main(["--factors", str(f2), "--kind", "fractional", "--generators", "D=ABC", "--seed", "1",
                        "--replications", "2", "--out", str(out)]) == 0
    # a subplot factor generated from whole-plot factors alone aliases it with a whole-plot effect
    f3 = _write(tmp_path, "".join(f"[factors.{n}]\nlevels = [1, 2]\n" for n in ("nodes", "runtime_x", "b", "c")))
    assert main(["--factors", str(f3), "--kind", "fractional", "--generators", "D=AB", "--seed", "1",
                        "--hard-to-change", "nodes,runtime_x", "--out", str(out)]) == 2
    assert "aliases subplot effect D with whole-plot effect AB" in capsys.readouterr().err


@pytest.mark.parametrize("k, resolution, whole", [(6, 4, 1), (6, 3, 2), (7, 4, 2), (8, 4, 3)])
def test_resolution_search_with_whole_plot_factors_gives_a_split_plot_fraction(k, resolution, whole):
    """Checked by brute force on the design's own columns: the resolution holds, the whole-plot factors are
    constant within whole plots when generated, and no subplot main effect is aliased with a whole-plot effect."""
    fs = two_level(k)
    names = tuple(f.name for f in fs.factors[-whole:])  # the last letters: the search must generate them right
    found = search_generators(fs, resolution, whole_plot=names)
    d = fractional(fs, found.generators) if found.generators else full_factorial(fs)
    got = brute_resolution(d.coded)
    assert got is None or got >= resolution  # None: nothing aliased (the full factorial)
    assert d.n_runs < 2**k  # a real fraction was found
    cols = [d.names.index(n) for n in names]
    x = d.coded
    letters = d.factors.letters
    wp = {letters[c] for c in cols}
    for word in d.defining_relation:
        assert sum(ch not in wp for ch in word.letters) != 1, word
    # every subplot main effect is orthogonal to every whole-plot effect (each product of whole-plot columns)
    for r in range(1, len(cols) + 1):
        for combo in itertools.combinations(cols, r):
            wcol = column_product(x, list(combo))
            for j in range(k):
                if j not in cols:
                    assert abs(int(wcol @ x[:, j])) < d.n_runs


def _write(tmp_path, toml):
    f = tmp_path / "factors-copy.toml"
    f.write_text(toml)
    return f
