"""Courier (Albo Martínez 2021, section 5) against a uniformly random batch size, on fresh real jobs at our scale.

    python bench/batch_slo.py --campaign runs/local48 --out runs/batch-slo --jobs 8 --seed 0

1. Courier's two random forests (optimize.batch) are trained on the campaign's ok runs with
   ``--epochs`` epochs (Courier has no epochs feature, so the jobs it chooses for must have a fixed
   count): features batch, cpus = nodes x executors x executor_cores, njobs = 1, network = model;
   responses accuracy and the response time ``--time`` (default elapsed_s: submission to the end of
   spark-submit, what a user with an SLO waits for; wall_clock_s is BigDL's training time alone).
2. ``--jobs`` fresh jobs are drawn with ``--seed``: a (nodes, executors, executor_cores)
   configuration uniformly among the campaign's, and an SLO from N(mean, sd) of the training rows'
   response times (truncated at 1 s), unless --slo-mean/--slo-sd are given.
3. For each job, Courier's batch and a batch drawn uniformly from the candidates (the campaign's
   batch sizes: forests cannot extrapolate) both run as real jobs through the harness, one at a time,
   on a local cluster on free ports under its own --state-dir, with the campaign's data options.
4. The table, then each method's SLO fulfilment rate and mean accuracy over its jobs that finished.
   A failed job is listed with its reason and left out of its method's rates.

``--out`` is a campaign directory: ``--resume`` reuses finished jobs (the plan depends only on the
campaign and the options, so it is drawn again identically). ``--plan`` prints the plan and runs nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cluster.errors import ClusterError  # noqa: E402
from cluster.local import free_port  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from sparkdl.campaign import RunRecord  # noqa: E402
from sparkdl.options import CommandParser  # noqa: E402
from models.errors import ModelError  # noqa: E402
from optimize.batch import Courier  # noqa: E402
from optimize.errors import OptimizeError  # noqa: E402
from optimize.session import ClusterOptions, JobConfig, open_session, submit_options  # noqa: E402

SHAPE = ("nodes", "executors", "executor_cores")


@dataclass(frozen=True)
class PlannedJob:
    """One fresh job: its configuration, SLO, and the two batch sizes to run (with Courier's predictions)."""

    index: int
    nodes: int
    executors: int
    executor_cores: int
    slo: float
    courier_batch: int
    courier_time: float
    courier_accuracy: float
    courier_meets: bool
    random_batch: int

    @property
    def cpus(self) -> int:
        return self.nodes * self.executors * self.executor_cores


@dataclass(frozen=True)
class Outcome:
    """A finished (or failed) real job of one method."""

    job: PlannedJob
    method: str  # courier | random
    batch: int
    status: str
    time: float
    accuracy: float
    reason: str

    @property
    def met(self) -> bool:
        return self.status == "ok" and self.time <= self.job.slo


def courier_rows(results: pd.DataFrame, epochs: int, time_column: str) -> pd.DataFrame:
    """The campaign's ok runs with ``epochs`` epochs in Courier's columns (+ the job shape)."""
    ok = results[(results["status"] == "ok") & (results["epochs"] == epochs)]
    return pd.DataFrame({
        "batch": ok["batch_size"].astype(int), "cpus": (ok["nodes"] * ok["executors"] * ok["executor_cores"]),
        "njobs": 1, "network": ok["model"], "time": ok[time_column].astype(float),
        "accuracy": ok["accuracy"].astype(float),
        **{c: ok[c].astype(int) for c in SHAPE}}).reset_index(drop=True)


def plan(table: pd.DataFrame, courier: Courier, jobs: int, seed: int, slo_mean: float, slo_sd: float,
         network: str) -> list[PlannedJob]:
    """Draw the fresh jobs (configuration, SLO, random batch) and Courier's choice for each."""
    rng = np.random.default_rng(seed)
    shapes = sorted(set(map(tuple, table[list(SHAPE)].to_numpy().tolist())))
    batches = sorted(int(b) for b in table["batch"].unique())
    out = []
    for i in range(1, jobs + 1):
        nodes, executors, cores = shapes[int(rng.integers(len(shapes)))]
        slo = max(1.0, float(rng.normal(slo_mean, slo_sd)))
        rand = batches[int(rng.integers(len(batches)))]
        choice = courier.choose({"cpus": nodes * executors * cores, "njobs": 1, "network": network}, slo, batches)
        out.append(PlannedJob(i, int(nodes), int(executors), int(cores), round(slo, 3), choice.batch,
                              choice.chosen.time, choice.chosen.accuracy, choice.meets_slo, rand))
    return out


def outcome(job: PlannedJob, method: str, batch: int, result: RunRecord, time_column: str) -> Outcome:
    if result.status != "ok":
        return Outcome(job, method, batch, result.status, math.nan, math.nan, result.reason or "")
    return Outcome(job, method, batch, "ok", float(getattr(result, time_column)), float(result.accuracy), "")


def table_text(outcomes: list[Outcome], time_column: str) -> str:
    head = (f"{'job':>3} {'nodes x exec x cores':>20} {'cpus':>4} {'SLO s':>6}  {'method':7} {'batch':>5} "
            f"{'pred. s':>7} {time_column:>10} {'met':>4} {'accuracy':>8}")
    lines = [head, "-" * len(head)]
    for o in outcomes:
        j = o.job
        pred = f"{j.courier_time:7.1f}" if o.method == "courier" else f"{'':7}"
        figures = (f"{o.time:10.1f} {'yes' if o.met else 'no':>4} {o.accuracy:8.4f}" if o.status == "ok"
                   else f"{o.status:>10} {'':>4} {'':>8}  {o.reason[:60]}")
        lines.append(f"{j.index:>3} {f'{j.nodes} x {j.executors} x {j.executor_cores}':>20} {j.cpus:>4} "
                     f"{j.slo:6.1f}  {o.method:7} {o.batch:>5} {pred} {figures}")
    return "\n".join(lines)


def rates(outcomes: list[Outcome], method: str) -> tuple[float, float, int, int]:
    """SLO fulfilment rate, mean accuracy, finished jobs and failed jobs of one method."""
    mine = [o for o in outcomes if o.method == method]
    done = [o for o in mine if o.status == "ok"]
    if not done:
        return math.nan, math.nan, 0, len(mine)
    return (float(np.mean([o.met for o in done])), float(np.mean([o.accuracy for o in done])), len(done),
            len(mine) - len(done))


def build_parser() -> argparse.ArgumentParser:
    p = CommandParser(description=__doc__.split("\n")[0])
    p.add_argument("--campaign", type=Path, required=True, help="a finished campaign directory with results.csv")
    p.add_argument("--out", type=Path, required=True, help="campaign directory for the fresh jobs")
    p.add_argument("--resume", action="store_true", help="reuse the finished jobs in --out")
    p.add_argument("--plan", action="store_true", help="print the plan (jobs, SLOs, choices) and run nothing")
    p.add_argument("--jobs", type=int, default=8, help="fresh jobs (default 8; each runs twice)")
    p.add_argument("--seed", type=int, default=0, help="draws the jobs, SLOs and random batches; seeds the forests")
    p.add_argument("--epochs", type=int, default=1, help="train on and run jobs of this many epochs (default 1)")
    p.add_argument("--time", dest="time_column", choices=("elapsed_s", "wall_clock_s"), default="elapsed_s")
    p.add_argument("--slo-mean", type=float, help="default: mean response time of the training rows")
    p.add_argument("--slo-sd", type=float, help="default: sd of the response time of the training rows")
    p.add_argument("--learning-rate", type=float, default=0.1, help="as in the campaign (default 0.1)")
    p.add_argument("--train-samples", type=int, default=1024, help="as in the campaign (default 1024)")
    p.add_argument("--test-samples", type=int, default=256, help="as in the campaign (default 256)")
    p.add_argument("--job-seed", type=int, default=42, help="weight-init seed of every job (default 42, as harness)")
    p.add_argument("--state-dir", type=Path, default=Path(".cluster-batch-slo"), help="this bench's cluster state")
    p.add_argument("--timeout", type=float, default=1200.0, help="seconds before a job is stopped")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    results = pd.read_csv(args.campaign / "results.csv")
    table = courier_rows(results, args.epochs, args.time_column)
    if len(table) < 4 or table["network"].nunique() != 1:
        print(f"error: {args.campaign} has {len(table)} ok runs of {args.epochs} epoch(s) of one network; "
              "Courier needs at least 4", file=sys.stderr)
        return 2
    network = str(table["network"].iloc[0])
    slo_mean = args.slo_mean if args.slo_mean is not None else float(table["time"].mean())
    slo_sd = args.slo_sd if args.slo_sd is not None else float(table["time"].std(ddof=1))
    courier = Courier(seed=args.seed, cv_folds=min(5, len(table) // 2)).fit(table)
    jobs = plan(table, courier, args.jobs, args.seed, slo_mean, slo_sd, network)
    print(f"Courier trained on {len(table)} ok runs of {args.campaign} ({network}, {args.epochs} epoch(s)); "
          f"response time = {args.time_column}; SLO ~ N({slo_mean:.1f}, {slo_sd:.1f}) s; seed {args.seed}")
    for j in jobs:
        print(f"  job {j.index}: {j.nodes} x {j.executors} x {j.executor_cores} (cpus {j.cpus}), SLO {j.slo:.1f} s: "
              f"Courier batch {j.courier_batch} (pred. {j.courier_time:.1f} s, accuracy {j.courier_accuracy:.3f}"
              f"{'' if j.courier_meets else ', no batch meets the SLO: the fastest'}), random batch {j.random_batch}")
    if args.plan:
        return 0

    say = lambda msg: print(msg, flush=True)  # noqa: E731
    base = JobConfig(model=network, epochs=args.epochs, learning_rate=args.learning_rate)
    specs = []
    for j in jobs:
        for k, (method, batch) in enumerate((("courier", j.courier_batch), ("random", j.random_batch))):
            specs.append((j, method, batch, base.spec(2 * j.index - 1 + k, 1, nodes=j.nodes, executors=j.executors,
                                                      executor_cores=j.executor_cores, batch_size=batch)))
    settings = {"bench": "batch_slo", "campaign": str(args.campaign), "plan": [s.key for *_, s in specs],
                "batches": [(j.courier_batch, j.random_batch, j.slo) for j in jobs], "epochs": args.epochs,
                "learning_rate": args.learning_rate, "train_samples": args.train_samples,
                "test_samples": args.test_samples, "job_seed": args.job_seed}
    cluster = ClusterOptions(state_dir=args.state_dir, port=free_port(), webui_port=free_port(),
                             timeout=args.timeout)
    options = submit_options(args.out, cluster, args.train_samples, args.test_samples, args.job_seed)
    outcomes: list[Outcome] = []
    try:
        with open_session(args.out, settings, options, cluster, [s for *_, s in specs], args.resume, say) as session:
            for j, method, batch, spec in specs:
                outcomes.append(outcome(j, method, batch, session.run(spec), args.time_column))
    except (HarnessError, ClusterError, ModelError, OptimizeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print()
    print(table_text(outcomes, args.time_column))
    print()
    for method in ("courier", "random"):
        met, acc, done, failed = rates(outcomes, method)
        print(f"{method:7}: SLO met {met:.0%} of {done} finished jobs, mean accuracy {acc:.4f}"
              + (f" ({failed} failed)" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
