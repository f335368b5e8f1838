"""What the local backend's start-up tuning (``jvm = "tuned"``) does to a job: stock JVMs against tuned ones.

    .venv/bin/python bench/jit.py [--job lenet|birnn|mlp] [--shape 2,2,1] [--epochs 1] [--max-iter 20]
                                  [--runs 3] [--train-samples N] [--test-samples N]
                                  [--variants stock,tuned,tuned-c2,c1-driver]

Variants: ``stock`` (the runtime's own JVMs, what every job gets unless it asks), ``tuned`` (the
parallel collector, a C1-only JIT and, on the BigDL runtime, its class-data archive and MKL unpacked
once), ``tuned-c2`` (tuned but with Java's JIT) and ``c1-driver`` (tuned, C1 on the driver only).

On a fresh local standalone cluster of the job's runtime on free ports, runs one design row
``--runs`` times per variant, the variants interleaved run by run (so drift hits them alike), each
run through the harness's own campaign loop. Prints, per variant, the medians of the time outside
training, the training time (BigDL's wall clock, or a JSON job's ``fit_s``), the elapsed
time and the runs' CPU seconds (bench/campaign.py's CpuMeter). A short and a long run of a BigDL and
of a non-BigDL job (README, "Where the time goes")::

    bench/jit.py --job lenet --train-samples 256 --test-samples 128
    bench/jit.py --job birnn --shape 1,1,2 --epochs 4 --runs 2 --variants stock,tuned
    bench/jit.py --job mlp --shape 1,1,2 --max-iter 20 --runs 2 --variants stock,tuned
    bench/jit.py --job mlp --shape 1,1,2 --max-iter 400 --runs 2 --variants stock,tuned
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

# bench/logparse.py would shadow the logparse package: the project root goes first, this folder after it
sys.path[:1] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from campaign import CpuMeter, run_campaign  # noqa: E402  (bench/campaign.py)

from cluster.local import LocalCluster, free_port, parse_memory_mb  # noqa: E402
from harness.backends import LocalBackend  # noqa: E402
from harness.command import SubmitOptions  # noqa: E402
from harness.designfile import read_design  # noqa: E402
from harness.job import JobChoice, builtin  # noqa: E402
from sparkdl.cli import run_cli  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402
from bench.workdir import work_folder  # noqa: E402

C1 = ("-XX:TieredStopAtLevel=1",)
#: variant -> (tuned?, driver JIT options, executor JIT options); the tuned variants differ in the JIT only
VARIANTS = {"stock": (False, (), ()), "tuned": (True, C1, C1), "tuned-c2": (True, (), ()),
            "c1-driver": (True, C1, ())}


def design_text(job: str, shape: str, epochs: int, max_iter: int) -> str:
    if job == "mlp":
        return f"run,nodes,executors,executor_cores,max_iter,step_size,block_size\n1,{shape},{max_iter},0.5,128\n"
    return ("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
            f"1,{job},{shape},{epochs},0.1,64\n")


def nan_if_none(value: object) -> float:
    return float("nan") if value is None else float(value)  # type: ignore[arg-type]


def training_s(row: dict) -> float:
    """BigDL's training phase (from its log), or a JSON job's own fit_s (train_time_s before it had one)."""
    value = row.get("phase_training_s")
    return float(value if value is not None else row.get("fit_s", row.get("train_time_s", 0.0)))


def main(argv: list[str] | None = None) -> int:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", default="2,2,1", help="nodes,executors,executor_cores")
    p.add_argument("--job", "--model", dest="job", default="lenet", choices=("lenet", "birnn", "mlp"))
    p.add_argument("--epochs", type=int, default=1, help="lenet, birnn")
    p.add_argument("--max-iter", type=int, default=20, help="mlp: iterations of its solver")
    p.add_argument("--runs", type=int, default=3, help="runs per variant")
    p.add_argument("--train-samples", type=int, help="default: all 4,000 training digits of the sample")
    p.add_argument("--test-samples", type=int)
    p.add_argument("--executor-memory", default="700m")
    p.add_argument("--variants", default="stock,tuned,tuned-c2", help=f"comma-separated, of {', '.join(VARIANTS)}")
    p.add_argument("--work", type=Path, help="folder for the campaigns, kept (default: a new temporary one, removed "
                                              "at the end)")
    args = p.parse_args(argv)
    variants = args.variants.split(",")
    if unknown := [v for v in variants if v not in VARIANTS]:
        p.error(f"--variants: unknown {', '.join(unknown)}; use {', '.join(VARIANTS)}")
    with work_folder("bench-jit-", args.work) as work:
        return run(args, variants, work)


def run(args: argparse.Namespace, variants: list[str], work: Path) -> int:
    design = work / "design.csv"
    design.write_text(design_text(args.job, args.shape, args.epochs, args.max_iter))
    job = builtin(args.job)
    choice = JobChoice(job)
    specs = read_design(design, choice)
    size = f"{args.max_iter} iterations" if args.job == "mlp" else f"{args.epochs} epoch(s)"
    print(f"work folder {work}; {args.job} on runtime {job.runtime}, shape {args.shape} (nodes,executors,cores), "
          f"{size}, {args.runs} run(s) per variant", flush=True)
    cluster = LocalCluster(work / "cluster", port=free_port(), webui_port=free_port())
    backend = LocalBackend(cluster, parse_memory_mb(args.executor_memory), progress=lambda m: print(f"  {m}"))
    options = SubmitOptions(master_url=cluster.master_url, executor_memory=args.executor_memory,
                            train_samples=args.train_samples, test_samples=args.test_samples, jobs=choice)
    rows: dict[str, list[dict]] = {v: [] for v in variants}
    try:
        backend.open(specs, job.runtime)
        stock, tuned = backend.environment_for(job.runtime, "stock"), backend.environment_for(job.runtime, "tuned")
        jit = set(LocalBackend.JIT)
        base = replace(tuned, driver_java_options=tuple(o for o in tuned.driver_java_options if o not in jit),
                       executor_java_options=tuple(o for o in tuned.executor_java_options if o not in jit))
        with CpuMeter() as meter:
            for i in range(args.runs):
                for v in variants:
                    is_tuned, driver, executors = VARIANTS[v]
                    env = stock if not is_tuned else replace(
                        base, driver_java_options=(*base.driver_java_options, *driver),
                        executor_java_options=(*base.executor_java_options, *executors))
                    done, _ = run_campaign(f"{v}-{i + 1}", specs, options, backend, work / f"{v}-{i + 1}",
                                           cache=True, env=env, meter=meter)
                    rows[v] += [r for r in done if r["status"] == "ok"]
    finally:
        cluster.stop()
    print(f"\nmedians of {args.runs} run(s): seconds (CPU: driver JVM + Python + executors)")
    print(f"  {'variant':<10}{'outside':>9}{'prepare':>9}{'training':>10}{'elapsed':>9}{'CPU':>7}  runs ok")
    for v in variants:
        ok = rows[v]
        if not ok:
            print(f"  {v:<10}  no run ended ok")
            continue

        def med(f) -> float:
            return statistics.median(f(r) for r in ok)

        print(f"  {v:<10}{med(lambda r: r['elapsed_s'] - training_s(r) - (r.get('phase_validation_s') or 0.0)):9.2f}"
              f"{med(lambda r: nan_if_none(r.get('phase_prepare_s'))):9.2f}{med(training_s):10.2f}"
              f"{med(lambda r: r['elapsed_s']):9.2f}{med(lambda r: r['cpu']['total']):7.1f}  {len(ok)}")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main))
