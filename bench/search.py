"""The multi-objective search against the full-factorial grid and Marinos 2021's rule, on real jobs or a replay.

    python bench/search.py --replay bench/data/surface-lenet --seeds 20   # every arm, 20 seeds, on a recording
    python bench/search.py --replay bench/data/surface-lenet --seeds 20 --format json --plot docs/img/x.png
    python bench/search.py --out runs/bench-search27          # LeNet on the sample, 27 + ~9 + ~10 jobs
    python bench/search.py --out runs/bench-search27 --resume # continue a stopped bench (finished jobs kept)
    python bench/search.py --out runs/bench-search --space space12.toml --search-epochs factor   # the old design

Three arms, each its own campaign folder under --out, with the same jobs (--job), the same job seed
(weight init) and the same local cluster:

* grid: every point of the space's full factorial (floats at --grid-points levels), no pruning;
  the default space is learning rate 0.01..0.5 (log, 3 levels) x batch 32/64/128 x epochs 1..3;
* search: optimize.search (TPE, --seed, its default pruning or --pruner's) with a cluster-time budget of --share
  (default 1/3) of the grid's. ``--search-epochs harvest`` (default): every trial at the space's
  largest epochs, TPE over the other factors, the lower epochs harvested (optimize.search
  --per-epoch); ``factor``: epochs searched like any factor (the design before harvesting);
* paper: Marinos 2021's learning-rate rule (optimize.lr.search, cost T/A^2, one job per rate) from the
  space's lowest learning rate, the other factors at --fixed's values.

``--replay DIR`` (a surface recorded by bench/surface.py, of any job: its epochs or rounds are the fidelity
it was recorded with) runs the arms of :mod:`optimize.search.arms` (the default search, without pruning,
random with and without, NSGA-II, Hyperband and successive halving on the cost T/A^2, Marinos 2021's
learning-rate rule, the grid), each ``--seeds`` times, every trial replayed from a recorded replicate
(optimize.search --replay; the learning-rate rule left out, one line on stderr saying why, when the job has
no learning_rate factor), and prints, per arm and budget
(0.1, 0.25, 0.5 and 1.0 of the grid's cluster time), the median and 10th-90th percentiles of the
hypervolume fraction of the true front (from the replicates' means) and the share of seeds reaching
95 %; then the goal and what pruning saved. ``--plot`` draws the fraction against budget, a band per arm.

On real jobs, for each arm: jobs, how many were pruned, cluster time (the sum of the runs' elapsed_s) and two
hypervolumes of the front of (wall_clock_s: min, accuracy: max): per run (each ok run's final
figures) and per epoch (every validated epoch of the ok and pruned runs, optimize.harvest: the same
harvesting for every arm, so the grid's longer runs give their lower epochs too). All against one
reference point: the worst of every arm's points (per run and per epoch), moved out by 10 % of the
range. The goal: the search's hypervolume within 5 % of the grid's in at most a third of
its cluster time; it is judged on both hypervolumes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cluster.local import LocalCluster  # noqa: E402
from sparkdl.cost import time_per_squared_accuracy  # noqa: E402
from optimize.lr import search  # noqa: E402
from optimize.harvest import harvest  # noqa: E402
from optimize.objective import JobObjective  # noqa: E402
from optimize.pareto import (default_reference, hypervolume, minimisation_matrix, non_dominated, ok_runs,  # noqa: E402
                             parse_objectives, read_campaign)
from optimize.search.__main__ import parse_job  # noqa: E402
from optimize.search.pruning import PRUNERS, default_pruner, make_rules  # noqa: E402
from optimize.search.space import Factor, SearchSpace, at_largest_epochs, load_space  # noqa: E402
from optimize.search.study import DEFAULT_STARTUP_TRIALS, MultiObjectiveSearch, SearchConfig, open_study  # noqa: E402
from optimize.errors import SearchOptionError  # noqa: E402
from optimize.figures import budget_bands_figure, save  # noqa: E402
from optimize.search.arms import (BUDGETS, GOAL, Arm, ArmRun, BudgetRow, Truth, bands, budget_rows,  # noqa: E402
                                  campaign_run, default_arms, fractions, on_clock, paper_problem, pruning_saving,
                                  run_arm, speed_ratio, table_text, times_to_goal)
from optimize.search.replay import Surface  # noqa: E402
from optimize.session import ClusterOptions, JobConfig, open_session, submit_options  # noqa: E402
from sparkdl.cli import on_interrupt, run_cli  # noqa: E402
from sparkdl.options import CommandParser, cluster_options, renamed  # noqa: E402

OBJECTIVES = parse_objectives("wall_clock_s:min,accuracy:max")
DEFAULT_SPACE = SearchSpace((Factor("learning_rate", 0.01, 0.5, log=True),
                             Factor("batch_size", choices=(32, 64, 128)), Factor("epochs", 1, 3)))
SEARCH_EPOCHS = ("harvest", "factor")
GOAL_HV, GOAL_TIME = 0.95, 1 / 3


@dataclass(frozen=True)
class ArmResult:
    """One arm's figures: jobs, pruned, cluster time, and its fronts' hypervolumes against the common reference."""

    name: str
    jobs: int
    pruned: int
    cluster_time_s: float
    hypervolume: float  # of the front of its ok runs' final figures
    front_size: int
    hypervolume_per_epoch: float | None = None  # of the front of every validated epoch of its ok and pruned runs
    front_size_per_epoch: int | None = None
    points: int | None = None  # validated epochs harvested


def _minimised(points: pd.DataFrame) -> np.ndarray:
    ok = ok_runs(points, OBJECTIVES)[0]
    return minimisation_matrix(ok, OBJECTIVES) if len(ok) else np.empty((0, len(OBJECTIVES)))


def _front(matrix: np.ndarray, reference: np.ndarray) -> tuple[float, int]:
    """The hypervolume of the points' front against ``reference``, and the front's size."""
    if not len(matrix):
        return 0.0, 0
    mask = non_dominated(matrix)
    return hypervolume(matrix[mask], reference), int(mask.sum())


def compare_arms(tables: dict[str, pd.DataFrame], harvests: dict[str, pd.DataFrame] | None = None) -> list[ArmResult]:
    """Each arm's figures, every hypervolume against one reference point from the union of all the arms' points.

    ``tables``: each arm's results.csv; ``harvests``: each arm's harvested points (optimize.harvest's table),
    which adds the per-epoch hypervolumes and joins the points that fix the reference."""
    per_run = {name: _minimised(t) for name, t in tables.items()}
    per_epoch = {name: _minimised(h) for name, h in (harvests or {}).items()}
    union = np.vstack([m for m in (*per_run.values(), *per_epoch.values()) if len(m)])
    reference = default_reference(union)
    out = []
    for name, table in tables.items():
        volume, size = _front(per_run[name], reference)
        row = ArmResult(name, len(table), int((table["status"] == "pruned").sum()), float(table["elapsed_s"].sum()),
                        volume, size)
        if name in per_epoch:
            volume, size = _front(per_epoch[name], reference)
            row = replace(row, hypervolume_per_epoch=volume, front_size_per_epoch=size, points=len(per_epoch[name]))
        out.append(row)
    return out


def _share(value: float | None, base: float | None) -> str:
    return f"{value / base:.3f}" if value is not None and base else "-"


def arm_table(rows: Sequence[ArmResult], baseline: str = "grid") -> str:
    """One line per arm: jobs, pruned, cluster time, then the per-run and (when harvested) per-epoch fronts."""
    base = next(r for r in rows if r.name == baseline)
    lines = [f"{'arm':<12} {'jobs':>5} {'pruned':>7} {'cluster min':>12} {'time/grid':>10} | {'front':>6} "
             f"{'HV per run':>11} {'HV/grid':>8} | {'epochs':>6} {'front':>6} {'HV per epoch':>13} {'HV/grid':>8}"]
    for r in rows:
        harvested = (f"{r.points:>6} {r.front_size_per_epoch:>6} {r.hypervolume_per_epoch:>13.5g} "
                     f"{_share(r.hypervolume_per_epoch, base.hypervolume_per_epoch):>8}"
                     if r.hypervolume_per_epoch is not None else f"{'-':>6} {'-':>6} {'-':>13} {'-':>8}")
        lines.append(f"{r.name:<12} {r.jobs:>5} {r.pruned:>7} {r.cluster_time_s / 60:>12.2f} "
                     f"{r.cluster_time_s / base.cluster_time_s:>10.2f} | {r.front_size:>6} {r.hypervolume:>11.5g} "
                     f"{_share(r.hypervolume, base.hypervolume):>8} | {harvested}")
    return "\n".join(lines)


def goal_line(rows: Sequence[ArmResult], per_epoch: bool = False, arm: str = "search") -> str:
    """Whether a search arm reached GOAL_HV of the grid's hypervolume (per run, or per epoch) in GOAL_TIME of its time."""
    grid, found = next(r for r in rows if r.name == "grid"), next(r for r in rows if r.name == arm)
    mine, theirs = ((found.hypervolume_per_epoch, grid.hypervolume_per_epoch) if per_epoch
                    else (found.hypervolume, grid.hypervolume))
    hv = (mine or 0.0) / theirs if theirs else math.nan
    time = found.cluster_time_s / grid.cluster_time_s
    met = hv >= GOAL_HV and time <= GOAL_TIME + 1e-9
    return (f"goal {'per epoch' if per_epoch else 'per run'} ({arm}'s hypervolume >= {GOAL_HV:.0%} of the grid's in "
            f"<= 1/3 of its cluster time): {'MET' if met else 'NOT met'} ({hv:.1%} of the hypervolume in {time:.1%} "
            "of the time)")


def design_text(space: SearchSpace, job: JobConfig, args: argparse.Namespace) -> str:
    """The comparison's design, printed before any job: the space, each arm, the scoring and the goal."""
    levels = {f.name: f.levels(args.grid_points) for f in space.factors}
    grid = math.prod(len(v) for v in levels.values())
    space_line = " x ".join(f"{name} {'/'.join(f'{v:g}' if isinstance(v, float) else str(v) for v in values)}"
                            for name, values in levels.items())
    harvested = args.search_epochs == "harvest" and "epochs" in levels
    searched, epochs = at_largest_epochs(space, job.epochs) if harvested else (space, job.epochs)
    over = " x ".join(searched.names)
    opening = "from a Latin hypercube" if args.startup == "lhs" else "at random"
    search_line = (f"TPE (seed {args.seed}, {args.startup_trials} start-up trials {opening}), "
                   f"{default_pruner(args.pruner, harvested)} pruning, over {over} "
                   + (f"at epochs {epochs}, the lower epochs harvested" if harvested else "(epochs searched as a factor)")
                   + f"; budget {args.share:.3g} of the grid's cluster time (a cap: a trial starts while a mean "
                     "trial still fits)")
    lr = next((f for f in space.factors if f.name == "learning_rate"), None)
    start = float(lr.low if lr and lr.low else job.learning_rate)  # type: ignore[arg-type]
    paper_line = (f"Marinos 2021's rule, one job per learning rate from {start:g} (doubling, then 10 % steps), batch "
                  f"{job.batch_size}, epochs {job.epochs}, at most {args.paper_points} jobs")
    return "\n".join([
        f"design of the comparison: {job.model}, {args.train_samples}/{args.test_samples} digits, job seed "
        f"{args.job_seed} for every job, one cluster for every arm",
        f"  space  {space_line} ({grid} points)",
        f"  grid   all {grid} points, no pruning, each run to its end",
        f"  search {search_line}",
        f"  paper  {paper_line}",
        "  scored hypervolume of (wall_clock_s: min, accuracy: max), per run (each ok run's final figures) and per "
        "epoch (every validated epoch of the ok and pruned runs, harvested alike in every arm), against one "
        "reference: the worst of all the arms' points moved out by 10 % of the range",
        f"  goal   the search's hypervolume >= {GOAL_HV:.0%} of the grid's in <= 1/3 of its cluster time"])


# ---------------------------------------------------------------- the arms, on real jobs


def run_multi(out: Path, space: SearchSpace, job: JobConfig, args: argparse.Namespace, cluster: ClusterOptions,
              sampler: str, budget_s: float, pruner: str, per_epoch: bool = False) -> None:
    """One arm through optimize.search's loop; ``per_epoch``: at the space's largest epochs over the other factors."""
    if per_epoch:
        space, epochs = at_largest_epochs(space, job.epochs)
        job = replace(job, epochs=epochs)
    config = SearchConfig(space, job, OBJECTIVES, sampler, args.seed, args.startup_trials, grid_points=args.grid_points,
                          start=args.startup)
    settings = {"bench": "search", "arm": sampler, "space": space.describe(), "job": job.settings(), "seed": args.seed,
                "train_samples": args.train_samples, "test_samples": args.test_samples}
    if per_epoch:  # only then: a bench folder made before harvesting resumes unchanged
        settings["per_epoch"] = True
    if sampler == "tpe" and args.startup == "lhs":  # likewise for the Latin hypercube start
        settings["start"] = "lhs"
    if pruner not in ("median", "none"):  # likewise: a bench folder made before the choice ran the median rule
        settings["pruner"] = pruner
    options = submit_options(out, cluster, args.train_samples, args.test_samples, args.job_seed)
    shapes = [job.spec(1, 1, **combo) for combo in space.grid(1)]
    say = lambda msg: print(f"[{out.name}] {msg}", flush=True)  # noqa: E731
    with open_session(out, settings, options, cluster, shapes, args.resume, say) as session:
        MultiObjectiveSearch(session, open_study(out, config), config, make_rules(pruner, None), say).run(budget_s)


def run_paper(out: Path, space: SearchSpace, job: JobConfig, args: argparse.Namespace, cluster: ClusterOptions) -> None:
    lr = next((f for f in space.factors if f.name == "learning_rate"), None)
    start = float(lr.low if lr and lr.low else job.learning_rate)  # type: ignore[arg-type]
    settings = {"bench": "search", "arm": "paper", "start": start, "job": job.settings(),
                "train_samples": args.train_samples, "test_samples": args.test_samples}
    options = submit_options(out, cluster, args.train_samples, args.test_samples, args.job_seed)
    say = lambda msg: print(f"[{out.name}] {msg}", flush=True)  # noqa: E731
    with open_session(out, settings, options, cluster, [job.spec(1, 1)], args.resume, say) as session:
        search(JobObjective(session, job, time_per_squared_accuracy()), start, replications=1, max_points=args.paper_points)


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="python bench/search.py", parents=[cluster_options()],
                      description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, help="folder of the three campaigns (real jobs)")
    p.add_argument("--replay", type=Path, metavar="DIR", help="compare the arms on a recorded surface instead")
    p.add_argument("--seeds", type=int, default=20, help="replay: seeds per arm (default 20)")
    p.add_argument("--arms", help="replay: the arms to run, comma-separated (default all: "
                                  "default,no-pruning,random-pruned,random,nsga2,hyperband,halving,paper,grid)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="replay: the output")
    p.add_argument("--plot", type=Path, help="replay: write the hypervolume-against-budget figure here (.png/.svg)")
    p.add_argument("--confirm", type=Path, nargs="+", metavar="RUN_DIR",
                   help="replay: real searches' campaign folders (optimize.search on the surface's grid), each scored "
                        "like the replays and set against the default arm's 10-90 %% band")
    p.add_argument("--jobs", type=int, default=1, help="replay: arm-seed runs at once (processes)")
    p.add_argument("--repeat", action=argparse.BooleanOptionalAction, default=False,
                   help="replay: the default search (and its unpruned twin) runs factors already run again (--repeat); "
                        "by default (--no-repeat), as optimize.search, a trial asking for them is told their result "
                        "without a job")
    p.add_argument("--pruner", choices=[r for r in PRUNERS if r != "none"],
                   help="the rule of the arms that prune with ours (replay: default, random-pruned, nsga2; real jobs: "
                        "the search; default as optimize.search's: front per epoch, else median)")
    p.add_argument("--min-runs", type=int, default=3, help="replay: the default search's pruning needs this many "
                                                           "earlier runs at an epoch")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--space", type=Path, help="space.toml (default: learning_rate 0.01..0.5 log, batch 32/64/128, "
                                              "epochs 1..3)")
    p.add_argument("--search-epochs", choices=SEARCH_EPOCHS, default="harvest",
                   help="the search arm: harvest (default; trials at the largest epochs, lower epochs harvested) or "
                        "factor (epochs searched like any factor)")
    p.add_argument("--job", default="lenet", help="the built-in job every arm runs (default lenet)")
    p.add_argument("--fixed", default="batch_size=64,epochs=1",
                   help="the other factors (and the paper rule's fixed ones), as optimize.search --fixed")
    p.add_argument("--share", type=float, default=GOAL_TIME, help="search budget as a share of the grid's time")
    p.add_argument("--grid-points", type=int, default=3, help="levels per float range in the grid (default 3)")
    p.add_argument("--seed", type=int, default=0, help="the search's sampler seed")
    p.add_argument("--job-seed", type=int, default=42, help="every job's weight-init seed")
    p.add_argument("--startup-trials", type=int, default=DEFAULT_STARTUP_TRIALS,
                   help=f"TPE's start-up trials (default {DEFAULT_STARTUP_TRIALS}, optimize.search's)")
    p.add_argument("--startup", choices=("lhs", "random"), default="lhs",
                   help="TPE's start-up trials from a Latin hypercube (default) or at random")
    renamed(p, "--start", "--startup")
    p.add_argument("--more-seeds", type=lambda text: [int(v) for v in text.split(",") if v.strip()], default=[],
                   metavar="S,S", help="extra search arms with these sampler seeds (folders search-seedS), each scored "
                                       "against the same grid: how much the result owes to one seed")
    p.add_argument("--paper-points", type=int, default=10, help="the paper rule's most learning rates")
    p.add_argument("--train-samples", type=int, default=1024)
    p.add_argument("--test-samples", type=int, default=256)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    import optuna

    args = build_parser().parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.replay is not None:
        return replay_main(args)
    if args.out is None:
        raise SearchOptionError("--out is required on real jobs (the folder of the campaigns), or give --replay DIR")
    space = load_space(args.space) if args.space else DEFAULT_SPACE
    job = parse_job(args.job, args.fixed)
    args.keep_cluster = True  # one cluster for the three arms, stopped below if this bench started it
    cluster = ClusterOptions.from_args(args)
    local = None if args.master or args.cluster else LocalCluster(cluster.state_dir, port=cluster.port,
                                                                   webui_port=cluster.webui_port)
    started_here = local is not None and not local.status().running
    on_interrupt(f"finished jobs are kept under {args.out}; continue with --resume")
    print(design_text(space, job, args), flush=True)
    try:
        run_multi(args.out / "grid", space, job, args, cluster, "grid", math.inf, "none")
        grid_time = float(read_campaign(args.out / "grid")["elapsed_s"].sum())
        searches = ["search"] + [f"search-seed{s}" for s in args.more_seeds]
        for name, seed in zip(searches, [args.seed, *args.more_seeds]):
            run_multi(args.out / name, space, job, argparse.Namespace(**{**vars(args), "seed": seed}), cluster, "tpe",
                      args.share * grid_time, default_pruner(args.pruner, args.search_epochs == "harvest"),
                      per_epoch=args.search_epochs == "harvest")
        run_paper(args.out / "paper", space, job, args, cluster)
    finally:
        if local is not None and started_here:
            local.stop()
    arms = ("grid", *searches, "paper")
    tables = {name: read_campaign(args.out / name) for name in arms}
    rows = compare_arms(tables, {name: harvest(tables[name], args.out / name).table() for name in arms})
    print()
    print(design_text(space, job, args))
    print()
    print(arm_table(rows))
    for name in searches:
        print(goal_line(rows, arm=name))
        print(goal_line(rows, per_epoch=True, arm=name))
    return 0


# ---------------------------------------------------------------- the arms on a replay


def _replay_task(task: tuple[str, Arm, int, float, str]) -> ArmRun:
    folder, arm, seed, budget_s, work = task
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return run_arm(arm, _surface(folder), seed, budget_s, Path(work))


_SURFACES: dict[str, Surface] = {}


def _surface(folder: str) -> Surface:
    if folder not in _SURFACES:
        _SURFACES[folder] = Surface.load(Path(folder))
    return _SURFACES[folder]


def replay_runs(folder: Path, arms: Sequence[Arm], seeds: int, budget_s: float, jobs: int = 1) -> list[ArmRun]:
    """Every arm on seeds 0..seeds-1 (in ``jobs`` processes), in arm order."""
    with tempfile.TemporaryDirectory(prefix="replay-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as work:
        tasks = [(str(folder), arm, seed, budget_s, work) for arm in arms for seed in range(seeds)]
        if jobs <= 1:
            return [_replay_task(t) for t in tasks]
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as pool:
            return list(pool.map(_replay_task, tasks, chunksize=1))


def replay_main(args: argparse.Namespace) -> int:
    if args.seeds < 1:
        raise SearchOptionError(f"--seeds {args.seeds}: give a whole number >= 1 (20 for the comparison)")
    surface = Surface.load(args.replay)
    truth = Truth.of(surface)
    all_arms = default_arms(args.startup_trials, args.min_runs, args.startup, args.repeat,
                            default_pruner(args.pruner, per_epoch=True))
    names = [a.strip() for a in args.arms.split(",")] if args.arms else [a.name for a in all_arms]
    unknown = [n for n in names if n not in {a.name for a in all_arms}]
    if unknown:
        raise SearchOptionError(f"--arms {', '.join(unknown)}: use some of {', '.join(a.name for a in all_arms)}")
    arms = runnable_arms([a for a in all_arms if a.name in names], surface)
    runs = replay_runs(args.replay, arms, args.seeds, max(BUDGETS) * truth.grid_time_s, args.jobs)
    rows = budget_rows(runs, truth)
    if args.plot is not None:
        fine = [round(0.05 * i, 2) for i in range(1, 21)]
        save(budget_bands_figure(fine, bands(runs, truth, fine), title=f"{args.replay.name}: {args.seeds} seeds per "
                                 "arm, median and 10-90 % band; dotted: 95 %", goal=GOAL, reference="default"), args.plot)
    if args.format == "json":
        print(json.dumps([r.to_dict() for r in rows], indent=1))
        return 0
    print(replay_header(surface, truth, args.seeds))
    print()
    print(table_text(rows, arms))
    print()
    for line in replay_goals(rows, runs, truth, surface.most_pruning_saves()):
        print(line)
    reals = [(campaign_run(folder, surface, folder.name), speed_ratio(folder, surface))
             for folder in args.confirm or ()]
    for real, ratio in reals:
        print(confirm_line(real, rows, truth, ratio=ratio))
    if reals:
        print(confirm_summary(reals, runs, rows, truth))
    if args.plot is not None:
        print(f"wrote {args.plot}")
    return 0


def runnable_arms(arms: Sequence[Arm], surface: Surface) -> list[Arm]:
    """The arms that can run on ``surface``: the paper's rule needs a learning_rate factor; without one it is left
    out, one line on stderr saying why (refused when no other arm is asked)."""
    problem = paper_problem(surface)
    if problem is None or not any(a.kind == "paper" for a in arms):
        return list(arms)
    kept = [a for a in arms if a.kind != "paper"]
    if not kept:
        raise SearchOptionError(f"--arms {','.join(a.name for a in arms)}: {problem}; ask for other arms")
    print(f"left out the arm(s) {', '.join(a.name for a in arms if a.kind == 'paper')}: {problem}", file=sys.stderr)
    return kept


def replay_header(surface: Surface, truth: Truth, seeds: int) -> str:
    replicates = [len(v) for v in surface.points.values()]
    levels = surface.levels()
    grid = " x ".join(f"{n} {'/'.join(f'{v:g}' if isinstance(v, float) else str(v) for v in levels[n])}"
                      for n in surface.factors)
    front = sum(non_dominated(np.array([[w, -a] for w, a in truth.values.values()])))
    return (f"surface {surface.folder}: {grid} ({len(surface.points)} points, "
            f"{min(replicates) if min(replicates) == max(replicates) else f'{min(replicates)}-{max(replicates)}'} "
            f"replicates each, {surface.excluded} run(s) not ok left out); the grid's cluster time "
            f"{truth.grid_time_s / 60:.1f} min (each point's mean elapsed_s); the true front: {front} of "
            f"{len(truth.values)} configurations (per validated epoch, replicate means)\n"
            f"{seeds} seed(s) per arm; hypervolume fraction of the true front at a budget: the configurations measured "
            "by the runs ended within it, each at its true value")


def band_checks(run: ArmRun, rows: Sequence[BudgetRow], truth: Truth, arm: str = "default"
                ) -> list[tuple[float, float, BudgetRow | None]]:
    """Per budget: the run's fraction and the arm's row (its 10-90 % band), None when the arm has none."""
    return [(b, got, next((r for r in rows if r.arm == arm and r.budget == b), None))
            for b, got in zip(BUDGETS, fractions(run, truth, BUDGETS))]


def inside(got: float, band: BudgetRow) -> bool:
    return band.hv_p10 - 1e-9 <= got <= band.hv_p90 + 1e-9


def confirm_line(real: ArmRun, rows: Sequence[BudgetRow], truth: Truth, arm: str = "default",
                 ratio: float | None = None) -> str:
    """A real search's fraction at each budget, and whether it lies in the arm's 10-90 % band; with ``ratio``
    (:func:`optimize.search.arms.speed_ratio`) also on the recording's clock."""
    def scored(run: ArmRun) -> str:
        return "; ".join(f"{b:g}: {got:.4f}" + ("" if band is None else f" {'in' if inside(got, band) else 'OUT of'} "
                                                 f"the band {band.hv_p10:.3f}-{band.hv_p90:.3f}")
                         for b, got, band in band_checks(run, rows, truth, arm))

    line = (f"real {real.arm}: {len(real.ended_s)} runs ({sum(real.pruned)} pruned), {real.ended_s[-1] / 60:.1f} min; "
            + scored(real))
    if ratio is not None:
        line += (f"\n  its runs took {ratio:.2f} x the recording's elapsed_s at the same points (median); on the "
                 f"recording's clock: " + scored(on_clock(real, ratio)))
    return line


def confirm_summary(reals: Sequence[tuple[ArmRun, float | None]], replays: Sequence[ArmRun],
                    rows: Sequence[BudgetRow], truth: Truth, arm: str = "default") -> str:
    """How many (search, budget) pairs lie in the arm's band, as measured and on the recording's clock, against
    the share of the arm's own replays that do (about 80 %, more where the band is a single value)."""
    def checks(runs: Sequence[ArmRun]) -> list[bool]:
        return [inside(got, band) for run in runs for _, got, band in band_checks(run, rows, truth, arm)
                if band is not None]

    measured, clocked = checks([r for r, _ in reals]), checks([on_clock(r, q) for r, q in reals if q is not None])
    own = checks([r for r in replays if r.arm == arm])
    return (f"real searches in the {arm} arm's 10-90 % band (search x budget): {sum(measured)} of {len(measured)} as "
            f"measured, {sum(clocked)} of {len(clocked)} on the recording's clock; the arm's own replays: "
            f"{sum(own) / max(1, len(own)):.0%}")


def replay_goals(rows: Sequence[BudgetRow], runs: Sequence[ArmRun], truth: Truth, most_saved: float | None = None
                 ) -> list[str]:
    """The goals' lines; ``most_saved``: the surface's bound on what pruning can save (Surface.most_pruning_saves)."""
    out = []
    by = {(r.arm, r.budget): r for r in rows}
    if ("default", 0.25) in by:
        r = by[("default", 0.25)]
        reached = round(r.share_95 * r.seeds)
        need = math.ceil(0.9 * r.seeds)
        out.append(f"goal: default reaches 95 % within 0.25 of the grid's time in {reached} of {r.seeds} seeds "
                   f"(needs {need}): {'MET' if reached >= need else 'NOT met'}")
    budgets = sorted({r.budget for r in rows})
    if all((a, b) in by for a in ("default", "random-pruned") for b in budgets):
        beats = [by[("default", b)].hv_median > by[("random-pruned", b)].hv_median for b in budgets]
        out.append("goal: default's median beats random with pruning at every budget: "
                   + ("MET" if all(beats) else "NOT met (" + ", ".join(f"{b:g}: {by[('default', b)].hv_median:.3f} "
                      f"vs {by[('random-pruned', b)].hv_median:.3f}" for b, ok in zip(budgets, beats) if not ok) + ")"))
    reached = times_to_goal(runs, truth)
    out.append("cluster time to 95 % (median over the seeds, share of the grid's; never: half the seeds or more never "
               "got there): " + ", ".join(f"{a} {'never' if math.isinf(t) else f'{t:.2f}'}" for a, t in reached.items()))
    saving = pruning_saving(runs, truth)
    if saving is not None:
        met = saving.saving >= 0.30 and saving.loss <= 0.02
        out.append(f"goal: pruning over the first {saving.trials} trials (medians over the seeds): cluster time "
                   f"{saving.time_pruned_s / 60:.1f} min against {saving.time_unpruned_s / 60:.1f} min without, "
                   f"{saving.saving:.0%} saved (needs 30 %); hypervolume {saving.hv_pruned:.3f} against "
                   f"{saving.hv_unpruned:.3f}, {saving.loss:+.3f} lost (at most 0.02): {'MET' if met else 'NOT met'}")
    if most_saved is not None:
        out.append(f"the most any pruning could save on this surface: {most_saved:.1%} of cluster time (every run at "
                   "the largest level stopped at its first validation; what remains is start-up and that validation)")
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main))
