"""sparkdl search: a multi-objective search on real jobs through the harness.

    sparkdl search --job lenet --fixed epochs=2 --space space.toml --budget 30m --out runs/search \
        --train-samples 1024 --test-samples 256
    sparkdl search ... --resume                 # continue a killed or finished search
    sparkdl search ... --sampler nsga2 --pruner halving --target-accuracy 0.9
    sparkdl search ... --per-epoch              # epochs at the space's largest, lower epochs harvested
    sparkdl search --replay bench/data/surface-lenet --job lenet --per-epoch --budget 5m --out runs/r
    sparkdl search --job xgboost --fixed max_depth=4 --space space.toml --per-epoch --fidelity rounds ...
    sparkdl search --job my_job.toml --fixed epochs=5 --space space.toml ...   # a job description of your own

``--job`` is any job, as in ``sparkdl submit``: a built-in or a job description (TOML; its results json, output,
mlflow or none). space.toml varies the cluster factors and the job's own parameters (as its ``[params.NAME]``
declare them); ``--fixed`` gives the others. A name that is neither, or a parameter the job's args need that
neither gives, is refused before anything runs. lenet, birnn and torch-lenet keep their defaults (batch 256,
1 epoch, learning rate 0.002) and their ``model`` column.

``--replay DIR`` runs the search against a recorded surface (bench/surface.py) instead of a cluster
(:mod:`optimize.search.replay`): each trial replays one recorded replicate of its point, drawn with
``--seed``, pruned and charged as a real run; ``--space`` defaults to the surface's grid, and a point
off it is refused, as is a ``--job`` other than the recorded one (and, per epoch, another ``--fidelity``).

Objectives default to wall_clock_s:min,accuracy:max. Progress: one line per trial with the cluster
time used against the budget and an ETA. At the end: the front of the ok runs (optimize.pareto), its
hypervolume, pareto.png and search.json in --out. When a configuration was run more than once, the front is
of configurations (optimize.fronts): each one's mean with its interval and its probability of being on the
front, from a bootstrap over its runs seeded by --seed.

``--per-epoch`` (multi-fidelity, :mod:`optimize.harvest`): when ``epochs`` is a factor of the space,
every trial runs at its largest level and Optuna searches the other factors only; the front is then
drawn from every validated epoch of the ok and pruned runs, a run of E epochs giving the points of
epochs 1..E (without an epochs factor, at --fixed's epochs). Optuna is told each run's last epoch, as
without the option. Objectives are then wall_clock_s, accuracy and cost. Without ``--per-epoch``
epochs is searched like any factor and the front has one point per ok run. ``--fidelity PARAM`` names
another parameter that counts the validated epochs (xgboost's ``rounds``): it then plays
the part of ``epochs`` here and in pruning (the last epoch a run validates is its level).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import optuna

from optimize.epochs import parse_config
from optimize import harvest as harvesting
from optimize.errors import SearchOptionError
from optimize import fronts
from optimize.pareto import (ParetoFront, front_figure, front_table, manifest_factors, ok_runs, pareto_front,
                             parse_objectives, read_campaign)
from optimize.search.pruning import PRUNERS, default_pruner, make_rules
from optimize.search.replay import ReplayCluster, Surface
from optimize.search.space import CLUSTER_FACTORS, JobParams, SearchSpace, at_largest, load_space
from optimize.search.study import (DEFAULT_STARTUP_TRIALS, SAMPLERS, MultiObjectiveSearch, SearchConfig,
                                   SearchOutcome, check_objectives, open_study)
from optimize.figures import save
from optimize.session import (LENET_DEFAULTS, ClusterOptions, JobConfig, job_params, open_session, optimizer_jobs,
                               submit_options)
from harness.job import builtin_names, resolve_job, template_fields
from sparkdl.runspec import format_value, parse_value
from sparkdl.cli import on_interrupt, run_cli
from sparkdl.cost import parse_cost
from sparkdl.options import (SAMPLES, SEED, CommandParser, add_budget, add_cost, add_job, add_out, add_seed,
                             cluster_options, renamed)




def parse_job(job: str, fixed: str | None = None) -> JobConfig:
    """``--job lenet`` and ``--fixed epochs=2,batch_size=64`` -> the job and the factors the space does not vary.

    ``--job`` names a job as in every command: a built-in (``lenet``, ``xgboost``...) or a job description of the
    user's (TOML, as ``sparkdl submit --job FILE``); ``--fixed`` names the job's own parameters and the cluster
    factors. The old form, fixed factors in ``--job`` (``model=lenet,epochs=2``), is refused with the new command
    (:func:`old_job_form`). Whether every parameter the job needs is given is checked with the space
    (:func:`check_given`).
    """
    name = job.strip()
    if "=" in name:
        raise SearchOptionError(f"--job {job!r}: --job names a job now and fixed factors go to --fixed: "
                                f"write {split_old_job(job)}")
    values = parse_config(fixed) if fixed else {}
    if "model" in values:
        raise SearchOptionError(f"--fixed model={values['model']}: the job is named by --job; "
                                f"write --job {values['model']} and drop model= from --fixed")
    if name in optimizer_jobs():  # a LeNet-style built-in: its three columns, Marinos 2021's defaults
        known = set(CLUSTER_FACTORS) | {k for k, _ in LENET_DEFAULTS}
        unknown = sorted(set(values) - known)
        if unknown:
            raise SearchOptionError(f"--fixed {', '.join(unknown)}: not a job factor; use {', '.join(sorted(known))}")
        return JobConfig(model=name, **values)  # type: ignore[arg-type]
    described = resolve_job(name)
    own = job_params(described)
    unknown = [k for k in values if k not in own and k not in CLUSTER_FACTORS]
    if unknown:
        raise SearchOptionError(f"--fixed {', '.join(unknown)}: not a job factor (a parameter of the job "
                                f"{described.name} or a cluster factor); use {', '.join((*CLUSTER_FACTORS, *own))}")
    checked: dict[str, object] = {}
    for key, value in values.items():
        if key in CLUSTER_FACTORS:
            checked[key] = value
            continue
        got, problem = parse_value(key, format_value(value), described.rule(key))  # type: ignore[arg-type]
        if problem:
            raise SearchOptionError(f"--fixed {problem} (the job {described.name}'s [params.{key}])")
        checked[key] = got
    if name in builtin_names():  # resolve_job read the built-in of that name
        return JobConfig(model=name, **checked)  # type: ignore[arg-type]
    return JobConfig(model=described.name, job=described, **checked)  # type: ignore[arg-type]


def space_params(job: JobConfig) -> JobParams | None:
    """What space.toml may vary besides the cluster factors: the job's own parameters with their declared rules;
    None for a LeNet-style built-in (the design factors of :mod:`optimize.search.space`)."""
    if job.lenet_style:
        return None
    described = job.described()
    return JobParams(described.name, {p: described.rule(p) for p in job_params(described)})


def check_given(job: JobConfig, space: SearchSpace) -> None:
    """Every parameter the job's args need is varied by the space or given by ``--fixed`` (else one line naming
    the first that is not, and the fix)."""
    described = job.described()
    given = {k for k, _ in job.params} | set(space.names)
    required = {f for element in described.args if isinstance(element, str) for f in template_fields(element)}
    missing = [p for p in job_params(described) if p in required and p not in given]
    if missing:
        raise SearchOptionError(f"the job {described.name} needs {missing[0]} (its args use {{{missing[0]}}}): give "
                                f"it in --fixed ({missing[0]}=...) or vary it in space.toml ([{missing[0]}])")


def split_old_job(text: str) -> str:
    """``model=lenet,epochs=2`` (the old ``--job``) -> ``--job lenet --fixed epochs=2``."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    model = next((p.partition("=")[2] for p in parts if p.partition("=")[0].strip() == "model"), JobConfig.model)
    rest = [p for p in parts if p.partition("=")[0].strip() != "model"]
    return f"--job {model.strip()}" + (f" --fixed {','.join(rest)}" if rest else "")


def old_job_form(argv: Sequence[str]) -> str | None:
    """The whole command with an old ``--job FACTORS`` rewritten (None: ``--job`` is a name)."""
    out, found, i = [], False, 0
    while i < len(argv):
        arg = argv[i]
        value = arg.partition("=")[2] if arg.startswith("--job=") else argv[i + 1] if arg == "--job" and i + 1 < len(argv) else None
        if value is not None and "=" in value:
            out += split_old_job(value).split(" ")
            found = True
            i += 1 if arg.startswith("--job=") else 2
            continue
        out.append(arg)
        i += 1
    return "sparkdl search " + " ".join(shlex.quote(a) for a in out) if found else None


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl search", parents=[cluster_options()],
                      description=__doc__.split("\n")[0])
    add_job(p, builtin_names(), "the job to run")
    p.add_argument("--fixed", help="the factors the space does not vary: the job's own parameters and the cluster "
                                   "factors, e.g. epochs=2,batch_size=64 (default: 1 node x 1 executor x 1 core; "
                                   "lenet, birnn, torch-lenet: batch 256, 1 epoch, learning rate 0.002; any other "
                                   "job: every parameter its args need, unless the space varies it)")
    p.add_argument("--space", type=Path, help="space.toml: the factors to vary and their ranges: the job's own "
                                              "parameters and nodes, executors, executor_cores (with --replay: "
                                              "default the surface's grid)")
    add_budget(p, "cluster time to spend (the sum of the trials' times)", required=True)
    add_out(p, "the campaign folder of the search (results, logs, study.sqlite)", required=True)
    p.add_argument("--resume", action="store_true", help="continue the search in --out")
    p.add_argument("--objectives", default="wall_clock_s:min,accuracy:max",
                   help="COLUMN:min|max,... : wall_clock_s, accuracy, elapsed_s, cost, or any figure a run records "
                        "(spark_*, host_*, phase_* columns, a job's own metrics)")
    add_cost(p, "the cost objective")
    p.add_argument("--sampler", choices=SAMPLERS, default="tpe", help="tpe (default), nsga2, random, grid")
    add_seed(p, "the sampler")
    p.add_argument("--job-seed", type=SEED, metavar="SEED", default=42, help="seed of the jobs' weights (default 42)")
    p.add_argument("--startup-trials", type=int, default=DEFAULT_STARTUP_TRIALS,
                   help=f"tpe: start-up trials before the model (default {DEFAULT_STARTUP_TRIALS})")
    p.add_argument("--startup", choices=("lhs", "random"), default="lhs",
                   help="tpe: the start-up trials from a Latin hypercube over the space (default) or at random")
    renamed(p, "--start", "--startup")
    p.add_argument("--repeat", action=argparse.BooleanOptionalAction, default=False,
                   help="a trial asking for factors already run runs them again, a replicate (--repeat); by default "
                        "(--no-repeat) it is told that run's result without a job, and the search stops after 30 "
                        "such trials in a row (the space is measured)")
    p.add_argument("--population", type=int, default=8, help="nsga2: population size (default 8)")
    p.add_argument("--grid-points", type=int, default=3, help="grid: levels per float range (default 3)")
    p.add_argument("--max-trials", type=int, help="stop after this many trials in this session")
    p.add_argument("--pruner", choices=PRUNERS,
                   help="stop dominated runs at an epoch: front (dominated by a point any earlier run measured, at "
                        "any epoch; the default with --per-epoch, whose front holds those points), median (dominated "
                        "by half the earlier runs at that epoch; the default otherwise), halving, or none; see "
                        "optimize.search.pruning")
    p.add_argument("--target-accuracy", type=float, help="also stop runs whose curve cannot reach this accuracy")
    p.add_argument("--min-runs", type=int, default=3, help="pruners need this many earlier runs at an epoch")
    p.add_argument("--per-epoch", action="store_true",
                   help="run every trial at the space's largest epochs (--fidelity), search the other factors, and "
                        "put every validated epoch of the ok and pruned runs on the front (optimize.harvest)")
    p.add_argument("--fidelity", metavar="PARAM", default=harvesting.FIDELITY,
                   help="the job's parameter that counts its validated epochs: pruning's last epoch, and with "
                        "--per-epoch the level every trial runs at, each validated epoch a point at that level "
                        "(default epochs; xgboost: rounds)")
    p.add_argument("--replay", type=Path, metavar="DIR",
                   help="run against a recorded surface (bench/surface.py) instead of a cluster: each trial replays "
                        "a recorded replicate of its point, drawn with --seed (optimize.search.replay)")
    p.add_argument("--train-samples", type=SAMPLES, help="train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="validate on the first N digits only")
    return p


def campaign_front(out: Path, config: SearchConfig,
                   per_epoch: bool) -> tuple[ParetoFront | fronts.ConfigurationFront, str] | None:
    """The front of the campaign in ``out`` and what its points are; None before any point.

    Per validated epoch with ``per_epoch``; else per design point when a configuration was run more than once
    (:mod:`optimize.fronts`, its bootstrap seeded by the search's seed), per ok run otherwise."""
    if not (out / "results.csv").exists():
        return None
    table = read_campaign(out)
    factors = manifest_factors(out)
    shown = () if config.job.lenet_style else factors  # another job's columns beside each point (default: LeNet's)
    if per_epoch:
        harvest = harvesting.harvest(table, out, config.fidelity, shown or None)
        if not harvest.points:
            return None
        front = pareto_front(harvest.table(), config.objectives, cost=config.cost)
        return replace(front, excluded=harvest.excluded, factors=shown), "validated epochs"
    if not (table["status"] == "ok").any():
        return None
    if fronts.is_replicated(ok_runs(table, config.objectives, config.cost)[0], factors):
        return fronts.configuration_front(table, config.objectives, factors, cost=config.cost,
                                          seed=config.seed), "design points"
    return replace(pareto_front(table, config.objectives, cost=config.cost), factors=shown), "ok runs"


def report(out: Path, config: SearchConfig, outcome: SearchOutcome, per_epoch: bool = False) -> dict[str, object]:
    """Print the campaign's front (per ok run, design point or validated epoch); write pareto.png and search.json."""
    summary: dict[str, object] = {"trials": len(outcome.trials), "ok": outcome.count("ok"),
                                  "pruned": outcome.count("pruned"), "cluster_time_s": outcome.cluster_time_s,
                                  "stop_reason": outcome.stop_reason}
    print(f"\n{len(outcome.trials)} trials this session ({outcome.count('ok')} ok, {outcome.count('pruned')} pruned, "
          f"{outcome.count('failed') + outcome.count('incomplete')} not ok); cluster time "
          f"{outcome.cluster_time_s / 60:.1f} min; stopped: {outcome.stop_reason}")
    found = campaign_front(out, config, per_epoch)
    if isinstance(found, tuple) and isinstance(found[0], fronts.ConfigurationFront):
        configurations = found[0]
        print(fronts.format_text(configurations))
        summary["front"] = {**configurations.to_dict(), "per_epoch": False}
        print(f"wrote {save(fronts.front_figure(configurations), out / 'pareto.png')}")
    elif found is not None:
        front, what = found
        print(front_table(front))
        print(f"{int(front.on_front.sum())} of {len(front.runs)} {what} on the front; hypervolume "
              f"{front.hypervolume:.6g} (reference "
              + ", ".join(f"{o.column}={r:.6g}" for o, r in zip(config.objectives, front.reference)) + ")")
        summary["front"] = {**front.as_json(), "per_epoch": per_epoch}
        print(f"wrote {save(front_figure(front, what), out / 'pareto.png')}")
    (out / "search.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary


def search_config(args: argparse.Namespace, surface: Surface | None = None) -> SearchConfig:
    """The search the command line asks for, checked (objectives; with --per-epoch, the space at its largest epochs;
    with a replay's ``surface``, every point on its grid)."""
    if args.space is None and surface is None:
        raise SearchOptionError("--space is required (a space.toml of the factors to vary) unless --replay gives a "
                                "surface, whose grid is then the space")
    job = parse_job(args.job, args.fixed)
    space = (load_space(args.space, space_params(job)) if args.space is not None
             else surface.space())  # type: ignore[union-attr]
    if surface is not None:  # the factors --fixed does not give: the surface's (where it has one level)
        given = set(parse_config(args.fixed)) if args.fixed else set()
        job = replace(job, **{k: v for k, v in surface.constants().items() if k not in given and k != "model"})
    objectives = parse_objectives(args.objectives)
    check_objectives(objectives, args.cost)
    fidelity = args.fidelity
    if fidelity != harvesting.FIDELITY or args.per_epoch:
        check_fidelity(job, fidelity)
    if surface is not None:
        surface.check_job(job, fidelity if fidelity != harvesting.FIDELITY or args.per_epoch else None)
    if args.per_epoch:
        harvesting.check_objectives(objectives)
        space, level = at_largest(space, fidelity, job.get(fidelity))
        job = replace(job, **{fidelity: level})
    check_given(job, space)
    if args.sampler == "grid":
        space.check_grid(args.grid_points)
    if surface is not None:
        surface.check(space, job.spec(1, 1).as_row())
    return SearchConfig(space, job, objectives, sampler=args.sampler, seed=args.seed, startup_trials=args.startup_trials,
                        population=args.population, grid_points=args.grid_points, cost=args.cost, start=args.startup,
                        repeat=args.repeat, fidelity=fidelity)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    rewritten = old_job_form(argv)
    if rewritten is not None:
        raise SearchOptionError(f"--job names a job now and fixed factors go to --fixed: run {rewritten}")
    args = build_parser().parse_args(argv)
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    budget = args.budget
    surface = Surface.load(args.replay) if args.replay is not None else None
    config = search_config(args, surface)
    space, job, objectives = config.space, config.job, config.objectives
    pruner = default_pruner(args.pruner, args.per_epoch)
    rules = make_rules(pruner, args.target_accuracy, args.min_runs)
    cluster = ClusterOptions.from_args(args)
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.job_seed)
    options = replace(options, jobs=job.choice())
    settings = {"optimizer": "search", "space": space.describe(), "job": job.settings(),
                "objectives": [str(o) for o in objectives], "sampler": args.sampler, "seed": args.seed,
                "job_seed": args.job_seed, "train_samples": args.train_samples, "test_samples": args.test_samples}
    if any(o.column == "cost" for o in objectives):  # only then does the formula define the search
        settings["cost"] = parse_cost(args.cost).name
    if args.per_epoch:  # only then: a search started before the option resumes unchanged
        settings["per_epoch"] = True
    if args.sampler == "tpe" and args.startup == "lhs":  # a tpe search started before it resumes with --start random
        settings["start"] = "lhs"
        settings["startup_trials"] = args.startup_trials
    if surface is not None:
        settings["replay"] = str(surface.folder.resolve())
    if not args.repeat:  # only then: a search started with repeats resumes with --repeat unchanged
        settings["repeat"] = False
    if config.fidelity != harvesting.FIDELITY:  # likewise
        settings["fidelity"] = config.fidelity
    if pruner != "median":  # likewise: a search that recorded no rule ran the median one
        settings["pruner"] = pruner
    # another job's shapes carry a level of every factor, so that the manifest names each factor of its runs
    base = {} if job.lenet_style else {f.name: f.at(0.0) for f in space.factors}
    shapes = [job.spec(1, 1, **{**base, **combo}) for combo in space.shapes()]
    on_interrupt(f"finished runs and the study are kept in {args.out}; continue with --resume")
    args.out.mkdir(parents=True, exist_ok=True)
    backend = ReplayCluster(surface, args.seed) if surface is not None else None
    with open_session(args.out, settings, options, cluster, shapes, args.resume, say, backend=backend) as session:
        search = MultiObjectiveSearch(session, open_study(args.out, config), config, rules, say)
        outcome = search.run(budget, args.max_trials)
    report(args.out, config, outcome, args.per_epoch)
    return 0


def check_fidelity(job: JobConfig, fidelity: str) -> str:
    """``--fidelity``: a parameter of the job that counts epochs (whole numbers); else one line naming the fix."""
    own = job_params(job.described())
    if fidelity not in own:
        raise SearchOptionError(f"--fidelity {fidelity}: not a parameter of the job {job.described().name}; use the "
                                f"one that counts its epochs or rounds, one of {', '.join(own)}")
    return fidelity


if __name__ == "__main__":
    sys.exit(run_cli(main))
