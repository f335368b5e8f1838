"""BigDL LeNet, PyTorch LeNet (TorchDistributor) and XGBoost on the same cluster shapes: time to a target
accuracy, and what each run costs above Spark's empty application.

    .venv/bin/python bench/frameworks.py [--shapes 1,1,2/1,2,1] [--epochs 3] [--rounds 15] [--target-accuracy 0.8]
                                         [--train-samples 4000] [--test-samples 1000] [--repeats 2]

One local standalone cluster on free ports, restarted on each framework's runtime (bigdl, torch,
spark4). For each framework and shape: the empty application (bench/empty_app.py, the same
spark-submit options, ``--repeats`` times, median) is the floor; then one run through the harness's
campaign loop. Per run it prints the elapsed time, the floor, the training clock (BigDL's wall clock,
PyTorch's training loop, XGBoost's fit), the overhead above the floor (elapsed - floor - training:
starting the framework's workers, loading data, validation), the first epoch (round) whose held-out
accuracy reaches ``--target-accuracy``, and the training clock at that epoch.
Same data for all: the sample's 4,000 training and 1,000 test digits (by default); LeNet at learning
rate 0.05, batch 64; XGBoost depth 4, eta 0.3.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path[:1] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from campaign import CpuMeter, floor_s, run_campaign  # noqa: E402  (bench/campaign.py)

from cluster.local import LocalCluster, free_port, parse_memory_mb  # noqa: E402
from harness.backends import LocalBackend  # noqa: E402
from harness.command import SubmitOptions  # noqa: E402
from harness.designfile import read_design  # noqa: E402
from harness.job import JobChoice, builtin  # noqa: E402
from optimize.harvest import epoch_figures  # noqa: E402
from sparkdl.cli import run_cli  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402
from bench.workdir import work_folder  # noqa: E402

FRAMEWORKS = ("lenet", "torch-lenet", "xgboost")


def design_text(job: str, shapes: list[str], epochs: int, rounds: int) -> str:
    if job == "xgboost":
        return ("run,nodes,executors,executor_cores,rounds,max_depth,learning_rate\n"
                + "".join(f"{i},{s},{rounds},4,0.3\n" for i, s in enumerate(shapes, start=1)))
    return ("run,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
            + "".join(f"{i},{s},{epochs},0.05,64\n" for i, s in enumerate(shapes, start=1)))


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default="1,1,2/1,2,1", help="nodes,executors,cores shapes separated by /")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--target-accuracy", type=float, default=0.8)
    p.add_argument("--train-samples", type=int)
    p.add_argument("--test-samples", type=int)
    p.add_argument("--repeats", type=int, default=2, help="empty-application runs per shape (median)")
    p.add_argument("--executor-memory", default="800m")
    p.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    args = p.parse_args(argv)
    with work_folder("bench-frameworks-") as work:
        return run(args, work)


def run(args: argparse.Namespace, work: Path) -> int:
    shapes = args.shapes.split("/")
    cluster = LocalCluster(work / "cluster", port=free_port(), webui_port=free_port())
    backend = LocalBackend(cluster, parse_memory_mb(args.executor_memory), progress=lambda m: print(f"  {m}"))
    results = []
    try:
        for name in args.frameworks.split(","):
            job = builtin(name)
            design = work / f"{name}.csv"
            design.write_text(design_text(name, shapes, args.epochs, args.rounds))
            choice = JobChoice(job)
            specs = read_design(design, choice)
            if backend.size is None:
                backend.open(specs, job.runtime)
            env = backend.environment_for(job.runtime, job.jvm)
            options = SubmitOptions(master_url=cluster.master_url, executor_memory=args.executor_memory,
                                    train_samples=args.train_samples, test_samples=args.test_samples, jobs=choice,
                                    out=work / name)
            floors = {}
            with CpuMeter() as meter:
                for spec in specs:  # bench/campaign.py's floor: the empty application with the run's own options
                    floors[spec.key], _ = floor_s(spec, options, env, backend, work / f"{name}-floor.log",
                                                  args.repeats, meter, name)
                    print(f"  [{name}] floor {spec.nodes},{spec.executors},{spec.executor_cores}: "
                          f"{floors[spec.key]:.1f} s", flush=True)
                rows, _ = run_campaign(name, specs, options, backend, work / name, cache=True, env=env, meter=meter)
            for row, spec in zip(sorted(rows, key=lambda r: r["key"]), sorted(specs, key=lambda s: s.key)):
                curve = epoch_figures(work / name / "logs" / f"{spec.key}.out")
                reached = next(((e, wall) for e, wall, acc in curve if acc >= args.target_accuracy), None)
                training = curve[-1][1] if curve else float("nan")
                results.append((name, f"{spec.nodes},{spec.executors},{spec.executor_cores}", row["status"],
                                row["elapsed_s"], floors[spec.key], training, curve[-1][2] if curve else float("nan"),
                                reached))
    finally:
        cluster.stop()
    print(f"\ntarget accuracy {args.target_accuracy}; seconds; LeNet {args.epochs} epoch(s), XGBoost {args.rounds} round(s)")
    print(f"  {'framework':<12}{'shape':<7}{'status':<8}{'elapsed':>8}{'floor':>7}{'training':>9}{'overhead':>9}"
          f"{'accuracy':>9}  at target")
    for name, shape, status, elapsed, floor, training, acc, reached in results:
        at = "not reached" if reached is None else f"epoch {reached[0]}, {reached[1]:.2f} s of training"
        print(f"  {name:<12}{shape:<7}{status:<8}{elapsed:8.1f}{floor:7.1f}{training:9.2f}"
              f"{elapsed - floor - training:9.1f}{acc:9.4f}  {at}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
