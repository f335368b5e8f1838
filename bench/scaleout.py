"""Does following ``sparkdl predict --at M --next`` reach a narrow interval at M in fewer runs than a uniform grid?

    .venv/bin/python bench/scaleout.py [--seeds 20] [--streams 1] [--at 16] [--candidates 1,2,3,4,5,6,7,8]
                                       [--width 0.2] [--noise 0.03] [--max-runs 100] [--processes 1]
                                       [--format text|json]

For each seed a synthetic job follows Gunther's USL, T(m) = (c + a (m-1) + b m (m-1)) / m with c = 100 s, a
contention share a/c drawn from [0.02, 0.3] and a coherency share b/c from [0.002, 0.05] (some turn back before
the target, some do not), each run with multiplicative lognormal noise (--noise). Both arms start from the same
four runs (2 at m = 1, 2 at m = 2) and add one run at a time at one of the affordable shapes (--candidates):

* advised: the shape ``models.predict.scaleout.advise`` ranks first (runs=1);
* uniform: the next shape of a round-robin grid over the same candidates (1, 2, ..., 8, 1, 2, ...).

After each run the 90 % scale-out interval at --at (``analyse``, over every curve that fits) is computed; an arm
stops when its width is at most --width x the true T(at), or at --max-runs runs (counted as the cap; a seed where
both arms hit it is a tie that says nothing of the advice: at a cap of 40, 9 of 20 uniform arms hit it). The bench
prints per seed the runs and cluster-seconds (sum of T x m over the runs made) of both arms and whether the final
interval holds the true mean, then how often advised needed strictly fewer runs, and the geometric-mean ratios.
Each arm draws its noise from its own stream of the seed (numpy's SeedSequence spawn), so a seed is replayable.

One noise stream per job makes a seed's verdict one draw: an arm whose runs happen to look like a power law needs
many more runs, and a uniform arm may stop early on a narrow interval that misses the truth. ``--streams K`` runs
each job K times per arm, on K independent streams (the first is the one ``--streams 1`` draws), and a job is won
when the advised arm's mean runs over its streams is below the uniform arm's: the advice is a policy, and its
worth for a job is its expected cost. The single-stream comparisons are counted too.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path[:1] = [str(Path(__file__).resolve().parent.parent)]

import numpy as np
import pandas as pd
from scipy import stats

from models.predict.scaleout import advise, analyse
from sparkdl.options import CommandParser, add_format

TARGET = "wall_clock_s"


@dataclass(frozen=True)
class Arm:
    runs: int
    cluster_s: float
    width: float
    covered: bool
    capped: bool


def truth(seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng([seed, 53])
    return 100.0, 100.0 * rng.uniform(0.02, 0.3), 100.0 * rng.uniform(0.002, 0.05)


def usl(m: float, c: float, a: float, b: float) -> float:
    return (c + a * (m - 1) + b * m * (m - 1)) / m


def run_arm(seed: int, policy: str, at: float, candidates: list[float], width: float, noise: float,
            max_runs: int, stream: int = 0, streams: int = 1) -> Arm:
    c, a, b = truth(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 53]).spawn(2 * streams)[2 * stream + (policy == "uniform")])
    draw = lambda m: usl(m, c, a, b) * math.exp(noise * rng.standard_normal())  # noqa: E731
    ms = [1.0, 1.0, 2.0, 2.0]
    ys = [draw(m) for m in ms]
    goal = width * usl(at, c, a, b)
    step = 0
    while True:
        table = pd.DataFrame({"parallelism": ms, TARGET: ys})
        now = analyse(table, TARGET, [], at=at, level=0.9).targets[0]
        if now.high - now.low <= goal or len(ms) >= max_runs:
            break
        if policy == "advised":
            m_next = advise(table, TARGET, [], at, candidates, runs=1, level=0.9).candidates[0].parallelism
        else:
            m_next = candidates[step % len(candidates)]
        step += 1
        ms.append(m_next)
        ys.append(draw(m_next))
    spent = float(sum(y * m for m, y in zip(ms, ys)))
    true = usl(at, c, a, b)
    return Arm(len(ms), spent, float(now.high - now.low), bool(now.low <= true <= now.high),
               now.high - now.low > goal)


def _task(job: tuple) -> Arm:
    return run_arm(*job)


def _mean_arm(arms: list[Arm]) -> dict:
    return {"runs": float(np.mean([a.runs for a in arms])), "cluster_s": float(np.mean([a.cluster_s for a in arms])),
            "covered": sum(a.covered for a in arms), "capped": sum(a.capped for a in arms),
            "streams": [asdict(a) for a in arms]}


def _p_fewer(arms: dict[str, list[Arm]]) -> float | None:
    """One-sided Mann-Whitney p that the advised arm needs fewer runs than the uniform one, over a job's noise
    streams (None with one stream: one draw each tells nothing)."""
    ad, un = ([a.runs for a in arms[k]] for k in ("advised", "uniform"))
    if len(ad) < 2 or len(set(ad + un)) < 2:
        return None
    return float(stats.mannwhitneyu(ad, un, alternative="less").pvalue)


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(prog="bench/scaleout.py", description="--next against a uniform grid, on simulated USL jobs")
    p.add_argument("--seeds", type=int, default=20, help="simulated jobs (default 20)")
    p.add_argument("--streams", type=int, default=1,
                   help="noise streams per job and arm; a job is won on the mean runs over them (default 1)")
    p.add_argument("--at", type=float, default=16.0, help="the target parallelism (default 16)")
    p.add_argument("--candidates", default="1,2,3,4,5,6,7,8", help="affordable shapes (default 1..8)")
    p.add_argument("--width", type=float, default=0.2, help="stop at this interval width / true time (default 0.2)")
    p.add_argument("--noise", type=float, default=0.03, help="relative noise of a run (default 0.03)")
    p.add_argument("--max-runs", type=int, default=100, help="cap on runs per arm (default 100)")
    p.add_argument("--processes", type=int, default=1, help="arms run side by side (default 1)")
    add_format(p, choices=("text", "json"))
    args = p.parse_args(argv)
    if args.streams < 1 or args.seeds < 1 or args.processes < 1:
        p.error("--seeds, --streams and --processes must be at least 1")
    candidates = [float(v) for v in args.candidates.split(",")]
    start = time.perf_counter()
    jobs = [(seed, policy, args.at, candidates, args.width, args.noise, args.max_runs, stream, args.streams)
            for seed in range(args.seeds) for stream in range(args.streams) for policy in ("advised", "uniform")]
    with ProcessPoolExecutor(args.processes) if args.processes > 1 else contextlib.nullcontext() as pool:
        results = iter((pool.map if pool else map)(_task, jobs))
        rows = []
        for seed in range(args.seeds):
            arms: dict[str, list[Arm]] = {"advised": [], "uniform": []}
            for _stream in range(args.streams):
                for policy in ("advised", "uniform"):
                    arms[policy].append(next(results))
            c, a, b = truth(seed)
            row = {"seed": seed, "contention": a / c, "coherency": b / c,
                   **{k: _mean_arm(v) for k, v in arms.items()}, "p_fewer": _p_fewer(arms)}
            rows.append(row)
            if args.format == "text":
                ad, un = row["advised"], row["uniform"]
                runs = lambda arm: (f"{arm['runs']:>5.1f}" if args.streams > 1  # noqa: E731
                                    else f"{arm['runs']:>3.0f}")
                p_txt = f"  p {row['p_fewer']:.3f}" if row["p_fewer"] is not None else ""
                print(f"seed {seed:>2}: contention {a / c:.3f} coherency {b / c:.4f}  runs advised {runs(ad)} "
                      f"uniform {runs(un)}  cluster-s {ad['cluster_s']:>7.0f} / {un['cluster_s']:>7.0f}  "
                      f"covered {ad['covered']}/{un['covered']} of {args.streams}"
                      f"{p_txt}{'  (cap)' if ad['capped'] or un['capped'] else ''}", flush=True)
    wins = sum(r["advised"]["runs"] < r["uniform"]["runs"] for r in rows)
    ties = sum(r["advised"]["runs"] == r["uniform"]["runs"] for r in rows)
    pairs = [(x["runs"], y["runs"]) for r in rows for x, y in zip(r["advised"]["streams"], r["uniform"]["streams"])]
    geo = lambda key: float(np.exp(np.mean([math.log(r["advised"][key] / r["uniform"][key]) for r in rows])))  # noqa: E731
    summary = {
        "seeds": len(rows), "streams": args.streams,
        "advised_fewer_runs": wins, "ties": ties, "advised_more_runs": len(rows) - wins - ties,
        "streams_advised_fewer_runs": sum(x < y for x, y in pairs), "streams_compared": len(pairs),
        "advised_fewer_significant": sum(r["p_fewer"] is not None and r["p_fewer"] < 0.05 for r in rows),
        "sign_test_p": float(stats.binomtest(sum(x < y for x, y in pairs), sum(x != y for x, y in pairs),
                                             alternative="greater").pvalue) if any(x != y for x, y in pairs) else None,
        "runs_ratio_geomean": geo("runs"), "cluster_s_ratio_geomean": geo("cluster_s"),
        "advised_capped": sum(r["advised"]["capped"] for r in rows), "uniform_capped": sum(r["uniform"]["capped"] for r in rows),
        "advised_covered": sum(r["advised"]["covered"] for r in rows), "uniform_covered": sum(r["uniform"]["covered"] for r in rows),
        "seconds": time.perf_counter() - start,
    }
    if args.format == "json":
        print(json.dumps({"options": vars(args), "summary": summary, "seeds": rows}, indent=2))
    else:
        s = summary
        over = f" (mean over {args.streams} noise streams each)" if args.streams > 1 else ""
        signif = (f", {s['advised_fewer_significant']} of them significant at 0.05 (one-sided Mann-Whitney over the "
                  f"streams)" if args.streams > 1 else "")
        sign = f" (sign test p = {s['sign_test_p']:.2g})" if s["sign_test_p"] is not None else ""
        print(f"\nadvised needed fewer runs than the uniform grid in {s['advised_fewer_runs']} of {s['seeds']} seeds"
              f"{over} ({s['ties']} ties, {s['advised_more_runs']} more){signif}; in {s['streams_advised_fewer_runs']} of "
              f"{s['streams_compared']} single streams{sign}; runs ratio (geometric mean, advised/uniform) "
              f"{s['runs_ratio_geomean']:.2f}, cluster-seconds ratio {s['cluster_s_ratio_geomean']:.2f}; capped at "
              f"{args.max_runs}: {s['advised_capped']} advised, {s['uniform_capped']} uniform; final interval holds the "
              f"true time: {s['advised_covered']} advised, {s['uniform_covered']} uniform of "
              f"{s['streams_compared']}; {s['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
