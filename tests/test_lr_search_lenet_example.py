"""examples/lr_search_lenet: ten real learning-rate searches (Marinos 2021's rule and the adaptive search, five
seeds each) and the re-measurement of every rate they picked, read back as docs/optimizers.md prints them.

Each search is replayed on its own recorded runs (bench/lr_real.py's Replay: the k-th call at a rate gets that
rate's replicate k): optimize.lr must ask for exactly the jobs the real search ran, in their order, and pick the
same rate for the same reason. If a change to the searches' rules changes what they would have done on these
real curves, or the figures the docs print from them, these tests fail. Nothing here is timed.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from bench import lr_real

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "lr_search_lenet"
SEEDS = (100, 200, 300, 400, 500)
METHODS = ("paper", "adaptive")


def rows(folder: Path, name: str) -> list[dict[str, str]]:
    with open(folder / name, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_search_replays_to_the_jobs_it_ran_and_the_rate_it_picked(method, seed):
    folder = EXAMPLE / f"{method}-s{seed}"
    runs = rows(folder, "results.csv")
    assert all(r["status"] == "ok" for r in runs)
    result, replay = lr_real.replay(folder, method)
    ran = [(float(r["learning_rate"]), int(r["replicate"])) for r in sorted(runs, key=lambda r: r["start"])]
    assert replay.asked == ran  # the same jobs, in the order they ran
    assert result.jobs == len(runs)
    recorded = rows(folder, "lr_search.csv")
    assert [float(r["learning_rate"]) for r in recorded] == list(result.learning_rates)
    (best,) = [r for r in recorded if r["best"] == "1"]
    assert float(best["learning_rate"]) == result.best_lr
    assert float(best["mean_cost"]) == pytest.approx(result.best.mean, rel=1e-12)
    out = (folder / "search.out").read_text()
    assert f"best learning rate {result.best_lr!r}" in out
    assert f"stopped: {result.stop_reason}" in out
    assert re.search(rf"\b{result.jobs} jobs \(0 reused", out)


def test_the_comparison_the_docs_print():
    """Jobs 16.8 (paper) against 13.0 (adaptive), cluster-seconds 269 against 180; the picked rates; the
    re-measured accuracy of each pick (3 runs, weight seeds 900-902), mean over the five searches 0.773
    against 0.802."""
    found = {(s.method, s.seed): s for s in lr_real.searches(EXAMPLE)}
    assert sorted(found) == sorted((m, s) for m in METHODS for s in SEEDS)
    jobs = {m: [found[m, s].jobs for s in SEEDS] for m in METHODS}
    assert jobs == {"paper": [18, 18, 16, 16, 16], "adaptive": [11, 12, 12, 13, 17]}
    cluster = {m: np.mean([found[m, s].cluster_s for s in SEEDS]) for m in METHODS}
    assert cluster["paper"] == pytest.approx(268.7, abs=0.1) and cluster["adaptive"] == pytest.approx(179.8, abs=0.1)
    picked = {m: [round(found[m, s].picked, 4) for s in SEEDS] for m in METHODS}
    assert picked == {"paper": [0.64, 0.64, 0.32, 0.32, 0.176], "adaptive": [0.3378, 0.2582, 0.64, 0.3449, 0.4337]}
    again = lr_real.remeasured(EXAMPLE)
    assert sorted(again) == sorted({found[k].picked for k in found})
    assert all(len(v["accuracy"]) == 3 for v in again.values())
    mean_acc = {m: np.mean([np.mean(again[found[m, s].picked]["accuracy"]) for s in SEEDS]) for m in METHODS}
    assert mean_acc["paper"] == pytest.approx(0.773, abs=5e-4)
    assert mean_acc["adaptive"] == pytest.approx(0.802, abs=5e-4)
    m, lo, hi = lr_real.interval(again[0.64]["accuracy"])
    assert (round(m, 3), round(lo, 3), round(hi, 3)) == (0.714, 0.626, 0.801)  # the cliff's edge: the worst pick


def test_the_pooled_curve_bench_lr_search_simulates():
    """`bench/lr_search.py --pooled examples/lr_search_lenet --min-runs 8`: the mean cost T/A^2 of every rate
    with 8 or more runs, the searches' and the re-measurement's (a plateau from 0.32 to 0.64, a cliff at 1.28)."""
    from bench.lr_search import pooled_curve

    curve = pooled_curve(EXAMPLE, min_runs=8)
    assert [lr for lr, _ in curve] == [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28]
    assert [c for _, c in curve] == pytest.approx([197.76, 82.36, 28.45, 15.39, 9.64, 7.35, 7.77, 79.01], abs=0.005)
