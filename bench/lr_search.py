"""The paper's learning-rate heuristic against the bracketing + Brent searches, on cost curves.

    python bench/lr_search.py                          # recorded real curve + synthetic families
    python bench/lr_search.py --campaign runs/lr-lenet # also the curve measured in a campaign
    python bench/lr_search.py --pooled examples/lr_search_lenet  # the mean curve of many real searches

A measured curve (learning rate -> mean cost) is used two ways: interpolated linearly in log-log
between the measured points (held constant beyond them), and as a least-squares quadratic in
log-log. The interpolation favours the paper's rule when the curve was measured by the paper's rule:
its minimum is then a sharp corner at one of that rule's own grid points, which no other search
samples exactly; the quadratic removes that bias (and the single-job noise) at the price of shape.
Each method searches each curve from the same start; with
``--noise s`` every measurement is multiplied by exp(N(0, s^2)) and the search is repeated
``--trials`` times with seeds 0..trials-1. Reported per curve and method:

* jobs: jobs the search used before it stopped (paper, golden: points x replications; adaptive
  replicates sequentially, at most ``--replications`` per point), and their 90th percentile;
* to 5%: jobs until a point truly within 5% of the curve's minimum has been measured
  (true = on the noiseless curve; "never" counts as the jobs it used);
* final ok: share of searches whose answer is truly within 5% of the minimum.

The minimum is taken over a dense grid of 4,000 log-spaced rates in [start/100, 100].
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from optimize.lr import adaptive_search, golden_search, search  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402

Curve = Callable[[float], float]

#: A real curve: lenet, 1 core, batch 32, 1 epoch, 1,024 training / 256 test digits, cost = T / A^2
#: (T = BigDL's wall clock from the log), one job per point, measured by `python -m optimize.lr --start 0.01`
#: on the local cluster of a loaded 2-core machine (2026-11-23); the paper rule's 8 points.
RECORDED: tuple[tuple[float, float], ...] = (
    (0.01, 1282.13), (0.02, 117.65), (0.04, 89.30), (0.08, 70.89), (0.16, 39.23), (0.32, 14.34),
    (0.352, 20.26), (0.64, 25.19),
)


def interpolated(points: list[tuple[float, float]]) -> Curve:
    xs = np.log([p[0] for p in sorted(points)])
    ys = np.log([p[1] for p in sorted(points)])
    return lambda lr: float(np.exp(np.interp(math.log(lr), xs, ys)))


def quadratic_fit(points: list[tuple[float, float]]) -> Curve:
    """log cost = quadratic in log lr, least squares: the measured curve without its measurement noise."""
    c2, c1, c0 = np.polyfit(np.log([p[0] for p in points]), np.log([p[1] for p in points]), 2)
    return lambda lr: float(np.exp(c0 + c1 * math.log(lr) + c2 * math.log(lr) ** 2))


def bowl(minimum: float, width: float = 1.0) -> Curve:
    return lambda lr: 1.0 + (math.log(lr / minimum) / width) ** 2


def cliff(edge: float, slope: float = 0.3) -> Curve:
    """Marinos 2021 Fig. 5's shape: cost falls as lr^-slope until training diverges at ``edge``."""
    return lambda lr: lr ** -slope if lr < edge else 50.0 * edge ** -slope


def skewed(minimum: float) -> Curve:
    return lambda lr: (lr / minimum) + 3.0 * (minimum / lr) ** 0.5


def pooled_curve(root: Path, min_runs: int = 5, cost: str = "time_per_squared_accuracy") -> list[tuple[float, float]]:
    """Every ok run of the campaigns under ``root`` (each ``*/results.csv``), pooled by learning rate: the mean
    cost of each rate that has at least ``min_runs`` runs (one search's single jobs are too noisy to interpolate:
    the recorded curve's corner at 0.32 was one)."""
    import csv
    from collections import defaultdict

    from sparkdl.cost import parse_cost

    f = parse_cost(cost)
    by_rate: dict[float, list[float]] = defaultdict(list)
    for results in sorted(root.glob("*/results.csv")):
        for r in csv.DictReader(open(results, newline="")):
            if r["status"] == "ok":
                by_rate[float(r["learning_rate"])].append(float(f(float(r["wall_clock_s"]), float(r["accuracy"]))))
    return [(lr, float(np.mean(c))) for lr, c in sorted(by_rate.items()) if len(c) >= min_runs]


def campaign_curve(path: Path) -> list[tuple[float, float]]:
    import csv

    rows = list(csv.DictReader(open(path / "lr_search.csv")))
    return [(float(r["learning_rate"]), float(r["mean_cost"])) for r in rows]


@dataclass
class Tally:
    jobs: list[int]
    to5: list[int]
    ok: list[bool]

    def line(self) -> str:
        return (f"{np.mean(self.jobs):5.1f} {np.percentile(self.jobs, 90):4.0f} {np.mean(self.to5):5.1f} "
                f"{np.mean(self.ok):5.0%}")


def run(curve: Curve, method, start: float, replications: int, noise: float, trials: int) -> Tally:
    grid = np.exp(np.linspace(math.log(start / 100), math.log(100.0), 4000))
    least = min(curve(float(x)) for x in grid)
    tally = Tally([], [], [])
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        noisy = (lambda lr: curve(lr) * math.exp(rng.normal(0.0, noise))) if noise else curve
        result = method(noisy, start, replications)
        to5, best_true = None, math.inf
        for jobs, lr in enumerate(result.job_lrs, start=1):  # job by job: adaptive replication varies
            best_true = min(best_true, curve(lr))
            if to5 is None and best_true <= 1.05 * least:
                to5 = jobs
        tally.jobs.append(result.jobs)
        tally.to5.append(to5 if to5 is not None else result.jobs)
        tally.ok.append(curve(result.best_lr) <= 1.05 * least)
    return tally


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--campaign", type=Path, action="append", default=[], help="a campaign with lr_search.csv")
    p.add_argument("--pooled", type=Path, action="append", default=[],
                   help="a folder of campaigns (e.g. examples/lr_search_lenet): their runs' mean cost per rate")
    p.add_argument("--min-runs", type=int, default=5, help="--pooled: rates with at least this many runs (default 5)")
    p.add_argument("--replications", type=int, default=5)
    p.add_argument("--noise", type=float, default=0.1, help="lognormal sd of each measurement (default 0.1)")
    p.add_argument("--trials", type=int, default=50)
    p.add_argument("--start", type=float, default=0.002)
    args = p.parse_args(argv)

    curves: dict[str, tuple[Curve, float]] = {}
    curves["real lenet, interpolated"] = (interpolated(list(RECORDED)), RECORDED[0][0])
    curves["real lenet, quadratic fit"] = (quadratic_fit(list(RECORDED)), RECORDED[0][0])
    for path in args.campaign:
        pts = campaign_curve(path)
        curves[f"{path.name}, interpolated"] = (interpolated(pts), pts[0][0])
        curves[f"{path.name}, quadratic fit"] = (quadratic_fit(pts), pts[0][0])
    for path in args.pooled:
        pts = pooled_curve(path, args.min_runs)
        curves["pooled real, interpolated"] = (interpolated(pts), pts[0][0])
        curves["pooled real, quadratic fit"] = (quadratic_fit(pts), pts[0][0])
    for m in (0.01, 0.05, 0.3, 2.0):
        curves[f"bowl min {m:g}"] = (bowl(m), args.start)
    for e in (0.1, 1.0, 9.0):
        curves[f"cliff at {e:g}"] = (cliff(e), args.start)
    curves["skewed min 0.2"] = (skewed(0.2), args.start)

    methods = {"paper": search, "golden": golden_search, "adaptive": adaptive_search}
    print(f"replications {args.replications} (adaptive: at most), noise sd {args.noise:g}, "
          f"{args.trials} trials per curve")
    print("per method: mean jobs to stop, their 90th percentile, mean jobs to reach 5%, share of answers within 5%")
    print(f"{'curve':26}" + "".join(f"{m + ': jobs p90 to5%  ok':>28}" for m in methods) + "   ratio to paper")
    ratios: dict[str, list[tuple[float, float]]] = {m: [] for m in methods if m != "paper"}
    oks: dict[str, list[float]] = {m: [] for m in methods}
    for name, (curve, start) in curves.items():
        tallies = {m: run(curve, f, start, args.replications, args.noise, args.trials) for m, f in methods.items()}
        paper = tallies["paper"]
        for m, t in tallies.items():
            oks[m].append(float(np.mean(t.ok)))
            if m != "paper":
                ratios[m].append((np.mean(t.jobs) / np.mean(paper.jobs), np.mean(t.to5) / np.mean(paper.to5)))
        cells = "".join(f"{t.line():>28}" for t in tallies.values())
        ratio = "  ".join(f"{m} {r[-1][0]:.2f}/{r[-1][1]:.2f}" for m, r in ratios.items())
        print(f"{name:26}{cells}   {ratio}")
    print()
    for m, r in ratios.items():
        stop, reach = np.array([x[0] for x in r]), np.array([x[1] for x in r])
        print(f"{m} / paper jobs over {len(r)} curves: to stop geometric mean {math.exp(np.mean(np.log(stop))):.2f} "
              f"(range {stop.min():.2f}-{stop.max():.2f}, <= 0.5 on {int(np.sum(stop <= 0.5))}), to reach 5% "
              f"{math.exp(np.mean(np.log(reach))):.2f} (range {reach.min():.2f}-{reach.max():.2f}, <= 0.5 on "
              f"{int(np.sum(reach <= 0.5))})")
    print("answers within 5% of the minimum, mean over curves: "
          + ", ".join(f"{m} {np.mean(v):.0%}" for m, v in oks.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
