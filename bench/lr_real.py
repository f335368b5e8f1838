"""Real learning-rate searches compared: Marinos 2021's rule against the adaptive search, seed by seed.

    python bench/lr_real.py examples/lr_search_lenet            # the table of the committed searches
    python bench/lr_real.py examples/lr_search_lenet --format csv

The folder holds one ``sparkdl lr`` campaign per (method, seed), named ``METHOD-sSEED`` (its results.csv,
manifest.json and lr_search.csv), and ``remeasure/``: a ``sparkdl submit`` campaign that ran every distinct
picked rate again, with other weight seeds. For each search it prints the jobs it used, its cluster-seconds
(the sum of its runs' elapsed_s: what the cluster was busy with, start-up included), the rate it picked, the
search's own mean cost and accuracy there, and the re-measured mean accuracy and cost of that rate (mean and
95 % t interval over the re-measurement's replicates), then a summary per method.

``replay`` runs a search again on a folder's recorded runs: the objective answers each (rate, replicate) the
search asks with that run's recorded cost, so the same code that decided on the real jobs decides again, on
the same numbers; it must ask for exactly the recorded runs and pick the same rate.
"""

from __future__ import annotations

import csv
import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from optimize.lr import METHODS, LRSearchResult  # noqa: E402
from sparkdl.cost import parse_cost  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402

COST = "time_per_squared_accuracy"
#: The searches' settings (the README's commands): start, replications; max_points and max_lr left at defaults.
START, REPLICATIONS = 0.01, 2


def read_runs(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def run_cost(row: dict[str, str]) -> float:
    return float(parse_cost(COST)(float(row["wall_clock_s"]), float(row["accuracy"])))


class Replay:
    """``lr -> cost`` from a folder's recorded runs: the k-th call at a rate gets replicate k's cost."""

    def __init__(self, rows: list[dict[str, str]]) -> None:
        self.rows = {(float(r["learning_rate"]), int(r["replicate"])): r for r in rows if r["status"] == "ok"}
        self.calls: dict[float, int] = defaultdict(int)
        self.asked: list[tuple[float, int]] = []

    def __call__(self, lr: float) -> float:
        self.calls[lr] += 1
        key = (lr, self.calls[lr])
        if key not in self.rows:
            raise KeyError(f"the search asks for learning rate {lr!r} replicate {key[1]}, which was never run")
        self.asked.append(key)
        return run_cost(self.rows[key])


def replay(folder: Path, method: str) -> tuple[LRSearchResult, Replay]:
    objective = Replay(read_runs(folder))
    result = METHODS[method](objective, START, REPLICATIONS)
    return result, objective


@dataclass
class Search:
    method: str
    seed: int
    jobs: int
    cluster_s: float
    picked: float
    own_cost: float
    own_accuracy: float
    stop: str


def searches(root: Path) -> list[Search]:
    out = []
    for folder in sorted(root.glob("*-s*")):
        if not (folder / "lr_search.csv").exists():  # a search still running (or stopped early)
            continue
        method, seed = folder.name.rsplit("-s", 1)
        rows = read_runs(folder)
        result, _ = replay(folder, method)
        at = [r for r in rows if float(r["learning_rate"]) == result.best_lr]
        out.append(Search(method, int(seed), len(rows), math.fsum(float(r["elapsed_s"]) for r in rows),
                          result.best_lr, result.best.mean, float(np.mean([float(r["accuracy"]) for r in at])),
                          result.stop_reason))
    return out


def interval(values: list[float], level: float = 0.95) -> tuple[float, float, float]:
    m = float(np.mean(values))
    if len(values) < 2:
        return m, math.nan, math.nan
    h = float(stats.t.ppf(0.5 + level / 2, len(values) - 1) * np.std(values, ddof=1) / math.sqrt(len(values)))
    return m, m - h, m + h


def remeasured(root: Path) -> dict[float, dict[str, list[float]]]:
    by_rate: dict[float, dict[str, list[float]]] = defaultdict(lambda: {"accuracy": [], "cost": [], "elapsed": []})
    folder = root / "remeasure"
    if not (folder / "results.csv").exists():
        return {}
    for r in read_runs(folder):
        if r["status"] != "ok":
            continue
        d = by_rate[float(r["learning_rate"])]
        d["accuracy"].append(float(r["accuracy"]))
        d["cost"].append(run_cost(r))
        d["elapsed"].append(float(r["elapsed_s"]))
    return dict(by_rate)


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--format", choices=("table", "csv"), default="table")
    args = p.parse_args(argv)
    found = searches(args.folder)
    again = remeasured(args.folder)
    head = ("method", "seed", "jobs", "cluster_s", "picked_lr", "search_cost", "search_accuracy", "n",
            "remeasured_accuracy", "acc_lo", "acc_hi", "remeasured_cost", "cost_lo", "cost_hi")
    rows = []
    for s in sorted(found, key=lambda s: (s.method != "paper", s.seed)):
        acc = interval(again[s.picked]["accuracy"]) if s.picked in again else (math.nan,) * 3
        cost = interval(again[s.picked]["cost"]) if s.picked in again else (math.nan,) * 3
        n = len(again[s.picked]["accuracy"]) if s.picked in again else 0
        rows.append((s.method, s.seed, s.jobs, round(s.cluster_s, 1), repr(s.picked), round(s.own_cost, 2),
                     round(s.own_accuracy, 4), n, *(round(x, 4) for x in acc), *(round(x, 2) for x in cost)))
    if args.format == "csv":
        w = csv.writer(sys.stdout)
        w.writerow(head)
        w.writerows(rows)
        return 0
    print(f"{'method':9}{'seed':>5}{'jobs':>5}{'cluster s':>10}  {'picked lr':<22}{'search cost':>12}"
          f"{'search acc':>11}  {'re-measured accuracy [95% CI]':<32}{'re-measured cost [95% CI]'}")
    for r in rows:
        print(f"{r[0]:9}{r[1]:>5}{r[2]:>5}{r[3]:>10.0f}  {r[4]:<22}{r[5]:>12.2f}{r[6]:>11.3f}  "
              f"{r[8]:.3f} [{r[9]:.3f}, {r[10]:.3f}] (n={r[7]})".ljust(32 + 52) + f"  {r[11]:.2f} [{r[12]:.2f}, {r[13]:.2f}]")
    print()
    for method in ("paper", "adaptive"):
        mine = [s for s in found if s.method == method]
        if not mine:
            continue
        accs = [float(np.mean(again[s.picked]["accuracy"])) for s in mine if s.picked in again]
        costs = [float(np.mean(again[s.picked]["cost"])) for s in mine if s.picked in again]
        print(f"{method}: {len(mine)} searches; jobs mean {np.mean([s.jobs for s in mine]):.1f} "
              f"(range {min(s.jobs for s in mine)}-{max(s.jobs for s in mine)}); cluster-seconds mean "
              f"{np.mean([s.cluster_s for s in mine]):.0f} (range {min(s.cluster_s for s in mine):.0f}-"
              f"{max(s.cluster_s for s in mine):.0f}); picked {', '.join(f'{s.picked:.4g}' for s in mine)}; "
              f"re-measured accuracy of the pick, mean over searches {np.mean(accs) if accs else math.nan:.3f}, "
              f"cost {np.mean(costs) if costs else math.nan:.2f}")
    if again:
        print("\nre-measured rates (all replicates):")
        for lr in sorted(again):
            a, c = interval(again[lr]["accuracy"]), interval(again[lr]["cost"])
            print(f"  {lr:<22.6g} n={len(again[lr]['accuracy'])}  accuracy {a[0]:.3f} [{a[1]:.3f}, {a[2]:.3f}]  "
                  f"cost {c[0]:.2f} [{c[1]:.2f}, {c[2]:.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
