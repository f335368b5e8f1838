"""Replicate until sure against a fixed number of replicates, replayed on real replicated runs.

    .venv/bin/python bench/until.py examples/marinos2021/table2.csv --response cost --until "ci(cost) < 10%"
    .venv/bin/python bench/until.py runs/NAME --until "ci(wall_clock_s) < 5%" --time elapsed_s

A campaign (or results CSV) that ran every design point a fixed number of times holds the runs either
policy could have asked for. For each point, its ok runs are taken in replicate order:

* ``until``: harness.until's rule replayed on them: a first pass of ``--min-replications``, then one more
  replicate at a time until the point meets the target or has ``--max-replications`` (or the table's);
* ``fixed``: the smallest number of replicates R, the same for every point, at which as many points meet the
  target as the until rule brought to it (the fixed design reaching the same widths).

It prints, per policy, the runs and the cluster time (the ``--time`` column summed over the runs used; without
one, runs only) and what the until rule saved. The table's order of replicates is taken as the order they
would have run in, so this replays the rule on real noise without running anything.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

import pandas as pd  # noqa: E402

from harness.until import MET, Observation, UntilRule, judge, parse_until  # noqa: E402
from sparkdl.campaign import CampaignDir  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402


def load(path: Path) -> pd.DataFrame:
    folder = CampaignDir.of(path)
    table = pd.read_csv(folder.results_csv if folder is not None and path.is_dir() else path)
    if "status" in table.columns:
        table = table[table["status"] == "ok"]
    return table.sort_values(["run", "replicate"])


def until_stop(values: list[float], rule: UntilRule) -> tuple[int, bool]:
    """How many of ``values`` the rule uses, and whether it met the target with them."""
    seen: list[Observation] = []
    for v in values:
        seen.append(Observation(len(seen) + 1, v))
        state = judge(1, seen, rule)
        if state.reason is not None:
            return len(seen), state.reason == MET
    return len(seen), False


def met_at(points: dict[int, list[float]], r: int, rule: UntilRule) -> int:
    """How many points meet the target with their first ``r`` replicates."""
    return sum(judge(1, [Observation(i, v) for i, v in enumerate(values[:r], 1)], rule).reason == MET
               for values in points.values())


def fixed_needed(points: dict[int, list[float]], met: int, rule: UntilRule) -> int | None:
    """The smallest R, the same for every point, at which as many points meet the target as ``met`` (None: no R
    up to the table's replicates does)."""
    longest = max(len(v) for v in points.values())
    return next((r for r in range(2, longest + 1) if met_at(points, r, rule) >= met), None)


def main() -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("table", type=Path, help="a campaign folder or results CSV with replicates of each design point")
    p.add_argument("--until", required=True, help='the rule, e.g. "ci(wall_clock_s) < 5%%"')
    p.add_argument("--min-replications", type=int, default=2, help="the first pass (default 2)")
    p.add_argument("--max-replications", type=int, default=None, help="default: the most replicates a point has")
    p.add_argument("--time", default=None, help="the column of each run's cluster time (default: runs only)")
    args = p.parse_args()
    response, width, relative = parse_until(args.until)
    table = load(args.table)
    points = {int(run): [float(v) for v in group[response] if math.isfinite(float(v))]
              for run, group in table.groupby("run")}
    times = ({int(run): [float(v) for v in group[args.time]] for run, group in table.groupby("run")}
             if args.time else {run: [1.0] * len(v) for run, v in points.items()})
    longest = max(len(v) for v in points.values())
    rule = UntilRule(response, width, relative, min_replications=args.min_replications,
                     max_replications=args.max_replications or longest)
    used = {run: until_stop(v, rule) for run, v in points.items()}
    met = sum(ok for _, ok in used.values())
    fixed = fixed_needed(points, met, rule)
    until_runs = sum(n for n, _ in used.values())
    until_time = sum(math.fsum(times[run][:n]) for run, (n, _) in used.items())
    print(f"{args.table}: {len(points)} points, {len(table)} ok runs ({longest} replicates at most); rule {rule.text}, "
          f"first pass {rule.min_replications}, at most {rule.max_replications}")
    print("points meeting it with a fixed R replicates each: "
          + ", ".join(f"R={r}: {met_at(points, r, rule)}" for r in range(2, longest + 1)))
    spent = f"{until_runs} runs" + (f", {until_time:.6g} s" if args.time else "")
    print(f"until: {spent}; {met} of {len(points)} points met the target")
    r = longest if fixed is None else fixed
    fixed_runs = sum(min(r, len(v)) for v in points.values())
    fixed_time = sum(math.fsum(times[run][:r]) for run in points) if args.time else float(fixed_runs)
    took = f"{fixed_runs} runs" + (f", {fixed_time:.6g} s" if args.time else "")
    print(f"fixed: no R up to {longest} brings {met} points to the target; the whole table took {took}"
          if fixed is None else f"fixed: R={r} brings {met} points to the target: {took}")
    saved = fixed_time - (until_time if args.time else until_runs)
    print(f"saved by until: {saved:.6g} {'s of cluster time' if args.time else 'runs'} "
          f"({saved / fixed_time:.1%} of the fixed design's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
