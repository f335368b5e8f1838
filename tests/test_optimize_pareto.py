"""optimize.pareto: dominance and hypervolume against independent computations, the campaign front, the CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimize.errors import CampaignDataError, SearchOptionError
from optimize.cli.pareto import main
from optimize.pareto import ObjectiveSpec, default_reference, hypervolume, non_dominated, pareto_front, parse_objectives
from sparkdl.cli import run_cli


def dominated_brute(points: np.ndarray) -> np.ndarray:
    """Pairwise definition, loop by loop."""
    n, k = points.shape
    out = np.zeros(n, dtype=bool)
    for i in range(n):
        for j in range(n):
            if all(points[j, d] <= points[i, d] for d in range(k)) and any(points[j, d] < points[i, d] for d in range(k)):
                out[i] = True
    return out


def hypervolume_by_cells(points: np.ndarray, ref: np.ndarray) -> float:
    """Exact, independently: split space on every coordinate; a cell counts when some point is <= its low corner."""
    axes = [np.unique(np.concatenate([points[:, d][points[:, d] < ref[d]], [ref[d]]])) for d in range(len(ref))]
    total = 0.0
    for cell in itertools.product(*(range(len(a) - 1) for a in axes)):
        low = np.array([axes[d][i] for d, i in enumerate(cell)])
        if np.any(np.all(points <= low, axis=1)):
            total += float(np.prod([axes[d][i + 1] - axes[d][i] for d, i in enumerate(cell)]))
    return total


def hypervolume_monte_carlo(points: np.ndarray, ref: np.ndarray, n: int, seed: int) -> tuple[float, float]:
    lo = points.min(axis=0)
    rng = np.random.default_rng(seed)
    samples = lo + rng.random((n, len(ref))) * (ref - lo)
    hit = np.zeros(n, dtype=bool)
    for p in points:
        hit |= np.all(samples >= p, axis=1)
    box = float(np.prod(ref - lo))
    share = hit.mean()
    return box * share, box * np.sqrt(share * (1 - share) / n)


def test_staircase_by_hand():
    pts = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0], [3.0, 3.0]])
    # strips: (4-1)(4-3) + (4-2)(3-2) + (4-3)(2-1) = 3 + 2 + 1; (3,3) is dominated and adds nothing
    assert hypervolume(pts, [4.0, 4.0]) == 6.0
    assert list(non_dominated(pts)) == [True, True, True, False]
    assert hypervolume(pts, [0.5, 0.5]) == 0.0  # nothing better than the reference


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=25))
def test_2d_hypervolume_and_front_match_the_cell_count_and_the_pairwise_definition(raw):
    pts = np.array(raw, dtype=float)
    ref = np.array([10.0, 10.0])
    assert hypervolume(pts, ref) == pytest.approx(hypervolume_by_cells(pts, ref), abs=1e-9)
    assert list(non_dominated(pts)) == list(~dominated_brute(pts))
    # the front alone has the same hypervolume as all points
    assert hypervolume(pts[non_dominated(pts)], ref) == pytest.approx(hypervolume(pts, ref))


@pytest.mark.parametrize("seed", range(4))
def test_3d_hypervolume_matches_cells_and_monte_carlo(seed):
    rng = np.random.default_rng(seed)
    pts = rng.random((12, 3))
    ref = np.array([1.1, 1.2, 1.05])
    exact = hypervolume(pts, ref)
    assert exact == pytest.approx(hypervolume_by_cells(pts, ref), rel=1e-12)
    mc, se = hypervolume_monte_carlo(pts, ref, 200_000, seed)
    assert abs(mc - exact) < 4 * se


def test_2d_hypervolume_matches_monte_carlo_on_a_continuous_front():
    rng = np.random.default_rng(7)
    x = rng.random(30)
    pts = np.column_stack([x, 1.0 / (x + 0.1) + rng.random(30)])
    ref = default_reference(pts)
    mc, se = hypervolume_monte_carlo(pts, ref, 300_000, 1)
    assert abs(mc - hypervolume(pts, ref)) < 4 * se


def test_parse_objectives_and_its_errors():
    assert parse_objectives("wall_clock_s:min,accuracy:max") == (ObjectiveSpec("wall_clock_s", "min"),
                                                                  ObjectiveSpec("accuracy", "max"))
    for bad in ("wall_clock_s:min", "wall_clock_s:least,accuracy:max", "a:min,a:max", ":min,b:max"):
        with pytest.raises(SearchOptionError):
            parse_objectives(bad)


def campaign_table() -> pd.DataFrame:
    return pd.DataFrame({
        "run": [1, 2, 3, 4, 5, 6, 7], "replicate": 1,
        "batch_size": [32, 64, 128, 256, 32, 64, 512],
        "status": ["ok", "ok", "ok", "ok", "failed", "pruned", "ok"],
        "wall_clock_s": [40.0, 25.0, 18.0, 30.0, 1.0, 2.0, 12.0],
        "accuracy": [0.95, 0.93, 0.80, 0.85, 0.99, 0.99, 0.40],
    })


def test_front_of_a_campaign_uses_ok_runs_only_and_maximises_accuracy():
    front = pareto_front(campaign_table(), parse_objectives("wall_clock_s:min,accuracy:max"))
    assert front.excluded == 2  # the failed and the pruned run, however good their figures look
    assert list(front.front["run"]) == [7, 3, 2, 1]  # 4 (30 s, 0.85) is beaten by 2 (25 s, 0.93)
    # reference: worst time 40 + 10% of 28, worst accuracy 0.40 - 10% of 0.55
    assert front.reference == pytest.approx((42.8, 0.345))
    # hypervolume recomputed by hand in (time, -accuracy): strips of the staircase
    pts = sorted([(12, 0.40), (18, 0.80), (25, 0.93), (40, 0.95)])
    hv, best = 0.0, 0.345
    for t, a in pts:
        hv += (42.8 - t) * (a - best)
        best = a
    assert front.hypervolume == pytest.approx(hv)


def test_cost_objective_is_computed_from_time_and_accuracy():
    front = pareto_front(campaign_table(), parse_objectives("wall_clock_s:min,accuracy:max,cost:min"))
    ok = campaign_table().query("status == 'ok'")
    assert list(front.runs["cost"]) == pytest.approx(list(ok["wall_clock_s"] / (100 * ok["accuracy"]) ** 2))
    with pytest.raises(CampaignDataError, match="no column"):
        pareto_front(campaign_table(), parse_objectives("elapsed_s:min,accuracy:max"))


def test_cli_writes_table_json_and_figures(tmp_path, capsys):
    campaign_table().to_csv(tmp_path / "results.csv", index=False)
    assert run_cli(main, [str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "4 of 5 ok runs on the front (2 not ok, left out)" in text and (tmp_path / "pareto.png").stat().st_size > 5000
    svg = tmp_path / "f.svg"
    assert run_cli(main, [str(tmp_path), "--format", "json", "--plot", str(svg),
                          "--reference-point", "wall_clock_s=50,accuracy=0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in data["front"]] == [7, 3, 2, 1] and data["reference"] == {"wall_clock_s": 50.0,
                                                                                       "accuracy": 0.0}
    assert data["hypervolume"] == pytest.approx((50 - 12) * 0.4 + (50 - 18) * 0.4 + (50 - 25) * 0.13
                                                + (50 - 40) * 0.02)
    assert svg.read_text().lstrip().startswith("<?xml")
    assert run_cli(main, [str(tmp_path), "--objectives", "accuracy:max"]) == 2
    assert "needs at least two" in capsys.readouterr().err
    assert run_cli(main, [str(tmp_path / "nope")]) == 2


def test_bench_compares_arms_against_one_reference():
    import importlib.util
    import sys
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_search", Path(__file__).parent.parent / "bench" / "search.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_search"] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    grid = pd.DataFrame({"status": ["ok"] * 4, "elapsed_s": [30.0] * 4,
                         "wall_clock_s": [10.0, 20.0, 30.0, 40.0], "accuracy": [0.5, 0.8, 0.9, 0.85]})
    found = pd.DataFrame({"status": ["ok", "pruned"], "elapsed_s": [30.0, 10.0],
                          "wall_clock_s": [15.0, 5.0], "accuracy": [0.88, 0.2]})
    rows = {r.name: r for r in bench.compare_arms({"grid": grid, "search": found})}
    union = np.array([[10, -0.5], [20, -0.8], [30, -0.9], [40, -0.85], [15, -0.88]])
    ref = np.array([40 + 3.0, -0.5 + 0.04])  # worst + 10 % of the range, over both arms' ok runs
    assert rows["grid"].hypervolume == pytest.approx(hypervolume_by_cells(union[:4], ref))
    assert rows["search"].hypervolume == pytest.approx(hypervolume_by_cells(union[4:], ref))
    assert (rows["search"].jobs, rows["search"].pruned, rows["search"].cluster_time_s) == (2, 1, 40.0)
    ratio = hypervolume_by_cells(union[4:], ref) / hypervolume_by_cells(union[:4], ref)
    assert f": MET ({ratio:.1%} of the hypervolume in 33.3% of the time)" in bench.goal_line(list(rows.values()))
    slower = found.assign(elapsed_s=[31.0, 10.0])  # 41 s > a third of 120 s
    assert ": NOT met" in bench.goal_line(bench.compare_arms({"grid": grid, "search": slower}))
