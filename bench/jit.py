"""Which JIT the local backend's JVMs should use: C2 (Java's default), C1 for the driver only, C1 for all.

    .venv/bin/python bench/jit.py [--shape 2,2,1] [--model lenet] [--epochs 1] [--runs 3]
                                  [--train-samples N] [--test-samples N] [--variants c2,c1-driver,c1]

On a fresh local standalone cluster on free ports, runs one design row ``--runs`` times per variant,
the variants interleaved run by run (so drift hits them alike), each run through the harness's own
campaign loop with the local backend's tuned JVMs (class-data archive, MKL unpacked once, parallel
collector) and only the JIT options changed. Prints, per variant, the medians of the time outside
training and validation (elapsed - training - validation), the ``prepare`` phase, BigDL's training
wall clock and the elapsed time, and the runs' CPU seconds (bench/campaign.py's CpuMeter).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

# bench/logparse.py would shadow the logparse package: the project root goes first, this folder after it
sys.path[:1] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from campaign import CpuMeter, run_campaign  # noqa: E402  (bench/campaign.py)

from cluster.local import LocalCluster, free_port, parse_memory_mb  # noqa: E402
from harness.backends import LocalBackend  # noqa: E402
from harness.command import SubmitOptions  # noqa: E402
from harness.designfile import read_design  # noqa: E402

C1 = ("-XX:TieredStopAtLevel=1",)
VARIANTS = {"c2": ((), ()), "c1-driver": (C1, ()), "c1": (C1, C1)}  # (driver, executors) JIT options


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", default="2,2,1", help="nodes,executors,executor_cores")
    p.add_argument("--model", default="lenet", choices=("lenet", "birnn"))
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--runs", type=int, default=3, help="runs per variant")
    p.add_argument("--train-samples", type=int, help="default: all 4,000 training digits of the sample")
    p.add_argument("--test-samples", type=int)
    p.add_argument("--executor-memory", default="700m")
    p.add_argument("--variants", default="c2,c1-driver,c1", help=f"comma-separated, of {', '.join(VARIANTS)}")
    p.add_argument("--work", type=Path, help="folder for the campaigns (default: a new temporary one)")
    args = p.parse_args(argv)
    variants = args.variants.split(",")
    if unknown := [v for v in variants if v not in VARIANTS]:
        p.error(f"--variants: unknown {', '.join(unknown)}; use {', '.join(VARIANTS)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-jit-"))
    work.mkdir(parents=True, exist_ok=True)
    design = work / "design.csv"
    design.write_text("run,model,nodes,executors,executor_cores,epochs,learning_rate,batch_size\n"
                      f"1,{args.model},{args.shape},{args.epochs},0.1,64\n")
    specs = read_design(design)
    print(f"work folder {work}; {args.model} shape {args.shape} (nodes,executors,cores), {args.epochs} epoch(s), "
          f"{args.runs} run(s) per variant", flush=True)
    cluster = LocalCluster(work / "cluster", port=free_port(), webui_port=free_port())
    backend = LocalBackend(cluster, parse_memory_mb(args.executor_memory), progress=lambda m: print(f"  {m}"))
    options = SubmitOptions(master_url=cluster.master_url, executor_memory=args.executor_memory,
                            train_samples=args.train_samples, test_samples=args.test_samples)
    rows: dict[str, list[dict]] = {v: [] for v in variants}
    try:
        backend.open(specs)
        tuned, _ = backend.environment()
        jit = set(LocalBackend.JIT)
        base = replace(tuned, driver_java_options=tuple(o for o in tuned.driver_java_options if o not in jit),
                       executor_java_options=tuple(o for o in tuned.executor_java_options if o not in jit))
        with CpuMeter() as meter:
            for i in range(args.runs):
                for v in variants:
                    driver, executors = VARIANTS[v]
                    env = replace(base, driver_java_options=(*base.driver_java_options, *driver),
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

        print(f"  {v:<10}{med(lambda r: r['elapsed_s'] - r['phase_training_s'] - r['phase_validation_s']):9.2f}"
              f"{med(lambda r: r['phase_prepare_s']):9.2f}{med(lambda r: r['wall_clock_s']):10.2f}"
              f"{med(lambda r: r['elapsed_s']):9.2f}{med(lambda r: r['cpu']['total']):7.1f}  {len(ok)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
