"""Run every row of a design file as a spark-submit, keeping each run's logs and result.

    sparkdl submit examples/demo.csv --local --out runs/demo
    sparkdl submit design.csv --master spark://host:7077 --out runs/NAME
    sparkdl submit design.csv --out runs/NAME --mlflow http://127.0.0.1:5000   # runs in MLflow too

Each run writes ``OUT/logs/<run>-<replicate>.out`` (BigDL's log) and ``.err``, and one
row in ``OUT/campaign.sqlite`` (exported to ``OUT/results.csv`` after every run).
A failed run is recorded with its reason and the campaign goes on.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from cluster.errors import ClusterError, HostLost
from cluster.inventory import load_inventory
from cluster.local import parse_memory_mb
from cluster import runtime as runtimes
from cluster.sparkenv import SparkEnv
from harness.backends import LocalBackend, WorkerSize
from harness.campaign import CampaignPlan, CampaignSettings, make_backend, open_campaign
from harness.command import SubmitOptions, submit_argv
from harness.errors import DesignFileError
from harness.designfile import check_design
from harness.job import JobChoice, builtin_names, jvm_of, resolve_job, runtime_of
from harness import kubernetes
from harness.yarn import YarnError, capacity_problems, is_yarn, planned_argv
from harness.reference import MAX_EVERY, ReferenceError, with_reference
from sparkdl.runspec import RunSpec, format_value
from sparkdl.campaign import CampaignDir, Manifest, RunRecord
from sparkdl.cli import on_interrupt, run_cli
from harness.until import (DEFAULT_CONFIDENCE, DEFAULT_MAX, DEFAULT_MIN, MAX_REPLICATIONS, UntilError, UntilRule,
                           check_reported, first_pass, parse_until, result_text)
from sparkdl.options import (CONFIDENCE, DEFAULT_JOB, SAMPLES, CommandParser, add_budget, add_job, add_kubernetes,
                             add_out, add_seed, cluster_options, mlflow_uri, whole_number)
from sparkdl.errors import EXIT_OK, EXIT_RUNS_FAILED

Progress = Callable[[str], None]
REFERENCE_EVERY = whole_number(1, MAX_EVERY, "a number of runs", "reference-every")
REFERENCE_ROW = whole_number(1, 10**6, "a design row", "reference")
REPLICATIONS = whole_number(2, MAX_REPLICATIONS, "a number of replicates", "replications")


# ---------------------------------------------------------------- output


def results_table(records: Sequence[RunRecord]) -> str:
    params = list(dict.fromkeys(name for r in records for name in r.spec.param_names))
    head = ("run", "nodes", "exec", "cores", *params, "status", "wall_s", "accuracy", "elapsed_s")
    rows = [head]
    for r in sorted(records, key=lambda r: r.cell):
        s = r.spec
        values = [s.get(name) for name in params]
        rows.append((r.key, str(s.nodes), str(s.executors), str(s.executor_cores),
                     *("" if v is None else f"{v:g}" if isinstance(v, float) else format_value(v) for v in values),
                     str(r.status), "" if r.wall_clock_s is None else f"{r.wall_clock_s:.1f}",
                     "" if r.accuracy is None else f"{r.accuracy:.4f}", f"{r.elapsed_s:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in records:
        if not r.ok:
            lines.append(f"run {r.key} {r.status}: {r.reason}")
    return "\n".join(lines)


def dry_run_env(runtime: str, jvm: str, plain_jvm: bool, local: bool) -> SparkEnv:
    """The SparkEnv a run will get (the runtime's, with the local backend's tuning when its job asks).

    Nothing is installed or built: an archive or MKL folder not built yet is shown where it will be.
    """
    from cluster import cds, natives

    env = runtimes.planned_env(runtimes.resolve(runtime))
    if not local:
        return env
    tuned = jvm == "tuned" and not plain_jvm
    archive = (cds.Archive(cds.archive_path(env, class_list=env.class_data_list))
               if tuned and env.class_data_list is not None and env.spark_home.is_dir() else None)
    mkl = natives.folder(env, env.cache_dir) if tuned and env.natives_jar is not None and env.natives_jar.is_file() else None
    return LocalBackend.local_env(env, tuned, archive, mkl)


def dry_run_plan(specs: Sequence[RunSpec], options: SubmitOptions, env_for: Callable[[RunSpec], SparkEnv],
                 mem_mb: int, local: bool, argv_of: Callable[..., list[str]] = submit_argv) -> str:
    """What a campaign would do: the cluster scaling plan and every run's exact argv, blocked by runtime
    (``argv_of``: a backend's own argv, e.g. YARN's)."""
    lines = []
    if local:
        size = WorkerSize.for_design(specs, mem_mb)
        lines.append(f"# local cluster: workers of {size.cores} cores and {size.memory_mb} MB each")
    workers, runtime = None, None
    order = {name: i for i, name in enumerate(dict.fromkeys(env_for(s).runtime for s in specs))}
    for spec in sorted(specs, key=lambda s: order[env_for(s).runtime]):
        env = env_for(spec)
        if env.runtime != runtime:
            lines.append(f"# runtime {env.runtime}: {'start' if runtime is None else 'restart'} the cluster on its Spark "
                         f"({env.spark_home})")
            runtime, workers = env.runtime, None
        if local and spec.nodes != workers:
            lines.append(f"# scale the local cluster to {spec.nodes} worker(s)")
            workers = spec.nodes
        lines.append(f"# run {spec.key}: {spec.nodes} node(s) x {spec.executors} executor(s) x "
                     f"{spec.executor_cores} core(s) = {spec.total_cores} cores")
        lines.append(shlex.join(argv_of(spec, options, env)))
    return "\n".join(lines)


# ---------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(prog="sparkdl submit", description=__doc__.split("\n")[0],
                      parents=[cluster_options()])
    p.add_argument("design", type=Path, help="design CSV: nodes, executors, executor_cores [, run, replicate], then "
                                             "the job's columns (built-in BigDL jobs: epochs, learning_rate, "
                                             "batch_size [, model])")
    add_job(p, builtin_names(), f"the job of every row (default: the built-in the design's model column names, "
                                f"else {DEFAULT_JOB})", default=None)
    add_out(p, "the campaign folder to write (default runs/<design file name>)")
    p.add_argument("--resume", action="store_true", help="continue a campaign in --out, skipping finished runs")
    data = p.add_mutually_exclusive_group()
    data.add_argument("--data-dir", type=Path, help="MNIST idx files (default: the bundled 5,000-digit sample)")
    data.add_argument("--sample", action="store_true", help="the bundled 5,000-digit sample (default)")
    p.add_argument("--train-samples", type=SAMPLES, help="train on the first N digits only")
    p.add_argument("--test-samples", type=SAMPLES, help="validate on the first N digits only")
    add_seed(p, "the jobs' weights at replicate 1 (replicate r uses seed+r-1)", default=42)
    p.add_argument("--unchecked", action="store_true",
                   help="submit rows whose batch size BigDL will reject (they are recorded as failed)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="run the good rows when some rows are bad (the bad ones are listed and skipped)")
    p.add_argument("--dry-run", action="store_true", help="print each run's spark-submit argv; run nothing (with "
                                                          "--master k8s://...: write each shape's pod template too)")
    p.add_argument("--reference-every", type=REFERENCE_EVERY, metavar="N",
                   help="run a reference configuration first, after every N runs (between whole plots in a split-plot "
                        "design) and last, so the analysis can measure drift")
    p.add_argument("--reference", type=REFERENCE_ROW, metavar="ROW",
                   help="with --reference-every: the design row (1-based) to repeat (default: the row nearest the "
                        "design's centre)")
    add_kubernetes(p)
    u = p.add_argument_group("replicate until sure")
    u.add_argument("--until", metavar="RULE",
                   help='add replicates until each design point\'s mean is known well enough: "ci(wall_clock_s) < 5%%" '
                        "asks that the half-width of the t interval of each point's mean (at --confidence) be under "
                        '5 %% of that mean; "ci(accuracy) < 0.01" asks it in the response\'s unit. After a first pass '
                        "of --min-replications, the next replicate goes to the point whose interval is widest against "
                        "the target; a failed run (or one without a value of the response) is not a replicate")
    u.add_argument("--min-replications", type=REPLICATIONS, default=DEFAULT_MIN, metavar="N",
                   help=f"with --until: replicates of every point in the first pass (default {DEFAULT_MIN}; at least 2, "
                        "so that each point has an interval)")
    u.add_argument("--max-replications", type=REPLICATIONS, default=DEFAULT_MAX, metavar="N",
                   help=f"with --until: the most replicates of a point (default {DEFAULT_MAX}); a point with as many "
                        "failed runs is given up")
    add_budget(u, "with --until: cluster time to spend (the sum of the runs' times, resumed sessions included; a run "
                  "starts only while one of the mean length so far fits)")
    u.add_argument("--confidence", type=CONFIDENCE, default=DEFAULT_CONFIDENCE, metavar="LEVEL",
                   help=f"with --until: the level of the t interval (default {DEFAULT_CONFIDENCE})")
    return p


def until_rule(args: argparse.Namespace) -> UntilRule | None:
    """The stopping rule of ``--until`` and its options (None without it); the options alone are refused."""
    if args.until is None:
        alone = [o for o, set_ in (("--min-replications", args.min_replications != DEFAULT_MIN),
                                   ("--max-replications", args.max_replications != DEFAULT_MAX),
                                   ("--budget", args.budget is not None),
                                   ("--confidence", args.confidence != DEFAULT_CONFIDENCE)) if set_]
        if alone:
            raise UntilError(f"{alone[0]} needs --until: add e.g. --until \"ci(wall_clock_s) < 5%\"")
        return None
    if args.reference_every is not None:
        raise UntilError("--until with --reference-every is not supported: run the reference configuration as a "
                         "design point of its own, or drop --reference-every")
    response, width, relative = parse_until(args.until)
    return UntilRule(response, width, relative, args.confidence, args.min_replications, args.max_replications,
                     args.budget)


def rescale_note(specs: Sequence[RunSpec]) -> str | None:
    """A note when the rows' order changes ``nodes`` (a cluster rescale each time) more often than
    grouping the rows by it would; None when the order is already grouped."""
    if any(s.get("whole_plot") is not None for s in specs):
        return None  # a split-plot design: nodes changes only between whole plots, by design
    nodes = [s.nodes for s in specs]
    changes = sum(a != b for a, b in zip(nodes, nodes[1:]))
    needed = len(set(nodes)) - 1
    if changes <= needed:
        return None
    return (f"note: this design's order changes nodes {changes} times, each a cluster rescale; grouped by nodes it "
            f"would change {needed} time(s) (sparkdl design makes nodes hard to change by default: a "
            "split-plot order)")


def resume_command(argv: Sequence[str]) -> str:
    """The exact command that continues this campaign."""
    args = list(argv) + ([] if "--resume" in argv else ["--resume"])
    return shlex.join(["sparkdl", "submit", *args])


def kubernetes_target(args: argparse.Namespace) -> kubernetes.KubernetesTarget | None:
    """The Kubernetes dry run's target (None for any other master); its options alone, or a real run, refused."""
    if not kubernetes.is_kubernetes(args.master):
        alone = "--image" if args.image is not None else "--namespace" if args.namespace is not None else None
        if alone:
            raise kubernetes.KubernetesError(f"{alone} needs --master k8s://https://HOST:PORT --dry-run: add them, "
                                             f"or drop {alone}")
        return None
    url = kubernetes.master_url(args.master)
    if not args.dry_run:
        raise kubernetes.KubernetesError(f"--master {url}: Kubernetes runs are printed, not run, by this version: add "
                                         "--dry-run for every run's spark-submit argv and pod template")
    return kubernetes.KubernetesTarget(
        master_url=url, namespace=kubernetes.check_namespace(args.namespace or "default"),
        image=None if args.image is None else kubernetes.check_image(args.image),
        template_dir=args.out / kubernetes.TEMPLATE_DIR)


def kubernetes_dry_run(specs: Sequence[RunSpec], options: SubmitOptions, choice: JobChoice,
                       target: kubernetes.KubernetesTarget) -> str:
    """Every run's argv on Kubernetes, the templates validated, then written (nothing on any error)."""

    def env_for(spec: RunSpec) -> SparkEnv:
        return runtimes.planned_env(runtimes.resolve(runtime_of(choice.for_spec(spec), spec)))

    def spark_of(spec: RunSpec) -> str:
        return runtimes.resolve(runtime_of(choice.for_spec(spec), spec)).spark_version

    made = kubernetes.plan(specs, options, env_for, spark_of, target)
    check = kubernetes.validated(made.templates.values())
    made.write()
    return kubernetes.render(made, target, check)


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.out = args.out or Path("runs") / args.design.stem
    target = kubernetes_target(args)
    say: Progress = lambda msg: print(msg, flush=True)  # noqa: E731
    choice = JobChoice(resolve_job(args.job)) if args.job else JobChoice()
    inventory = load_inventory(args.cluster) if args.cluster else None  # a bad inventory fails before any run
    options = SubmitOptions(master_url=args.master or (inventory.master_url if inventory else
                                                       f"spark://127.0.0.1:{args.port}"),
                            executor_memory=args.executor_memory, driver_memory=args.driver_memory,
                            data_dir=args.data_dir, train_samples=args.train_samples,
                            test_samples=args.test_samples, seed=args.seed, jobs=choice, out=args.out)
    checked = check_design(args.design, choice, check_batch=not args.unchecked, option_fields=options.option_fields())
    if checked.problems and not (args.skip_invalid and checked.specs):
        raise DesignFileError(str(args.design), checked.problems)
    for problem in checked.problems:
        print(f"skipped {problem}", file=sys.stderr)
    specs = checked.specs
    rule = until_rule(args)
    if rule is not None:
        check_reported(rule.response, {j.name: j for j in map(choice.for_spec, specs)}.values())
    reference_run = None
    if args.reference is not None and args.reference_every is None:
        raise ReferenceError(f"--reference {args.reference} needs --reference-every N: give how often to repeat it")
    if args.reference_every is not None:
        placed = with_reference(specs, args.reference_every, args.reference)
        if not any(s.get("whole_plot") is not None for s in specs) and len(
                {runtime_of(choice.for_spec(s), s) for s in specs}) > 1:
            raise ReferenceError("--reference-every on a design of several runtimes needs its whole plots: make the "
                                 "design with sparkdl design (its whole_plot column places the reference runs)")
        specs, reference_run = list(placed.specs), placed.reference_run
        print(f"reference runs: design row {placed.reference_row} as run {reference_run}, {placed.count} times "
              f"(first, after every {args.reference_every} runs, last)", file=sys.stderr)
    note = rescale_note(specs)
    if note and not (args.master or args.cluster):
        print(note, file=sys.stderr)
    mem_mb = parse_memory_mb(args.executor_memory)
    tracking = mlflow_uri(args.mlflow)  # checked before a dry run too
    if args.dry_run and target is not None:
        print(kubernetes_dry_run(specs if rule is None else first_pass(specs, rule.min_replications), options, choice,
                                 target))
        return EXIT_OK
    if args.dry_run:
        local = not (args.master or args.cluster)

        def env_for(spec: RunSpec) -> SparkEnv:
            job = choice.for_spec(spec)
            return dry_run_env(runtime_of(job, spec), jvm_of(job, spec), args.plain_jvm, local)

        argv_of = submit_argv
        if is_yarn(args.master):  # nothing is asked of the cluster: its archive is shown where it will be
            for spec in specs:
                if problems := capacity_problems(spec, None, mem_mb):
                    raise YarnError(f"run {spec.key}: {problems[0]}")
            argv_of = planned_argv(args.out, args.queue)
        print(dry_run_plan(specs if rule is None else first_pass(specs, rule.min_replications), options, env_for,
                           mem_mb, local=local, argv_of=argv_of))
        if rule is not None:
            print(f"# then replicates, one at a time, where {rule.text} is not met yet (at most "
                  f"{rule.max_replications} a point)")
        return EXIT_OK
    folder = CampaignDir(args.out)
    plan = CampaignPlan(
        design_id=hashlib.sha256(args.design.read_bytes()).hexdigest(), shapes=tuple(specs),
        settings=CampaignSettings(options=options, timeout=args.timeout, retries=args.retries,
                                  mlflow=tracking),
        manifest=replace(Manifest.for_design(specs, job=choice.job.name if choice.job else None, design=str(args.design)),
                         reference_run=reference_run),
        provenance={"design_path": str(args.design)})
    on_interrupt(f"finished runs are kept in {args.out}; continue with --resume")
    if args.out is not None and "--out" not in given:
        given += ["--out", str(args.out)]
    again = resume_command(given)
    try:
        with open_campaign(folder, plan, make_backend(args, folder, mem_mb, say), resume=args.resume,
                           progress=say) as campaign:
            if rule is None:
                summary, result = campaign.run(specs), None
            else:
                summary, result = campaign.run_until(specs, rule)
    except HostLost as e:  # the master's host: nothing can run
        raise HostLost(e.host, e.role, e.detail, f"{e}; the campaign stopped, finished runs are kept: once the host "
                       f"answers, continue with `{again}`", e.fatal) from None
    print()
    print(results_table(summary.records))
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary.counts.items()))
    print(f"\n{len(summary.records)} run(s): {counts}. Results: {folder.results_csv}, logs: {folder.logs}")
    if result is not None:  # the last line says how the stopping rule ended
        print(f"\n{result_text(result)}")
    lost = summary.lost_hosts_line()
    if lost:  # the last line: what was lost, and how to finish
        raise ClusterError(f"{lost}; once the host answers, continue with `{again}`")
    return EXIT_OK if summary.all_ok else EXIT_RUNS_FAILED


if __name__ == "__main__":
    sys.exit(run_cli(main))
